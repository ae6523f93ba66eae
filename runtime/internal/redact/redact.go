// Package redact finds a secret in raw JSON and replaces it.
package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// JSON replaces one secret in raw JSON. Build it once for all the JSON a
// secret is to be scrubbed from: the secret's forms are worked out here,
// so each Scrub of JSON that does not hold it allocates nothing.
type JSON struct {
	with []byte
	// esc is the secret as encoding/json escapes it; lit is the secret as
	// written, looked for too when it differs from esc and has nothing JSON
	// must escape (encoders other than Go's do not escape <, > and &).
	esc, lit []byte
}

// NewJSON returns a JSON that replaces secret with with; an empty secret
// is never looked for.
func NewJSON(secret, with string) JSON {
	if secret == "" {
		return JSON{}
	}
	j := JSON{with: []byte(with), esc: []byte(secret)}
	if !verbatim(secret) {
		b, _ := json.Marshal(secret)
		j.esc = b[1 : len(b)-1]
		if !bytes.Equal(j.esc, []byte(secret)) && !strings.ContainsAny(secret, "\"\\") {
			j.lit = []byte(secret)
		}
	}
	return j
}

// Scrub returns b with the secret replaced: b itself when it does not hold
// the secret, a new slice when it does.
func (j JSON) Scrub(b []byte) []byte {
	if len(b) == 0 || len(j.esc) == 0 {
		return b
	}
	if bytes.Contains(b, j.esc) {
		b = bytes.ReplaceAll(b, j.esc, j.with)
	}
	if j.lit != nil && bytes.Contains(b, j.lit) {
		b = bytes.ReplaceAll(b, j.lit, j.with)
	}
	return b
}

// verbatim reports whether encoding/json writes s as it is: printable ASCII
// without '"', '\\' and the characters it escapes for HTML.
func verbatim(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
