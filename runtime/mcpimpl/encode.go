package mcpimpl

import (
	"encoding/json"
	"slices"
)

// ObjectEncoder writes a JSON object member by member, in the order the
// generated MarshalJSON adds them (schema order, then extra members sorted
// by name), so output is deterministic. The first error sticks.
type ObjectEncoder struct {
	buf []byte
	err error
}

// Member adds name with the JSON encoding of v.
func (e *ObjectEncoder) Member(name string, v any) {
	if e.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.err = err
		return
	}
	k, _ := json.Marshal(name) // a string always encodes
	if len(e.buf) == 0 {
		e.buf = append(e.buf, '{')
	} else {
		e.buf = append(e.buf, ',')
	}
	e.buf = append(e.buf, k...)
	e.buf = append(e.buf, ':')
	e.buf = append(e.buf, b...)
}

// Bytes returns the object, or the first error.
func (e *ObjectEncoder) Bytes() ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	if len(e.buf) == 0 {
		return []byte("{}"), nil
	}
	return append(e.buf, '}'), nil
}

// ExtraMembers adds the members of m in name order, skipping names in
// known: a declared member always wins over an extra of the same name.
func ExtraMembers[T any](e *ObjectEncoder, m map[string]T, known ...string) {
	for _, k := range SortedKeys(m) {
		if !slices.Contains(known, k) {
			e.Member(k, m[k])
		}
	}
}

// NonNilSlice returns s, or an empty slice when s is nil, so that a
// required array is sent as [] rather than null.
func NonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// NonNilMap returns m, or an empty map when m is nil, so that a required
// object is sent as {} rather than null.
func NonNilMap[T any](m map[string]T) map[string]T {
	if m == nil {
		return map[string]T{}
	}
	return m
}
