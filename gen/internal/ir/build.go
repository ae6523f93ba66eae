package ir

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgen/mcpgen/gen/internal/ident"
	"github.com/mcpgen/mcpgen/gen/internal/par"
)

// MaxDepth bounds how deeply schemas may nest (through properties, items,
// $ref, allOf and unions) before Build gives up with an error.
const MaxDepth = 48

// Error is a problem at a place in a schema document.
type Error struct {
	Loc Loc
	Msg string
}

func (e *Error) Error() string { return e.Loc.Where() + ": " + e.Msg }

type doc struct {
	s    *Schema
	root *node
	top  *Type
}

type builder struct {
	errs []*Error
	refs map[refKey]*refEntry
	// unions memoizes the analysis of unions that are variants of other
	// unions (nil while one is being analysed).
	unions map[*node]*variantInfo
	// flattening holds the unions whose variants flatten is listing;
	// flat memoizes what it lists for each.
	flattening map[*node]bool
	flat       map[*node][]*node
	// splits holds the parts of inner unions that flatten made unions of
	// their own, with their types once built.
	splits map[*node]*refEntry
}

type refKey struct {
	s   *Schema
	ptr string
}

type refEntry struct {
	t        *Type
	nullable bool
}

// Build turns each schema document into its root Type. All problems are
// returned; a schema with errors still yields a Type (Raw where it failed)
// so that every error in every schema is found in one run.
//
// Schemas are built on every core: a schema's types, $refs and pins are its
// own, so each gets a builder of its own, and roots and errors are returned
// in the order of schemas, as one builder would return them.
func Build(schemas []*Schema) ([]*Root, []*Error) {
	built := make([]*builder, len(schemas))
	roots := make([]*Root, len(schemas))
	par.Do(len(schemas), func(i int) {
		b := &builder{refs: map[refKey]*refEntry{}, unions: map[*node]*variantInfo{}, flattening: map[*node]bool{}, flat: map[*node][]*node{}, splits: map[*node]*refEntry{}}
		roots[i] = b.root(schemas[i])
		built[i] = b
	})
	var errs []*Error
	for _, b := range built {
		errs = append(errs, b.errs...)
	}
	return slices.DeleteFunc(roots, func(r *Root) bool { return r == nil }), errs
}

func (b *builder) errorf(d *doc, ptr, format string, args ...any) {
	b.errs = append(b.errs, &Error{Loc: Loc{Schema: d.s, Pointer: ptr}, Msg: fmt.Sprintf(format, args...)})
}

func (b *builder) root(s *Schema) *Root {
	n, err := parseNode(s.Data)
	d := &doc{s: s}
	if err != nil {
		b.errorf(d, "", "invalid JSON schema: %v", err)
		return nil
	}
	if n.kind == 'o' && len(s.Strip) > 0 {
		n = n.clone()
		if props := n.get("properties"); props != nil && props.kind == 'o' {
			props = props.clone()
			for _, k := range s.Strip {
				props.del(k)
			}
			n.set("properties", props)
		}
		if req := n.get("required"); req != nil && req.kind == 'a' {
			req = req.clone()
			req.arr = slices.DeleteFunc(req.arr, func(e *node) bool { return e.kind == 's' && slices.Contains(s.Strip, e.str) })
			n.set("required", req)
		}
	}
	d.root = n
	t := &Type{Segment: ident.Ident(s.Bare) + s.Role, Named: true, Loc: Loc{Schema: s}}
	if t.Segment == s.Role {
		b.errorf(d, "", "tool name %q has no letters, digits or symbols to build a Go name from; rename it (config tools.rename)", s.Tool)
	}
	t.Pinned = b.pin(d, n, "")
	r := &Root{Schema: s, Type: t}
	t.Root = r
	d.top = t
	b.refs[refKey{s, ""}] = &refEntry{t: t}
	nullable := b.fill(d, n, t, 0)
	b.refs[refKey{s, ""}].nullable = nullable
	if nullable {
		// A root that may be null becomes a union with a Null variant, since
		// a named type cannot carry the three states itself.
		inner := &Type{}
		*inner = *t
		inner.Parent, inner.Segment, inner.Pinned, inner.Root = t, "Value", "", nil
		inner.Named = inner.Kind == Struct || inner.Kind == Enum || inner.Kind == Union
		reparent(inner, t)
		*t = Type{Kind: Union, Named: true, Segment: t.Segment, Pinned: t.Pinned, Root: r, Loc: t.Loc,
			Title: inner.Title, Description: inner.Description, OneOf: true,
			Variants: []*Variant{
				{Segment: "Value", Type: inner, JSONKind: jsonKindOf(inner), Loc: t.Loc},
				{Segment: "Null", Type: &Type{Kind: Null}, JSONKind: "null", Loc: t.Loc},
			}}
		inner.Title, inner.Description = "", ""
	}
	return r
}

// reparent points the children named after old at nw instead.
func reparent(nw, old *Type) {
	for _, f := range nw.Fields {
		if f.Type.Parent == old {
			f.Type.Parent = nw
		}
	}
	for _, v := range nw.Variants {
		if v.Type.Parent == old {
			v.Type.Parent = nw
		}
	}
	if nw.Elem != nil && nw.Elem.Parent == old {
		nw.Elem.Parent = nw
	}
	if nw.Extra != nil && nw.Extra.Parent == old {
		nw.Extra.Parent = nw
	}
}

func jsonKindOf(t *Type) string {
	switch t.Kind {
	case String:
		return "string"
	case Integer, Number:
		return "number"
	case Boolean:
		return "boolean"
	case Null:
		return "null"
	case Array:
		return "array"
	case Map, Struct:
		return "object"
	case Enum:
		if t.Base == String {
			return "string"
		}
		return "number"
	}
	return ""
}

// configKey is the config names key for the place ptr of schema s.
func configKey(s *Schema, ptr string) string {
	if s.Resource {
		return "<the resource's content schema>" + ptr
	}
	return s.Tool + "#/" + strings.ToLower(s.Role[:1]) + s.Role[1:] + "Schema" + ptr
}

// pin returns the Go name pinned for the node at ptr (config or x-go-name).
func (b *builder) pin(d *doc, n *node, ptr string) string {
	p := d.s.pinAt(ptr)
	if p == "" {
		p = n.getStr("x-go-name")
	}
	if p != "" && !ident.Valid(p) {
		b.errorf(d, ptr, "pinned Go name %q is not an exported Go identifier", p)
		return ""
	}
	return p
}

// build returns the type for the schema node n found at a position named
// parent+seg. A $ref to a definition returns the definition's shared type.
func (b *builder) build(d *doc, n *node, parent *Type, seg string, depth int) (*Type, bool) {
	if depth > MaxDepth {
		b.errorf(d, n.ptr, "schema nests deeper than %d levels", MaxDepth)
		return &Type{Kind: Raw, RawReason: "nesting too deep", Loc: Loc{d.s, n.ptr}}, false
	}
	if n.kind == 'o' && n.has("$ref") && onlyAnnotations(n, "$ref") {
		return b.ref(d, n, depth)
	}
	if v, nulls, key, ok := b.singleVariant(d, n, depth); ok && d.s.Pins[n.ptr] == "" && !n.has("x-go-name") {
		t, nn := b.build(d, v, parent, seg, depth+1)
		if nn {
			nulls++
		}
		return t, nullOK(key, nulls)
	}
	t := &Type{Parent: parent, Segment: seg, Loc: Loc{d.s, n.ptr}}
	t.Pinned = b.pin(d, n, n.ptr)
	nullable := b.fill(d, n, t, depth)
	return t, nullable
}

var annotationKeys = map[string]bool{
	"title": true, "description": true, "$comment": true, "examples": true, "default": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$schema": true, "$id": true, "$anchor": true, "x-go-name": true,
	"$defs": true, "definitions": true,
}

func onlyAnnotations(n *node, except ...string) bool {
	for _, k := range n.keys {
		if !annotationKeys[k] && !slices.Contains(except, k) && !strings.HasPrefix(k, "x-") {
			return false
		}
	}
	return true
}

// lookup resolves a local $ref value to its node.
func (b *builder) lookup(d *doc, from *node, ref string) (*node, bool) {
	if !strings.HasPrefix(ref, "#") {
		b.errorf(d, from.ptr+"/$ref", "$ref %q is not local: only references within the schema (#/$defs/..., #/definitions/..., #) are supported, and nothing is fetched", ref)
		return nil, false
	}
	ptr := ref[1:]
	if ptr != "" && !strings.HasPrefix(ptr, "/") {
		b.errorf(d, from.ptr+"/$ref", "$ref %q: anchors are not supported; use a JSON Pointer", ref)
		return nil, false
	}
	cur := d.root
	if ptr != "" {
		for _, tok := range strings.Split(ptr[1:], "/") {
			tok = unescapeURI(unescape(tok))
			switch cur.kind {
			case 'o':
				cur = cur.obj[tok]
			case 'a':
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(cur.arr) {
					cur = nil
				} else {
					cur = cur.arr[i]
				}
			default:
				cur = nil
			}
			if cur == nil {
				b.errorf(d, from.ptr+"/$ref", "$ref %q points to nothing", ref)
				return nil, false
			}
		}
	}
	return cur, true
}

func unescapeURI(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				out.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		out.WriteByte(s[i])
	}
	return out.String()
}

// follow resolves a chain of pure $refs to the first node that is not one.
func (b *builder) follow(d *doc, n *node) (*node, bool) {
	seen := map[string]bool{}
	for n.kind == 'o' && n.has("$ref") && onlyAnnotations(n, "$ref") {
		if seen[n.ptr] {
			b.errorf(d, n.ptr+"/$ref", "circular $ref that never reaches a schema")
			return nil, false
		}
		seen[n.ptr] = true
		r := n.get("$ref")
		if r.kind != 's' {
			b.errorf(d, n.ptr+"/$ref", "$ref must be a string")
			return nil, false
		}
		t, ok := b.lookup(d, n, r.str)
		if !ok {
			return nil, false
		}
		n = t
	}
	return n, true
}

func (b *builder) ref(d *doc, n *node, depth int) (*Type, bool) {
	target, ok := b.follow(d, n)
	if !ok {
		return &Type{Kind: Raw, RawReason: "unresolvable $ref", Loc: Loc{d.s, n.ptr}}, false
	}
	key := refKey{d.s, target.ptr}
	if e, ok := b.refs[key]; ok {
		return e.t, e.nullable
	}
	t := &Type{Loc: Loc{d.s, target.ptr}, Parent: d.top}
	toks := strings.Split(target.ptr, "/")
	last := unescape(toks[len(toks)-1])
	if len(toks) == 3 && (toks[1] == "$defs" || toks[1] == "definitions") {
		t.DefName = ident.Ident(last)
		if t.DefName == "" {
			b.errorf(d, target.ptr, "definition name %q has no letters, digits or symbols; name it in the config (names: {%q: Name}) or with x-go-name", last, configKey(d.s, target.ptr))
		}
	}
	t.Segment = ident.Ident(last)
	if t.Segment == "" {
		t.Segment = "Ref"
	}
	t.Pinned = b.pin(d, target, target.ptr)
	e := &refEntry{t: t}
	b.refs[key] = e
	e.nullable = b.fill(d, target, t, depth+1)
	if t.Kind == Array || t.Kind == Map {
		// Named, so that a recursive definition is a legal Go type.
		t.Named = true
	}
	return t, e.nullable
}

// fill builds node n into t and reports whether null is also allowed.
func (b *builder) fill(d *doc, n *node, t *Type, depth int) bool {
	if depth > MaxDepth {
		b.errorf(d, n.ptr, "schema nests deeper than %d levels", MaxDepth)
		t.Kind, t.RawReason = Raw, "nesting too deep"
		return false
	}
	switch n.kind {
	case 'b':
		t.Kind = Raw
		if n.b {
			t.RawReason = "the schema is true: any JSON value"
		} else {
			// A restriction, not an error: where a value must be, Validate
			// reports that none is allowed.
			never(t, "the schema is false")
		}
		return false
	case 'o':
	default:
		b.errorf(d, n.ptr, "a schema must be an object or a boolean, found JSON %s", n.kindName())
		t.Kind = Raw
		return false
	}
	t.Title = n.getStr("title")
	t.Description = n.getStr("description")
	if dep := n.get("deprecated"); dep != nil && dep.kind == 'b' && dep.b {
		t.Deprecated = true
	}
	if n.has("$ref") || n.has("allOf") {
		m, problem := b.merge(d, n, depth)
		if why := unsatisfiable(problem); why != "" {
			never(t, why)
			return false
		}
		if problem != "" {
			t.Kind, t.RawReason = Raw, problem
			return false
		}
		n = m
	}
	n = booleanSubschemas(n)
	t.Format = n.getStr("format")
	for _, k := range []string{"not", "if", "then", "else", "dependentSchemas", "dependentRequired", "dependencies", "propertyNames", "contains", "unevaluatedProperties", "unevaluatedItems"} {
		if n.has(k) {
			t.Notes = append(t.Notes, fmt.Sprintf("The schema's %q is not checked by Validate.", k))
		}
	}

	types, ok := b.types(d, n)
	if !ok {
		t.Kind, t.RawReason = Raw, "invalid type"
		return false
	}
	nullable := false
	if i := slices.Index(types, "null"); i >= 0 {
		nullable = true
		types = slices.Delete(slices.Clone(types), i, i+1)
		if len(types) == 0 {
			onlyNull(t)
			return false
		}
	}
	if n.has("oneOf") || n.has("anyOf") {
		// The sibling type, null included, is merged into each variant,
		// which decide whether null is valid.
		return b.union(d, n, t, types, depth)
	}
	if enum := n.get("enum"); enum != nil {
		// Null is valid when the enum lists it and the type, if any,
		// allows it: type ["string", "null"] with an enum of strings
		// allows no null.
		return b.enum(d, n, enum, t, types) && (!n.has("type") || nullable)
	}
	if c := n.get("const"); c != nil {
		if c.kind == 'z' {
			onlyNull(t)
			return false
		}
		// Any other const refuses null, whatever the type keyword says,
		// and a const the type keyword excludes allows no value at all.
		nullable = false
		if k := c.kindName(); types != nil && !slices.Contains(types, k) && !(k == "integer" && slices.Contains(types, "number")) {
			never(t, "the schema's const is not of its type")
			return false
		}
		if c.kind == 'o' || c.kind == 'a' {
			// One object or array is allowed: raw JSON compared with the
			// const by value (members in any order, numbers by value).
			t.Kind, t.RawReason = Raw, "the schema allows only its const value, "+c.JSON()
			t.C = Constraints{HasConst: true, Const: c.Canonical(), ConstJSON: c.JSON()}
			return false
		}
		if types == nil {
			types = []string{c.kindName()}
		}
	}
	if types == nil {
		types = inferTypes(n)
	}
	switch len(types) {
	case 0:
		t.Kind = Raw
		t.RawReason = "the schema does not restrict the type"
		b.constraints(d, n, t)
		return nullable
	case 1:
	default:
		return b.typeUnion(d, n, t, types, depth) || nullable
	}
	switch types[0] {
	case "string":
		t.Kind = String
	case "integer":
		t.Kind = Integer
		t.IntType = b.intType(d, n)
		if t.IntType == "" {
			// Carried exactly: float64 would round what int64 cannot hold.
			t.IntType = BigInt
		}
	case "number":
		t.Kind = Number
	case "boolean":
		t.Kind = Boolean
	case "array":
		b.array(d, n, t, depth)
	case "object":
		b.object(d, n, t, depth)
	}
	b.constraints(d, n, t)
	b.matchers(d, n, t, types[0], depth)
	return nullable
}

// matchers builds the subschemas of not and if/then/else as types whose
// generated decoder and validator say whether a value matches them, and
// drops the notes saying these keywords are not checked. A subschema is
// given the value's JSON type when it has none (the value has it
// already); one that cannot be checked exactly keeps its note.
func (b *builder) matchers(d *doc, n *node, t *Type, kind string, depth int) {
	build := func(k, seg string) *Matcher {
		sub := n.get(k)
		if sub == nil {
			return nil
		}
		kind := kind
		if k == "propertyNames" {
			kind = "string"
		}
		if sub.kind == 'o' && !sub.has("type") && !sub.has("$ref") && !sub.has("oneOf") && !sub.has("anyOf") && !sub.has("allOf") && !sub.has("enum") && !sub.has("const") {
			sub = sub.clone()
			sub.set("type", &node{kind: 's', str: kind, ptr: sub.ptr})
		}
		mt, nullable := b.build(d, sub, t, seg, depth+1)
		if !checkable(mt, map[*Type]bool{}) {
			return nil
		}
		if mt.Parent == t {
			mt.Hidden = true
		}
		return &Matcher{Type: mt, Nullable: nullable}
	}
	drop := func(k string) {
		note := fmt.Sprintf("The schema's %q is not checked by Validate.", k)
		t.Notes = slices.DeleteFunc(t.Notes, func(s string) bool { return s == note })
	}
	if t.Not = build("not", "Not"); t.Not != nil {
		drop("not")
	}
	if t.Kind == Map && n.has("propertyNames") {
		// Member names are strings: the subschema gets that type.
		if m := build("propertyNames", "Name"); m != nil && m.Type.Kind == String || m != nil && m.Type.Kind == Enum && m.Type.Base == String {
			t.PropertyNames = m
			drop("propertyNames")
		}
	}
	if t.Kind == Array && n.has("contains") {
		c := n.get("contains")
		if c.kind == 'o' && !c.has("type") && !c.has("const") && !c.has("enum") && !c.has("$ref") {
			// The items of an array have no type of their own to lend.
			c = nil
		}
		if c != nil {
			mt, nullable := b.build(d, c, t, "Contains", depth+1)
			if checkable(mt, map[*Type]bool{}) {
				if mt.Parent == t {
					mt.Hidden = true
				}
				t.Contains = &Matcher{Type: mt, Nullable: nullable}
				t.MinContains, t.MaxContains = b.nonNegInt(d, n, "minContains"), b.nonNegInt(d, n, "maxContains")
				drop("contains")
			}
		}
	}
	if n.has("if") {
		t.If = build("if", "If")
		t.Then, t.Else = build("then", "Then"), build("else", "Else")
		if t.If != nil && (t.Then != nil || !n.has("then")) && (t.Else != nil || !n.has("else")) {
			drop("if")
			drop("then")
			drop("else")
		} else {
			t.If, t.Then, t.Else = nil, nil, nil
		}
	} else {
		// then and else without if are ignored, as JSON Schema says.
		drop("then")
		drop("else")
	}
}

// checkable reports whether the generated code of t checks every keyword
// of its schema, so that it can decide whether a value matches.
func checkable(t *Type, seen map[*Type]bool) bool {
	if t == nil || seen[t] {
		return true
	}
	seen[t] = true
	if len(t.Notes) > 0 || t.Kind == Raw && t.RawReason != "" && !strings.HasPrefix(t.RawReason, "the schema") && t.RawReason != "required member without a schema" || t.Kind == Null {
		return false
	}
	for _, p := range t.C.Patterns {
		if p.Go == "" {
			return false
		}
	}
	if t.Tolerant() && (t.Kind == Enum || t.Closed) {
		return false // outputs accept more than the schema says
	}
	ok := checkable(t.Elem, seen) && checkable(t.Extra, seen)
	for _, f := range t.Fields {
		ok = ok && checkable(f.Type, seen)
	}
	for _, v := range t.Variants {
		ok = ok && checkable(v.Type, seen)
	}
	return ok
}

func inferTypes(n *node) []string {
	switch {
	case n.has("properties") || n.has("additionalProperties") || n.has("required") || n.has("patternProperties") ||
		n.has("minProperties") || n.has("maxProperties"):
		return []string{"object"}
	case n.has("items") || n.has("prefixItems") || n.has("minItems") || n.has("maxItems") || n.has("uniqueItems"):
		return []string{"array"}
	}
	return nil
}

var knownTypes = []string{"string", "integer", "number", "boolean", "array", "object", "null"}

func (b *builder) types(d *doc, n *node) ([]string, bool) {
	tv := n.get("type")
	if tv == nil {
		return nil, true
	}
	var out []string
	add := func(e *node) bool {
		if e.kind != 's' || !slices.Contains(knownTypes, e.str) {
			b.errorf(d, e.ptr, "unknown type %s (expected one of %s)", e.JSON(), strings.Join(knownTypes, ", "))
			return false
		}
		if !slices.Contains(out, e.str) {
			out = append(out, e.str)
		}
		return true
	}
	switch tv.kind {
	case 's':
		if !add(tv) {
			return nil, false
		}
	case 'a':
		if len(tv.arr) == 0 {
			b.errorf(d, tv.ptr, "type must not be an empty array")
			return nil, false
		}
		for _, e := range tv.arr {
			if !add(e) {
				return nil, false
			}
		}
	default:
		b.errorf(d, tv.ptr, "type must be a string or an array of strings")
		return nil, false
	}
	// integer is a subset of number: keep only number when both are there.
	if slices.Contains(out, "integer") && slices.Contains(out, "number") {
		out = slices.DeleteFunc(out, func(s string) bool { return s == "integer" })
	}
	return out, true
}

func (b *builder) intType(d *doc, n *node) string {
	switch f := n.getStr("format"); f {
	case "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64":
		return f
	}
	lo, hi := bound(n, "minimum", "exclusiveMinimum"), bound(n, "maximum", "exclusiveMaximum")
	minI64, maxI64 := new(big.Rat).SetInt64(-1<<63), new(big.Rat).SetInt64(1<<63-1)
	maxU64 := new(big.Rat).SetInt(new(big.Int).SetUint64(1<<64 - 1))
	switch {
	case lo != nil && lo.Sign() >= 0 && hi != nil && hi.Cmp(maxI64) > 0 && hi.Cmp(maxU64) <= 0:
		return "uint64"
	case (lo != nil && lo.Cmp(minI64) < 0) || (hi != nil && hi.Cmp(maxI64) > 0):
		return ""
	}
	return "int64"
}

func bound(n *node, incl, excl string) *big.Rat {
	if r, ok := n.get(incl).rat(); ok {
		return r
	}
	if r, ok := n.get(excl).rat(); ok {
		return r
	}
	return nil
}

func (b *builder) array(d *doc, n *node, t *Type, depth int) {
	t.Kind = Array
	items := n.get("items")
	if pi := n.get("prefixItems"); pi != nil {
		t.Elem = &Type{Kind: Raw, RawReason: "tuple element, checked by position", Loc: Loc{d.s, pi.ptr}}
		ok := pi.kind == 'a'
		if ok {
			for i, e := range pi.arr {
				mt, nullable := b.build(d, e, t, fmt.Sprintf("Prefix%d", i), depth+1)
				if !checkable(mt, map[*Type]bool{}) {
					ok = false
					break
				}
				if mt.Parent == t {
					mt.Hidden = true
				}
				t.Prefix = append(t.Prefix, &Matcher{Type: mt, Nullable: nullable})
			}
		}
		if ok && items != nil {
			mt, nullable := b.build(d, items, t, "Rest", depth+1)
			if ok = checkable(mt, map[*Type]bool{}); ok {
				if mt.Parent == t {
					mt.Hidden = true
				}
				t.Rest = &Matcher{Type: mt, Nullable: nullable}
			}
		}
		if !ok {
			t.Prefix, t.Rest = nil, nil
			t.Elem.RawReason = "tuple element"
			t.Notes = append(t.Notes, "The schema's prefixItems (a tuple) is not modelled: elements are kept as raw JSON and not checked.")
		}
		return
	}
	if items != nil && items.kind == 'a' {
		t.Notes = append(t.Notes, "The schema's items array (a draft-07 tuple) is not modelled: elements are kept as raw JSON and not checked.")
		t.Elem = &Type{Kind: Raw, RawReason: "tuple element", Loc: Loc{d.s, items.ptr}}
		return
	}
	if items == nil {
		t.Elem = &Type{Kind: Raw, RawReason: "the schema does not restrict the items", Loc: Loc{d.s, n.ptr}}
		return
	}
	t.Elem, t.ElemNullable = b.build(d, items, t, "Item", depth+1)
}

func (b *builder) object(d *doc, n *node, t *Type, depth int) {
	props := n.get("properties")
	if props != nil && props.kind != 'o' {
		b.errorf(d, props.ptr, "properties must be an object")
		props = nil
	}
	var required []string
	if req := n.get("required"); req != nil {
		if req.kind != 'a' {
			b.errorf(d, req.ptr, "required must be an array of strings")
		} else {
			for _, e := range req.arr {
				if e.kind != 's' {
					b.errorf(d, e.ptr, "required must be an array of strings")
					continue
				}
				if !slices.Contains(required, e.str) {
					required = append(required, e.str)
				}
			}
		}
	}
	ap := n.get("additionalProperties")
	closed := ap != nil && ap.kind == 'b' && !ap.b
	if pp := n.get("patternProperties"); pp != nil {
		t.Notes = append(t.Notes, "Members matching the schema's patternProperties are kept in AdditionalProperties and not checked.")
		if closed {
			closed = false
			ap = nil
		}
	}
	isStruct := (props != nil && len(props.keys) > 0) || len(required) > 0 || closed || t.Root != nil
	if !isStruct {
		t.Kind = Map
		t.Elem, t.ElemNullable = b.extra(d, ap, t, "Value", n, depth)
		t.DepRequired = b.dependentRequired(d, n, t)
		return
	}
	t.Kind = Struct
	t.Named = true
	t.Closed = closed
	t.DepRequired = b.dependentRequired(d, n, t)
	keepAll := d.s.Role != "Input" || d.s.InputExtras || (ap != nil && !(ap.kind == 'b' && ap.b)) ||
		n.get("patternProperties") != nil || n.get("minProperties") != nil || n.get("maxProperties") != nil || len(t.DepRequired) > 0 || n.has("not") || n.has("if")
	switch {
	case !closed && !keepAll:
		// An input that says nothing of undeclared members gets no field
		// for them: callers never fill it. Decoding ignores them (a
		// model's arguments are sent as the model wrote them).
	case !closed:
		t.Extra, t.ExtraNullable = b.extra(d, ap, t, "Extra", n, depth)
	case d.s.Tolerant():
		// A compatible server release may add members to a closed output
		// object: they are kept, never an error (forward compatibility).
		t.Extra = &Type{Kind: Raw, RawReason: "the schema does not restrict undeclared members", Loc: Loc{d.s, n.ptr}}
	}
	if props != nil {
		for _, k := range props.keys {
			t.Fields = append(t.Fields, b.field(d, k, props.obj[k], slices.Contains(required, k), t, depth))
		}
	}
	for _, r := range required {
		if props == nil || props.obj[r] == nil {
			f := &Field{JSONName: r, Required: true, Loc: Loc{d.s, n.ptr + "/required"},
				Type: &Type{Kind: Raw, RawReason: "required member without a schema", Loc: Loc{d.s, n.ptr}}}
			f.GoName = ident.Ident(r)
			if f.GoName == "" {
				b.errorf(d, n.ptr+"/required", "member name %q has no letters, digits or symbols to build a Go name from", r)
			}
			t.Fields = append(t.Fields, f)
		}
	}
}

// dependentRequired reads dependentRequired, dependentSchemas whose
// values are all true or false (false: the member must be absent), and
// draft-07 dependencies whose values are all arrays of names or booleans,
// which Validate then checks, and drops the note saying it is not checked.
func (b *builder) dependentRequired(d *doc, n *node, t *Type) []DepRequired {
	var out []DepRequired
	for _, k := range []string{"dependentRequired", "dependentSchemas", "dependencies"} {
		dr := n.get(k)
		if dr == nil || dr.kind != 'o' {
			continue
		}
		var deps []DepRequired
		ok := true
		for _, m := range dr.keys {
			v := dr.obj[m]
			if v.kind == 'b' && k != "dependentRequired" {
				if !v.b {
					deps = append(deps, DepRequired{Member: m, Forbidden: true})
				}
				continue
			}
			if v.kind != 'a' || k == "dependentSchemas" {
				ok = false
				break
			}
			dep := DepRequired{Member: m}
			for _, e := range v.arr {
				if e.kind != 's' {
					b.errorf(d, e.ptr, "%s values must be arrays of strings", k)
					continue
				}
				dep.Requires = append(dep.Requires, e.str)
			}
			deps = append(deps, dep)
		}
		if !ok {
			continue
		}
		out = append(out, deps...)
		note := fmt.Sprintf("The schema's %q is not checked by Validate.", k)
		t.Notes = slices.DeleteFunc(t.Notes, func(s string) bool { return s == note })
	}
	return out
}

func (b *builder) extra(d *doc, ap *node, parent *Type, seg string, n *node, depth int) (*Type, bool) {
	if ap == nil || (ap.kind == 'b' && ap.b) {
		return &Type{Kind: Raw, RawReason: "the schema does not restrict undeclared members", Loc: Loc{d.s, n.ptr}}, false
	}
	if ap.kind == 'b' {
		return &Type{Kind: Raw, RawReason: "no member is allowed", Loc: Loc{d.s, ap.ptr}}, false
	}
	return b.build(d, ap, parent, seg, depth+1)
}

func (b *builder) field(d *doc, name string, pn *node, required bool, parent *Type, depth int) *Field {
	f := &Field{JSONName: name, Required: required, Loc: Loc{d.s, pn.ptr}}
	f.Pinned = b.pin(d, pn, pn.ptr)
	f.GoName = f.Pinned
	if f.GoName == "" {
		f.GoName = ident.Ident(name)
	}
	if f.GoName == "" {
		b.errorf(d, pn.ptr, "property name %q has no letters, digits or symbols to build a Go name from; name it in the config (names: {%q: Name}) or with x-go-name", name, configKey(d.s, pn.ptr))
		f.GoName = "X"
	}
	f.Description = pn.getStr("description")
	if pn.kind == 'o' {
		if def := pn.get("default"); def != nil {
			f.Default = def.JSON()
		}
		if c := pn.get("const"); c != nil && required && c.kind != 'z' && constOnly(pn) {
			f.Fixed, f.FixedJSON = c.Canonical(), c.JSON()
			f.Type = &Type{Kind: Raw, Loc: f.Loc}
			return f
		}
	}
	// The field's Go name is the segment of the types nested in it; a pin
	// on a property names the field, not its type.
	f.Type, f.Nullable = b.build(d, pn, parent, f.GoName, depth+1)
	if f.Type.Pinned == f.Pinned && f.Pinned != "" && f.Type.Parent == parent {
		f.Type.Pinned = ""
	}
	return f
}

// constOnly reports whether a property schema is just a const (plus type
// and annotations), so it can be a fixed member.
func constOnly(n *node) bool {
	return onlyAnnotations(n, "const", "type", "enum")
}

var numericKeys = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}

func (b *builder) nonNegInt(d *doc, n *node, k string) *int64 {
	v := n.get(k)
	if v == nil {
		return nil
	}
	r, ok := v.rat()
	if !ok || !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() {
		b.errorf(d, v.ptr, "%s must be a non-negative integer", k)
		return nil
	}
	i := r.Num().Int64()
	return &i
}

func (b *builder) num(d *doc, n *node, k string) *Num {
	v := n.get(k)
	if v == nil {
		return nil
	}
	r, ok := v.rat()
	if !ok {
		b.errorf(d, v.ptr, "%s must be a number", k)
		return nil
	}
	return &Num{Text: string(v.num), Rat: r}
}

func (b *builder) constraints(d *doc, n *node, t *Type) {
	c := &t.C
	switch t.Kind {
	case String, Enum, Raw:
		c.MinLength = b.nonNegInt(d, n, "minLength")
		c.MaxLength = b.nonNegInt(d, n, "maxLength")
		if p := n.get("pattern"); p != nil {
			if p.kind != 's' {
				b.errorf(d, p.ptr, "pattern must be a string")
			} else {
				c.Patterns = append(c.Patterns, translatePattern(p.str))
			}
		}
		if ps := n.get("\x00patterns"); ps != nil {
			for _, p := range ps.arr {
				c.Patterns = append(c.Patterns, translatePattern(p.str))
			}
		}
	}
	switch t.Kind {
	case Integer, Number, Enum, Raw:
		c.Minimum, c.Maximum = b.num(d, n, "minimum"), b.num(d, n, "maximum")
		for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum"} {
			v := n.get(k)
			if v == nil {
				continue
			}
			if v.kind == 'b' { // draft-04 form: a flag on minimum/maximum
				if v.b && k == "exclusiveMinimum" {
					c.ExclusiveMin, c.Minimum = c.Minimum, nil
				} else if v.b {
					c.ExclusiveMax, c.Maximum = c.Maximum, nil
				}
				continue
			}
			if k == "exclusiveMinimum" {
				c.ExclusiveMin = b.num(d, n, k)
			} else {
				c.ExclusiveMax = b.num(d, n, k)
			}
		}
		c.MultipleOf = b.num(d, n, "multipleOf")
		if c.MultipleOf != nil && c.MultipleOf.Rat.Sign() <= 0 {
			b.errorf(d, n.get("multipleOf").ptr, "multipleOf must be greater than 0")
			c.MultipleOf = nil
		}
	}
	switch t.Kind {
	case Array, Raw:
		c.MinItems = b.nonNegInt(d, n, "minItems")
		c.MaxItems = b.nonNegInt(d, n, "maxItems")
		if u := n.get("uniqueItems"); u != nil && u.kind == 'b' {
			c.UniqueItems = u.b
		}
	}
	switch t.Kind {
	case Struct, Map, Raw:
		c.MinProperties = b.nonNegInt(d, n, "minProperties")
		c.MaxProperties = b.nonNegInt(d, n, "maxProperties")
	}
	if cv := n.get("const"); cv != nil && t.Kind != Enum {
		c.HasConst, c.Const, c.ConstJSON = true, cv.Canonical(), cv.JSON()
	}
	if t.Kind == Raw {
		// Raw values are checked only for const and enum; a keyword that
		// applies to one JSON type of an untyped value is documented instead.
		keep := Constraints{HasConst: c.HasConst, Const: c.Const, ConstJSON: c.ConstJSON, Enum: c.Enum, EnumJSON: c.EnumJSON}
		if !c.Empty() && (keep.Empty() || c.MinLength != nil || c.MaxLength != nil || len(c.Patterns) > 0 ||
			c.Minimum != nil || c.Maximum != nil || c.ExclusiveMin != nil || c.ExclusiveMax != nil || c.MultipleOf != nil ||
			c.MinItems != nil || c.MaxItems != nil || c.UniqueItems || c.MinProperties != nil || c.MaxProperties != nil) {
			t.Notes = append(t.Notes, "Constraints that apply to one JSON type are not checked on this untyped value.")
		}
		*c = keep
	}
}

// Regular expressions: JSON Schema's are ECMA-262, Go's are RE2. Common
// escapes are translated; what RE2 cannot express (lookaround,
// backreferences) is reported in Reason and not checked.
func translatePattern(src string) Pattern {
	var out strings.Builder
	rs := []rune(src)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r != '\\' || i+1 >= len(rs) {
			out.WriteRune(r)
			continue
		}
		next := rs[i+1]
		switch {
		case next == 'u' && i+5 < len(rs) && isHex(rs[i+2:i+6]):
			out.WriteString(`\x{` + string(rs[i+2:i+6]) + `}`)
			i += 5
		case next == 'u' && i+2 < len(rs) && rs[i+2] == '{':
			j := slices.Index(rs[i+2:], '}')
			if j < 0 {
				out.WriteString(`\u`)
				i++
				continue
			}
			out.WriteString(`\x{` + string(rs[i+3:i+2+j]) + `}`)
			i += 2 + j
		case next == '/':
			out.WriteRune('/')
			i++
		default:
			out.WriteRune(r)
			out.WriteRune(next)
			i++
		}
	}
	p := Pattern{Source: src, Go: out.String()}
	if _, err := regexp.Compile(p.Go); err != nil {
		p.Reason = strings.TrimPrefix(err.Error(), "error parsing regexp: ")
		p.Go = ""
	}
	return p
}

func isHex(rs []rune) bool {
	if len(rs) != 4 {
		return false
	}
	for _, r := range rs {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// never makes t a raw value that no value matches, saying why (a phrase
// after "no value is allowed here:").
func never(t *Type, why string) {
	*t = Type{Kind: Raw, Never: true, RawReason: why + neverTail,
		Parent: t.Parent, Segment: t.Segment, Pinned: t.Pinned, DefName: t.DefName, Root: t.Root, Loc: t.Loc,
		Title: t.Title, Description: t.Description, Named: t.Named, Deprecated: t.Deprecated}
}

const neverTail = ", so no value is allowed here"

// NeverReason says why no value is allowed by a Never type.
func (t *Type) NeverReason() string { return strings.TrimSuffix(t.RawReason, neverTail) }

// unsatisfiable says why no value can match a merged schema when the merge
// problem means that (rather than that the parts do not fit one Go type),
// or "".
func unsatisfiable(problem string) string {
	switch problem {
	case falsePart:
		return "the schema's allOf has a false part"
	case noCommonType:
		return "the schema's allOf parts allow no common JSON type"
	}
	return ""
}

// booleanSubschemas rewrites the subschemas that are true or false where
// that is a simpler keyword: not false (and propertyNames true) restrict
// nothing and are dropped; propertyNames false allows no member at all,
// which maxProperties 0 says for maps and structs alike. The other
// positions (items, prefixItems, contains, if/then/else, properties,
// dependentSchemas) build false into a Never type or matcher.
func booleanSubschemas(n *node) *node {
	not, pn := n.get("not"), n.get("propertyNames")
	if (not == nil || not.kind != 'b' || not.b) && (pn == nil || pn.kind != 'b') {
		return n
	}
	n = n.clone()
	if not != nil && not.kind == 'b' && !not.b {
		n.del("not")
	}
	if pn != nil && pn.kind == 'b' {
		n.del("propertyNames")
		if !pn.b {
			n.set("maxProperties", &node{kind: 'n', num: "0", ptr: pn.ptr})
		}
	}
	return n
}

// onlyNull makes t a raw value that must be null.
func onlyNull(t *Type) {
	t.Kind, t.RawReason = Raw, "the schema only allows null"
	t.C = Constraints{HasConst: true, Const: "null", ConstJSON: "null"}
}
