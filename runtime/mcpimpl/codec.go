package mcpimpl

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/internal/jsonscan"
)

// The table-driven form of a generated struct's MarshalJSON and
// UnmarshalJSON. The generator writes one table per struct, a Struct whose
// rows are the object's members in schema order, as plain data, and the two
// methods call Struct.Encode and Struct.Decode. The table is compiled into
// decoders on first use, from the struct's Go field types (read with
// reflect) and the few facts a Go type does not carry (Hint). The decoders
// behave exactly as the generic ones in decode.go that unrolled methods
// called, which they reuse; only their dispatch moved from generated code,
// compiled once per type, to this file, compiled once.

// Presence says when Encode writes a member.
type Presence uint8

const (
	// Always writes the member.
	Always Presence = iota
	// OmitNil leaves out a nil pointer, slice, map or raw value.
	OmitNil
	// OmitUnset leaves out an unset mcpruntime.Nullable.
	OmitUnset
	// EmptyArray writes a nil slice as [] (a required array).
	EmptyArray
	// EmptyObject writes a nil map as {} (a required object).
	EmptyObject
)

// Openness says what decoding does with members the schema does not declare.
type Openness uint8

const (
	// Open ignores them.
	Open Openness = iota
	// Closed rejects each one as a violation.
	Closed
	// OpenKept keeps them in the struct's last field, a map decoded with
	// the element decoder its type and Struct.Extra give.
	OpenKept
	// ClosedKept keeps them as raw JSON in the struct's last field, a
	// map[string]json.RawMessage, and reports each name through
	// mcpruntime.ReportUnknown (outputs of a newer server).
	ClosedKept
)

// Hint is what a Go type does not say of the innermost value of a member
// (the element of its arrays and maps, the value inside its pointer or
// Nullable).
type Hint uint8

const (
	// Raw: the value is raw JSON kept as bytes (any JSON value, null too).
	Raw Hint = 1 << iota
	// NotNull: with Raw, null is a violation.
	NotNull
	// BigInt: the value is an integer of any size kept as its text.
	BigInt
	// NullAware: the value's type decodes null itself (a union with a null
	// variant).
	NullAware
)

// Row is one member of a Struct.
type Row struct {
	// Name is the member's name in JSON.
	Name string
	// Hint describes the innermost value of the member's field.
	Hint Hint
	// Presence says when the member is encoded.
	Presence Presence
	// Required members missing from an object are violations.
	Required bool
	// Fixed is the canonical JSON (see CanonicalJSON) of a member the
	// schema fixes to one value: it has no struct field, decoding checks
	// it, and FixedText is what Encode writes.
	Fixed, FixedText string
}

// Struct is the table of one generated struct type: its fields are the
// non-fixed rows in order, then, for OpenKept and ClosedKept, the map of
// kept members. It is compiled on first use; the zero value with Rows set
// is ready.
type Struct struct {
	Open Openness
	// Extra is the Hint of the kept members' values (OpenKept).
	Extra Hint
	Rows  []Row

	once sync.Once
	c    *compiled
}

// decoder decodes raw into the value at p and returns the violations it
// found. They are returned, not recorded through a *Violations: a pointer
// passed to a function value escapes, and each decode would allocate.
type decoder func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation

// with runs f on a Violations of its own and returns what f recorded.
func with(f func(vs *Violations)) []mcpruntime.Violation {
	var vs Violations
	f(&vs)
	return vs.list
}

// prefixed puts ptr before the pointers of l.
func prefixed(ptr string, l []mcpruntime.Violation) []mcpruntime.Violation {
	if ptr != "" {
		for i := range l {
			l[i].Pointer = ptr + l[i].Pointer
		}
	}
	return l
}

func (vs *Violations) addAll(l []mcpruntime.Violation) {
	if len(l) > 0 {
		vs.list = append(vs.list, l...)
	}
}

type compiled struct {
	typ      reflect.Type
	fields   []field // per row
	required []string
	known    []string
	extra    field // kept members, when Open is OpenKept or ClosedKept
}

type field struct {
	ptr  string // the member's JSON Pointer in the object
	off  uintptr
	typ  reflect.Type
	dec  decoder
	null *nullableLayout // the field is a Nullable
}

// compile builds the decoders of s for typ. A table that does not fit its
// struct is a bug of the generator: it panics, on the first use, which the
// generator's compile tests make for every table.
func (s *Struct) compile(typ reflect.Type) *compiled {
	s.once.Do(func() {
		c := &compiled{typ: typ, fields: make([]field, len(s.Rows))}
		i := 0
		for k, r := range s.Rows {
			c.known = append(c.known, r.Name)
			if r.Required {
				c.required = append(c.required, r.Name)
			}
			c.fields[k].ptr = KeyPointer("", r.Name)
			if r.Fixed != "" {
				continue
			}
			if i >= typ.NumField() {
				panic(fmt.Sprintf("mcpimpl: table for %v: member %q has no field", typ, r.Name))
			}
			sf := typ.Field(i)
			f := &c.fields[k]
			f.off, f.typ = sf.Offset, sf.Type
			f.dec = decoderFor(sf.Type, r.Hint, atField)
			f.null = nullableOf(sf.Type)
			switch k := sf.Type.Kind(); {
			case r.Presence == OmitNil && k != reflect.Pointer && k != reflect.Slice && k != reflect.Map,
				r.Presence == EmptyArray && k != reflect.Slice,
				r.Presence == EmptyObject && k != reflect.Map,
				r.Presence == OmitUnset && f.null == nil:
				panic(fmt.Sprintf("mcpimpl: table for %v: member %q cannot be left out as its row says", typ, r.Name))
			}
			i++
		}
		if s.Open == OpenKept || s.Open == ClosedKept {
			if i >= typ.NumField() || typ.Field(i).Type.Kind() != reflect.Map {
				panic(fmt.Sprintf("mcpimpl: table for %v: no map of kept members", typ))
			}
			sf := typ.Field(i)
			if s.Open == ClosedKept && sf.Type != reflect.TypeFor[map[string]json.RawMessage]() {
				panic(fmt.Sprintf("mcpimpl: table for %v: kept members must be raw JSON", typ))
			}
			c.extra = field{off: sf.Offset, typ: sf.Type, dec: decoderFor(sf.Type.Elem(), s.Extra, atElem)}
			i++
		}
		if i != typ.NumField() {
			panic(fmt.Sprintf("mcpimpl: table for %v: %d fields, %d in the table", typ, typ.NumField(), i))
		}
		s.c = c
		tables.Store(typ, s)
	})
	if s.c.typ != typ {
		panic(fmt.Sprintf("mcpimpl: table for %v used with %v", s.c.typ, typ))
	}
	return s.c
}

// tables holds every compiled table by its struct type (reflect.Type →
// *Struct), so that a struct inside another is decoded by its table
// directly, as part of the document already validated, rather than through
// its UnmarshalJSON, which must validate what it is given.
var tables sync.Map

// Where a value sits, which decides what a pointer means: an optional
// member (or a recursive one, or the value of a Nullable) is allocated; an
// array element or map value behind a pointer is nullable.
const (
	atField = iota
	atElem
)

var (
	unmarshalType = reflect.TypeFor[json.Unmarshaler]()
)

func decoderFor(t reflect.Type, h Hint, at int) decoder {
	if nl := nullableOf(t); nl != nil {
		inner := decoderFor(nl.value, h, atField)
		return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
			// NullableOf: null is Null; anything else is decoded and is
			// a Value even when it had violations.
			zero(nl.typ, p)
			*(*bool)(unsafe.Add(p, nl.set)) = true
			if isNull(raw) {
				*(*bool)(unsafe.Add(p, nl.null)) = true
				return nil
			}
			return inner(raw, p, ptr) // value is the first field
		}
	}
	if t.Kind() == reflect.Pointer {
		elem := t.Elem()
		inner := decoderFor(elem, h, atField)
		if at == atField {
			return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
				v := reflect.New(elem).UnsafePointer() // PointerTo
				*(*unsafe.Pointer)(p) = v
				return inner(raw, v, ptr)
			}
		}
		return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
			if isNull(raw) { // NullOr
				*(*unsafe.Pointer)(p) = nil
				return nil
			}
			v := reflect.New(elem).UnsafePointer()
			*(*unsafe.Pointer)(p) = v
			return inner(raw, v, ptr)
		}
	}
	if h&Raw != 0 && t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
		// Raw JSON, or an array of it (the hint is of the innermost value,
		// and only raw JSON is a byte slice then).
		if h&NotNull != 0 {
			return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
				var vs Violations
				DecodeRawValue(raw, (*json.RawMessage)(p), ptr, &vs)
				return vs.list
			}
		}
		return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
			var vs Violations
			DecodeRaw(raw, (*json.RawMessage)(p), ptr, &vs)
			return vs.list
		}
	}
	if d := scalarDecoder(t, h); d != nil {
		return d
	}
	if t.Name() != "" {
		// A generated type (struct, union, array, map): its own
		// UnmarshalJSON, as DecodeInner and DecodeInnerNullAware call it.
		nullAware := h&NullAware != 0
		own := reflect.PointerTo(t).Implements(unmarshalType)
		var table atomic.Pointer[Struct]
		return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
			if s := table.Load(); s != nil && !isNull(raw) {
				return prefixed(ptr, s.decode(raw, p, true))
			}
			return with(func(vs *Violations) {
				if !nullAware && isNull(raw) {
					vs.Add(ptr, "unexpected null")
					return
				}
				dst := reflect.NewAt(t, p).Interface()
				defer func() {
					// The first decode compiled the type's table, if it
					// has one: use it from now on.
					if s, ok := tables.Load(t); ok {
						table.Store(s.(*Struct))
					}
				}()
				if own {
					vs.Merge(ptr, dst.(json.Unmarshaler).UnmarshalJSON(jsonscan.Trim(raw)))
					return
				}
				if err := json.Unmarshal(raw, dst); err != nil { // unmarshal's fallback
					var se *json.SyntaxError
					if errors.As(err, &se) {
						vs.Add(ptr, "invalid JSON")
						return
					}
					vs.Merge(ptr, err)
				}
			})
		}
	}
	switch t.Kind() {
	case reflect.Slice:
		return sliceDecoder(t, decoderFor(t.Elem(), h, atElem))
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			return mapDecoder(t, decoderFor(t.Elem(), h, atElem))
		}
	}
	panic(fmt.Sprintf("mcpimpl: no decoder for %v", t))
}

// scalarDecoder returns the decoder of a string, number or boolean type,
// named or not: its memory is that of the predeclared type of its kind.
func scalarDecoder(t reflect.Type, h Hint) decoder {
	switch t.Kind() {
	case reflect.String:
		if h&BigInt != 0 {
			return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
				var vs Violations
				DecodeBigInteger(raw, (*string)(p), ptr, &vs)
				return vs.list
			}
		}
		return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
			var vs Violations
			DecodeString(raw, (*string)(p), ptr, &vs)
			return vs.list
		}
	case reflect.Bool:
		return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
			var vs Violations
			DecodeBool(raw, (*bool)(p), ptr, &vs)
			return vs.list
		}
	case reflect.Float64:
		return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
			var vs Violations
			DecodeNumber(raw, (*float64)(p), ptr, &vs)
			return vs.list
		}
	case reflect.Float32:
		return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
			var vs Violations
			DecodeNumber(raw, (*float32)(p), ptr, &vs)
			return vs.list
		}
	case reflect.Int64:
		return intDecoder[int64]()
	case reflect.Int32:
		return intDecoder[int32]()
	case reflect.Int16:
		return intDecoder[int16]()
	case reflect.Int8:
		return intDecoder[int8]()
	case reflect.Int:
		return intDecoder[int]()
	case reflect.Uint64:
		return intDecoder[uint64]()
	case reflect.Uint32:
		return intDecoder[uint32]()
	case reflect.Uint16:
		return intDecoder[uint16]()
	case reflect.Uint8:
		return intDecoder[uint8]()
	case reflect.Uint:
		return intDecoder[uint]()
	}
	return nil
}

func intDecoder[T int | int8 | int16 | int32 | int64 | uint | uint8 | uint16 | uint32 | uint64]() decoder {
	return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
		var vs Violations
		DecodeInteger(raw, (*T)(p), ptr, &vs)
		return vs.list
	}
}

// sliceHeader is the memory of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// noElements is where an empty decoded slice points, as make([]T, 0)
// points to the runtime's zero-size base: not nil, so [] survives a round
// trip.
var noElements [0]uint64

// sliceDecoder is SliceOf: the result is never nil.
func sliceDecoder(t reflect.Type, elem decoder) decoder {
	size := t.Elem().Size()
	return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
		var vs Violations
		if JSONKind(raw) != "array" {
			wrongKind(&vs, ptr, "array", raw)
			return vs.list
		}
		var buf [16]json.RawMessage
		items, _ := jsonscan.SplitValidArray(raw, buf[:0])
		// Grown in place: reflect.MakeSlice would allocate a header too.
		if len(items) == 0 {
			*(*sliceHeader)(p) = sliceHeader{data: unsafe.Pointer(&noElements)}
			return vs.list
		}
		out := reflect.NewAt(t, p).Elem()
		out.Grow(len(items))
		out.SetLen(len(items))
		base := out.UnsafePointer()
		for i, it := range items {
			if l := elem(it, unsafe.Add(base, uintptr(i)*size), ""); len(l) > 0 {
				vs.addAll(prefixed(IndexPointer(ptr, i), l))
			}
		}
		return vs.list
	}
}

// mapDecoder is MapOf: the result is never nil.
func mapDecoder(t reflect.Type, elem decoder) decoder {
	return func(raw json.RawMessage, p unsafe.Pointer, ptr string) []mcpruntime.Violation {
		var vs Violations
		if JSONKind(raw) != "object" {
			wrongKind(&vs, ptr, "object", raw)
			return vs.list
		}
		members := map[string]json.RawMessage{}
		jsonscan.SplitValidObject(raw, func(m jsonscan.Member) { members[string(m.Name)] = m.Value })
		reflect.NewAt(t, p).Elem().Set(decodeMap(t, members, SortedKeys(members), ptr, elem, &vs))
		return vs.list
	}
}

func decodeMap(t reflect.Type, members map[string]json.RawMessage, names []string, ptr string, elem decoder, vs *Violations) reflect.Value {
	out := reflect.MakeMapWithSize(t, len(names))
	for _, k := range names {
		v := reflect.New(t.Elem())
		if l := elem(members[k], v.UnsafePointer(), ""); len(l) > 0 {
			vs.addAll(prefixed(KeyPointer(ptr, k), l))
		}
		out.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), v.Elem())
	}
	return out
}

// nullableLayout is where a mcpruntime.Nullable[T] keeps its state.
type nullableLayout struct {
	typ, value reflect.Type
	set, null  uintptr
}

var nullables sync.Map // reflect.Type → *nullableLayout

var nullablePrefix = reflect.TypeFor[mcpruntime.Nullable[int]]().PkgPath() + ".Nullable["

// nullableOf returns t's layout when t is a mcpruntime.Nullable, else nil.
// Its fields are unexported: decoding writes them through their offsets,
// as mcpruntime.Value and mcpruntime.Null would set them.
func nullableOf(t reflect.Type) *nullableLayout {
	if t.Kind() != reflect.Struct || !strings.HasPrefix(t.PkgPath()+"."+t.Name(), nullablePrefix) {
		return nil
	}
	if l, ok := nullables.Load(t); ok {
		return l.(*nullableLayout)
	}
	v, okV := t.FieldByName("value")
	set, okS := t.FieldByName("set")
	null, okN := t.FieldByName("null")
	if !okV || !okS || !okN || v.Offset != 0 || set.Type.Kind() != reflect.Bool || null.Type.Kind() != reflect.Bool {
		panic(fmt.Sprintf("mcpimpl: %v is not laid out as this package expects", t))
	}
	l := &nullableLayout{typ: t, value: v.Type, set: set.Offset, null: null.Offset}
	nullables.Store(t, l)
	return l
}

func zero(t reflect.Type, p unsafe.Pointer) { reflect.NewAt(t, p).Elem().SetZero() }

// Decode is UnmarshalJSON for v, a pointer to the table's struct: data is
// decoded strictly, every wrong JSON type and missing required member (and,
// when Closed, every undeclared member) reported in a
// *mcpruntime.ValidationError. When data is not a JSON object, *v is left as
// it was.
func (s *Struct) Decode(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	s.compile(rv.Type().Elem())
	if l := s.decode(data, rv.UnsafePointer(), false); len(l) > 0 {
		return &mcpruntime.ValidationError{Violations: l}
	}
	return nil
}

// decode decodes data into the struct at p. valid says data is part of a
// document already validated whole. The violations' pointers are relative
// to data: a caller prefixes them, which costs nothing when there are none
// (building every member's pointer up front would cost an allocation each).
func (s *Struct) decode(data []byte, p unsafe.Pointer, valid bool) []mcpruntime.Violation {
	const ptr = ""
	c := s.c
	var vs Violations
	var o Object
	if valid {
		if !o.decodeValid(data, ptr, &vs) {
			return vs.list
		}
	} else if !o.Decode(data, ptr, &vs) {
		return vs.list
	}
	zero(c.typ, p)
	// Each member is looked up once; counting what was found spares the
	// search for missing required members and for undeclared ones in the
	// common case that there are none.
	var buf [24]json.RawMessage
	raws := buf[:0]
	found, foundRequired := 0, 0
	for k := range s.Rows {
		raw, ok := o.Get(s.Rows[k].Name)
		if ok {
			found++
			if s.Rows[k].Required {
				foundRequired++
			}
		}
		raws = append(raws, raw)
	}
	if foundRequired < len(c.required) {
		o.Required(ptr, &vs, c.required...)
	}
	for k, raw := range raws {
		if raw == nil {
			continue
		}
		r, f := &s.Rows[k], &c.fields[k]
		if r.Fixed != "" {
			Const(raw, r.Fixed, f.ptr, &vs)
			continue
		}
		vs.addAll(f.dec(raw, unsafe.Add(p, f.off), f.ptr))
	}
	if found == o.n {
		return vs.list // every member is a declared one, each once
	}
	switch s.Open {
	case Closed:
		o.Unknown(ptr, &vs, c.known...)
	case ClosedKept:
		*(*map[string]json.RawMessage)(unsafe.Add(p, c.extra.off)) = KeepUnknown(&o, c.typ.Name(), c.known...)
	case OpenKept:
		if vals, names := o.undeclared(c.known); names != nil {
			reflect.NewAt(c.extra.typ, unsafe.Add(p, c.extra.off)).Elem().Set(decodeMap(c.extra.typ, vals, names, ptr, c.extra.dec, &vs))
		}
	}
	return vs.list
}

// Encode is MarshalJSON for v, a pointer to the table's struct: the members
// in table order, then the kept ones by name (a declared member wins over
// a kept one of the same name).
func (s *Struct) Encode(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	c := s.compile(rv.Type().Elem())
	p := rv.UnsafePointer()
	var enc ObjectEncoder
	for k := range s.Rows {
		r, f := &s.Rows[k], &c.fields[k]
		if r.Fixed != "" {
			enc.Member(r.Name, json.RawMessage(r.FixedText))
			continue
		}
		fp := unsafe.Add(p, f.off)
		switch r.Presence {
		case OmitNil:
			if *(*unsafe.Pointer)(fp) == nil {
				continue
			}
		case EmptyArray:
			if *(*unsafe.Pointer)(fp) == nil {
				enc.Member(r.Name, json.RawMessage("[]"))
				continue
			}
		case EmptyObject:
			if *(*unsafe.Pointer)(fp) == nil {
				enc.Member(r.Name, json.RawMessage("{}"))
				continue
			}
		case OmitUnset:
			if !*(*bool)(unsafe.Add(fp, f.null.set)) {
				continue
			}
		}
		enc.Member(r.Name, reflect.NewAt(f.typ, fp).Elem().Interface())
	}
	if s.Open == OpenKept || s.Open == ClosedKept {
		m := reflect.NewAt(c.extra.typ, unsafe.Add(p, c.extra.off)).Elem()
		keys := make([]string, 0, m.Len())
		for it := m.MapRange(); it.Next(); {
			keys = append(keys, it.Key().String())
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !slices.Contains(c.known, k) {
				enc.Member(k, m.MapIndex(reflect.ValueOf(k).Convert(c.extra.typ.Key())).Interface())
			}
		}
	}
	return enc.Bytes()
}

// DecodeAndValidate is a generated Decode<Root> for a root type that
// decodes itself (a struct, union, array or map): data is decoded strictly
// into v, null being a violation unless the type accepts it (nullAware),
// and when that found nothing, v's Validate runs. Decoding violations are a
// *mcpruntime.ValidationError with subject.
func DecodeAndValidate(data []byte, v interface {
	json.Unmarshaler
	Validate() error
}, nullAware bool, subject string) error {
	var vs Violations
	switch {
	case !nullAware && isNull(data):
		vs.Add("", "unexpected null")
	default:
		if t, ok := tables.Load(reflect.TypeOf(v).Elem()); ok {
			// A struct with a compiled table: its decode validates the
			// object as it splits it, so it is not validated twice.
			vs.addAll(t.(*Struct).decodeRoot(data, reflect.ValueOf(v).UnsafePointer()))
			break
		}
		if !jsonscan.Valid(data) {
			vs.Add("", "invalid JSON")
			break
		}
		vs.Merge("", v.UnmarshalJSON(jsonscan.Trim(data)))
	}
	if vs.Len() > 0 {
		return vs.Err(subject)
	}
	return v.Validate()
}

// decodeRoot is decode for a whole document, reporting a syntax error as
// "invalid JSON", as checking validity before decoding would, without
// scanning the document twice.
func (s *Struct) decodeRoot(data []byte, p unsafe.Pointer) []mcpruntime.Violation {
	if JSONKind(data) != "object" {
		if !jsonscan.Valid(data) {
			return invalidJSON()
		}
		return s.decode(data, p, false) // expected object, found ...
	}
	l := s.decode(data, p, false)
	if len(l) == 1 && l[0] == (mcpruntime.Violation{Message: "invalid JSON object"}) {
		return invalidJSON() // what Object.Decode says of a syntax error, alone
	}
	return l
}

func invalidJSON() []mcpruntime.Violation { return []mcpruntime.Violation{{Message: "invalid JSON"}} }
