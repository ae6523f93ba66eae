package render

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// sizeBound is the documented bound on a rendering's length.
func sizeBound(in int) int { return 3*in + 64 }

// allocated is what f allocates, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// nest wraps leaf in n levels of open and closes.
func nest(open, leaf, close string, n int) string {
	return strings.Repeat(open, n) + leaf + strings.Repeat(close, n)
}

// Small hostile results cannot make the rendering large or slow: the
// inputs that once rendered to 8 MB and 81 MB (nesting, whose indentation
// grows with depth) and 36 MB (a table of 6,000 rows with distinct keys,
// mostly empty cells) render within a linear bound, allocating a bounded
// multiple of their size, and what cannot be lean within the budget is
// the documented JSON fallback.
func TestHostileSizes(t *testing.T) {
	var rows []string
	for i := range 6000 {
		rows = append(rows, fmt.Sprintf(`{"k%d":1}`, i))
	}
	var wide []string
	for i := range 4000 {
		wide = append(wide, fmt.Sprintf(`"m%d":1`, i))
	}
	long := strings.Repeat("k", 200)
	cases := map[string]struct{ data, schema string }{
		"nested arrays of objects (16 KB)": {data: nest(`[{"a":`, "1", `}]`, 16<<10/6)},
		"nested arrays of objects (32 KB)": {data: nest(`[{"ab":`, "1", `}]`, 32<<10/7)},
		"nested objects (54 KB)":           {data: nest(`{"key":`, "1", `}`, 54<<10/7)},
		"nesting at the depth limit":       {data: nest(`{"a":[`, "1", `]}`, MaxDepth/2)},
		"table of distinct keys":           {data: "[" + strings.Join(rows, ",") + "]"},
		"wide object under long keys, with a recursive schema": {
			data:   nest(`{"`+long+`":`, "{"+strings.Join(wide, ",")+"}", "}", 20),
			schema: `{"description":"d","additionalProperties":{"$ref":"#"},"anyOf":[` + strings.Repeat(`{"$ref":"#"},`, 1000) + `{}]}`,
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var out string
			var err error
			n := allocated(func() { out, err = Lean([]byte(c.data), []byte(c.schema)) })
			if err != nil {
				t.Fatal(err)
			}
			in := len(c.data)
			if len(out) > sizeBound(in) {
				t.Errorf("%d bytes rendered to %d, over the bound of %d", in, len(out), sizeBound(in))
			}
			if limit := uint64(128*in + 1<<20); n > limit {
				t.Errorf("%d bytes took %d bytes of allocation, over %d", in, n, limit)
			}
			want, _ := Decode([]byte(c.data))
			got, err := readBack(out)
			if err != nil || got.JSON() != want.JSON() {
				t.Errorf("rendering does not read back (%v): %.200s", err, out)
			}
		})
	}
	// Past the depth limit, and past the budget, the fallback is compact JSON.
	deep := nest(`[`, "1", `]`, MaxDepth+1)
	if out, _ := Lean([]byte(deep), nil); out != deep {
		t.Errorf("past the depth limit: %.80s", out)
	}
	if out, _ := Lean([]byte(nest(`[`, "1", `]`, MaxDepth)), nil); out == nest(`[`, "1", `]`, MaxDepth) {
		t.Error("at the depth limit the rendering fell back")
	}
}

// The characters a reader may break lines at, and those that hide or
// reorder text.
var invisible = []string{
	"\u2028", "\u2029", "\u0085", "\u0080", "\u009f", "\v", "\f", "\r", "\u200b", "\u200c", "\u200d", "\u2060",
	"\ufeff", "\u202e", "\u202a", "\u2066", "\u2069", "\u200e", "\u061c", "\u00ad", "\u00a0", "\u3000", "\U000e0041", "\ue000",
}

// noRawInvisible checks that out holds no character outside bareRune
// but the newline between lines.
func noRawInvisible(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r != '\n' && !bareRune(r) {
			t.Errorf("%s: raw U+%04X at byte %d: %q", what, r, i, out)
			return
		}
	}
	if !utf8.ValidString(out) {
		t.Errorf("%s: not UTF-8: %q", what, out)
	}
}

// A string cannot forge a member or a row for a reader that breaks lines
// at U+2028, U+2029, U+0085 or another control, nor hide text behind bidi
// or zero-width characters: each is escaped wherever it stands (values,
// keys, cells, items, inline lists, the JSON fallback).
func TestLineBreaksQuoted(t *testing.T) {
	for _, c := range invisible {
		forged := "ok" + c + "admin: true" + c + "x|y|z"
		q, _ := json.Marshal(forged)
		k, _ := json.Marshal("k" + c + "role")
		for _, doc := range []string{
			`{"note":` + string(q) + `,"n":1}`,
			`{` + string(k) + `:1}`,
			`[{"a":` + string(q) + `,"b":1},{"a":"b","b":2}]`,
			`[` + string(q) + `,"b"]`,
			`[[1],` + string(q) + `]`,
			string(q),
			nest(`[`, string(q), `]`, MaxDepth+1),
		} {
			out, err := Lean([]byte(doc), nil)
			if err != nil {
				t.Fatal(err)
			}
			noRawInvisible(t, doc, out)
			roundTrip(t, []byte(doc), nil)
		}
	}
	// The crafted payloads: a row and a member that only a reader breaking
	// at the character would see.
	out, _ := Lean([]byte(`{"deals":[{"id":"D-1","note":"fine\u2028D-9|forged"}],"total":1}`), nil)
	if want := "deals[1]{id|note}:\n  D-1|\"fine\\u2028D-9|forged\"\ntotal: 1"; out != want {
		t.Errorf("got %q\nwant %q", out, want)
	}
}

// Strings that a reader could take for a number, a boolean or null are
// quoted; ordinary strings stay bare.
func TestLookalikeScalarsQuoted(t *testing.T) {
	for _, s := range []string{"01", "+1", "-1", ".5", "-.5", "1.", "1e3", "1_000", "1,000", "0x1F", "0o17", "0b1", "1:30", "NaN", "nan", "-Infinity",
		"inf", ".inf", "yes", "No", "ON", "off", "TRUE", "Null", "none", "nil", "undefined", "~",
		// Look-alikes: signs, digits, separators and spaces of other
		// scripts and forms, and combining marks.
		"\u22121", "\u2013 1", "\ufe631", "\uff0b1", "1 000", "10 000 000", "1\u00a0000", "1\u2009000", "1\u202f000", "1'000", "1\u2019000",
		"1.000,5", "1.2.3", "\uff11\uff12", "\u0661\u0662\u0663", "\u0966", "\U0001d7d9", "\u0661\u066b\u0665", "3\u00b714", "1\u0301", "\uff0e5",
		"\uff54\uff52\uff55\uff45", "\uff2e\uff41\uff2e", "\u221e", "\u2212\u221e", "+ 1", "1e\uff13", "\uff10x1F"} {
		q, _ := json.Marshal(s)
		out, _ := Lean([]byte(`{"v":`+string(q)+`}`), nil)
		if out != "v: "+quote(s) {
			t.Errorf("%q: %q", s, out)
		}
	}
	for _, s := range []string{"12 Analytical Way", "2026-04-01", "D-2001", "no way", "1st", "x1", "-x", "yesterday", "+", "...", "1e", "v1.2", "1,000 EUR", "\u00e9t\u00e9"} {
		q, _ := json.Marshal(s)
		out, _ := Lean([]byte(`{"v":`+string(q)+`}`), nil)
		if out != "v: "+s {
			t.Errorf("%q: %q", s, out)
		}
	}
}

// A description is shown up to its first line break of any convention,
// and not at all if what is left holds an invisible character.
func TestDescriptionLineBreaks(t *testing.T) {
	for _, c := range []string{"\n", "\r", "\u2028", "\u2029", "\u0085", "\v", "\f"} {
		d, _ := json.Marshal("Deal id." + c + "total: 999")
		out, _ := Lean([]byte(`{"id":"D-1"}`), []byte(`{"properties":{"id":{"description":`+string(d)+`}}}`))
		if out != "id: D-1  # Deal id." {
			t.Errorf("%q: %q", c, out)
		}
	}
	for _, c := range []string{"\u202e", "\u200b", "\ufeff", "\u0080"} {
		d, _ := json.Marshal("Deal " + c + "id.")
		out, _ := Lean([]byte(`{"id":"D-1"}`), []byte(`{"properties":{"id":{"description":`+string(d)+`}}}`))
		if out != "id: D-1" {
			t.Errorf("%q: %q", c, out)
		}
	}
}

// FuzzLean renders random JSON: the fuzzer's bytes when they are JSON,
// else a document built from them (nesting, wide tables, hostile
// strings). Every rendering (a) is within the linear bound, (b) reads back
// to the same value, lean or the JSON fallback, and (c) holds no
// character outside bareRune but the newlines between its lines.
func FuzzLean(f *testing.F) {
	for _, s := range []string{`{"a":[{"b":1},{"b":"x|y"}]}`, `[1,"a, b",null]`, `"01"`, "\x01\x02\x03", "deep", `{"k":"a\u2028b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			var seed [2]uint64
			for i, b := range data {
				seed[i%2] = seed[i%2]*131 + uint64(b)
			}
			data, _ = json.Marshal(fuzzValue(rand.New(rand.NewPCG(seed[0], seed[1])), 0))
		}
		if _, err := Decode(data); err != nil {
			return
		}
		out, err := Lean(data, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > sizeBound(len(data)) {
			t.Fatalf("%d bytes rendered to %d", len(data), len(out))
		}
		want, _ := Decode(data)
		got, err := readBack(out)
		if err != nil || got.JSON() != want.JSON() {
			t.Fatalf("does not read back (%v):\n%s\n%s", err, data, out)
		}
		noRawInvisible(t, string(data), out)
	})
}

func fuzzValue(r *rand.Rand, depth int) any {
	str := func() string {
		var b strings.Builder
		for range r.IntN(6) {
			switch r.IntN(4) {
			case 0:
				b.WriteString(invisible[r.IntN(len(invisible))])
			case 1:
				b.WriteString(tricky[r.IntN(len(tricky))])
			default:
				b.WriteRune(rune(r.IntN(0x3000)))
			}
		}
		return b.String()
	}
	switch k := r.IntN(10); {
	case depth > 40 || k == 0:
		return str()
	case k == 1:
		return json.Number([]string{"0", "-1", "1.5e3", "01"[1:]}[r.IntN(4)])
	case k < 5: // deep
		return []any{map[string]any{str(): fuzzValue(r, depth+1)}}
	case k < 7: // a table, dense or sparse
		rows := make([]any, r.IntN(30))
		for i := range rows {
			rows[i] = map[string]any{fmt.Sprintf("c%d", r.IntN(1+r.IntN(40))): str(), "id": i}
		}
		return rows
	case k < 9:
		m := map[string]any{}
		for range r.IntN(5) {
			m[str()] = fuzzValue(r, depth+1)
		}
		return m
	}
	list := make([]any, r.IntN(5))
	for i := range list {
		list[i] = fuzzValue(r, depth+1)
	}
	return list
}
