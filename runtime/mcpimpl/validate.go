package mcpimpl

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// Violations collects the violations that generated decoders and validators
// find, so that every problem is reported rather than only the first.
// The zero value is ready to use.
type Violations struct {
	list []mcpruntime.Violation
}

// Add records a violation at ptr.
func (vs *Violations) Add(ptr, message string) {
	if vs.list == nil {
		// Invalid input rarely breaks one rule only: room for several
		// saves the growth steps of appending one by one.
		vs.list = make([]mcpruntime.Violation, 0, 8)
	}
	vs.list = append(vs.list, mcpruntime.Violation{Pointer: ptr, Message: message})
}

// Merge records err's violations with ptr prepended to their pointers when
// err is (or wraps) a *ValidationError, else err's text as one violation at
// ptr. A nil err records nothing.
func (vs *Violations) Merge(ptr string, err error) {
	if err == nil {
		return
	}
	var ve *mcpruntime.ValidationError
	if errors.As(err, &ve) {
		for _, v := range ve.Violations {
			vs.Add(ptr+v.Pointer, v.Message)
		}
		return
	}
	vs.Add(ptr, err.Error())
}

// Len reports how many violations were recorded.
func (vs *Violations) Len() int { return len(vs.list) }

// Err returns a *ValidationError holding the violations, or nil when there
// are none.
func (vs *Violations) Err(subject string) error {
	if len(vs.list) == 0 {
		return nil
	}
	return &mcpruntime.ValidationError{Subject: subject, Violations: slices.Clone(vs.list)}
}

// KeyPointer appends the escaped reference token key to ptr (RFC 6901).
func KeyPointer(ptr, key string) string {
	if strings.ContainsAny(key, "~/") {
		key = strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
	}
	return ptr + "/" + key
}

// IndexPointer appends an array index to ptr.
func IndexPointer(ptr string, i int) string {
	return ptr + "/" + strconv.Itoa(i)
}

// MultipleOf reports whether x is a multiple of m (m > 0), exactly for the
// decimal values JSON carries rather than within a float tolerance.
func MultipleOf(x, m float64) bool {
	if m <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return false
	}
	// Float division rounds (0.3/0.1 is 2.9999999999999996), so compare the
	// shortest decimal forms, which are what the JSON text said, as rationals.
	rx, ok1 := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	rm, ok2 := new(big.Rat).SetString(strconv.FormatFloat(m, 'g', -1, 64))
	if !ok1 || !ok2 || rm.Sign() == 0 {
		return false
	}
	return new(big.Rat).Quo(rx, rm).IsInt()
}

// UniqueItems reports the first pair of indexes whose elements are equal as
// JSON values, or ok=true when all are distinct. Elements are compared after
// encoding, so numbers compare by value and objects ignore member order.
func UniqueItems[T any](items []T) (i, j int, ok bool) {
	if len(items) < 2 {
		return 0, 0, true
	}
	if i, j, ok, known := uniqueScalars(items); known {
		return i, j, ok
	}
	canon := make([]string, len(items))
	for k, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			canon[k] = "\x00" + strconv.Itoa(k) // unencodable: never equal
			continue
		}
		canon[k] = CanonicalJSON(b)
	}
	seen := make(map[string]int, len(canon))
	for k, c := range canon {
		if first, dup := seen[c]; dup {
			return first, k, false
		}
		seen[c] = k
	}
	return 0, 0, true
}

// uniqueScalars is UniqueItems for strings, booleans and numbers, whose
// JSON values are equal exactly when the Go values are (numbers by value,
// as JSON Schema wants, and 0 == -0 for both). known is false for other
// element types, and for strings that are not valid UTF-8, which encode
// alike when they differ only in invalid bytes.
func uniqueScalars[T any](items []T) (i, j int, ok, known bool) {
	kind := reflect.TypeFor[T]().Kind()
	switch kind {
	case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return 0, 0, false, false
	}
	if len(items) > 64 { // quadratic beyond this; the general path hashes
		return 0, 0, false, false
	}
	vals := reflect.ValueOf(items)
	if kind == reflect.String {
		for k := range items {
			if !utf8.ValidString(vals.Index(k).String()) {
				return 0, 0, false, false
			}
		}
	}
	// The pair reported is the one the general path reports: the first
	// item that repeats an earlier one, and that earlier one's first place.
	for b := 1; b < len(items); b++ {
		for a := range b {
			if vals.Index(a).Equal(vals.Index(b)) {
				return a, b, false, true
			}
		}
	}
	return 0, 0, true, true
}

// CanonicalJSON returns a form of the JSON value b in which equal JSON
// values (per JSON Schema: numbers by value, objects without member order)
// have equal text. Invalid JSON is returned unchanged.
func CanonicalJSON(b []byte) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(b)
	}
	var sb strings.Builder
	canonical(&sb, v)
	return sb.String()
}

func canonical(sb *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		sb.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Quote(k))
			sb.WriteByte(':')
			canonical(sb, v[k])
		}
		sb.WriteByte('}')
	case []any:
		sb.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				sb.WriteByte(',')
			}
			canonical(sb, e)
		}
		sb.WriteByte(']')
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(v)); ok {
			sb.WriteString(r.RatString())
		} else {
			sb.WriteString(string(v))
		}
	case string:
		sb.WriteString(strconv.Quote(v))
	case bool:
		sb.WriteString(strconv.FormatBool(v))
	case nil:
		sb.WriteString("null")
	}
}

// EqualJSON reports whether a and b are the same JSON value (see
// CanonicalJSON).
func EqualJSON(a, b []byte) bool {
	return CanonicalJSON(a) == CanonicalJSON(b)
}

// QuoteList renders values as a comma-separated list for messages.
func QuoteList(values ...string) string {
	return strings.Join(values, ", ")
}

// Has reports whether m has the key k (dependentRequired on members kept
// in a map).
func Has[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// Matches reports whether the JSON encoding of v is accepted by accept, the
// generated decoder and validator of a subschema (not, if).
func Matches(v any, accept func(data []byte, vs *Violations)) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var sub Violations
	accept(b, &sub)
	return sub.Len() == 0
}

// CheckAs records at ptr what accept, the generated decoder and validator
// of a subschema (then, else), finds wrong with the JSON encoding of v.
func CheckAs(v any, ptr string, vs *Violations, accept func(data []byte, vs *Violations)) {
	b, err := json.Marshal(v)
	if err != nil {
		vs.Add(ptr, err.Error())
		return
	}
	CheckRaw(b, ptr, vs, accept)
}

// CheckRaw is CheckAs for a value that is JSON already (a tuple element).
func CheckRaw(data json.RawMessage, ptr string, vs *Violations, accept func(data []byte, vs *Violations)) {
	var sub Violations
	accept(data, &sub)
	vs.Merge(ptr, sub.Err(""))
}

// rat reads a JSON number's text; "" (an unset json.Number, encoded as 0)
// is 0.
func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return new(big.Rat)
	}
	return r
}

// CompareNumber compares the number x (a json.Number) with the literal
// lit exactly: -1, 0 or +1.
func CompareNumber[T ~string](x T, lit string) int { return rat(string(x)).Cmp(rat(lit)) }

// BigMultipleOf reports whether the number x (a json.Number) is a multiple
// of m, exactly.
func BigMultipleOf[T ~string](x T, m string) bool {
	d := rat(m)
	if d.Sign() == 0 {
		return false
	}
	return new(big.Rat).Quo(rat(string(x)), d).IsInt()
}

// Under puts the pointer of array element i under ptr before the pointers
// of the violations recorded since mark (a Len): generated code checks an
// element at pointer "" and builds its pointer only when needed.
func (vs *Violations) Under(mark int, ptr string, i int) {
	if len(vs.list) > mark {
		vs.prefix(mark, IndexPointer(ptr, i))
	}
}

// UnderKey is Under for the member key of a map.
func (vs *Violations) UnderKey(mark int, ptr, key string) {
	if len(vs.list) > mark {
		vs.prefix(mark, KeyPointer(ptr, key))
	}
}

func (vs *Violations) prefix(mark int, ptr string) {
	for i := mark; i < len(vs.list); i++ {
		vs.list[i].Pointer = ptr + vs.list[i].Pointer
	}
}
