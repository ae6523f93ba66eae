package ir

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestFalseIsAConstraint: the schema false, wherever it only restricts,
// builds without an error into what Validate checks: a Never type or
// matcher, or the keyword it amounts to.
func TestFalseIsAConstraint(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		check        func(*Type) bool
	}{
		{"items after a tuple", `{"type":"array","prefixItems":[{"type":"string"}],"items":false}`,
			func(p *Type) bool { return len(p.Prefix) == 1 && p.Rest != nil && p.Rest.Type.Never }},
		{"a tuple element", `{"type":"array","prefixItems":[{"type":"string"},false]}`,
			func(p *Type) bool { return len(p.Prefix) == 2 && p.Prefix[1].Type.Never && len(p.Notes) == 0 }},
		{"items", `{"type":"array","items":false}`, func(p *Type) bool { return p.Kind == Array && p.Elem.Never }},
		{"not", `{"type":"string","not":false}`, func(p *Type) bool { return p.Kind == String && p.Not == nil && len(p.Notes) == 0 }},
		{"propertyNames of a map", `{"type":"object","propertyNames":false}`,
			func(p *Type) bool {
				return p.Kind == Map && p.C.MaxProperties != nil && *p.C.MaxProperties == 0 && len(p.Notes) == 0
			}},
		{"propertyNames of a struct", `{"type":"object","properties":{"a":{}},"propertyNames":false}`,
			func(p *Type) bool {
				return p.Kind == Struct && p.C.MaxProperties != nil && *p.C.MaxProperties == 0 && p.Extra != nil && len(p.Notes) == 0
			}},
		{"contains", `{"type":"array","contains":false}`, func(p *Type) bool { return p.Contains != nil && p.Contains.Type.Never }},
		{"if", `{"type":"string","if":false,"else":{"maxLength":1}}`, func(p *Type) bool { return p.If != nil && p.If.Type.Never && p.Else != nil }},
		{"then and else", `{"type":"string","if":{"maxLength":1},"then":false,"else":false}`,
			func(p *Type) bool { return p.Then != nil && p.Then.Type.Never && p.Else.Type.Never }},
		{"a $ref to false", `{"$ref":"#/$defs/none"}`, func(p *Type) bool { return p.Never }},
		{"an allOf part", `{"allOf":[{"type":"string"},false]}`, func(p *Type) bool { return p.Never }},
		{"a union variant", `{"anyOf":[false,{"type":"string"}]}`, func(p *Type) bool { return p.Kind == String }},
		{"every union variant", `{"oneOf":[false,{"allOf":[false]}]}`, func(p *Type) bool { return p.Never }},
		{"additionalProperties", `{"type":"object","additionalProperties":false}`, func(p *Type) bool { return p.Kind == Struct && p.Closed }},
		{"dependentSchemas", `{"type":"object","properties":{"a":{}},"dependentSchemas":{"a":false,"b":true}}`,
			func(p *Type) bool {
				return len(p.DepRequired) == 1 && p.DepRequired[0].Forbidden && p.DepRequired[0].Member == "a" && p.Extra != nil && len(p.Notes) == 0
			}},
		{"draft-07 dependencies", `{"type":"object","properties":{"a":{}},"dependencies":{"a":false,"b":["a"]}}`,
			func(p *Type) bool { return len(p.DepRequired) == 2 && p.DepRequired[0].Forbidden && len(p.Notes) == 0 }},
		{"a patternProperties value", `{"type":"object","patternProperties":{"^x":false}}`, func(p *Type) bool { return len(p.Notes) == 1 }},
		{"unevaluatedProperties", `{"type":"object","properties":{"a":{}},"unevaluatedProperties":false}`, func(p *Type) bool { return len(p.Notes) == 1 }},
		{"unevaluatedItems", `{"type":"array","unevaluatedItems":false}`, func(p *Type) bool { return len(p.Notes) == 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ, _, errs := field(t, tc.schema, `{"none":false}`)
			noErrors(t, tc.schema, errs)
			if !tc.check(typ) {
				t.Errorf("%s: built %v (never %v, notes %q)", tc.schema, typ.Kind, typ.Never, typ.Notes)
			}
		})
	}
	// A property whose schema is false must be absent: an optional one is a
	// Never field; a required one, or a root that is false, makes a schema
	// no value satisfies, built all the same (Validate always fails).
	root, errs := build1(t, `{"type":"object","properties":{"gone":false,"must":false},"required":["must"]}`)
	noErrors(t, "members", errs)
	if len(root.Fields) != 2 || !root.Fields[0].Type.Never || root.Fields[0].Required || !root.Fields[1].Type.Never || !root.Fields[1].Required {
		t.Errorf("members: %+v", root.Fields)
	}
	root, errs = build1(t, `false`)
	noErrors(t, "root", errs)
	if root == nil || !root.Never || root.Root == nil || !root.Named {
		t.Errorf("root false: %+v", root)
	}
}

// TestFlattenOnlyWhereExact: which unions inside unions become variants of
// the outer one and which stay unions of their own.
func TestFlattenOnlyWhereExact(t *testing.T) {
	open := func(m string) string {
		return `{"type":"object","properties":{"` + m + `":{"type":"string"}},"required":["` + m + `"]}`
	}
	closed := func(m string) string {
		return `{"type":"object","properties":{"` + m + `":{"type":"string"}},"required":["` + m + `"],"additionalProperties":false}`
	}
	for _, tc := range []struct {
		name, schema string
		kinds        string // the outer variants' kinds, a nested union as u(...)
	}{
		{"anyOf in anyOf", `{"anyOf":[{"anyOf":[{"type":"string"},{"type":"integer"}]},{"type":"boolean"}]}`, "string number boolean"},
		{"oneOf in anyOf, open objects", `{"anyOf":[{"oneOf":[` + open("a") + `,` + open("b") + `]},` + closed("c") + `]}`, "u(object object) object"},
		{"oneOf in anyOf, closed objects", `{"anyOf":[{"oneOf":[` + closed("a") + `,` + closed("b") + `]},` + open("c") + `]}`, "object object object"},
		{"oneOf in anyOf, distinct consts", `{"anyOf":[{"oneOf":[{"const":"a"},{"const":"b"}]},{"type":"integer"}]}`, "string string number"},
		{"oneOf in anyOf, const members", `{"anyOf":[{"oneOf":[` +
			`{"type":"object","properties":{"k":{"const":1}},"required":["k"]},{"type":"object","properties":{"k":{"enum":[2,3]}},"required":["k"]}` +
			`]},{"type":"string"}]}`, "object object string"},
		{"anyOf in oneOf", `{"oneOf":[{"anyOf":[{"type":"string","maxLength":2},{"type":"string","pattern":"^a"}]},{"type":"integer"}]}`, "u(string string) number"},
		{"oneOf in oneOf, siblings apart", `{"oneOf":[{"oneOf":[{"type":"string","maxLength":2},{"type":"string","pattern":"^a"}]},{"type":"integer"}]}`, "string string number"},
		{"oneOf in oneOf, a sibling overlaps", `{"oneOf":[{"oneOf":[{"type":"string","maxLength":2},{"type":"string","pattern":"^a"}]},{"type":"string"}]}`, "u(string string) string"},
		{"one variant", `{"oneOf":[{"anyOf":[{"type":"string","maxLength":2}]},{"type":"string"}]}`, "string string"},
		{"split by JSON type", `{"anyOf":[{"oneOf":[{"type":"string"},` + open("a") + `,` + open("b") + `]},{"type":"integer"}]}`, "string u(object object) number"},
		{"through a $ref", `{"anyOf":[{"$ref":"#/$defs/u"},{"type":"boolean"}]}`, "u(object object) boolean"},
		{"null beside a type stays whole", `{"oneOf":[{"anyOf":[{"type":["string","null"]},{"type":"string","pattern":"^a"}]},{"type":"integer"}]}`, "u(string string) number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ, _, errs := field(t, tc.schema, `{"u":{"oneOf":[`+open("a")+`,`+open("b")+`]}}`)
			noErrors(t, tc.schema, errs)
			if typ.Kind != Union {
				t.Fatalf("kind %v (%s), want a union", typ.Kind, typ.RawReason)
			}
			var kinds []string
			for _, v := range typ.Variants {
				if v.Type.Kind == Union {
					var inner []string
					for _, w := range v.Type.Variants {
						inner = append(inner, w.JSONKind)
					}
					kinds = append(kinds, "u("+strings.Join(inner, " ")+")")
				} else {
					kinds = append(kinds, v.JSONKind)
				}
			}
			if got := strings.Join(kinds, " "); got != tc.kinds {
				t.Errorf("variants %q, want %q", got, tc.kinds)
			}
		})
	}
}

// TestUnionNulls: null is valid for a oneOf when exactly one variant allows
// it, for an anyOf when any does.
func TestUnionNulls(t *testing.T) {
	for _, tc := range []struct {
		schema   string
		nullable bool
	}{
		{`{"oneOf":[{"type":["string","null"]},{"type":"null"}]}`, false},
		{`{"anyOf":[{"type":["string","null"]},{"type":"null"}]}`, true},
		{`{"oneOf":[{"type":["string","null"]},{"type":"integer"}]}`, true},
		{`{"oneOf":[{"type":["string","null"]},{"type":["integer","null"]}]}`, false},
		{`{"type":["string","null"],"enum":["a","b"]}`, false},
		{`{"type":["number","null"],"const":1}`, false},
		{`{"type":["string","null"],"enum":["a",null]}`, true},
	} {
		_, f, errs := field(t, tc.schema, "")
		noErrors(t, tc.schema, errs)
		if f.Nullable != tc.nullable {
			t.Errorf("%s: nullable %v, want %v", tc.schema, f.Nullable, tc.nullable)
		}
	}
}

// TestNestedUnionsStayLinear: unions that refer to each other twice over
// (a chain of anyOf and oneOf, each of the next one twice) are analysed,
// flattened and built once each, not once per path to them.
func TestNestedUnionsStayLinear(t *testing.T) {
	const n = 40
	var defs []string
	for i := range n {
		key, next, other := "anyOf", fmt.Sprintf(`{"$ref":"#/$defs/d%d"}`, i+1), ""
		if i%2 == 1 {
			key = "oneOf"
		}
		other = next
		if i == n-1 {
			next, other = `{"type":"string"}`, `{"type":"integer"}`
		}
		defs = append(defs, fmt.Sprintf(`"d%d":{%q:[%s,%s]}`, i, key, next, other))
	}
	done := make(chan *Type)
	doc := `{"type":"object","$defs":{` + strings.Join(defs, ",") + `},"properties":{"v":{"$ref":"#/$defs/d0"}}}`
	go func() {
		roots, errs := Build([]*Schema{{Tool: "t", Bare: "t", Role: "Input", Data: []byte(doc), File: "f.json"}})
		if len(errs) > 0 || len(roots) != 1 {
			done <- nil
			return
		}
		done <- roots[0].Type
	}()
	select {
	case root := <-done:
		if root == nil {
			t.Fatal("the chain does not build")
		}
		if got := len(Named(root, map[*Type]bool{})); got > 10*n {
			t.Errorf("%d named types for %d unions", got, n)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("building a chain of unions takes time exponential in its length")
	}
}
