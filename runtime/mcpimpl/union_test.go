package mcpimpl

import (
	"encoding/json"
	"strings"
	"testing"
)

// The generator's compile tests run every generated union table over
// thousands of instances; these cover the table's own rules on
// hand-written ones.

type unionCard struct {
	Kind  string `json:"kind"`
	Last4 string `json:"last4"`
}

func (v unionCard) MarshalJSON() ([]byte, error)     { return unionCardTable.Encode(&v) }
func (v *unionCard) UnmarshalJSON(data []byte) error { return unionCardTable.Decode(data, v) }

var unionCardTable = Struct{Rows: []Row{{Name: "kind", Required: true}, {Name: "last4", Required: true}}}

type unionPay struct {
	vCard   *unionCard
	vIBAN   *string
	vAmount *float64
	vNull   bool
}

func (u unionPay) MarshalJSON() ([]byte, error)     { return unionPayTable.Encode(&u) }
func (u *unionPay) UnmarshalJSON(data []byte) error { return unionPayTable.Decode(data, u) }

var unionPayTable = Union{Name: "unionPay", OneOf: true, Variants: []Variant{
	{Name: "Card", Kind: "object"},
	{Name: "IBAN", Kind: "string"},
	{Name: "Amount", Kind: "number"},
	{Name: "Null", Kind: "null"},
}}

func TestUnionTable(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: `{"kind":"card","last4":"1234"}`, want: `{"kind":"card","last4":"1234"}`},
		{in: `12.5`, want: `12.5`},
		{in: ` null `, want: `null`},
		{in: `true`, err: "expected object or string or number or null, found boolean"},
		{in: `{"kind":"card"}`, err: `missing required member "last4"`},
		{in: `nonsense`, err: "invalid JSON"},
		{in: `1x`, err: "invalid JSON"},
		{in: ``, err: "invalid JSON"},
	} {
		var u unionPay
		err := json.Unmarshal([]byte(tc.in), &u)
		if tc.err == "" && json.Valid([]byte(tc.in)) {
			b, merr := json.Marshal(u)
			if err != nil || merr != nil || string(b) != tc.want {
				t.Errorf("%s: %s, %v %v; want %s", tc.in, b, err, merr, tc.want)
			}
			continue
		}
		// encoding/json checks the syntax itself; UnmarshalJSON must too.
		err = u.UnmarshalJSON([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.err)
		}
	}
	var zero unionPay
	if _, err := json.Marshal(zero); err == nil || !strings.Contains(err.Error(), "unionPay: no variant is set") {
		t.Errorf("zero value: %v", err)
	}
}

type unionTwo struct {
	vA *string
	vB *string
}

var unionTwoTable = Union{Name: "unionTwo", OneOf: true, Variants: []Variant{
	{Name: "A", Kind: "string", Try: 1},
	{Name: "B", Kind: "string", Try: 2, Check: func(v any, vs *Violations) {
		if len(*v.(*string)) > 3 {
			vs.Add("", "too long")
		}
	}},
}}

// oneOf needs exactly one variant to accept a value: two is an error and
// no variant set; anyOf takes the first.
func TestUnionOneOfOfTried(t *testing.T) {
	var u unionTwo
	if err := unionTwoTable.Decode([]byte(`"abc"`), &u); err == nil || !strings.Contains(err.Error(), "matches more than one of the variants A, B") || u.vA != nil || u.vB != nil {
		t.Errorf("two accept: %v %+v", err, u)
	}
	if err := unionTwoTable.Decode([]byte(`"abcdef"`), &u); err != nil || u.vA == nil {
		t.Errorf("one accepts: %v %+v", err, u)
	}
	any := Union{Name: "unionTwo", Variants: unionTwoTable.Variants}
	if err := any.Decode([]byte(`"abc"`), &u); err != nil || u.vA == nil || u.vB != nil {
		t.Errorf("anyOf: %v %+v", err, u)
	}
}

// A table that does not fit its union is a bug of the generator: it
// panics on first use, naming the type.
func TestUnionTableMismatch(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "union table for mcpimpl.unionTwo") {
			t.Errorf("recover() = %v", r)
		}
	}()
	bad := Union{Variants: []Variant{{Name: "A", Kind: "string"}}}
	var u unionTwo
	_ = bad.Decode([]byte(`"x"`), &u)
}
