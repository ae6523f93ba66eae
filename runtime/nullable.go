package mcpruntime

import (
	"bytes"
	"encoding/json"
)

// Nullable is a three-state value for JSON members whose schema allows null:
// absent (the zero value), explicitly null, or a value. A decode→encode round
// trip keeps absent absent and null null, which *T cannot express.
//
// Struct fields of this type must carry `json:",omitzero"` so that an absent
// value is left out when encoding.
type Nullable[T any] struct {
	value T
	set   bool // member present in JSON
	null  bool // member present and null
}

// Value returns a Nullable holding v.
func Value[T any](v T) Nullable[T] { return Nullable[T]{value: v, set: true} }

// Null returns a Nullable that is present and null.
func Null[T any]() Nullable[T] { return Nullable[T]{set: true, null: true} }

// IsSet reports whether the member was present (null or a value).
func (n Nullable[T]) IsSet() bool { return n.set }

// IsNull reports whether the member was present and null.
func (n Nullable[T]) IsNull() bool { return n.set && n.null }

// Get returns the value and whether there is one (present and not null).
func (n Nullable[T]) Get() (T, bool) { return n.value, n.set && !n.null }

// Or returns the value, or def when absent or null.
func (n Nullable[T]) Or(def T) T {
	if n.set && !n.null {
		return n.value
	}
	return def
}

// IsZero reports whether the member is absent; encoding/json's omitzero uses
// it to leave absent members out.
func (n Nullable[T]) IsZero() bool { return !n.set }

// MarshalJSON encodes null or the value. An absent Nullable encodes as null
// too; use `omitzero` on the field to leave it out instead.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if !n.set || n.null {
		return []byte("null"), nil
	}
	return json.Marshal(n.value)
}

// UnmarshalJSON records null or decodes the value. It is only called for
// members present in the input, so absence is the zero value.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		var zero T
		*n = Nullable[T]{value: zero, set: true, null: true}
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = Nullable[T]{value: v, set: true}
	return nil
}
