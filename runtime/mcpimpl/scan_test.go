package mcpimpl

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/runtime/internal/jsonscan"
)

// scanCases are documents near the edges of the JSON grammar.
var scanCases = []string{
	``, ` `, `{}`, ` { } `, `[]`, `[ ]`, `null`, `nul`, `nullx`, `true`, `tru`, `false`, `falsey`,
	`0`, `-0`, `01`, `-`, `1.`, `.5`, `1.5`, `1e`, `1e+`, `1e+5`, `1E-5`, `-1.5e10`, `1.5.5`, `+1`, `0x10`, `Infinity`, `NaN`,
	`""`, `"a"`, `"\u00e9"`, `"\u00g9"`, `"\u00e"`, `"\x"`, `"\/"`, `"\""`, `"a` + "\x01" + `"`, `"a` + "\t" + `"`,
	"\"\xff\"", "\"\xe2\x82\"", `"é"`, `"\ud800"`, `"unterminated`, `"\`,
	`{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":1}}`, `{"a":1} x`, `{"a":[1,2,{"b":null}]}`,
	`[1,]`, `[,1]`, `[1 2]`, `[[[]]]`, `[[[`, `]`, `}`, `{"a":}`, `{"":0}`, `{"a":1,"a":2}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

// TestScannerAgreesWithEncodingJSON holds the scanner to encoding/json's
// idea of valid JSON, on edge cases and on random mutations of a document.
func TestScannerAgreesWithEncodingJSON(t *testing.T) {
	check := func(doc string) {
		t.Helper()
		if got, want := jsonscan.Valid([]byte(doc)), json.Valid([]byte(doc)); got != want {
			t.Errorf("jsonscan.Valid(%.80q) = %v, json.Valid says %v", doc, got, want)
		}
	}
	for _, c := range scanCases {
		check(c)
	}
	base := `{"id":"D-1","n":[1,-2.5e3,0,true,false,null],"s":"a\"b\\c\u00e9 é","o":{"k":{}},"e":[]}`
	alphabet := []byte("{}[]\":,\\/ tfnrue0123456789.-+eEaxu\x01\xff")
	rng := rand.New(rand.NewPCG(8, 8))
	for range 20000 {
		b := []byte(base)
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b[i] = alphabet[rng.IntN(len(alphabet))]
			case 1:
				b = append(b[:i], b[i+1:]...)
			default:
				b = append(b[:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[i:]...)...)
			}
		}
		check(string(b))
	}
}

var errNull = errors.New("null")

// TestDecodeStringAgreesWithEncodingJSON: the fast path and the escape
// path give the string encoding/json gives, invalid UTF-8 included.
func TestDecodeStringAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range scanCases {
		var want string
		werr := json.Unmarshal([]byte(c), &want)
		if c == "null" { // encoding/json leaves the value alone; null is no string here
			werr = errNull
		}
		var got string
		var vs Violations
		DecodeString(json.RawMessage(c), &got, "", &vs)
		if (werr == nil) != (vs.Len() == 0) || got != want {
			t.Errorf("DecodeString(%.40q) = %q, %v; encoding/json: %q, %v", c, got, vs.Err(""), want, werr)
		}
	}
}

func TestDecodeScalarsAgreeWithEncodingJSON(t *testing.T) {
	for _, c := range append(scanCases, `1e400`, `-1e400`, `123456789012345678901234567890`, `5e-324`) {
		var want float64
		werr := json.Unmarshal([]byte(c), &want)
		if c == "null" {
			werr = errNull
		}
		var got float64
		var vs Violations
		DecodeNumber(json.RawMessage(c), &got, "", &vs)
		if (werr == nil) != (vs.Len() == 0) || got != want {
			t.Errorf("DecodeNumber(%.40q) = %v, %v; encoding/json: %v, %v", c, got, vs.Err(""), want, werr)
		}
		var wantB, gotB bool
		werr = json.Unmarshal([]byte(c), &wantB)
		if c == "null" {
			werr = errNull
		}
		vs = Violations{}
		DecodeBool(json.RawMessage(c), &gotB, "", &vs)
		if (werr == nil) != (vs.Len() == 0) || gotB != wantB {
			t.Errorf("DecodeBool(%.40q) = %v, %v; encoding/json: %v, %v", c, gotB, vs.Err(""), wantB, werr)
		}
	}
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{{"9223372036854775807", 1<<63 - 1, true}, {"-9223372036854775809", 0, false}, {"18446744073709551615", 0, false}, {"-0", 0, true}, {"12x", 0, false}} {
		var got int64
		var vs Violations
		DecodeInteger(json.RawMessage(c.in), &got, "", &vs)
		if (vs.Len() == 0) != c.ok || got != c.want {
			t.Errorf("DecodeInteger(%s) = %d, %v", c.in, got, vs.Err(""))
		}
	}
	var u uint64
	var vs Violations
	DecodeInteger(json.RawMessage("18446744073709551615"), &u, "", &vs)
	DecodeInteger(json.RawMessage("0"), &u, "", &vs)
	if vs.Len() != 0 || u != 0 {
		t.Errorf("uint64: %d %v", u, vs.Err(""))
	}
	var i8 int8
	DecodeInteger(json.RawMessage("128"), &i8, "", &vs)
	DecodeInteger(json.RawMessage("-129"), &i8, "", &vs)
	if vs.Len() != 2 {
		t.Errorf("int8 range: %v", vs.Err(""))
	}
}

// TestObjectMembers: lookups, the last of duplicates, escaped names, more
// members than fit inline, and sorted unknown and extra members.
func TestObjectMembers(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"a":1,"b~/":2,"a":3,"\u0063":"x"`)
	for i := range 20 {
		b.WriteString(`,"m` + string(rune('a'+i)) + `":` + string(rune('0'+i%10)))
	}
	b.WriteString("}")
	var o Object
	var vs Violations
	if !o.Decode([]byte(b.String()), "", &vs) {
		t.Fatal(vs.Err(""))
	}
	if v, ok := o.Get("a"); !ok || string(v) != "3" {
		t.Errorf("a = %s", v)
	}
	if v, ok := o.Get("c"); !ok || string(v) != `"x"` {
		t.Errorf("c = %s", v)
	}
	if v, ok := o.Get("mt"); !ok || string(v) != "9" {
		t.Errorf("mt = %s", v)
	}
	o.Required("/o", &vs, "a", "zz")
	o.Unknown("/o", &vs, "a", "c", "ma", "mb", "mc", "md", "me", "mf", "mg", "mh", "mi", "mj", "mk", "ml", "mm", "mn", "mo", "mp", "mq", "mr", "ms")
	got := vs.Err("").Error()
	if !strings.Contains(got, `/o: missing required member "zz"`) || !strings.Contains(got, `/o/b~0~1: unknown member "b~/"`) ||
		!strings.Contains(got, `/o/mt: unknown member`) || strings.Contains(got, `"a" is not`) || len(vs.list) != 3 {
		t.Errorf("violations: %s", got)
	}
	extra := ExtraOf(&o, "", &vs, DecodeRaw, "b~/", "c")
	if len(extra) != 21 || string(extra["a"]) != "3" {
		t.Errorf("extra: %v", extra)
	}
	for _, bad := range []string{`[]`, `{"a":1`, `{"a":1} x`, `null`} {
		vs = Violations{}
		if o.Decode([]byte(bad), "/p", &vs) || vs.Len() != 1 || vs.list[0].Pointer != "/p" {
			t.Errorf("Decode(%s): %v", bad, vs.Err(""))
		}
		if _, ok := o.Get("a"); ok {
			t.Errorf("Decode(%s) left members behind", bad)
		}
	}
}

func TestMemberLastWins(t *testing.T) {
	if d, ok := Member([]byte(`{"kind":"a","kind":"b"}`), "kind"); !ok || d != `"b"` {
		t.Errorf("Member = %s %v", d, ok)
	}
	if HasMember([]byte(`{"kind":1`), "kind") || !HasMember([]byte(`{"x":1,"kind":1}`), "kind") {
		t.Error("HasMember")
	}
}

// TestUniqueScalarsAgree: the scalar shortcut reports what the canonical
// comparison reports.
func TestUniqueScalarsAgree(t *testing.T) {
	type name string
	check := func(label string, got, want [3]any) {
		t.Helper()
		if got != want {
			t.Errorf("%s: got %v, want %v", label, got, want)
		}
	}
	canon := func(items []json.RawMessage) [3]any {
		i, j, ok := UniqueItems(items)
		return [3]any{i, j, ok}
	}
	for _, c := range [][]string{{}, {"a"}, {"a", "b"}, {"x", "y", "y", "x"}, {"a", "b", "c", "b", "a"}, {"a\xff", "a\xfe"}} {
		i, j, ok := UniqueItems(c)
		var raws []json.RawMessage
		for _, s := range c {
			b, _ := json.Marshal(s)
			raws = append(raws, b)
		}
		check(strings.Join(c, ","), [3]any{i, j, ok}, canon(raws))
		named := make([]name, len(c))
		for k, s := range c {
			named[k] = name(s)
		}
		i, j, ok = UniqueItems(named)
		check("named "+strings.Join(c, ","), [3]any{i, j, ok}, canon(raws))
	}
	i, j, ok := UniqueItems([]float64{1, 0, 2, -0.0, 1})
	check("floats", [3]any{i, j, ok}, canon([]json.RawMessage{json.RawMessage("1"), json.RawMessage("0"), json.RawMessage("2"), json.RawMessage("-0"), json.RawMessage("1")}))
	i, j, ok = UniqueItems([]int64{3, 4, 5})
	check("ints", [3]any{i, j, ok}, [3]any{0, 0, true})
}
