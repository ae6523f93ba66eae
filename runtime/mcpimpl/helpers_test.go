package mcpimpl

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

func TestDecodeInteger(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1", 1, true}, {"1.0", 1, true}, {"1e2", 100, true}, {"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false}, {"1.5", 0, false}, {`"1"`, 0, false}, {"null", 0, false},
	} {
		var got int64
		var vs Violations
		DecodeInteger(json.RawMessage(tc.in), &got, "/x", &vs)
		if (vs.Len() == 0) != tc.ok || tc.ok && got != tc.want {
			t.Errorf("DecodeInteger(%s) = %d, %v", tc.in, got, vs.Err(""))
		}
	}
	var u uint8
	var vs Violations
	DecodeInteger(json.RawMessage("256"), &u, "", &vs)
	DecodeInteger(json.RawMessage("-1"), &u, "", &vs)
	if vs.Len() != 2 {
		t.Errorf("uint8 range: %v", vs.Err(""))
	}
}

func TestStrictDecodeReportsEverything(t *testing.T) {
	var vs Violations
	var tags []string
	SliceOf(DecodeString[string])(json.RawMessage(`["a", 1, null, "b"]`), &tags, "/tags", &vs)
	err := vs.Err("x")
	if vs.Len() != 2 || !strings.Contains(err.Error(), "/tags/1: expected string, found number") || !strings.Contains(err.Error(), "/tags/2: expected string, found null") {
		t.Fatalf("violations: %v", err)
	}
	m, _ := DecodeObject([]byte(`{"a":1,"b~/":2}`), "", &vs)
	vs = Violations{}
	Unknown(m, "/o", &vs, "a")
	Required(m, "/o", &vs, "a", "c")
	if got := vs.Err("").Error(); !strings.Contains(got, "/o/b~0~1: unknown member") || !strings.Contains(got, `/o: missing required member "c"`) {
		t.Fatalf("violations: %s", got)
	}
}

func TestNullableDecode(t *testing.T) {
	var n mcpruntime.Nullable[int64]
	var vs Violations
	NullableOf(DecodeInteger[int64])(json.RawMessage("null"), &n, "", &vs)
	if !n.IsNull() {
		t.Fatal("null not kept")
	}
	NullableOf(DecodeInteger[int64])(json.RawMessage("3"), &n, "", &vs)
	if v, ok := n.Get(); !ok || v != 3 || vs.Len() != 0 {
		t.Fatalf("value: %v %v %v", v, ok, vs.Err(""))
	}
}

func TestMultipleOf(t *testing.T) {
	for _, tc := range []struct {
		x, m float64
		want bool
	}{{0.3, 0.1, true}, {1.07, 0.01, true}, {1.001, 0.01, false}, {10, 2.5, true}, {7, 2, false}, {-4, 2, true}} {
		if got := MultipleOf(tc.x, tc.m); got != tc.want {
			t.Errorf("MultipleOf(%v, %v) = %v", tc.x, tc.m, got)
		}
	}
}

func TestUniqueItemsAndCanonical(t *testing.T) {
	items := []json.RawMessage{json.RawMessage(`{"a":1,"b":[1.0]}`), json.RawMessage(`2`), json.RawMessage(`{"b":[1],"a":1}`)}
	if i, j, ok := UniqueItems(items); ok || i != 0 || j != 2 {
		t.Fatalf("UniqueItems = %d %d %v", i, j, ok)
	}
	if !EqualJSON([]byte(`{"x":1e2}`), []byte(`{"x": 100}`)) || EqualJSON([]byte(`[1,2]`), []byte(`[2,1]`)) {
		t.Fatal("EqualJSON")
	}
}

func TestObjectEncoder(t *testing.T) {
	var e ObjectEncoder
	e.Member("b", 1)
	e.Member("a", json.RawMessage(`"x"`))
	ExtraMembers(&e, map[string]json.RawMessage{"z": json.RawMessage("true"), "b": json.RawMessage("2"), "c": json.RawMessage("null")}, "b")
	got, err := e.Bytes()
	if err != nil || string(got) != `{"b":1,"a":"x","c":null,"z":true}` {
		t.Fatalf("%s %v", got, err)
	}
	var empty ObjectEncoder
	if b, _ := empty.Bytes(); string(b) != "{}" {
		t.Fatalf("%s", b)
	}
}

func TestMergePrefixesPointers(t *testing.T) {
	var vs Violations
	vs.Merge("/a", &mcpruntime.ValidationError{Violations: []mcpruntime.Violation{{Pointer: "/b", Message: "m"}}})
	vs.Merge("/c", nil)
	if got := vs.Err("s").Error(); got != "s: /a/b: m" {
		t.Fatalf("%q", got)
	}
}

func TestKeepUnknown(t *testing.T) {
	var got []mcpruntime.Unknown
	mcpruntime.SetUnknownHook(func(u mcpruntime.Unknown) { got = append(got, u) })
	t.Cleanup(func() { mcpruntime.SetUnknownHook(nil) })
	var o Object
	var vs Violations
	if !o.Decode([]byte(`{"a":1,"z":[true],"b":"x"}`), "", &vs) {
		t.Fatal(vs.Err(""))
	}
	extra := KeepUnknown(&o, "T", "a")
	if len(extra) != 2 || string(extra["z"]) != "[true]" || string(extra["b"]) != `"x"` {
		t.Fatalf("kept %v", extra)
	}
	if vs.Len() != 0 {
		t.Fatalf("violations: %v", vs.Err(""))
	}
	UnknownEnum("E", "new")
	UnknownEnum("N", int64(7))
	want := []mcpruntime.Unknown{{Type: "T", Member: "b"}, {Type: "T", Member: "z"}, {Type: "E", Value: `"new"`}, {Type: "N", Value: "7"}}
	if !slices.Equal(got, want) {
		t.Fatalf("reports %v, want %v", got, want)
	}
	if KeepUnknown(&o, "T", "a", "b", "z") != nil {
		t.Fatal("nothing unknown should give nil")
	}
}

func TestValidFormat(t *testing.T) {
	for _, tc := range []struct {
		format, s string
		ok        bool
	}{
		{"date", "2024-02-29", true}, {"date", "2023-02-29", false}, {"date", "2024-1-01", false},
		{"date-time", "2024-05-01T10:00:00Z", true}, {"date-time", "2024-05-01t10:00:00.25-07:30", true},
		{"date-time", "2024-05-01 10:00:00Z", false}, {"date-time", "2024-05-01T10:00:00", false},
		{"email", "a.b@c.example", true}, {"email", "Ann <a@c.example>", false}, {"email", "no-at", false},
		{"uri", "https://x.example/a?b#c", true}, {"uri", "urn:isbn:0451450523", true}, {"uri", "/relative", false},
		{"uuid", "123e4567-E89B-12d3-a456-426614174000", true}, {"uuid", "123e4567e89b12d3a456426614174000", false},
		{"uuid", "123e4567-e89b-12d3-a456-42661417400g", false},
		{"hostname", "anything at all", true},
	} {
		if got := ValidFormat(tc.format, tc.s); got != tc.ok {
			t.Errorf("ValidFormat(%q, %q) = %v, want %v", tc.format, tc.s, got, tc.ok)
		}
	}
}

func TestBigInteger(t *testing.T) {
	var n json.Number
	var vs Violations
	DecodeBigInteger(json.RawMessage(" 18446744073709551616000 "), &n, "/n", &vs)
	if vs.Len() != 0 || n != "18446744073709551616000" {
		t.Fatalf("decoded %q: %v", n, vs.Err(""))
	}
	for _, bad := range []string{"1.5", `"1"`, "null"} {
		var vs Violations
		DecodeBigInteger(json.RawMessage(bad), &n, "/n", &vs)
		if vs.Len() == 0 {
			t.Errorf("%s accepted", bad)
		}
	}
	if CompareNumber(n, "18446744073709551616001") != -1 || CompareNumber(json.Number("1e3"), "1000") != 0 || CompareNumber(json.Number(""), "0") != 0 {
		t.Error("CompareNumber")
	}
	if !BigMultipleOf(n, "2") || BigMultipleOf(json.Number("18446744073709551616001"), "2") || BigMultipleOf(n, "0") {
		t.Error("BigMultipleOf")
	}
}
