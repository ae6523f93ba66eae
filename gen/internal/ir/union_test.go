package ir

import (
	"strings"
	"testing"
)

// field builds {"type":"object","properties":{"p":<schema>},"$defs":<defs>}
// and returns p's type and field.
func field(t *testing.T, schema, defs string) (*Type, *Field, []*Error) {
	t.Helper()
	doc := `{"type":"object","properties":{"p":` + schema + `}`
	if defs != "" {
		doc += `,"$defs":` + defs
	}
	root, errs := build1(t, doc+`}`)
	if root == nil || len(root.Fields) != 1 {
		t.Fatalf("%s: no field p (errors %v)", schema, errs)
	}
	return root.Fields[0].Type, root.Fields[0], errs
}

func noErrors(t *testing.T, what string, errs []*Error) {
	t.Helper()
	if len(errs) > 0 {
		t.Fatalf("%s: %v", what, errs)
	}
}

func segments(u *Type) []string {
	var s []string
	for _, v := range u.Variants {
		s = append(s, v.Segment)
	}
	return s
}

// TestUnionVariants: how union analysis names, discriminates and shapes
// the variants of oneOf and anyOf.
func TestUnionVariants(t *testing.T) {
	for _, tc := range []struct {
		name, schema, defs string
		segs               string // variant segments, space-separated
		kinds              string // variant JSON kinds
		disc               string
		unique             string // unique required members, space-separated
		oneOf              bool
	}{
		{name: "by JSON type", schema: `{"oneOf":[{"type":"string"},{"type":"boolean"},{"type":"array","items":{"type":"integer"}},{"type":"object"}]}`,
			segs: "String Bool Array Object", kinds: "string boolean array object", oneOf: true},
		{name: "integer groups with number", schema: `{"anyOf":[{"type":"integer"},{"type":"string"}]}`,
			segs: "Integer String", kinds: "number string"},
		{name: "const discriminator", schema: `{"oneOf":[
			{"type":"object","properties":{"kind":{"const":"card"},"last4":{"type":"string"}},"required":["kind"]},
			{"type":"object","properties":{"kind":{"enum":["bank-transfer"]},"iban":{"type":"string"}},"required":["kind"]}]}`,
			segs: "Card BankTransfer", kinds: "object object", disc: "kind", oneOf: true},
		{name: "numeric discriminator", schema: `{"oneOf":[
			{"type":"object","properties":{"v":{"const":1}},"required":["v"]},
			{"type":"object","properties":{"v":{"const":2}},"required":["v"]}]}`,
			segs: "X1 X2", kinds: "object object", disc: "v", oneOf: true},
		{name: "unique required member", schema: `{"oneOf":[
			{"type":"object","properties":{"email":{"type":"string"}},"required":["email"]},
			{"type":"object","properties":{"phone":{"type":"string"}},"required":["phone"]}]}`,
			segs: "Email Phone", kinds: "object object", unique: "email phone", oneOf: true},
		{name: "titles name variants", schema: `{"oneOf":[{"title":"by id","type":"integer"},{"title":"by name","type":"string"}]}`,
			segs: "ByID ByName", kinds: "number string", oneOf: true},
		{name: "$defs names variants", schema: `{"oneOf":[{"$ref":"#/$defs/Circle"},{"$ref":"#/$defs/Square"}]}`,
			defs: `{"Circle":{"type":"object","properties":{"r":{"type":"number"}},"required":["r"]},"Square":{"type":"object","properties":{"side":{"type":"number"}},"required":["side"]}}`,
			segs: "Circle Square", kinds: "object object", unique: "r side", oneOf: true},
		{name: "titles that collide give way to the next rule", schema: `{"oneOf":[{"title":"x","type":"string"},{"title":"X","type":"integer"}]}`,
			segs: "String Integer", kinds: "string number", oneOf: true},
		{name: "a title before the discriminator", schema: `{"oneOf":[
			{"title":"Credit card","type":"object","properties":{"kind":{"const":"card"}},"required":["kind"]},
			{"type":"object","properties":{"kind":{"const":"bank"}},"required":["kind"]}]}`,
			segs: "CreditCard Bank", kinds: "object object", disc: "kind", oneOf: true},
		{name: "a required const member names its variant", schema: `{"oneOf":[
			{"type":"object","properties":{"page_id":{"type":"string"}},"required":["page_id"]},
			{"type":"object","properties":{"type":{"const":"database_id"},"database_id":{"type":"string"}},"required":["database_id"]},
			{"type":"object","properties":{"type":{"const":"workspace"}},"required":["type"]}]}`,
			segs: "PageID DatabaseID Workspace", kinds: "object object object", oneOf: true},
		{name: "formats name variants", schema: `{"anyOf":[{"type":"string","format":"date"},{"type":"string","format":"date-time"}]}`,
			segs: "Date DateTime", kinds: "string string"},
		{name: "a JSON type left to one variant names it", schema: `{"anyOf":[{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},{"type":"string"},{"type":"object"}]}`,
			segs: "Text String Object", kinds: "object string object"},
		{name: "otherwise by place", schema: `{"anyOf":[{"type":"string","maxLength":3},{"type":"string","pattern":"^a"}]}`,
			segs: "String1 String2", kinds: "string string"},
		{name: "sibling type excludes a variant", schema: `{"type":["string","object"],"oneOf":[{"type":"string"},{"type":"integer"},{"type":"object"}]}`,
			segs: "String Object", kinds: "string object", oneOf: true},
		{name: "null variant makes the union nullable", schema: `{"anyOf":[{"type":"string"},{"type":"array"},{"type":"null"}]}`,
			segs: "String Array", kinds: "string array"},
		{name: "kind inferred from keywords", schema: `{"oneOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"items":{"type":"string"}}]}`,
			segs: "A Array", kinds: "object array", oneOf: true},
		{name: "enum variants of one kind", schema: `{"oneOf":[{"enum":["a","b"]},{"type":"integer"}]}`,
			segs: "String Integer", kinds: "string number", oneOf: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _, errs := field(t, tc.schema, tc.defs)
			noErrors(t, tc.schema, errs)
			if u.Kind != Union {
				t.Fatalf("kind %v (%s), want a union", u.Kind, u.RawReason)
			}
			var kinds, unique []string
			for _, v := range u.Variants {
				kinds = append(kinds, v.JSONKind)
				if v.Unique != "" {
					unique = append(unique, v.Unique)
				}
				if v.Type == nil || v.Loc.Pointer == "" {
					t.Errorf("variant %s has no type or location", v.Segment)
				}
			}
			if got := strings.Join(segments(u), " "); got != tc.segs {
				t.Errorf("segments %q, want %q", got, tc.segs)
			}
			if got := strings.Join(kinds, " "); got != tc.kinds {
				t.Errorf("kinds %q, want %q", got, tc.kinds)
			}
			if u.Discriminator != tc.disc || u.OneOf != tc.oneOf || strings.Join(unique, " ") != tc.unique {
				t.Errorf("discriminator %q oneOf %v unique %q, want %q %v %q", u.Discriminator, u.OneOf, unique, tc.disc, tc.oneOf, tc.unique)
			}
			if tc.disc != "" {
				for _, v := range u.Variants {
					if v.Disc == "" {
						t.Errorf("variant %s has no discriminator value", v.Segment)
					}
				}
			}
		})
	}
}

// TestUnionSiblingsAndShortcuts: keywords beside oneOf apply to every
// variant; unions of one non-null variant, of nulls only, and of consts
// become simpler types.
func TestUnionSiblingsAndShortcuts(t *testing.T) {
	// The shared members and the sibling's constraint land in each variant.
	u, _, errs := field(t, `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"minProperties":2,
		"oneOf":[{"properties":{"mode":{"const":"a"},"x":{"type":"string"}},"required":["mode"]},{"properties":{"mode":{"const":"b"}},"required":["mode"]}]}`, "")
	noErrors(t, "siblings", errs)
	if u.Kind != Union || u.Discriminator != "mode" || len(u.Variants) != 2 {
		t.Fatalf("siblings: %v %q %d variants (%s)", u.Kind, u.Discriminator, len(u.Variants), u.RawReason)
	}
	for _, v := range u.Variants {
		names := map[string]bool{}
		for _, f := range v.Type.Fields {
			names[f.JSONName] = true
		}
		if !names["id"] || !names["mode"] || v.Type.C.MinProperties == nil || *v.Type.C.MinProperties != 2 {
			t.Errorf("variant %s: fields %v, minProperties %v", v.Segment, names, v.Type.C.MinProperties)
		}
	}

	// One variant beside null is that variant, nullable.
	typ, f, errs := field(t, `{"oneOf":[{"type":"null"},{"$ref":"#/$defs/N"}]}`, `{"N":{"type":"integer","minimum":3}}`)
	noErrors(t, "single", errs)
	if typ.Kind != Integer || !f.Nullable || typ.C.Minimum == nil || typ.C.Minimum.Text != "3" {
		t.Errorf("one variant and null: kind %v nullable %v minimum %v", typ.Kind, f.Nullable, typ.C.Minimum)
	}
	// One variant left by the sibling type is that variant.
	typ, f, errs = field(t, `{"type":"string","anyOf":[{"type":"string","maxLength":4},{"type":"integer"}]}`, "")
	noErrors(t, "filtered", errs)
	if typ.Kind != String || f.Nullable || typ.C.MaxLength == nil || *typ.C.MaxLength != 4 {
		t.Errorf("one variant after the sibling type: kind %v nullable %v maxLength %v", typ.Kind, f.Nullable, typ.C.MaxLength)
	}
	// Nulls only.
	typ, _, errs = field(t, `{"oneOf":[{"type":"null"},{"const":null}]}`, "")
	noErrors(t, "nulls", errs)
	if typ.Kind == Union || typ.Kind == String {
		t.Errorf("only null variants: kind %v", typ.Kind)
	}
	// Documented consts are an enum, with their titles as docs.
	typ, _, errs = field(t, `{"oneOf":[{"const":"lo","title":"Low"},{"const":"hi","description":"High."}]}`, "")
	noErrors(t, "consts", errs)
	if typ.Kind != Enum || len(typ.Values) != 2 || typ.Values[0].Doc != "Low" || typ.Values[1].Doc != "High." {
		t.Errorf("const variants: kind %v values %+v", typ.Kind, typ.Values)
	}
	// Both oneOf and anyOf: oneOf is used, and the type says so.
	typ, _, errs = field(t, `{"oneOf":[{"type":"string"},{"type":"integer"}],"anyOf":[{"type":"string"}]}`, "")
	noErrors(t, "both", errs)
	if typ.Kind != Union || !typ.OneOf || len(typ.Notes) != 1 || !strings.Contains(typ.Notes[0], "anyOf is not checked") {
		t.Errorf("oneOf and anyOf: kind %v oneOf %v notes %q", typ.Kind, typ.OneOf, typ.Notes)
	}
}

// Variants of one JSON type that nothing tells apart are no longer raw:
// they are tried in the documented order (the Try of each variant).
func TestUnionTriedVariants(t *testing.T) {
	for _, tc := range []struct{ name, schema string }{
		{"two strings", `{"oneOf":[{"type":"string","maxLength":3},{"type":"string","pattern":"^a"}]}`},
		{"discriminator values repeat", `{"oneOf":[{"type":"object","properties":{"k":{"const":"x"},"a":{}},"required":["k","a"]},{"type":"object","properties":{"k":{"const":"x"},"b":{}},"required":["k","b"]}]}`},
		{"objects of one shape but their constraints", `{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false},{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ, _, errs := field(t, tc.schema, "")
			noErrors(t, tc.name, errs)
			if typ.Kind != Union {
				t.Fatalf("kind %v (raw reason %q), want a union tried in order", typ.Kind, typ.RawReason)
			}
			for _, v := range typ.Variants {
				if v.Try == 0 && v.Unique == "" && v.Disc == "" {
					t.Errorf("variant %s is neither tried in order nor told apart", v.GoName)
				}
			}
		})
	}
}

// TestUnionFallbacks: variants that cannot be told apart or understood
// make the value raw JSON, with the reason; malformed unions are errors
// naming the place.
func TestUnionFallbacks(t *testing.T) {
	for _, tc := range []struct{ name, schema, defs, reason string }{
		{"unknown kind", `{"oneOf":[{"description":"anything"},{"type":"string"}]}`, "", "told apart"},
		{"non-schema variant", `{"oneOf":[3,{"type":"string"}]}`, "", "not a schema"},
		{"unresolvable ref", `{"oneOf":[{"$ref":"#/$defs/Missing"},{"type":"string"}]}`, `{}`, "unresolvable $ref"},
		{"allOf that cannot merge", `{"oneOf":[{"allOf":[{"type":"string","const":"a"},{"const":"b"}]},{"type":"array"}]}`, "", `both parts have "const"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ, _, _ := field(t, tc.schema, tc.defs)
			if typ.Kind != Raw || !strings.Contains(typ.RawReason, tc.reason) {
				t.Errorf("kind %v reason %q, want raw because %q", typ.Kind, typ.RawReason, tc.reason)
			}
		})
	}
	for _, tc := range []struct{ name, schema, msg string }{
		{"empty oneOf", `{"oneOf":[]}`, "oneOf must be a non-empty array of schemas"},
		{"anyOf not an array", `{"anyOf":{"type":"string"}}`, "anyOf must be a non-empty array of schemas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ, _, errs := field(t, tc.schema, "")
			if len(errs) != 1 || !strings.Contains(errs[0].Msg, tc.msg) || !strings.HasPrefix(errs[0].Loc.Pointer, "/properties/p/") {
				t.Errorf("errors %v, want %q at /properties/p/...", errs, tc.msg)
			}
			if typ.Kind != Raw {
				t.Errorf("kind %v, want raw", typ.Kind)
			}
		})
	}
}

// TestMergeAllOf: allOf parts (and $ref with siblings) are folded into one
// schema, keyword by keyword.
func TestMergeAllOf(t *testing.T) {
	typ, _, errs := field(t, `{"allOf":[
		{"$ref":"#/$defs/Base"},
		{"type":"object","properties":{"name":{"type":"string","maxLength":10},"tags":{"type":"array"}},"required":["name","tags"],"minProperties":1,"maxProperties":9,"additionalProperties":false}
	]}`, `{"Base":{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string","minLength":2,"maxLength":20}},"required":["id","name"],"minProperties":2,"maxProperties":5}}`)
	noErrors(t, "merge", errs)
	if typ.Kind != Struct || !typ.Closed {
		t.Fatalf("merged: kind %v closed %v", typ.Kind, typ.Closed)
	}
	got := map[string]*Field{}
	var order []string
	for _, f := range typ.Fields {
		got[f.JSONName] = f
		order = append(order, f.JSONName)
	}
	if strings.Join(order, " ") != "id name tags" {
		t.Errorf("fields %v, want id name tags", order)
	}
	for _, n := range order {
		if !got[n].Required {
			t.Errorf("%s: required in one part, not required after the merge", n)
		}
	}
	// name: both parts' constraints, the tighter bound of each.
	if n := got["name"]; n == nil || n.Type.Kind != String || n.Type.C.MinLength == nil || *n.Type.C.MinLength != 2 || n.Type.C.MaxLength == nil || *n.Type.C.MaxLength != 10 {
		t.Errorf("name: %+v", got["name"])
	}
	if typ.C.MinProperties == nil || *typ.C.MinProperties != 2 || typ.C.MaxProperties == nil || *typ.C.MaxProperties != 5 {
		t.Errorf("min/maxProperties %v %v, want 2 5", typ.C.MinProperties, typ.C.MaxProperties)
	}

	// Types intersect: number ∩ integer is integer.
	typ, _, errs = field(t, `{"allOf":[{"type":["number","string"]},{"type":"integer","minimum":0},{"minimum":5,"maximum":9},{"maximum":7}]}`, "")
	noErrors(t, "types", errs)
	if typ.Kind != Integer || typ.C.Minimum == nil || typ.C.Minimum.Text != "5" || typ.C.Maximum == nil || typ.C.Maximum.Text != "7" {
		t.Errorf("number∩integer: kind %v minimum %v maximum %v", typ.Kind, typ.C.Minimum, typ.C.Maximum)
	}
	// Two patterns are both checked; uniqueItems from either part.
	typ, _, errs = field(t, `{"allOf":[{"type":"array","items":{"type":"string","pattern":"^a"}},{"uniqueItems":true,"items":{"pattern":"b$"}}]}`, "")
	noErrors(t, "patterns", errs)
	if typ.Kind != Array || !typ.C.UniqueItems || typ.Elem == nil || len(typ.Elem.C.Patterns) != 2 {
		t.Errorf("array merge: kind %v unique %v elem %+v", typ.Kind, typ.C.UniqueItems, typ.Elem)
	}
	// true parts add nothing; nested allOf is flattened.
	typ, _, errs = field(t, `{"allOf":[true,{"allOf":[{"type":"string"},{"minLength":1}]}]}`, "")
	noErrors(t, "nested", errs)
	if typ.Kind != String || typ.C.MinLength == nil || *typ.C.MinLength != 1 {
		t.Errorf("nested allOf: kind %v minLength %v", typ.Kind, typ.C.MinLength)
	}

	for _, tc := range []struct {
		name, schema, reason string
		never                bool
	}{
		{"no common type", `{"allOf":[{"type":"string"},{"type":"boolean"}]}`, "allOf parts allow no common JSON type", true},
		{"conflicting keyword", `{"allOf":[{"type":"string","const":"a"},{"const":"b"}]}`, `both parts have "const"`, false},
		{"false part", `{"allOf":[{"type":"string"},false]}`, "allOf has a false part", true},
		{"properties not objects", `{"allOf":[{"type":"object","properties":{"a":{}}},{"properties":[]}]}`, "properties must be objects", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ, _, errs := field(t, tc.schema, "")
			noErrors(t, tc.name, errs)
			if typ.Kind != Raw || !strings.Contains(typ.RawReason, tc.reason) || typ.Never != tc.never {
				t.Errorf("kind %v reason %q never %v, want raw because %q, never %v", typ.Kind, typ.RawReason, typ.Never, tc.reason, tc.never)
			}
		})
	}
	_, _, errs = field(t, `{"allOf":[]}`, "")
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "allOf must be a non-empty array of schemas") || errs[0].Loc.Pointer != "/properties/p/allOf" {
		t.Errorf("empty allOf: %v", errs)
	}
}
