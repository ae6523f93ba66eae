package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// reference is the scrub the runtime did before JSON existed: the
// secret's escaped form worked out on every call.
func reference(b []byte, secret string) []byte {
	if len(b) == 0 || secret == "" {
		return b
	}
	m, _ := json.Marshal(secret)
	esc := m[1 : len(m)-1]
	if bytes.Contains(b, esc) {
		b = bytes.ReplaceAll(b, esc, []byte("[redacted]"))
	}
	if lit := []byte(secret); !bytes.Equal(lit, esc) && !strings.ContainsAny(secret, "\"\\") && bytes.Contains(b, lit) {
		b = bytes.ReplaceAll(b, lit, []byte("[redacted]"))
	}
	return b
}

var cases = []struct{ secret, json string }{
	{"tok_abc123", `{"a":"tok_abc123","b":"xtok_abc123x"}`},
	{"tok_abc123", `{"a":"nothing here"}`},
	{"a<b>&c", `{"a":"a\u003cb\u003e\u0026c","b":"a<b>&c"}`},
	{`q"uote`, `{"a":"q\"uote","b":"q"uote"}`},
	{`back\slash`, `{"a":"back\\slash"}`},
	{"caf\u00e9", `{"a":"café","b":"caf\u00e9"}`},
	{"line\u2028sep", "{\"a\":\"line\\u2028sep\",\"b\":\"line\u2028sep\"}"},
	{"bad\xffutf8", `{"a":"bad\ufffdutf8"}`},
	{"tab\there", `{"a":"tab\there"}`},
	{"", `{"a":""}`},
	{"x", ``},
}

func same(t *testing.T, secret string, b []byte) {
	want := string(reference(bytes.Clone(b), secret))
	if got := string(NewJSON(secret, "[redacted]").Scrub(bytes.Clone(b))); got != want {
		t.Fatalf("Scrub(%q) of %q = %q, want %q", secret, b, got, want)
	}
}

func TestScrubMatchesReference(t *testing.T) {
	for _, c := range cases {
		same(t, c.secret, []byte(c.json))
	}
}

func FuzzScrub(f *testing.F) {
	for _, c := range cases {
		f.Add(c.secret, []byte(c.json))
	}
	f.Fuzz(same)
}

// JSON without the secret costs nothing to scrub, so a result's many raw
// members can all be checked.
func TestScrubWithoutTheSecretAllocatesNothing(t *testing.T) {
	j := NewJSON("tok_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", "[redacted]")
	b := []byte(`{"content":[{"type":"text","text":"hello, nothing secret here"}]}`)
	if n := testing.AllocsPerRun(100, func() { _ = j.Scrub(b) }); n != 0 {
		t.Errorf("Scrub allocates %v times, want 0", n)
	}
	if got := j.Scrub(b); &got[0] != &b[0] {
		t.Error("Scrub copied JSON that does not hold the secret")
	}
}
