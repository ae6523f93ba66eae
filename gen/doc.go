// Package gen turns the tool schemas of MCP servers into Go types with
// generated strict decoders and validators.
//
// The pipeline is load → IR → names → emit → format, each stage a pure
// function: manifest.Parse reads each input (an mcpgen manifest, a raw
// tools/list result or a single Tool object, detected automatically),
// ir.Build normalises every input and output schema, names.Assign gives
// each type its Go name from its own tool's schemas, ir.Share makes types of
// one shape one Go type (the other names aliases of it), and emit renders
// one file per input (crm.json → crm.mcp.go) with jennifer, building and formatting one
// declaration at a time so memory does not grow with the file. An output
// past 4 MiB continues in crm_2.mcp.go, crm_3.mcp.go... (PartName), split
// at declaration boundaries by size alone, so the same input always splits
// the same way. Generate returns the files and never writes. Output does not depend on the order
// tools are listed in, and is byte-identical across runs.
//
// Generated code imports only the standard library and
// github.com/mcpgen/mcpgen/runtime (as mcpruntime).
//
// # What is generated
//
// For each tool, <Tool>Input and, when the tool has an outputSchema,
// <Tool>Output, with every nested named type. Each root type has
// Validate() error and a Decode<Root>(data []byte) function that decodes
// strictly and validates; both report every violation, with its JSON
// Pointer, in a *mcpruntime.ValidationError. Structs, unions and named
// arrays and maps have MarshalJSON/UnmarshalJSON; UnmarshalJSON reports
// wrong JSON types, null where null is not allowed, missing required
// members and (for additionalProperties: false on inputs) undeclared members, all of
// them; Validate reports the value constraints (enum, const, minimum,
// maximum, exclusive bounds, multipleOf, minLength, maxLength, pattern,
// minItems, maxItems, uniqueItems, minProperties, maxProperties,
// dependentRequired). The
// checks are generated code, not a schema interpreter.
//
// # Bindings
//
// Each tool also gets a descriptor, <Tool>Descriptor (an
// mcpruntime.Descriptor: wire and Go names, title, description,
// annotations with the specification's defaults applied, the input schema
// a model is shown, the output schema, SchemaHash, and Server, the
// manifest's id and serverInfo name joined by "/", which approvals are
// bound to), and a factory,
//
//	func New<Tool>(c mcpruntime.Caller, opts ...mcpruntime.Option) *mcpruntime.Tool[<Tool>Input, <Tool>Output]
//
// (mcpruntime.NoOutput for a tool without an output schema), whose Call
// is the typed call and whose Invoke is the language-model call. A tool
// whose identity argument is configured (Config.StripArgs) has it left out
// of its Input type and of the descriptor's input schema, and its factory
// passes mcpruntime.WithIdentityArgument.
//
// Each input (one server) gets a Client with one method per tool, all
// calls over one Caller (one session); NewClient; a ToolName type with a
// Tool<Tool> constant per tool; Client.Toolset, which builds a
// least-privilege mcpruntime.Toolset of the named tools for an agent;
// Client.CheckTools; and Descriptors. When one package holds several
// inputs, these names start with the input's base name (CrmClient).
// Every generated name is checked for collisions with the others; a clash
// is a positioned error.
//
// # Mapping
//
//   - string, integer (int64; format int32, uint64 and the like pick that
//     type; a range beyond 64 bits is json.Number, the exact text, checked
//     exactly), number (float64), boolean. A value outside the Go type's
//     range is refused, as the generated file says.
//   - Required → T. Optional scalar or struct → *T. Optional array, map or
//     raw JSON → no pointer (nil means absent). Null allowed (type [T,
//     "null"], anyOf/oneOf [T, {type: null}], enum with null) →
//     mcpruntime.Nullable[T], which keeps absent, null and value apart.
//   - enum of strings or numbers → a named type with constants named
//     <Type><Value> and Valid(). A value of only spaces, or two
//     values that normalise to the same name, get <Type>Value<index>
//     instead, index being the value's position in the schema's enum. Mixed
//     or boolean enums stay raw JSON or bool, checked by Validate.
//   - A required member with a const other than null (scalar, object or
//     array) has no Go field: MarshalJSON always sends it and decoding
//     checks it. Other consts are checked too: an object or array const
//     is raw JSON compared by value (members in any order, numbers by
//     value: 1 is 1.0), a scalar one on its Go type. A const other than
//     null, or an enum that does not list null, refuses null whatever
//     the type keyword allows.
//   - Objects with properties → named structs (<Tool>Input<Prop>...,
//     <...>Item for array elements, <...>Value for map values). Undeclared
//     members of an open output object are kept in AdditionalProperties,
//     typed when additionalProperties is a schema, so a round trip loses
//     nothing. An open input object has that field only when its schema
//     constrains undeclared members (an additionalProperties schema,
//     patternProperties, min/maxProperties, dependentRequired,
//     dependentSchemas false, propertyNames false, not, if), when it is
//     an open variant of a oneOf told apart by trying the variants (there
//     an undeclared member can decide the variant), or Config.InputExtras
//     is set; otherwise decoding ignores them (Go callers never fill such
//     a field, and a model's arguments are sent as written). Other union
//     variants follow the same rule. An object without properties →
//     map[string]T.
//   - Structurally identical types of one input (structs, unions, enums,
//     named arrays and maps; the memory server's entity schemas) are one
//     Go type, declared under the name of the place that comes first
//     (a pinned one, then by tool, role and JSON Pointer); every other
//     place's name is an alias of it, with its own union constructors and
//     enum constants. Inputs, outputs and resource contents never share,
//     nor roots or recursive types. Config.KeepShapesApart gives every
//     place its own type.
//   - $defs and definitions are named <Root><Name>
//     (APIPostPageInputParentRequest). Recursive references work: fields
//     that close a cycle of structs are pointers.
//   - oneOf/anyOf → a sum type: a struct with unexported variant fields,
//     a constructor per variant (<Union>Of<V>(v), so a value is written in
//     one expression: Shape: DrawInputShapeOfCircle(DrawInputShapeCircle{Radius: 1})),
//     As<V> and Set<V> methods, MarshalJSON/UnmarshalJSON, and Validate
//     reporting a zero value (no variant set). A variant that is itself a
//     oneOf/anyOf (directly or through a $ref) is flattened into the outer
//     union only where that keeps which values are valid: anyOf in anyOf,
//     a union of one variant, inner variants no value matches two of
//     (different JSON types, consts or enums without a common value,
//     objects one of which requires a member the other refuses), and
//     oneOf in oneOf when no inner variant overlaps an outer sibling.
//     Otherwise it stays one variant, a union type of its own, after
//     being split by JSON type (its string variants may join the outer
//     union while its object variants stay together). A variant that is
//     the schema false is left out; a duplicate variant of an anyOf is
//     dropped. Variants are told apart by JSON type, then, among objects,
//     by a const member every variant requires, or by a required member
//     unique to each variant (an object with several such members is
//     decided by trying those variants). Variants of one JSON type that
//     none of these tells apart, and a group holding a union of its own,
//     are tried in a documented order, the most specific first (objects:
//     more required members, then closed before open, then more declared
//     properties; other types: more constraint keywords; then schema
//     order): each decodes and validates the value on its own, anyOf takes
//     the first that accepts it, and oneOf needs exactly one to. Null is
//     valid for a oneOf when exactly one variant allows it, for an anyOf
//     when any does. A oneOf/anyOf of consts is an enum. A union with a
//     variant that does not say its JSON type → json.RawMessage, with a
//     comment saying why; such values are not checked.
//   - allOf → merged into one schema (properties and required united,
//     bounds tightened, several patterns all checked). Parts that cannot
//     be merged → json.RawMessage with the reason.
//   - Raw JSON fields say why they are raw in a comment, also when the
//     raw values are the items or values of an array or map. A required
//     raw member must be set (Validate reports a nil one, which would be
//     sent as null); where the schema refuses null (a mixed enum without
//     null), decoding and Validate refuse it.
//   - {} and true → json.RawMessage. dependentRequired (and draft-07
//     dependencies listing member names) is checked by Validate, on declared
//     and undeclared members (an input object with it keeps
//     AdditionalProperties). not and if/then/else on a string, number,
//     boolean, array, map or struct, prefixItems (with the items after
//     them), contains with minContains/maxContains, and propertyNames on a
//     map, are checked too:
//     each subschema becomes an unexported type whose generated decoder and
//     validator decide whether the value (its JSON encoding) matches; a
//     subschema that generated code cannot check exactly, and
//     patternProperties, dependentSchemas (but for true and false values)
//     and propertyNames on a struct, still compile and are documented on
//     the type as not checked. format is documented; with
//     Config.CheckFormats, Validate checks date and date-time (RFC 3339,
//     leap seconds at the end of a month), email (an RFC 5321 mailbox,
//     quoted local parts included), uri (an RFC 3986 URI) and uuid (RFC
//     9562) by their grammars (mcpimpl.ValidFormat).
//   - The schema false is a constraint wherever it only restricts:
//     items after prefixItems, a prefixItems element, items, a
//     property (which must then be absent), additionalProperties (a
//     closed object), propertyNames (no member), not (nothing),
//     contains, if/then/else, dependentSchemas (the member must be
//     absent), a $ref, an allOf part (as is an allOf whose parts share
//     no type) and a union variant (left out). Where a value must be (a
//     required member, the root), the tool is still generated: its
//     type's doc says no value satisfies the schema, and Validate always
//     fails, saying why.
//   - Outputs (tool outputs, resource contents) decode tolerantly, so that
//     bindings survive a compatible server release: a closed output object
//     keeps undeclared members in AdditionalProperties, and an output enum
//     of several values carries values it does not list (Valid reports
//     false; Validate does not fail). Each is reported once through
//     mcpruntime.SetUnknownHook. Inputs stay strict. docs/cli.md states
//     the rule mcpgen check shares.
//   - Output schemas may be any JSON value: a string, array, number or
//     raw output becomes a defined type; one that may be null becomes a
//     union with a Null variant.
//
// # Names
//
// A tool's exported identifiers depend only on its own schemas and on the
// config (Config.Renames, Config.GoNames): adding, removing or changing
// another tool leaves every one of them as it was (the shapes of its types
// too); mcpgen check reports a change that would remove one as breaking.
// Roots are <Tool>Input and <Tool>Output; every other type is its parent's
// name and its own segment (the field name, Item, Value, the variant's
// name), a $defs entry's parent being its root. A segment that starts with
// the words its parent's name ends with leaves them out
// (...ItemsItem + ItemOwner → ...ItemsItemOwner), and Value follows what is
// left when that is nothing or a name the tool has (...ItemText + Text →
// ...ItemTextValue). Union variants are named by the first of these no
// other variant shares: a pin, the title, the value of a const
// discriminator or required const member, the definition name of a $ref,
// the required member only it has (or its only one), the format, the JSON
// type when no other variant left has it, for variants of one JSON type a
// property only it has, then the JSON type and place (String1, String2).
//
// Identifiers come from splitting names on non-alphanumerics and case
// changes, with initialisms upper-cased (user_id and userId → UserID) and
// an X in front of names that would not start with an upper-case letter.
// Symbols between words only separate them; symbols before the first
// word or after the last are spelled, so that names differing by them
// stay apart: $type → DollarType, @context → AtContext, - → Dash, +1 →
// Plus1, -1 → Minus1 (a dash before a digit), c++ → CPlusPlus; spaces
// spell nothing and an underscore only when the name has nothing else
// (_meta → Meta, _ → Underscore); a symbol outside ASCII is U and its code
// point. A field named like a generated method (Validate, MarshalJSON,
// UnmarshalJSON) gets a trailing underscore. Two declarations with the
// same Go name are an error naming both positions (file:line:col and JSON
// Pointer) and the key that would name one (config names), resolved with
// Config.Renames (a tool's naming name) or Config.GoNames / x-go-name (a
// pinned identifier; "*#<pointer>" pins a place in every tool that has
// it, and places pinned alike must have one shape); names never depend on
// the order they are met in. A nested type's name longer than 40
// characters (names.MaxName) is shortened to its base (the tool's Input or
// Output, a $defs entry or a pin) and as many of its last segments as fit,
// generic Item and Value left out unless last (then with the segment
// before: ...RichTextItemsItem), when the result does not stutter and no
// other type of the tool has or would get that name; otherwise it keeps
// its full name.
//
// Doc comments are wrapped at 80 columns and written as go doc reads the
// Markdown of descriptions: headings, and lines go doc would take for
// headings, stay paragraphs; list items are go doc list items; fenced and
// indented code are code blocks.
//
// # Why unions are structs with constructors
//
// protobuf-go writes a oneof as an interface field with one wrapper struct
// per variant (&pb.Shape_Circle{Circle: &pb.Circle{...}}); ogen writes a sum
// type as a struct with one field per variant and a constructor per
// variant. mcpgen follows ogen: one Go type per union carries the
// MarshalJSON, UnmarshalJSON and Validate methods (which a tool's root
// output needs, and an interface cannot carry), scalar and array variants
// need no wrapper types, and constructors make every value one expression.
// The price is a zero value with no variant, which Validate reports
// before a call is made.
//
// # Regular expressions
//
// JSON Schema patterns are ECMA-262; Go's regexp is RE2. \uXXXX, \u{...}
// and \/ are translated. A pattern Go cannot compile (lookaround,
// backreferences) is not checked, and the generated validate method says
// so in a comment.
//
// # Limits
//
// Only local $ref (#, #/$defs/..., #/definitions/..., or any JSON
// Pointer into the schema) is supported; nothing is fetched, and any other
// $ref is an error naming its pointer. Schemas nest at most
// ir.MaxDepth levels. An integer like 1.0 is accepted, as JSON Schema
// says; a value outside the Go integer type's range is a violation.
package gen
