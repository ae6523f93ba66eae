package mcpruntime

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// A strict JSON scanner for the generated decoders. encoding/json validates
// and reflects over every value each time it is called, and the decoders
// call it once per member and once more per nesting level, so a 1 KiB
// document used to be scanned many times over. The scanner accepts exactly
// what encoding/json accepts (RFC 8259, invalid UTF-8 inside strings
// included, nesting up to 10,000 levels) and lets the decoders split a value
// once and convert the common scalars without reflection.

// maxDepth matches encoding/json's nesting limit.
const maxDepth = 10000

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// trimJSON returns data without surrounding JSON whitespace.
func trimJSON(data []byte) []byte {
	i := skipSpace(data, 0)
	j := len(data)
	for j > i && isSpace(data[j-1]) {
		j--
	}
	return data[i:j]
}

// validJSON reports whether data is exactly one JSON value, with optional
// surrounding whitespace: json.Valid without the allocation-heavy state
// machine.
func validJSON(data []byte) bool {
	i := skipSpace(data, 0)
	end, ok := scanValue(data, i, 0)
	return ok && skipSpace(data, end) == len(data)
}

// scanValue returns the offset just past the JSON value starting at
// data[i], and whether it is one.
func scanValue(data []byte, i, depth int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	switch c := data[i]; {
	case c == '"':
		end, _, ok := scanString(data, i)
		return end, ok
	case c == '{':
		if depth >= maxDepth {
			return i, false
		}
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(data) || data[i] != '"' {
				return i, false
			}
			end, _, ok := scanString(data, i)
			if !ok {
				return end, false
			}
			i = skipSpace(data, end)
			if i >= len(data) || data[i] != ':' {
				return i, false
			}
			if i, ok = scanValue(data, skipSpace(data, i+1), depth+1); !ok {
				return i, false
			}
			i = skipSpace(data, i)
			if i >= len(data) {
				return i, false
			}
			switch data[i] {
			case ',':
				i = skipSpace(data, i+1)
			case '}':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '[':
		if depth >= maxDepth {
			return i, false
		}
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = scanValue(data, i, depth+1); !ok {
				return i, false
			}
			i = skipSpace(data, i)
			if i >= len(data) {
				return i, false
			}
			switch data[i] {
			case ',':
				i = skipSpace(data, i+1)
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
		return scanNumber(data, i)
	}
	return i, false
}

func literal(data []byte, i int, lit string) (int, bool) {
	if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

// scanNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func scanNumber(data []byte, i int) (int, bool) {
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

// scanString returns the offset just past the string starting at data[i]
// (a '"'), whether it can be taken verbatim (no escapes, valid UTF-8), and
// whether it is a JSON string at all.
func scanString(data []byte, i int) (end int, plain, ok bool) {
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
				if len(data)-i < 5 || !isHex(data[i+1]) || !isHex(data[i+2]) || !isHex(data[i+3]) || !isHex(data[i+4]) {
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

// unquote returns the Go string of the JSON string raw (already scanned).
func unquote(raw []byte, plain bool) (string, bool) {
	if plain {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// unquoteBytes is unquote without a copy for plain strings: the name of a
// member is compared far more often than it is kept.
func unquoteBytes(raw []byte, plain bool) ([]byte, bool) {
	if plain {
		return raw[1 : len(raw)-1 : len(raw)-1], true
	}
	s, ok := unquote(raw, false)
	return []byte(s), ok
}

// scanMember is one member of a JSON object, in document order. name
// aliases the document unless the name had escapes.
type scanMember struct {
	name  []byte
	value json.RawMessage
}

// splitObject calls add with each member of the JSON object data (with
// optional surrounding whitespace) in document order, and reports whether
// data is one, validating it completely. Values alias data.
func splitObject(data []byte, add func(scanMember)) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		end, plain, ok := scanString(data, i)
		if !ok {
			return false
		}
		name, ok := unquoteBytes(data[i:end], plain)
		if !ok {
			return false
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		start := skipSpace(data, i+1)
		if i, ok = scanValue(data, start, 1); !ok {
			return false
		}
		add(scanMember{name: name, value: data[start:i:i]})
		i = skipSpace(data, i)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// splitArray appends the elements of the JSON array data to out,
// validating it completely. Elements alias data.
func splitArray(data []byte, out []json.RawMessage) ([]json.RawMessage, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return out, skipSpace(data, i+1) == len(data)
	}
	for {
		start := i
		var ok bool
		if i, ok = scanValue(data, start, 1); !ok {
			return nil, false
		}
		out = append(out, data[start:i:i])
		i = skipSpace(data, i)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return out, skipSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

// Object is a JSON object split into its members, for generated decoders:
// lookups by name without building a map, which for the small objects of
// tool results costs more than a linear search. The first members live in
// the Object itself, so one declared as a local variable costs no
// allocation.
type Object struct {
	n     int
	first [objectInline]scanMember
	rest  []scanMember
}

const objectInline = 12

func (o *Object) at(i int) *scanMember {
	if i < objectInline {
		return &o.first[i]
	}
	return &o.rest[i-objectInline]
}

func (o *Object) add(m scanMember) {
	if o.n < objectInline {
		o.first[o.n] = m
	} else {
		o.rest = append(o.rest, m)
	}
	o.n++
}

// Decode splits the JSON object data into o's members, validating it
// completely, and reports whether it is one; anything else is a violation
// at ptr. The members alias data.
func (o *Object) Decode(data []byte, ptr string, vs *Violations) bool {
	*o = Object{}
	if JSONKind(data) != "object" {
		wrongKind(vs, ptr, "object", data)
		return false
	}
	if !splitObject(data, o.add) {
		*o = Object{}
		vs.Add(ptr, "invalid JSON object")
		return false
	}
	return true
}

// Get returns the value of the member name. With duplicate names the last
// one wins, as in encoding/json.
func (o *Object) Get(name string) (json.RawMessage, bool) {
	for i := o.n - 1; i >= 0; i-- {
		if m := o.at(i); string(m.name) == name {
			return m.value, true
		}
	}
	return nil, false
}

// Required records a violation at ptr for every name in names that is not
// a member.
func (o *Object) Required(ptr string, vs *Violations, names ...string) {
	for _, n := range names {
		if _, ok := o.Get(n); !ok {
			vs.Add(ptr, "missing required member "+strconv.Quote(n))
		}
	}
}

// undeclared returns the values of the members not named in known, by
// name (the last of duplicates), and their names sorted; nil when there
// are none, which is the common case and costs no allocation.
func (o *Object) undeclared(known []string) (map[string]json.RawMessage, []string) {
	var vals map[string]json.RawMessage
	for i := range o.n {
		m := o.at(i)
		if slices.Contains(known, string(m.name)) {
			continue
		}
		if vals == nil {
			vals = map[string]json.RawMessage{}
		}
		vals[string(m.name)] = m.value
	}
	if vals == nil {
		return nil, nil
	}
	return vals, SortedKeys(vals)
}

// Unknown records a violation for every member whose name is not in known
// (objects with additionalProperties: false), in name order.
func (o *Object) Unknown(ptr string, vs *Violations, known ...string) {
	_, names := o.undeclared(known)
	for _, k := range names {
		vs.Add(KeyPointer(ptr, k), "unknown member "+strconv.Quote(k)+" is not allowed")
	}
}

// ExtraOf decodes every member of o whose name is not in known with elem
// into a new map, which is nil when there are none (open objects keep what
// they do not declare, so a round trip loses nothing).
func ExtraOf[T any](o *Object, ptr string, vs *Violations, elem DecodeFunc[T], known ...string) map[string]T {
	vals, names := o.undeclared(known)
	if names == nil {
		return nil
	}
	out := make(map[string]T, len(names))
	for _, k := range names {
		var v T
		elem(vals[k], &v, KeyPointer(ptr, k), vs)
		out[k] = v
	}
	return out
}
