package mcpimpl

import (
	"encoding/json"
	"slices"
	"strconv"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/internal/jsonscan"
)

// Object is a JSON object split into its members, for generated decoders:
// lookups by name without building a map, which for the small objects of
// tool results costs more than a linear search. The first members live in
// the Object itself, so one declared as a local variable costs no
// allocation.
type Object struct {
	n     int
	first [objectInline]jsonscan.Member
	rest  []jsonscan.Member
}

const objectInline = 12

func (o *Object) at(i int) *jsonscan.Member {
	if i < objectInline {
		return &o.first[i]
	}
	return &o.rest[i-objectInline]
}

func (o *Object) add(m jsonscan.Member) {
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
	if !jsonscan.SplitObject(data, o.add) {
		*o = Object{}
		vs.Add(ptr, "invalid JSON object")
		return false
	}
	return true
}

// decodeValid is Decode for a value split out of a document that was
// validated whole: it only finds the members' boundaries.
func (o *Object) decodeValid(data []byte, ptr string, vs *Violations) bool {
	*o = Object{}
	if JSONKind(data) != "object" {
		wrongKind(vs, ptr, "object", data)
		return false
	}
	jsonscan.SplitValidObject(data, o.add)
	return true
}

// Get returns the value of the member name. With duplicate names the last
// one wins, as in encoding/json.
func (o *Object) Get(name string) (json.RawMessage, bool) {
	for i := o.n - 1; i >= 0; i-- {
		if m := o.at(i); string(m.Name) == name {
			return m.Value, true
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
		if slices.Contains(known, string(m.Name)) {
			continue
		}
		if vals == nil {
			vals = map[string]json.RawMessage{}
		}
		vals[string(m.Name)] = m.Value
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

// KeepUnknown returns the members of o whose names are not in known, as
// raw JSON, or nil when there are none; typ is the generated type's name.
// It is for output objects whose schema is closed: a newer release of the
// server may add members, and decoding keeps them rather than fail (see
// mcpruntime.Unknown). Each name is reported through
// mcpruntime.ReportUnknown.
func KeepUnknown(o *Object, typ string, known ...string) map[string]json.RawMessage {
	vals, names := o.undeclared(known)
	for _, k := range names {
		mcpruntime.ReportUnknown(mcpruntime.Unknown{Type: typ, Member: k})
	}
	return vals
}

// UnknownEnum reports an output enum value that the generated type typ
// does not list through mcpruntime.ReportUnknown; the value is kept.
func UnknownEnum[T ~string | ~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64](typ string, v T) {
	b, err := json.Marshal(v)
	if err != nil {
		return // a NaN cannot come from JSON
	}
	mcpruntime.ReportUnknown(mcpruntime.Unknown{Type: typ, Value: string(b)})
}
