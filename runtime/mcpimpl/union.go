package mcpimpl

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/internal/jsonscan"
)

// The table-driven form of a generated union's MarshalJSON and
// UnmarshalJSON, as Struct is a struct's: the generator writes one Union
// per union type, its variants as plain data in the order of the type's
// fields (one unexported field per variant: a pointer to the variant's
// value, or a bool for null), and the two methods call Union.Encode and
// Union.Decode. How the variants are told apart (JSON type, discriminator,
// unique member, trying them in order) is decided here, once, instead of
// being unrolled into every union's UnmarshalJSON.

// Variant is one alternative of a Union.
type Variant struct {
	// Name is the variant's Go name (its As and Set methods), for
	// messages.
	Name string
	// Kind is the JSON type of its values: object, array, string, number
	// (integers too), boolean or null.
	Kind string
	// Hint describes the innermost value of the variant's type, as a Row's
	// does.
	Hint Hint
	// Disc is the canonical JSON (see CanonicalJSON) of the value of the
	// union's Discriminator that selects this object variant.
	Disc string
	// Member is a required member no other object variant mentions, which
	// selects this variant.
	Member string
	// Try is the variant's place (from 1) in the order the variants of its
	// JSON type are tried in, when nothing else tells them apart.
	Try int
	// Check validates a decoded value of a tried variant (a pointer to
	// it), as the variant's Validate would; nil when there is nothing to
	// check.
	Check func(v any, vs *Violations)
	// Kept marks a closed object variant of an output, which keeps the
	// members it does not declare: it matches strictly when it kept none.
	Kept bool
}

// Union is the table of one generated union type. It is compiled on first
// use; the zero value with Variants set is ready.
type Union struct {
	// Name is the Go type's name, for messages.
	Name string
	// OneOf: exactly one variant must accept a value (else any may, and
	// the first that does is taken).
	OneOf bool
	// Tolerant (an output's oneOf with closed object variants): when no
	// variant accepts a value strictly, the first that accepts it while
	// keeping members it does not declare is taken.
	Tolerant bool
	// Discriminator is the member whose value selects an object variant
	// (Variant.Disc), or "".
	Discriminator string
	// Exclusive: the object variants told apart by Member are closed and
	// do not declare each other's members, so that an object with several
	// of them matches none; otherwise such an object is decided by trying
	// those variants.
	Exclusive bool
	Variants  []Variant

	once sync.Once
	c    *compiledUnion
}

type compiledUnion struct {
	typ   reflect.Type
	alts  []alt
	kinds []string // the JSON types, in variant order
}

type alt struct {
	off   uintptr
	ptr   reflect.Type // *T, or bool for null
	elem  reflect.Type
	dec   decoder
	extra int // index of the kept members' field, for Kept
}

func (u *Union) compile(typ reflect.Type) *compiledUnion {
	u.once.Do(func() {
		if typ.Kind() != reflect.Struct || typ.NumField() != len(u.Variants) {
			panic(fmt.Sprintf("mcpimpl: union table for %v: %d variants for %d fields", typ, len(u.Variants), typ.NumField()))
		}
		c := &compiledUnion{typ: typ, alts: make([]alt, len(u.Variants))}
		for i, v := range u.Variants {
			sf := typ.Field(i)
			a := &c.alts[i]
			a.off, a.ptr = sf.Offset, sf.Type
			if !slices.Contains(c.kinds, v.Kind) {
				c.kinds = append(c.kinds, v.Kind)
			}
			if v.Kind == "null" {
				if sf.Type.Kind() != reflect.Bool {
					panic(fmt.Sprintf("mcpimpl: union table for %v: the null variant's field is not a bool", typ))
				}
				continue
			}
			if sf.Type.Kind() != reflect.Pointer {
				panic(fmt.Sprintf("mcpimpl: union table for %v: variant %s's field is not a pointer", typ, v.Name))
			}
			a.elem = sf.Type.Elem()
			a.dec = decoderFor(a.elem, v.Hint, atField)
			if v.Kept {
				f, ok := a.elem.FieldByName("AdditionalProperties")
				if !ok || f.Type.Kind() != reflect.Map {
					panic(fmt.Sprintf("mcpimpl: union table for %v: variant %s keeps no members", typ, v.Name))
				}
				a.extra = f.Index[0]
			}
		}
		u.c = c
	})
	if u.c.typ != typ {
		panic(fmt.Sprintf("mcpimpl: union table for %v used with %v", u.c.typ, typ))
	}
	return u.c
}

// Decode is UnmarshalJSON for v, a pointer to the table's union: it picks
// the variant and decodes it strictly, every problem reported in a
// *mcpruntime.ValidationError. *v is replaced, by a value with no variant
// set when none could be picked.
func (u *Union) Decode(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	c := u.compile(rv.Type().Elem())
	p := rv.UnsafePointer()
	zero(c.typ, p)
	if l := u.decode(c, data, p); len(l) > 0 {
		return &mcpruntime.ValidationError{Violations: l}
	}
	return nil
}

func (u *Union) decode(c *compiledUnion, data []byte, p unsafe.Pointer) []mcpruntime.Violation {
	var vs Violations
	kind := JSONKind(data)
	switch kind {
	case "":
		vs.Add("", "invalid JSON")
		return vs.list
	case "string", "number", "boolean", "null":
		// An object or array is checked as it is decoded; a scalar that
		// only starts like one (nonsense, 1x) is not JSON.
		if !jsonscan.Valid(data) {
			vs.Add("", "invalid JSON")
			return vs.list
		}
	}
	var group []int
	for i := range u.Variants {
		if u.Variants[i].Kind == kind {
			group = append(group, i)
		}
	}
	switch {
	case len(group) == 0:
		vs.Add("", "expected "+strings.Join(c.kinds, " or ")+", found "+kind)
	case len(group) == 1:
		vs.addAll(u.set(c, group[0], data, p))
	case u.Variants[group[0]].Try > 0:
		slices.SortStableFunc(group, func(a, b int) int { return u.Variants[a].Try - u.Variants[b].Try })
		vs.addAll(u.try(c, group, data, p))
	case u.Discriminator != "":
		d, ok := Member(data, u.Discriminator)
		if !ok {
			vs.Add("", fmt.Sprintf("missing required member %q", u.Discriminator))
			break
		}
		var lits []string
		for _, i := range group {
			if u.Variants[i].Disc == d {
				return u.set(c, i, data, p)
			}
			lits = append(lits, u.Variants[i].Disc)
		}
		vs.Add(KeyPointer("", u.Discriminator), "must be one of "+strings.Join(lits, ", "))
	default:
		var members []string
		present, first := 0, -1
		for _, i := range group {
			members = append(members, strconv.Quote(u.Variants[i].Member))
			if HasMember(data, u.Variants[i].Member) {
				present++
				if first < 0 {
					first = i
				}
			}
		}
		switch {
		case present > 1 && u.Exclusive:
			vs.Add("", "matches no variant: has more than one of the members "+strings.Join(members, ", "))
		case present > 1:
			// A variant requires its member, so with one of them present
			// only that variant can match; with several, any may.
			vs.addAll(u.try(c, group, data, p))
		case present == 1:
			vs.addAll(u.set(c, first, data, p))
		default:
			vs.Add("", "matches no variant: expected one of the members "+strings.Join(members, ", "))
		}
	}
	return vs.list
}

// set decodes data as variant i into the union at p.
func (u *Union) set(c *compiledUnion, i int, data []byte, p unsafe.Pointer) []mcpruntime.Violation {
	a := &c.alts[i]
	fp := unsafe.Add(p, a.off)
	if a.dec == nil {
		*(*bool)(fp) = true
		return nil
	}
	x := reflect.New(a.elem).UnsafePointer()
	*(*unsafe.Pointer)(fp) = x
	return a.dec(data, x, "")
}

// accept decodes data as variant i on its own, and returns the value (a
// pointer) when it is valid, else nil.
func (u *Union) accept(c *compiledUnion, i int, data []byte) unsafe.Pointer {
	a := &c.alts[i]
	x := reflect.New(a.elem)
	if l := a.dec(data, x.UnsafePointer(), ""); len(l) > 0 {
		return nil
	}
	if check := u.Variants[i].Check; check != nil {
		var vs Violations
		check(x.Interface(), &vs)
		if vs.Len() > 0 {
			return nil
		}
	}
	return x.UnsafePointer()
}

// try decodes data with each variant of group in order, each on its own:
// anyOf takes the first that accepts the value, oneOf needs exactly one
// to (a Tolerant one takes the first that accepts it loosely when none
// does strictly).
func (u *Union) try(c *compiledUnion, group []int, data []byte, p unsafe.Pointer) []mcpruntime.Violation {
	var vs Violations
	var labels []string
	for _, i := range group {
		labels = append(labels, u.Variants[i].Name)
	}
	n, strict := 0, 0
	loose := -1
	var looseX unsafe.Pointer
	for _, i := range group {
		x := u.accept(c, i, data)
		if x == nil {
			continue
		}
		if !u.OneOf {
			*(*unsafe.Pointer)(unsafe.Add(p, c.alts[i].off)) = x
			return nil
		}
		if n == 0 {
			loose, looseX = i, x
		}
		n++
		if !u.Tolerant || !u.Variants[i].Kept || reflect.NewAt(c.alts[i].elem, x).Elem().Field(c.alts[i].extra).Len() == 0 {
			if strict == 0 {
				*(*unsafe.Pointer)(unsafe.Add(p, c.alts[i].off)) = x
			}
			strict++
		}
	}
	switch {
	case strict == 1:
	case strict > 1:
		zero(c.typ, p)
		vs.Add("", "matches more than one of the variants "+strings.Join(labels, ", "))
	case u.Tolerant && n > 0:
		*(*unsafe.Pointer)(unsafe.Add(p, c.alts[loose].off)) = looseX
	default:
		vs.Add("", "matches none of the variants "+strings.Join(labels, ", "))
	}
	return vs.list
}

// Encode is MarshalJSON for v, a pointer to the table's union: the JSON of
// the variant that is set.
func (u *Union) Encode(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	c := u.compile(rv.Type().Elem())
	p := rv.UnsafePointer()
	for i := range c.alts {
		a := &c.alts[i]
		fp := unsafe.Add(p, a.off)
		if a.dec == nil {
			if *(*bool)(fp) {
				return []byte("null"), nil
			}
			continue
		}
		if *(*unsafe.Pointer)(fp) != nil {
			return json.Marshal(reflect.NewAt(a.ptr, fp).Elem().Interface())
		}
	}
	return nil, errors.New(u.Name + ": no variant is set")
}

// Checker makes a generated validate method a Variant's Check.
func Checker[T any](validate func(*T, string, *Violations)) func(any, *Violations) {
	return func(v any, vs *Violations) { validate(v.(*T), "", vs) }
}

// As is a union's As method: the variant's value and true when v, its
// field, is set, else the zero value and false.
func As[T any](v *T) (T, bool) {
	if v == nil {
		var zero T
		return zero, false
	}
	return *v, true
}
