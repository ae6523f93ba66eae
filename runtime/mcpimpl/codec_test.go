package mcpimpl

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/internal/jsonscan"
)

// The generator's compile tests run every generated table over thousands
// of instances; these cover the table's own rules on hand-written ones.

type codecInner struct {
	N int32 `json:"n"`
}

func (v codecInner) MarshalJSON() ([]byte, error)     { return codecInnerTable.Encode(&v) }
func (v *codecInner) UnmarshalJSON(data []byte) error { return codecInnerTable.Decode(data, v) }

var codecInnerTable = Struct{Open: Closed, Rows: []Row{{Name: "n", Required: true}}}

type codecOuter struct {
	Name  string                                `json:"name"`
	Tags  []string                              `json:"tags"`
	Big   *json.Number                          `json:"big,omitempty"`
	Raw   json.RawMessage                       `json:"raw,omitempty"`
	Items []*codecInner                         `json:"items,omitempty"`
	Null  mcpruntime.Nullable[*string]          `json:"null,omitzero"`
	ByKey map[string]codecInner                 `json:"by_key,omitempty"`
	Extra map[string]mcpruntime.Nullable[int64] `json:"-"`
}

func (v codecOuter) MarshalJSON() ([]byte, error)     { return codecOuterTable.Encode(&v) }
func (v *codecOuter) UnmarshalJSON(data []byte) error { return codecOuterTable.Decode(data, v) }

var codecOuterTable = Struct{Open: OpenKept, Rows: []Row{
	{Name: "kind", Required: true, Fixed: `"outer"`, FixedText: `"outer"`},
	{Name: "name", Required: true},
	{Name: "tags", Presence: EmptyArray, Required: true},
	{Name: "big", Hint: BigInt, Presence: OmitNil},
	{Name: "raw", Hint: Raw | NotNull, Presence: OmitNil},
	{Name: "items", Presence: OmitNil},
	{Name: "null", Presence: OmitUnset},
	{Name: "by_key", Presence: OmitNil},
}}

func TestStructRoundTrip(t *testing.T) {
	in := `{"kind":"outer","name":"a","tags":["x"],"big":123456789012345678901234567890,"raw":{"k":[1]},"items":[{"n":1},null],"null":null,"by_key":{"b":{"n":2}},"less":null,"more":7}`
	var v codecOuter
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if v.Big == nil || v.Big.String() != "123456789012345678901234567890" || len(v.Items) != 2 || v.Items[1] != nil || !v.Null.IsNull() || v.ByKey["b"].N != 2 {
		t.Fatalf("decoded %+v", v)
	}
	if n, ok := v.Extra["more"].Get(); !ok || n != 7 || !v.Extra["less"].IsNull() {
		t.Fatalf("extras %+v", v.Extra)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip:\n got %s\nwant %s", out, in)
	}
	// An empty array decodes to an empty slice, not nil, and is sent again.
	v = codecOuter{}
	if err := json.Unmarshal([]byte(`{"kind":"outer","name":"a","tags":[],"items":[]}`), &v); err != nil || v.Items == nil || len(v.Items) != 0 {
		t.Fatalf("empty arrays: %v %#v", err, v.Items)
	}
	if out, _ := json.Marshal(v); string(out) != `{"kind":"outer","name":"a","tags":[],"items":[]}` {
		t.Errorf("empty arrays sent as %s", out)
	}
	// A required array that is nil is sent as [], unset members not at all.
	out, _ = json.Marshal(codecOuter{Name: "b"})
	if string(out) != `{"kind":"outer","name":"b","tags":[]}` {
		t.Errorf("zero value: %s", out)
	}
}

func TestStructReportsEverything(t *testing.T) {
	var v codecOuter
	err := v.UnmarshalJSON([]byte(`{"kind":"inner","tags":[1],"raw":null,"items":[{"n":"x","m":1}],"more":"y"}`))
	ve, ok := err.(*mcpruntime.ValidationError)
	if !ok {
		t.Fatalf("error %T %v", err, err)
	}
	var got []string
	for _, x := range ve.Violations {
		got = append(got, x.Pointer+": "+x.Message)
	}
	want := []string{
		`: missing required member "name"`,
		`/kind: must be "outer"`,
		`/tags/0: expected string, found number`,
		`/raw: unexpected null`,
		`/items/0/n: expected integer, found string`,
		`/items/0/m: unknown member "m" is not allowed`,
		`/more: expected integer, found string`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Not an object: the value is left as it was.
	v = codecOuter{Name: "kept"}
	if err := v.UnmarshalJSON([]byte(`[1]`)); err == nil || v.Name != "kept" {
		t.Errorf("array: %v, %+v", err, v)
	}
}

func TestStructTableMismatch(t *testing.T) {
	type two struct {
		A string `json:"a"`
		B string `json:"b"`
	}
	for name, table := range map[string]*Struct{
		"too few rows":     {Rows: []Row{{Name: "a"}}},
		"too many rows":    {Rows: []Row{{Name: "a"}, {Name: "b"}, {Name: "c"}}},
		"omit a string":    {Rows: []Row{{Name: "a", Presence: OmitNil}, {Name: "b"}}},
		"kept without map": {Open: OpenKept, Rows: []Row{{Name: "a"}, {Name: "b"}}},
		"raw in a string":  {Rows: []Row{{Name: "a", Hint: Raw}, {Name: "b", Presence: EmptyArray}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			var v two
			_ = table.Decode([]byte(`{}`), &v)
		}()
	}
	ok := &Struct{Rows: []Row{{Name: "a"}, {Name: "b"}}}
	var v two
	if err := ok.Decode([]byte(`{"a":"x","b":"y"}`), &v); err != nil || v.B != "y" {
		t.Fatalf("%v %+v", err, v)
	}
	defer func() {
		if recover() == nil {
			t.Error("a table used with another type: no panic")
		}
	}()
	var other struct{ A, B string }
	_ = ok.Decode([]byte(`{}`), &other)
}

// A table compiles on first use, which many goroutines may make at once
// (run with -race).
func TestStructFirstUseConcurrent(t *testing.T) {
	type pair struct {
		A string       `json:"a"`
		B []codecInner `json:"b"`
	}
	table := &Struct{Rows: []Row{{Name: "a"}, {Name: "b", Presence: OmitNil}}}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var v pair
			err := table.Decode([]byte(`{"a":"x","b":[{"n":1},{"n":2}]}`), &v)
			if err == nil && (v.A != "x" || len(v.B) != 2 || v.B[1].N != 2) {
				err = fmt.Errorf("decoded %+v", v)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func (v *codecOuter) Validate() error { return nil }

// DecodeAndValidate decodes a struct with a compiled table in one scan; its
// verdicts must be those of checking validity first.
func TestDecodeAndValidateOneScan(t *testing.T) {
	var warm codecOuter
	_ = warm.UnmarshalJSON([]byte(`{}`)) // compiles the table
	reference := func(data []byte) error {
		var vs Violations
		var v codecOuter
		switch {
		case isNull(data):
			vs.Add("", "unexpected null")
		case !jsonscan.Valid(data):
			vs.Add("", "invalid JSON")
		default:
			vs.Merge("", v.UnmarshalJSON(jsonscan.Trim(data)))
		}
		return vs.Err("s")
	}
	for _, in := range []string{
		`{"kind":"outer","name":"a","tags":[]}`, ` {"kind":"outer","name":"a","tags":[]} `, `{"kind":"outer"`,
		`{"kind":"outer","name":"a","tags":[]} x`, `{"name":1,}`, `[1]`, `[1,`, `"s"`, `null`, ``, ` `, `{}`,
		`{"tags":[1,2,"x"],"name":null}`, `{"a":1}{}`, "{\"name\":\"\xff\"}",
	} {
		var v codecOuter
		got, want := DecodeAndValidate([]byte(in), &v, false, "s"), reference([]byte(in))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}

// Text that is not JSON is reported as such, whatever JSON type its first
// byte starts like: JSONKind names that type, and a decoder must not take
// "nonsense" for null or "1x" for a number of the wrong type.
func TestNotJSONIsSaidSo(t *testing.T) {
	var warm codecOuter
	_ = warm.UnmarshalJSON([]byte(`{}`))
	decoders := map[string]func([]byte) error{
		"struct root": func(b []byte) error { var v codecOuter; return DecodeAndValidate(b, &v, false, "") },
		"string": func(b []byte) error {
			var vs Violations
			var s string
			DecodeString(b, &s, "", &vs)
			return vs.Err("")
		},
		"integer": func(b []byte) error {
			var vs Violations
			var n int64
			DecodeInteger(b, &n, "", &vs)
			return vs.Err("")
		},
		"array": func(b []byte) error {
			var vs Violations
			var a []string
			SliceOf(DecodeString[string])(b, &a, "", &vs)
			return vs.Err("")
		},
		"object": func(b []byte) error {
			var vs Violations
			var m map[string]string
			MapOf(DecodeString[string])(b, &m, "", &vs)
			return vs.Err("")
		},
		"generated type": func(b []byte) error {
			var vs Violations
			var v codecOuter
			Decode(b, &v, "", &vs)
			return vs.Err("")
		},
		"raw that refuses null": func(b []byte) error {
			var vs Violations
			var r json.RawMessage
			DecodeRawValue(b, &r, "", &vs)
			return vs.Err("")
		},
	}
	for _, in := range []string{"nonsense", "nul", " nulls ", "tx", "fx", "1x", "-x", "x", "nullx"} {
		for name, dec := range decoders {
			err := dec([]byte(in))
			if err == nil || !strings.Contains(err.Error(), "invalid JSON") || strings.Contains(err.Error(), "null") || strings.Contains(err.Error(), "found") {
				t.Errorf("%s, %q: %v; want it said to be invalid JSON", name, in, err)
			}
		}
	}
}
