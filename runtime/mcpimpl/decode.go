package mcpimpl

import (
	"encoding/json"
	"errors"
	"math/big"
	"slices"
	"strconv"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/internal/jsonscan"
)

// The helpers in this file are called by code that mcpgen generates to
// decode JSON strictly and report every structural problem (wrong JSON type,
// null where null is not allowed, missing required member, unknown member of
// a closed object) as a Violation with a JSON Pointer. They take the place of
// encoding/json's first-error-wins behaviour and its case-insensitive member
// matching.

// DecodeFunc decodes raw into dst, recording problems at ptr in vs.
type DecodeFunc[T any] func(raw json.RawMessage, dst *T, ptr string, vs *Violations)

// JSONKind returns the JSON type of the value in data: "object", "array",
// "string", "number", "boolean" or "null", or "" when data does not start a
// JSON value. It looks at the first byte only.
func JSONKind(data []byte) string {
	i := jsonscan.SkipSpace(data, 0)
	if i == len(data) {
		return ""
	}
	switch c := data[i]; {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "number"
	}
	return ""
}

// isNull reports whether raw is the JSON null, spaces around it aside.
// JSONKind looks at the first byte only: text that merely starts like null
// (nonsense, nul) is not JSON, and is reported as such.
func isNull(raw []byte) bool { return string(jsonscan.Trim(raw)) == "null" }

// wrongKind reports a value that is not of the JSON type want, or, when it
// is not JSON at all (tx, 1x, nonsense: JSONKind names only the type such
// text starts like), that it is invalid JSON.
func wrongKind(vs *Violations, ptr, want string, raw []byte) {
	got := JSONKind(raw)
	if got == "" || !jsonscan.Valid(raw) {
		vs.Add(ptr, "invalid JSON")
		return
	}
	vs.Add(ptr, "expected "+want+", found "+got)
}

// DecodeString decodes a JSON string.
func DecodeString[T ~string](raw json.RawMessage, dst *T, ptr string, vs *Violations) {
	if JSONKind(raw) != "string" {
		wrongKind(vs, ptr, "string", raw)
		return
	}
	raw = jsonscan.Trim(raw)
	end, plain, ok := jsonscan.String(raw, 0)
	if !ok || end != len(raw) {
		vs.Add(ptr, "invalid JSON string")
		return
	}
	s, ok := jsonscan.Unquote(raw, plain)
	if !ok {
		vs.Add(ptr, "invalid JSON string")
		return
	}
	*dst = T(s)
}

// DecodeBool decodes a JSON boolean.
func DecodeBool[T ~bool](raw json.RawMessage, dst *T, ptr string, vs *Violations) {
	if JSONKind(raw) != "boolean" {
		wrongKind(vs, ptr, "boolean", raw)
		return
	}
	switch string(jsonscan.Trim(raw)) {
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		vs.Add(ptr, "invalid JSON boolean")
	}
}

// DecodeNumber decodes a JSON number into a float type.
func DecodeNumber[T ~float64 | ~float32](raw json.RawMessage, dst *T, ptr string, vs *Violations) {
	if JSONKind(raw) != "number" {
		wrongKind(vs, ptr, "number", raw)
		return
	}
	raw = jsonscan.Trim(raw)
	if end, ok := jsonscan.Number(raw, 0); !ok || end != len(raw) {
		vs.Add(ptr, "invalid JSON number")
		return
	}
	// The text is a JSON number, which ParseFloat reads as encoding/json
	// does; its only error left is a value out of range.
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		vs.Add(ptr, "number out of range")
		return
	}
	*dst = T(f)
}

// DecodeInteger decodes a JSON number that is an integer into T. As in JSON
// Schema, 1.0 and 1e2 are integers; a fraction or a value that does not fit
// in T is a violation.
func DecodeInteger[T ~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64](raw json.RawMessage, dst *T, ptr string, vs *Violations) {
	if JSONKind(raw) != "number" {
		wrongKind(vs, ptr, "integer", raw)
		return
	}
	raw = jsonscan.Trim(raw)
	if end, ok := jsonscan.Number(raw, 0); !ok || end != len(raw) {
		vs.Add(ptr, "invalid JSON number")
		return
	}
	if plainInteger(raw) {
		// The common case, without big.Rat: plain digits that fit in 64
		// bits, then the same fit check as below.
		if raw[0] == '-' {
			if x, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				if v := T(x); int64(v) == x && (v < 0) == (x < 0) {
					*dst = v
					return
				}
			}
		} else if x, err := strconv.ParseUint(string(raw), 10, 64); err == nil {
			if v := T(x); uint64(v) == x && (x == 0 || v > 0) {
				*dst = v
				return
			}
		}
	}
	n := json.Number(raw)
	r, ok := new(big.Rat).SetString(n.String())
	if !ok || !r.IsInt() {
		vs.Add(ptr, "expected integer, found "+n.String())
		return
	}
	// Convert and convert back: a value that does not survive, or whose
	// sign flips, does not fit in T.
	switch i := r.Num(); {
	case i.IsInt64():
		x := i.Int64()
		if v := T(x); int64(v) == x && (v < 0) == (x < 0) {
			*dst = v
			return
		}
	case i.IsUint64():
		x := i.Uint64()
		if v := T(x); uint64(v) == x && v > 0 {
			*dst = v
			return
		}
	}
	vs.Add(ptr, "integer "+n.String()+" out of range")
}

// plainInteger reports whether the JSON number raw has no fraction and no
// exponent.
func plainInteger(raw []byte) bool {
	for _, c := range raw {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

// DecodeRaw keeps any JSON value, null included, as raw bytes.
func DecodeRaw(raw json.RawMessage, dst *json.RawMessage, ptr string, vs *Violations) {
	if JSONKind(raw) == "" || !jsonscan.Valid(raw) {
		vs.Add(ptr, "invalid JSON")
		return
	}
	*dst = append(json.RawMessage(nil), jsonscan.Trim(raw)...)
}

// Decode decodes a non-null value with the generated UnmarshalJSON of T;
// the violations it reports are merged under ptr.
func Decode[T any](raw json.RawMessage, dst *T, ptr string, vs *Violations) {
	if isNull(raw) {
		vs.Add(ptr, "unexpected null")
		return
	}
	unmarshal(raw, dst, ptr, vs)
}

// DecodeInner is Decode for a value that the enclosing generated decoder
// has already split out of its parent, and so validated: it skips the
// validity check, which would scan the value once more at every nesting
// level.
func DecodeInner[T any](raw json.RawMessage, dst *T, ptr string, vs *Violations) {
	if isNull(raw) {
		vs.Add(ptr, "unexpected null")
		return
	}
	decodeInner(raw, dst, ptr, vs)
}

// DecodeInnerNullAware is DecodeNullAware for a value already validated
// (see DecodeInner).
func DecodeInnerNullAware[T any](raw json.RawMessage, dst *T, ptr string, vs *Violations) {
	decodeInner(raw, dst, ptr, vs)
}

func decodeInner[T any](raw json.RawMessage, dst *T, ptr string, vs *Violations) {
	if u, ok := any(dst).(json.Unmarshaler); ok {
		vs.Merge(ptr, u.UnmarshalJSON(jsonscan.Trim(raw)))
		return
	}
	unmarshal(raw, dst, ptr, vs)
}

// unmarshal calls dst's UnmarshalJSON directly when it has one: going
// through json.Unmarshal would validate and copy raw once more at every
// nesting level. Generated UnmarshalJSON methods validate their input
// themselves (DecodeObject, SliceOf, the scalar decoders), so invalid JSON
// is still reported, though here as invalid JSON with the outermost value's
// pointer.
func unmarshal[T any](raw json.RawMessage, dst *T, ptr string, vs *Violations) {
	if u, ok := any(dst).(json.Unmarshaler); ok {
		if !jsonscan.Valid(raw) {
			vs.Add(ptr, "invalid JSON")
			return
		}
		vs.Merge(ptr, u.UnmarshalJSON(jsonscan.Trim(raw)))
		return
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			vs.Add(ptr, "invalid JSON")
			return
		}
		vs.Merge(ptr, err)
	}
}

// SliceOf decodes a JSON array element by element with elem. The result is
// never nil, so an empty array survives a round trip.
func SliceOf[T any](elem DecodeFunc[T]) DecodeFunc[[]T] {
	return func(raw json.RawMessage, dst *[]T, ptr string, vs *Violations) {
		if JSONKind(raw) != "array" {
			wrongKind(vs, ptr, "array", raw)
			return
		}
		var buf [16]json.RawMessage
		items, ok := jsonscan.SplitArray(raw, buf[:0])
		if !ok {
			vs.Add(ptr, "invalid JSON array")
			return
		}
		out := make([]T, len(items))
		for i, it := range items {
			elem(it, &out[i], IndexPointer(ptr, i), vs)
		}
		*dst = out
	}
}

// MapOf decodes a JSON object member by member with elem. The result is
// never nil.
func MapOf[T any](elem DecodeFunc[T]) DecodeFunc[map[string]T] {
	return func(raw json.RawMessage, dst *map[string]T, ptr string, vs *Violations) {
		members, ok := DecodeObject(raw, ptr, vs)
		if !ok {
			return
		}
		out := make(map[string]T, len(members))
		for _, k := range SortedKeys(members) {
			var v T
			elem(members[k], &v, KeyPointer(ptr, k), vs)
			out[k] = v
		}
		*dst = out
	}
}

// PointerTo decodes into a newly allocated T (optional members).
func PointerTo[T any](elem DecodeFunc[T]) DecodeFunc[*T] {
	return func(raw json.RawMessage, dst **T, ptr string, vs *Violations) {
		v := new(T)
		elem(raw, v, ptr, vs)
		*dst = v
	}
}

// NullOr decodes null as nil and anything else like PointerTo (nullable
// array elements and map values).
func NullOr[T any](elem DecodeFunc[T]) DecodeFunc[*T] {
	return func(raw json.RawMessage, dst **T, ptr string, vs *Violations) {
		if isNull(raw) {
			*dst = nil
			return
		}
		PointerTo(elem)(raw, dst, ptr, vs)
	}
}

// NullableOf decodes null as Null and anything else as a Value.
func NullableOf[T any](elem DecodeFunc[T]) DecodeFunc[mcpruntime.Nullable[T]] {
	return func(raw json.RawMessage, dst *mcpruntime.Nullable[T], ptr string, vs *Violations) {
		if isNull(raw) {
			*dst = mcpruntime.Null[T]()
			return
		}
		var v T
		elem(raw, &v, ptr, vs)
		*dst = mcpruntime.Value(v)
	}
}

// DecodeObject splits a JSON object into its members; anything else is a
// violation at ptr and ok is false. With duplicate member names the last
// one wins, as in encoding/json. Generated struct decoders now use Object,
// which needs no map; DecodeObject, Required, Unknown and Extra stay for
// code generated before it.
func DecodeObject(raw []byte, ptr string, vs *Violations) (members map[string]json.RawMessage, ok bool) {
	if JSONKind(raw) != "object" {
		wrongKind(vs, ptr, "object", raw)
		return nil, false
	}
	members = map[string]json.RawMessage{}
	if !jsonscan.SplitObject(raw, func(m jsonscan.Member) { members[string(m.Name)] = m.Value }) {
		vs.Add(ptr, "invalid JSON object")
		return nil, false
	}
	return members, true
}

// SortedKeys returns the keys of m in increasing order, so that generated
// code reports violations in a stable order.
func SortedKeys[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Required records a violation at ptr for every name in names that is not a
// member.
func Required(members map[string]json.RawMessage, ptr string, vs *Violations, names ...string) {
	for _, n := range names {
		if _, ok := members[n]; !ok {
			vs.Add(ptr, "missing required member "+strconv.Quote(n))
		}
	}
}

// Unknown records a violation for every member whose name is not in known
// (objects with additionalProperties: false).
func Unknown(members map[string]json.RawMessage, ptr string, vs *Violations, known ...string) {
	if !hasUnknown(members, known) {
		return
	}
	for _, k := range SortedKeys(members) {
		if !slices.Contains(known, k) {
			vs.Add(KeyPointer(ptr, k), "unknown member "+strconv.Quote(k)+" is not allowed")
		}
	}
}

// Extra decodes every member whose name is not in known with elem into a
// new map, which is nil when there are none (open objects keep what they
// do not declare, so a round trip loses nothing).
func Extra[T any](members map[string]json.RawMessage, ptr string, vs *Violations, elem DecodeFunc[T], known ...string) map[string]T {
	if !hasUnknown(members, known) {
		return nil
	}
	var out map[string]T
	for _, k := range SortedKeys(members) {
		if slices.Contains(known, k) {
			continue
		}
		if out == nil {
			out = map[string]T{}
		}
		var v T
		elem(members[k], &v, KeyPointer(ptr, k), vs)
		out[k] = v
	}
	return out
}

// hasUnknown reports whether members has a name not in known, without
// sorting (the common answer is no).
func hasUnknown(members map[string]json.RawMessage, known []string) bool {
	for k := range members {
		if !slices.Contains(known, k) {
			return true
		}
	}
	return false
}

// Const records a violation unless raw is the JSON value want (given in
// the canonical form of CanonicalJSON).
func Const(raw json.RawMessage, want string, ptr string, vs *Violations) {
	if CanonicalJSON(raw) != want {
		vs.Add(ptr, "must be "+want)
	}
}

// Member returns the canonical form (see CanonicalJSON) of the member name
// of the JSON object data, and whether it is there. Generated union decoders
// use it to read a discriminator.
func Member(data []byte, name string) (string, bool) {
	// The last of duplicate members wins, as in encoding/json.
	var raw json.RawMessage
	found := false
	if !jsonscan.SplitObject(data, func(m jsonscan.Member) {
		if string(m.Name) == name {
			raw, found = m.Value, true
		}
	}) || !found {
		return "", false
	}
	return CanonicalJSON(raw), true
}

// HasMember reports whether the JSON object data has a member name.
func HasMember(data []byte, name string) bool {
	found := false
	return jsonscan.SplitObject(data, func(m jsonscan.Member) { found = found || string(m.Name) == name }) && found
}

// DecodeRawAs is DecodeRaw for a named raw type.
func DecodeRawAs[T ~[]byte](raw json.RawMessage, dst *T, ptr string, vs *Violations) {
	var r json.RawMessage
	DecodeRaw(raw, &r, ptr, vs)
	*dst = T(r)
}

// DecodeNullAware decodes any value, null included, with encoding/json;
// for types whose generated UnmarshalJSON accepts null (a union with a null
// variant).
func DecodeNullAware[T any](raw json.RawMessage, dst *T, ptr string, vs *Violations) {
	unmarshal(raw, dst, ptr, vs)
}

// DecodeRawValue is DecodeRaw for a place whose schema refuses null (a
// union kept raw, a mixed enum): null is a violation.
func DecodeRawValue(raw json.RawMessage, dst *json.RawMessage, ptr string, vs *Violations) {
	if isNull(raw) {
		vs.Add(ptr, "unexpected null")
		return
	}
	DecodeRaw(raw, dst, ptr, vs)
}

// DecodeRawValueAs is DecodeRawValue for a named raw type.
func DecodeRawValueAs[T ~[]byte](raw json.RawMessage, dst *T, ptr string, vs *Violations) {
	var r json.RawMessage
	DecodeRawValue(raw, &r, ptr, vs)
	*dst = T(r)
}

// DecodeBigInteger decodes a JSON integer of any size into its exact text
// (json.Number), for a schema whose range exceeds 64 bits. As in JSON
// Schema, 1.0 and 1e30 are integers.
func DecodeBigInteger[T ~string](raw json.RawMessage, dst *T, ptr string, vs *Violations) {
	if JSONKind(raw) != "number" {
		wrongKind(vs, ptr, "integer", raw)
		return
	}
	raw = jsonscan.Trim(raw)
	if end, ok := jsonscan.Number(raw, 0); !ok || end != len(raw) {
		vs.Add(ptr, "invalid JSON number")
		return
	}
	if r, ok := new(big.Rat).SetString(string(raw)); !ok || !r.IsInt() {
		vs.Add(ptr, "expected integer, found "+string(raw))
		return
	}
	*dst = T(raw)
}
