// Package jsonscan is the strict JSON scanner shared by the runtime and the
// package for generated code.
package jsonscan

import (
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A strict JSON scanner for the generated decoders. encoding/json validates
// and reflects over every value each time it is called, and the decoders
// call it once per member and once more per nesting level, so a 1 KiB
// document used to be scanned many times over. The scanner accepts exactly
// what encoding/json accepts (RFC 8259, invalid UTF-8 inside strings
// included, nesting up to 10,000 levels) and lets the decoders split a value
// once and convert the common scalars without reflection.

// MaxDepth matches encoding/json's nesting limit.
const MaxDepth = 10000

func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func SkipSpace(data []byte, i int) int {
	for i < len(data) && IsSpace(data[i]) {
		i++
	}
	return i
}

// Trim returns data without surrounding JSON whitespace.
func Trim(data []byte) []byte {
	i := SkipSpace(data, 0)
	j := len(data)
	for j > i && IsSpace(data[j-1]) {
		j--
	}
	return data[i:j]
}

// Valid reports whether data is exactly one JSON value, with optional
// surrounding whitespace: json.Valid without the allocation-heavy state
// machine.
func Valid(data []byte) bool {
	i := SkipSpace(data, 0)
	end, ok := Value(data, i, 0)
	return ok && SkipSpace(data, end) == len(data)
}

// Value returns the offset just past the JSON value starting at
// data[i], and whether it is one.
func Value(data []byte, i, depth int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	switch c := data[i]; {
	case c == '"':
		end, _, ok := String(data, i)
		return end, ok
	case c == '{':
		if depth >= MaxDepth {
			return i, false
		}
		i = SkipSpace(data, i+1)
		if i < len(data) && data[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(data) || data[i] != '"' {
				return i, false
			}
			end, _, ok := String(data, i)
			if !ok {
				return end, false
			}
			i = SkipSpace(data, end)
			if i >= len(data) || data[i] != ':' {
				return i, false
			}
			if i, ok = Value(data, SkipSpace(data, i+1), depth+1); !ok {
				return i, false
			}
			i = SkipSpace(data, i)
			if i >= len(data) {
				return i, false
			}
			switch data[i] {
			case ',':
				i = SkipSpace(data, i+1)
			case '}':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '[':
		if depth >= MaxDepth {
			return i, false
		}
		i = SkipSpace(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = Value(data, i, depth+1); !ok {
				return i, false
			}
			i = SkipSpace(data, i)
			if i >= len(data) {
				return i, false
			}
			switch data[i] {
			case ',':
				i = SkipSpace(data, i+1)
			case ']':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == 't':
		return literal(data, i, "true")
	case c == 'f':
		return literal(data, i, "false")
	case c == 'n':
		return literal(data, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return Number(data, i)
	}
	return i, false
}

func literal(data []byte, i int, lit string) (int, bool) {
	if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

// Number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func Number(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case !digits():
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if !digits() {
			return i, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if !digits() {
			return i, false
		}
	}
	return i, true
}

// String returns the offset just past the string starting at data[i]
// (a '"'), whether it can be taken verbatim (no escapes, valid UTF-8), and
// whether it is a JSON string at all.
func String(data []byte, i int) (end int, plain, ok bool) {
	plain = true
	ascii := true
	start := i
	for i++; i < len(data); i++ {
		// Most bytes of most strings need no look beyond this table.
		for i < len(data) && !special[data[i]] {
			i++
		}
		if i == len(data) {
			break
		}
		switch c := data[i]; {
		case c == '"':
			if !ascii && plain {
				plain = utf8.Valid(data[start+1 : i])
			}
			return i + 1, plain, true
		case c == '\\':
			plain = false
			i++
			if i >= len(data) {
				return i, false, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(data)-i < 5 || !IsHex(data[i+1]) || !IsHex(data[i+2]) || !IsHex(data[i+3]) || !IsHex(data[i+4]) {
					return i, false, false
				}
				i += 4
			default:
				return i, false, false
			}
		case c < 0x20:
			return i, false, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return i, false, false
}

// special marks the bytes that end, escape, or are not allowed in a
// string, and those that start a multi-byte UTF-8 sequence.
var special = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// Unquote returns the Go string of the JSON string raw (already scanned).
func Unquote(raw []byte, plain bool) (string, bool) {
	if plain {
		return string(raw[1 : len(raw)-1]), true
	}
	return unquote(raw)
}

// unquote decodes the escapes of a JSON string as encoding/json does, in one
// allocation instead of json.Unmarshal's several: invalid UTF-8 and lone
// surrogates become U+FFFD, one per byte and per escape.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		// Runs of bytes that stand for themselves are copied whole.
		j := i
		for j < len(s) && !special[s[j]] {
			j++
		}
		b.Write(s[i:j])
		if i = j; i == len(s) {
			break
		}
		switch c := s[i]; {
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r := hex4(s[i+2:])
				if r < 0 {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// A pair is one rune; a lone half is U+FFFD, and what
					// follows it is read on its own.
					if len(s)-i >= 2 && s[i] == '\\' && s[i+1] == 'u' {
						if d := utf16.DecodeRune(r, hex4(s[i+2:])); d != utf8.RuneError {
							r, i = d, i+6
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				b.WriteRune(r)
				continue
			default:
				return "", false
			}
			i += 2
		case c == '"' || c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteRune(r) // a byte that is not UTF-8
			} else {
				b.Write(s[i : i+n])
			}
			i += n
		}
	}
	return b.String(), true
}

// hex4 is the value of the four hex digits at the start of s, or -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// UnquoteBytes is Unquote without a copy for plain strings: the name of a
// member is compared far more often than it is kept.
func UnquoteBytes(raw []byte, plain bool) ([]byte, bool) {
	if plain {
		return raw[1 : len(raw)-1 : len(raw)-1], true
	}
	s, ok := Unquote(raw, false)
	return []byte(s), ok
}

// Member is one member of a JSON object, in document order. name
// aliases the document unless the name had escapes.
type Member struct {
	Name  []byte
	Value json.RawMessage
}

// SplitObject calls add with each member of the JSON object data (with
// optional surrounding whitespace) in document order, and reports whether
// data is one, validating it completely. Values alias data.
func SplitObject(data []byte, add func(Member)) bool {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return SkipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		end, plain, ok := String(data, i)
		if !ok {
			return false
		}
		name, ok := UnquoteBytes(data[i:end], plain)
		if !ok {
			return false
		}
		i = SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		start := SkipSpace(data, i+1)
		if i, ok = Value(data, start, 1); !ok {
			return false
		}
		add(Member{Name: name, Value: data[start:i:i]})
		i = SkipSpace(data, i)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = SkipSpace(data, i+1)
		case '}':
			return SkipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// SplitArray appends the elements of the JSON array data to out,
// validating it completely. Elements alias data.
func SplitArray(data []byte, out []json.RawMessage) ([]json.RawMessage, bool) {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return out, SkipSpace(data, i+1) == len(data)
	}
	for {
		start := i
		var ok bool
		if i, ok = Value(data, start, 1); !ok {
			return nil, false
		}
		out = append(out, data[start:i:i])
		i = SkipSpace(data, i)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = SkipSpace(data, i+1)
		case ']':
			return out, SkipSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

// IsHex reports whether c is a hexadecimal digit.
func IsHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// The functions below take data that a validating function of this file
// has already accepted (a value split out of a document that was
// validated whole) and only find where values end, which is several times
// cheaper than validating them again at every level of nesting. On data
// that is not valid JSON they return wrong boundaries, never panic.

// Skip returns the offset just past the valid JSON value at data[i].
func Skip(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = skipString(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// skipString returns the offset just past the string at data[i] (a '"').
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '"':
			return i + 1
		case '\\':
			i++
		}
	}
	return i
}

// SplitValidObject is SplitObject for a valid JSON object: the same
// members, names unquoted the same way, without validating again.
func SplitValidObject(data []byte, add func(Member)) bool {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = SkipSpace(data, i+1)
	for i < len(data) && data[i] == '"' {
		end := skipString(data, i)
		var name []byte
		if simple(data[i+1 : end-1]) {
			name = data[i+1 : end-1 : end-1]
		} else {
			e, plain, ok := String(data, i)
			if !ok || e != end {
				return false
			}
			if name, ok = UnquoteBytes(data[i:end], plain); !ok {
				return false
			}
		}
		start := SkipSpace(data, SkipSpace(data, end)+1) // past the ':'
		i = Skip(data, start)
		add(Member{Name: name, Value: data[start:i:i]})
		i = SkipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = SkipSpace(data, i+1)
		}
	}
	return true
}

// simple reports whether the inside of a string has no escape and only
// ASCII, so that it is its own value.
func simple(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// SplitValidArray is SplitArray for a valid JSON array.
func SplitValidArray(data []byte, out []json.RawMessage) ([]json.RawMessage, bool) {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	i = SkipSpace(data, i+1)
	for i < len(data) && data[i] != ']' {
		start := i
		i = Skip(data, start)
		out = append(out, data[start:i:i])
		i = SkipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = SkipSpace(data, i+1)
		}
	}
	return out, true
}
