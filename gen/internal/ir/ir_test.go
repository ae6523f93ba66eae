package ir

import (
	"strings"
	"testing"
)

func build1(t *testing.T, schema string) (*Type, []*Error) {
	t.Helper()
	roots, errs := Build([]*Schema{{Tool: "t", Bare: "t", Role: "Input", Data: []byte(schema), File: "f.json"}})
	if len(roots) == 0 {
		return nil, errs
	}
	return roots[0].Type, errs
}

func TestNullableForms(t *testing.T) {
	for _, s := range []string{
		`{"type":["string","null"]}`,
		`{"anyOf":[{"type":"string"},{"type":"null"}]}`,
		`{"oneOf":[{"type":"null"},{"type":"string"}]}`,
	} {
		root, errs := build1(t, `{"type":"object","properties":{"p":`+s+`}}`)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", s, errs)
		}
		f := root.Fields[0]
		if !f.Nullable || f.Type.Kind != String {
			t.Errorf("%s: nullable=%v kind=%v, want a nullable string", s, f.Nullable, f.Type.Kind)
		}
	}
}

func TestUnionDiscrimination(t *testing.T) {
	for _, tc := range []struct {
		schema string
		kind   Kind
		disc   string
	}{
		{`{"oneOf":[{"type":"object","properties":{"k":{"const":"a"}},"required":["k"]},{"type":"object","properties":{"k":{"const":"b"}},"required":["k"]}]}`, Union, "k"},
		{`{"oneOf":[{"type":"string"},{"type":"array"}]}`, Union, ""},
		{`{"oneOf":[{"type":"object","required":["a"]},{"type":"object","required":["b"]}]}`, Union, ""},
		// Variants nothing tells apart are tried in order.
		{`{"oneOf":[{"type":"object"},{"type":"object"}]}`, Union, ""},
		{`{"oneOf":[{"type":"integer"},{"type":"number"}]}`, Union, ""},
		{`{"oneOf":[{"minimum":1},{"type":"string"}]}`, Raw, ""},
		{`{"oneOf":[{"const":"x"},{"const":"y"}]}`, Enum, ""},
	} {
		root, errs := build1(t, `{"type":"object","properties":{"p":`+tc.schema+`}}`)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", tc.schema, errs)
		}
		got := root.Fields[0].Type
		if got.Kind != tc.kind || got.Discriminator != tc.disc {
			t.Errorf("%s: kind %v disc %q, want %v %q", tc.schema, got.Kind, got.Discriminator, tc.kind, tc.disc)
		}
		if got.Kind == Raw && !strings.Contains(got.RawReason, "told apart") {
			t.Errorf("%s: raw without a reason: %q", tc.schema, got.RawReason)
		}
	}
}

func TestRecursionIsIndirect(t *testing.T) {
	root, errs := build1(t, `{"type":"object","properties":{"n":{"$ref":"#/$defs/N"}},"required":["n"],
		"$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}},"required":["next"]}}}`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	types := Named(root, map[*Type]bool{})
	Finish(types)
	n := root.Fields[0].Type
	if root.Fields[0].Indirect {
		t.Error("the root's field is not on a cycle but was made a pointer")
	}
	if !n.Fields[0].Indirect {
		t.Error("the self-reference was not made a pointer")
	}
}

func TestDepthIsBounded(t *testing.T) {
	s := `{"type":"string"}`
	for range MaxDepth + 5 {
		s = `{"type":"array","items":` + s + `}`
	}
	_, errs := build1(t, s)
	if len(errs) == 0 || !strings.Contains(errs[0].Msg, "nests deeper") {
		t.Fatalf("errors = %v, want a depth error", errs)
	}
}

func TestPatternTranslation(t *testing.T) {
	for _, tc := range []struct{ in, want, reason string }{
		{`^\u00e9$`, `^\x{00e9}$`, ""},
		{`a\/b`, `a/b`, ""},
		{`(?=x)`, "", "lookahead"},
		{`[\d\-]+`, `[\d\-]+`, ""},
	} {
		p := translatePattern(tc.in)
		if p.Go != tc.want || (tc.reason != "") != (p.Reason != "") {
			t.Errorf("translatePattern(%q) = %+v, want Go %q", tc.in, p, tc.want)
		}
	}
}
