// Package ir is mcpgen's intermediate representation of tool schemas: JSON
// Schema normalised into Go-shaped data (kinds, fields, variants, JSON
// Pointers). It is plain data plus the pure function Build; it knows nothing
// of Go syntax, files or jennifer. Go names are filled in later by package
// names.
package ir

import (
	"math/big"
	"slices"
)

// Kind is what a Type is in Go terms.
type Kind uint8

const (
	// Raw is any JSON value, kept as json.RawMessage. RawReason says why.
	Raw Kind = iota
	String
	Integer
	Number
	Boolean
	// Null is only a union variant (a root output that may be null).
	Null
	Array
	Map
	Struct
	Enum
	Union
)

func (k Kind) String() string {
	return [...]string{"raw", "string", "integer", "number", "boolean", "null", "array", "map", "struct", "enum", "union"}[k]
}

// BigInt is the IntType of integers whose range exceeds 64 bits: they are
// kept as json.Number, their exact text, and checked exactly.
const BigInt = "json.Number"

// Loc is where a type or field comes from.
type Loc struct {
	// Schema is the document the pointer is relative to.
	Schema *Schema
	// Pointer is a JSON Pointer into the schema document.
	Pointer string
}

// Where renders the location as "file:/pointer/in/file" for messages.
func (l Loc) Where() string {
	if l.Schema == nil {
		return l.Pointer
	}
	return l.Schema.File + ":" + l.Schema.Base + l.Pointer
}

// Type is one Go type to emit or refer to.
type Type struct {
	Kind Kind
	Loc  Loc

	// Naming: the Go name is Parent's name + Segment (a $defs entry's
	// Parent is its schema's root), or Pinned. Set by Build, resolved by
	// package names into GoName, from the type's own tool alone.
	Parent  *Type
	Segment string
	Pinned  string
	DefName string
	GoName  string
	// Alias is the type this one is declared as, when another type of the
	// same shape is the shared one (see Share): GoName is then declared as
	// an alias of Alias.GoName, or not at all when the names are the same.
	Alias *Type
	// Root marks a tool's Input or Output type.
	Root *Root

	Title       string
	Description string
	Format      string
	// Notes are extra documentation lines (defaults, unsupported keywords).
	Notes []string

	// IntType is the Go integer type for Integer ("int64", "int32", ...),
	// or BigInt for a range beyond 64 bits.
	IntType string
	// Elem is the element type of Array and the value type of Map.
	Elem *Type

	// Struct members in schema order.
	Fields []*Field
	// Extra is the type of undeclared members of a Struct, kept in an
	// AdditionalProperties map; nil when the object is closed (an input),
	// or when it is an open input that does not constrain them (they are
	// then ignored; Schema.InputExtras).
	Extra *Type

	// DepRequired (Struct, Map): when Member is present, Requires must be
	// too (dependentRequired).
	DepRequired []DepRequired
	// Not, If, Then and Else are the subschemas of not and if/then/else;
	// Prefix and Rest those of prefixItems and the items after them (an
	// Array of raw elements checked by position). Validate decides with
	// them whether a value matches.
	Not, If, Then, Else *Matcher
	Prefix              []*Matcher
	Rest                *Matcher
	// Contains (Array): how many items must match, at least MinContains
	// (default 1) and at most MaxContains when set.
	Contains                 *Matcher
	MinContains, MaxContains *int64
	// PropertyNames (Map): every member name must match.
	PropertyNames *Matcher

	// Enum values (Kind Enum); Base is String, Integer or Number.
	Base   Kind
	Values []*EnumValue

	// Union.
	Variants []*Variant
	// Discriminator is the member whose const value picks an object
	// variant; "" when variants are told apart otherwise.
	Discriminator string

	RawReason string

	C Constraints

	// The flags are together, after the rest, so that a Type is smaller
	// (there are hundreds of thousands of them at gateway scale).

	// Named types get a declaration; the rest are written in place.
	Named      bool
	Deprecated bool
	// ElemNullable (Array, Map): elements may be null.
	ElemNullable bool
	// ExtraNullable: undeclared members may be null. Closed: a Struct
	// accepts no undeclared members.
	ExtraNullable bool
	Closed        bool
	// Hidden marks a type that only serves a Matcher: its Go name is
	// unexported.
	Hidden bool
	// OneOf (Union): exactly one variant must match.
	OneOf bool
	// NotNull (Raw only): the schema refuses null here, which the raw
	// decoder then refuses too (a mixed enum without null).
	NotNull bool
	// Never (Raw only): no value is valid here (the schema false, an
	// allOf with a false part or without a common type, a union whose
	// variants all are so). Validate reports any value it finds; where a
	// value must be (a required member, a root) Validate always fails.
	Never bool
}

// Field is a member of a Struct.
type Field struct {
	JSONName string
	GoName   string
	Pinned   string
	Type     *Type
	Required bool
	// Nullable: null is allowed (mcpruntime.Nullable).
	Nullable bool
	// Indirect: the field must be a pointer to break a recursive type.
	Indirect bool
	// Fixed is the canonical JSON of a required const member: it has no Go
	// field and is always sent. FixedJSON is its literal text.
	Fixed, FixedJSON string
	Description      string
	Default          string // JSON text of "default", or ""
	Loc              Loc
}

// Matcher is a subschema Validate matches values against: its type's
// decoder and validator accept exactly what it accepts (null too when
// Nullable).
type Matcher struct {
	Type     *Type
	Nullable bool
}

// DepRequired is one entry of dependentRequired, or (Forbidden) one of
// dependentSchemas whose schema is false: Member must then be absent.
type DepRequired struct {
	Member    string
	Requires  []string
	Forbidden bool
}

// EnumValue is one enum constant.
type EnumValue struct {
	JSON      string // literal JSON text
	Canonical string
	Str       string // for string enums
	Segment   string // proposed constant suffix; "" when none is usable
	Pinned    string
	GoName    string
	Doc       string
	Loc       Loc
}

// Variant is one alternative of a Union.
type Variant struct {
	Segment  string
	GoName   string // accessor suffix
	Type     *Type
	JSONKind string // object, array, string, number, boolean, null
	Disc     string // canonical const value of the discriminator
	Unique   string // required member unique to this variant
	// Try is the variant's place (from 1) in the order variants of its
	// JSON type are tried in when nothing else tells them apart; 0 when
	// not tried.
	Try int
	Loc Loc
}

// Num is a numeric bound as written in the schema.
type Num struct {
	Text string
	Rat  *big.Rat
}

// Pattern is a regular expression constraint.
type Pattern struct {
	Source string // as written (ECMA-262)
	Go     string // translated for Go's regexp; "" when it cannot be
	Reason string // why it cannot be checked
}

// Constraints are the validation keywords that generated Validate checks.
type Constraints struct {
	MinLength, MaxLength         *int64
	Patterns                     []Pattern
	Minimum, Maximum             *Num
	ExclusiveMin, ExclusiveMax   *Num
	MultipleOf                   *Num
	MinItems, MaxItems           *int64
	MinProperties, MaxProperties *int64
	// Const is the canonical JSON of a const value; ConstJSON its text.
	Const, ConstJSON string
	// Enum lists canonical JSON values when the type is not an Enum kind
	// (mixed or boolean enums); EnumJSON the texts.
	Enum, EnumJSON []string
	UniqueItems    bool
	HasConst       bool // Const is set
}

// Empty reports whether there is nothing to check.
func (c *Constraints) Empty() bool {
	return c.MinLength == nil && c.MaxLength == nil && len(c.Patterns) == 0 && c.Minimum == nil &&
		c.Maximum == nil && c.ExclusiveMin == nil && c.ExclusiveMax == nil && c.MultipleOf == nil &&
		c.MinItems == nil && c.MaxItems == nil && !c.UniqueItems && c.MinProperties == nil &&
		c.MaxProperties == nil && !c.HasConst && c.Enum == nil
}

// Schema is one JSON Schema document to build: a tool's input or output
// schema.
type Schema struct {
	Tool string // wire name
	Bare string // name used for Go naming (after renames)
	Role string // "Input" or "Output"
	// ToolDoc is the tool's title and description, for the root's doc.
	ToolDoc string
	Data    []byte
	// File and Base position errors: Base is the schema's JSON Pointer in
	// File.
	File string
	Base string
	// Input is the name of the input the schema comes from (File, unless
	// a config override replaced the schema): types share only within one.
	Input string
	// Pins maps JSON Pointers within this schema to pinned Go names.
	Pins map[string]string
	// PinsUsed records which Pins were applied, so that a pin that names
	// nothing can be reported.
	PinsUsed map[string]bool
	// Strip lists properties removed from the root object.
	Strip []string
	// InputExtras keeps an AdditionalProperties field on every open input
	// object (config inputExtras); without it an input object has one only
	// when the schema constrains undeclared members or it is an open
	// variant of a oneOf told apart by trying the variants.
	InputExtras bool
	// CheckFormats makes Validate check the common formats (config
	// checkFormats).
	CheckFormats bool
	// Resource marks the content schema a config binding gives a resource
	// (Tool is then the resource's uri or uriTemplate, Role "Content").
	Resource bool
}

// Tolerant reports whether values of this schema come from a server (tool
// outputs, resource contents): their decoders keep members a closed object
// does not declare and enum values they do not list, so that bindings
// survive a compatible server release. Inputs are decoded strictly.
func (s *Schema) Tolerant() bool { return s != nil && s.Role != "Input" }

// CheckedFormats are the formats Validate checks when the schema's
// CheckFormats is set (mcpimpl.ValidFormat).
var CheckedFormats = []string{"date", "date-time", "email", "uri", "uuid"}

// FormatChecked reports whether Validate checks t's format.
func (t *Type) FormatChecked() bool {
	return t.Loc.Schema != nil && t.Loc.Schema.CheckFormats && slices.Contains(CheckedFormats, t.Format) &&
		(t.Kind == String || t.Kind == Enum && t.Base == String)
}

// Tolerant reports whether t belongs to a Tolerant schema.
func (t *Type) Tolerant() bool { return t.Loc.Schema.Tolerant() }

// Root is a built schema: the tool's Input or Output type.
type Root struct {
	Schema *Schema
	Type   *Type
}

// pinAt returns the pin for ptr and records that it was used.
func (s *Schema) pinAt(ptr string) string {
	p, ok := s.Pins[ptr]
	if ok {
		if s.PinsUsed == nil {
			s.PinsUsed = map[string]bool{}
		}
		s.PinsUsed[ptr] = true
	}
	return p
}
