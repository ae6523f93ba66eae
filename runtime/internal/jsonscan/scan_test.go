package jsonscan

import (
	"encoding/json"
	"testing"
)

var quoted = []string{
	`""`, `"plain"`, `"a\"b\\c\/d\be\ff\ng\rh\ti"`, `"\u0041\u00e9\u65e5\uFFFD"`,
	`"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\ud83d\ude00"`,
	`"\ud83d\u0041"`, `"\ud83d\n"`, `"\ud83d\u12"`, `"\udbff\udfff"`, `"\ud800\udc00"`,
	"\"bad \xff\xfe utf-8 \xc3\"", "\"\xed\xa0\x80 encoded surrogate\"", "\"é 日本 \\n\"",
	`"short \u12"`, `"bad \x"`, "\"ctl \x01\"", `"unterminated`, `"\"`, `"\u00zz"`,
}

// unquoteLikeJSON holds Unquote to encoding/json's reading of a string.
func unquoteLikeJSON(t *testing.T, s []byte) {
	s = Trim(s)
	if len(s) == 0 || s[0] != '"' {
		return // String's precondition
	}
	end, plain, ok := String(s, 0)
	var want string
	werr := json.Unmarshal(s, &want)
	if !ok || end != len(s) {
		if werr == nil {
			t.Fatalf("String(%q) rejects what encoding/json reads as %q", s, want)
		}
		return
	}
	if werr != nil {
		t.Fatalf("String(%q) accepts what encoding/json rejects: %v", s, werr)
	}
	got, ok := Unquote(s, plain)
	if !ok || got != want {
		t.Fatalf("Unquote(%q, %v) = %q, %v; encoding/json: %q", s, plain, got, ok, want)
	}
	if !plain {
		return
	}
	if got, ok := unquote(s); !ok || got != want {
		t.Fatalf("unquote(%q) = %q, %v; encoding/json: %q", s, got, ok, want)
	}
}

func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, s := range quoted {
		unquoteLikeJSON(t, []byte(s))
	}
}

func FuzzUnquote(f *testing.F) {
	for _, s := range quoted {
		f.Add([]byte(s))
	}
	f.Fuzz(unquoteLikeJSON)
}

// One allocation, the string itself, for a string with escapes.
func TestUnquoteAllocatesOnce(t *testing.T) {
	raw := []byte(`"{\"region\":\"emea\",\"deals\":[\"caf\u00e9\"]}\n"`)
	if n := testing.AllocsPerRun(100, func() { _, _ = Unquote(raw, false) }); n != 1 {
		t.Errorf("Unquote allocates %v times, want 1", n)
	}
}
