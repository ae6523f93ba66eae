package ir

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgen/mcpgen/gen/internal/ident"
)

const undiscriminated = "a variant does not say its JSON type, so the variants cannot be told apart and the value is kept as raw JSON and not checked"

type variantInfo struct {
	node     *node // as written (a $ref keeps its definition's name)
	resolved *node // $ref followed, allOf merged
	kind     string
	nullOnly bool
	// nullable: null is valid as well as values of kind.
	nullable bool
	// never: no value matches (false, an allOf with a false part or no
	// common type, a union of such variants).
	never    bool
	constVal *node
	props    []string
	required []string
	// union is "oneOf" or "anyOf" when the variant is itself a union
	// (nothing else but annotations), kept as a variant of its own;
	// leaves are then its variants, themselves unions flattened.
	union  string
	leaves []*variantInfo
}

func (b *builder) analyse(d *doc, v *node, depth int) (*variantInfo, string) {
	vi := &variantInfo{node: v}
	r, ok := b.follow(d, v)
	if !ok {
		return nil, "unresolvable $ref"
	}
	if r.kind == 'o' && (r.has("allOf") || r.has("$ref")) {
		m, problem := b.merge(d, r, depth+1)
		if unsatisfiable(problem) != "" {
			vi.resolved, vi.never = r, true
			return vi, ""
		}
		if problem != "" {
			return nil, problem
		}
		r = m
	}
	vi.resolved = r
	if r.kind == 'b' {
		vi.never = !r.b
		return vi, ""
	}
	if r.kind != 'o' {
		return nil, "a variant is not a schema"
	}
	if k := pureUnion(r); k != "" && depth < MaxDepth {
		// Memoized, and a union that contains itself is of no known kind:
		// each union is analysed once, however often it is reached.
		if u, ok := b.unions[r]; ok {
			if u == nil {
				return vi, ""
			}
			c := *u
			c.node = v
			return &c, ""
		}
		b.unions[r] = nil
		u, problem := b.analyseUnion(d, vi, k, depth)
		if problem != "" {
			delete(b.unions, r)
			return nil, problem
		}
		b.unions[r] = u
		c := *u
		return &c, ""
	}
	types, _ := b.types(d, r)
	if c := r.get("const"); c != nil {
		vi.constVal = c
	} else if e := r.get("enum"); e != nil && e.kind == 'a' && len(e.arr) == 1 {
		vi.constVal = e.arr[0]
	}
	if vi.constVal != nil && vi.constVal.kind == 'z' || len(types) == 1 && types[0] == "null" {
		vi.nullOnly = true
		return vi, ""
	}
	// Null is valid too when the type says so and no enum or const
	// leaves it out, or when the enum lists it.
	if e := r.get("enum"); e != nil && e.kind == 'a' {
		vi.nullable = slices.ContainsFunc(e.arr, func(x *node) bool { return x.kind == 'z' }) && (types == nil || slices.Contains(types, "null"))
	} else {
		vi.nullable = slices.Contains(types, "null") && vi.constVal == nil
	}
	types = slices.DeleteFunc(slices.Clone(types), func(s string) bool { return s == "null" })
	switch {
	case len(types) == 1:
		vi.kind = types[0]
	case len(types) == 0 && vi.constVal != nil:
		vi.kind = vi.constVal.kindName()
	case len(types) == 0 && r.get("enum") != nil && r.get("enum").kind == 'a' && len(r.get("enum").arr) > 0:
		vi.kind = ""
		for _, e := range r.get("enum").arr {
			if e.kind == 'z' {
				continue
			}
			if vi.kind == "" {
				vi.kind = group(e.kindName())
			} else if group(e.kindName()) != vi.kind {
				vi.kind = "-"
			}
		}
		if vi.kind == "-" {
			vi.kind = ""
		}
	case len(types) == 0 && !r.has("oneOf") && !r.has("anyOf"):
		if it := inferTypes(r); len(it) == 1 {
			vi.kind = it[0]
		}
	}
	if p := r.get("properties"); p != nil && p.kind == 'o' {
		vi.props = p.keys
	}
	if req := r.get("required"); req != nil {
		for _, e := range req.arr {
			if e.kind == 's' {
				vi.required = append(vi.required, e.str)
			}
		}
	}
	return vi, ""
}

// pureUnion is "oneOf" or "anyOf" when n is a union and nothing else but
// annotations, else "".
func pureUnion(n *node) string {
	if n.kind != 'o' || n.has("oneOf") == n.has("anyOf") || !onlyAnnotations(n, "oneOf", "anyOf") {
		return ""
	}
	k := "oneOf"
	if n.has("anyOf") {
		k = "anyOf"
	}
	if l := n.get(k); l.kind != 'a' || len(l.arr) == 0 {
		return ""
	}
	return k
}

// analyseUnion describes a variant that is itself a union: its JSON kind
// is that of its variants when they share one, and null is valid when
// the variants that allow it are as many as the union needs (one for
// oneOf, any for anyOf).
func (b *builder) analyseUnion(d *doc, vi *variantInfo, key string, depth int) (*variantInfo, string) {
	vi.union = key
	nulls, values := 0, 0
	for _, v := range vi.resolved.get(key).arr {
		sub, problem := b.analyse(d, v, depth+1)
		if problem != "" {
			return nil, problem
		}
		if sub.union != "" {
			vi.leaves = addLeaves(vi.leaves, sub.leaves...)
		} else {
			vi.leaves = addLeaves(vi.leaves, sub)
		}
		switch {
		case sub.never:
			continue
		case sub.nullOnly:
			nulls++
			continue
		case sub.nullable:
			nulls++
		}
		values++
		switch {
		case sub.kind == "" || vi.kind == "-":
			vi.kind = "-"
		case vi.kind == "":
			vi.kind = group(sub.kind)
		case group(sub.kind) != vi.kind:
			vi.kind = "-"
		}
	}
	if vi.kind == "-" {
		vi.kind = ""
	}
	switch ok := nullOK(key, nulls); {
	case values == 0 && ok:
		vi.nullOnly = true
	case values == 0:
		vi.never = true
	default:
		vi.nullable = ok
	}
	return vi, ""
}

func group(kind string) string {
	if kind == "integer" {
		return "number"
	}
	return kind
}

// singleVariant recognises oneOf/anyOf with one variant that is not null
// and nothing else that shapes the type (anyOf [T, {type: null}]): that
// is T, nullable by nullOK. Variants that match nothing are left out.
func (b *builder) singleVariant(d *doc, n *node, depth int) (v *node, nulls int, key string, ok bool) {
	key = pureUnion(n)
	if key == "" {
		return nil, 0, "", false
	}
	var rest []*node
	for _, v := range n.get(key).arr {
		vi, problem := b.analyse(d, v, depth)
		if problem != "" {
			return nil, 0, "", false
		}
		switch {
		case vi.never:
		case vi.nullOnly:
			nulls++
		default:
			rest = append(rest, v)
		}
	}
	if len(rest) != 1 {
		return nil, 0, "", false
	}
	return rest[0], nulls, key, true
}

// nullOK says whether null is valid for a union of key in which nulls
// variants allow it: exactly one must for oneOf, any may for anyOf.
func nullOK(key string, nulls int) bool {
	return nulls == 1 || key == "anyOf" && nulls > 1
}

func (b *builder) union(d *doc, n *node, t *Type, types []string, depth int) bool {
	key := "oneOf"
	if !n.has("oneOf") {
		key = "anyOf"
	} else if n.has("anyOf") {
		t.Notes = append(t.Notes, "The schema's anyOf is not checked (oneOf is used).")
	}
	list := n.get(key)
	if list.kind != 'a' || len(list.arr) == 0 {
		b.errorf(d, list.ptr, "%s must be a non-empty array of schemas", key)
		t.Kind = Raw
		return false
	}
	base := n.clone()
	for _, k := range []string{"oneOf", "anyOf", "title", "description", "$comment", "default", "examples", "x-go-name", "$defs", "definitions", "deprecated", "$schema", "$id"} {
		base.del(k)
	}
	hasBase := len(base.keys) > 0
	var infos []*variantInfo
	nulls := 0 // variants that allow null: nullOnly ones, then nullable ones
	seen := map[string]bool{}
	for _, v := range b.flatten(d, list.arr, key, depth) {
		if key == "anyOf" {
			// A duplicate adds nothing to an anyOf (to a oneOf it makes
			// every value it accepts invalid, which trying the variants
			// reports).
			if r, ok := b.follow(d, v); ok {
				c := "\x00" + strconv.Itoa(len(seen))
				if _, split := b.splits[r]; !split {
					// By text for what the schema wrote; a part flatten
					// made, whose text can be as large as the unions it
					// came from, is listed once already (by identity).
					c = r.Canonical()
				}
				if seen[c] {
					continue
				}
				seen[c] = true
			}
		}
		vn := v
		if hasBase {
			// A variant of a type the sibling type keyword excludes can
			// never match: leave it out rather than fail to merge it.
			if ty := v.get("type"); types != nil && v.kind == 'o' && ty != nil && ty.kind == 's' && ty.str != "null" &&
				!slices.Contains(types, ty.str) && !(ty.str == "integer" && slices.Contains(types, "number")) {
				continue
			}
			vn = allOfNode(v.ptr, base, v)
		}
		vi, problem := b.analyse(d, vn, depth)
		if problem != "" {
			t.Kind, t.RawReason = Raw, problem
			return false
		}
		if vi.never {
			continue // a variant no value matches adds nothing
		}
		if vi.nullOnly {
			nulls++
			continue
		}
		if types != nil && vi.kind != "" && !slices.Contains(types, vi.kind) && !(vi.kind == "integer" && slices.Contains(types, "number")) {
			continue // excluded by the sibling type keyword
		}
		infos = append(infos, vi)
	}
	switch len(infos) {
	case 0:
		if nullOK(key, nulls) {
			onlyNull(t)
		} else {
			never(t, "no variant of the schema's "+key+" allows a value")
		}
		return false
	case 1:
		// Whether the variant allows null is what building it says.
		if b.fill(d, infos[0].resolved, t, depth+1) {
			nulls++
		}
		return nullOK(key, nulls)
	}
	nullable := func() bool {
		n := nulls
		for _, vi := range infos {
			if vi.nullable {
				n++
			}
		}
		return nullOK(key, n)
	}
	if b.constEnum(d, t, infos) {
		return nullable()
	}
	groups := map[string][]int{}
	for i, vi := range infos {
		if vi.kind == "" {
			t.Kind, t.RawReason = Raw, undiscriminated
			return nullable()
		}
		groups[group(vi.kind)] = append(groups[group(vi.kind)], i)
	}
	disc := map[int]string{}
	unique := map[int]string{}
	try := map[int]int{}
	discMember := ""
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		idx := groups[g]
		if len(idx) == 1 {
			continue
		}
		// A variant that is a union of its own is only told apart by
		// trying it.
		nested := slices.ContainsFunc(idx, func(i int) bool { return infos[i].union != "" })
		if g == "object" && !nested {
			if m, vals, ok := discriminator(infos, idx); ok {
				discMember = m
				for i, v := range vals {
					disc[idx[i]] = v
				}
				continue
			}
			if us, ok := uniqueRequired(infos, idx); ok {
				for i, u := range us {
					unique[idx[i]] = u
				}
				continue
			}
		}
		// Variants of one JSON type that nothing tells apart are tried in
		// order (tryOrder); for oneOf, exactly one must accept the value.
		for rank, i := range tryOrder(infos, idx) {
			try[i] = rank + 1
		}
	}
	t.Kind, t.Named, t.OneOf, t.Discriminator = Union, true, key == "oneOf", discMember
	segs := b.variantNames(d, infos, disc, discMember, unique)
	for i, vi := range infos {
		node := vi.node
		if hasBase {
			node = vi.resolved
		}
		var vt *Type
		var vn bool
		if e, split := b.splits[node]; e != nil {
			vt, vn = e.t, e.nullable
		} else {
			vt, vn = b.build(d, node, t, segs[i], depth+1)
			if split {
				// A part of an inner union is built once, wherever it is
				// reached, as a $ref is.
				b.splits[node] = &refEntry{t: vt, nullable: vn}
			}
		}
		if vn {
			nulls++
		}
		if key == "oneOf" && try[i] > 0 && vt.Kind == Struct && !vt.Closed && vt.Extra == nil {
			// A variant's undeclared members follow the rule of every
			// object (Schema.InputExtras), except in the open variants of
			// a oneOf told apart by trying them: there a member one
			// variant does not declare can make another fail, which
			// decides that the value is this one; dropped, the value
			// would no longer be valid once encoded again.
			vt.Extra = &Type{Kind: Raw, RawReason: "the schema does not restrict undeclared members", Loc: vt.Loc}
		}
		// A pin at the variant names the variant (its constructor and
		// methods); its inline type is named after it, as any variant's.
		if p := d.s.pinAt(vi.node.ptr); vt.Parent == t && vt.Pinned != "" && (vt.Pinned == p || vt.Pinned == vi.node.getStr("x-go-name")) {
			vt.Pinned = ""
		}
		t.Variants = append(t.Variants, &Variant{
			Segment: segs[i], Type: vt, JSONKind: group(vi.kind), Disc: disc[i], Unique: unique[i], Try: try[i],
			Loc: Loc{d.s, vi.node.ptr},
		})
	}
	// The variants' own answers, now that each is built.
	return nullOK(key, nulls)
}

// flatten lists the variants of a union of key. A variant that is itself
// a union (and nothing else but annotations, directly or through a $ref)
// gives its variants instead only where that keeps which values are
// valid (see exact); otherwise it stays one variant, a union of its own.
// Variants of different JSON types never match one value, so an inner
// union is split by JSON type first, and each part is judged on its own.
func (b *builder) flatten(d *doc, vs []*node, key string, depth int) []*node {
	leaves := make([][]*variantInfo, len(vs))
	for i, v := range vs {
		leaves[i] = b.leaves(d, v, depth)
	}
	var out []*node
	seen := map[*node]bool{}
	add := func(ns ...*node) {
		for _, n := range ns {
			// One schema twice adds nothing to an anyOf; listing it once
			// keeps unions that refer to each other from doubling.
			if r, ok := b.follow(d, n); key == "anyOf" && ok {
				if seen[r] {
					continue
				}
				seen[r] = true
			}
			out = append(out, n)
		}
	}
	for i, v := range vs {
		r, ok := b.follow(d, v)
		inner := ""
		if ok {
			inner = pureUnion(r)
		}
		if inner == "" || depth >= MaxDepth || b.flattening[r] {
			add(v)
			continue
		}
		sub, done := b.flat[r]
		if !done {
			b.flattening[r] = true // a union that contains itself stays whole
			sub = b.flatten(d, r.get(inner).arr, inner, depth+1)
			delete(b.flattening, r)
			b.flat[r] = sub
		}
		var siblings []*variantInfo
		for j := range vs {
			if j != i {
				siblings = addLeaves(siblings, leaves[j]...)
			}
		}
		add(b.splice(d, v, r, inner, sub, key, siblings, depth)...)
	}
	return out
}

// addLeaves adds the leaves not in to already (one schema reached through
// several $refs is one leaf), so that their number stays that of the
// schemas, however the unions refer to each other.
func addLeaves(to []*variantInfo, ls ...*variantInfo) []*variantInfo {
	for _, l := range ls {
		if !slices.ContainsFunc(to, func(x *variantInfo) bool { return x.resolved == l.resolved }) {
			to = append(to, l)
		}
	}
	return to
}

// leaves are the variants a union variant v stands for (itself when it is
// not a union); one of unknown kind when it cannot be analysed.
func (b *builder) leaves(d *doc, v *node, depth int) []*variantInfo {
	vi, problem := b.analyse(d, v, depth)
	switch {
	case problem != "":
		return []*variantInfo{{node: v, resolved: v}}
	case vi.union != "":
		return vi.leaves
	}
	return []*variantInfo{vi}
}

// splice returns what replaces the variant v of an outer union of key,
// v being (or referring to) r, a union of inner whose variants, flattened
// in turn, are sub: the parts of sub that can stand in the outer union
// exactly, and the other parts, by JSON type, as unions of their own (v
// itself when that is all of sub).
func (b *builder) splice(d *doc, v, r *node, inner string, sub []*node, key string, siblings []*variantInfo, depth int) []*node {
	infos := make([]*variantInfo, len(sub))
	var kinds []string
	byKind := map[string][]int{}
	for j, sn := range sub {
		vi, problem := b.analyse(d, sn, depth+1)
		if problem != "" || vi.kind == "" && !vi.nullOnly && !vi.never || vi.nullable {
			// A variant of no known JSON type cannot be split off, nor one
			// that allows null beside its type: the union stays whole.
			return []*node{v}
		}
		infos[j] = vi
		if vi.never {
			continue
		}
		k := group(vi.kind)
		if vi.nullOnly {
			k = "null"
		}
		if byKind[k] == nil {
			kinds = append(kinds, k)
		}
		byKind[k] = append(byKind[k], j)
	}
	var out []*node
	for _, k := range kinds {
		idx := byKind[k]
		var g []*variantInfo
		for _, j := range idx {
			g = append(g, infos[j])
		}
		if len(idx) == 1 || exact(inner, key, g, siblings, d.s.Tolerant()) {
			for _, j := range idx {
				out = append(out, sub[j])
			}
			continue
		}
		if len(kinds) == 1 {
			return []*node{v} // keeps a $ref's name
		}
		arr := r.get(inner)
		part := &node{kind: 'a', ptr: arr.ptr}
		for _, j := range idx {
			part.arr = append(part.arr, sub[j])
		}
		split := &node{kind: 'o', keys: []string{inner}, obj: map[string]*node{inner: part}, ptr: arr.ptr}
		b.splits[split] = nil
		out = append(out, split)
	}
	return out
}

// exact reports whether the variants g of an inner union of key inner,
// all of one JSON type, can take its place in an outer union of key outer
// without changing which values are valid: always for anyOf in anyOf;
// when no value matches two of g (their oneOf is their anyOf); and for
// oneOf in oneOf when no value matches one of g and an outer sibling
// (siblings are the outer union's other variants, flattened).
func exact(inner, outer string, g, siblings []*variantInfo, tolerant bool) bool {
	if inner == "anyOf" && outer == "anyOf" {
		return true
	}
	pairwise := true
	for i := range g {
		for j := range i {
			pairwise = pairwise && disjoint(g[i], g[j], tolerant)
		}
	}
	if pairwise {
		return true
	}
	if inner != "oneOf" || outer != "oneOf" {
		return false
	}
	for _, x := range g {
		for _, y := range siblings {
			if !disjoint(x, y, tolerant) {
				return false
			}
		}
	}
	return true
}

// disjoint reports whether no value matches both a and b, as far as their
// schemas say outright: JSON types that do not meet, consts or enums with
// no value in common, or (objects) a member one requires that the other
// gives a const or enum without that value, gives the schema false, or,
// closed, does not declare. Closed objects of a tolerant schema keep
// undeclared members, so they are not told apart that way.
func disjoint(a, b *variantInfo, tolerant bool) bool {
	if a.never || b.never {
		return true
	}
	if a.union != "" || b.union != "" {
		x, y := a, b
		if a.union == "" {
			x, y = b, a
		}
		for _, l := range x.leaves {
			if !disjoint(l, y, tolerant) {
				return false
			}
		}
		return true
	}
	ka, kb := kindSet(a), kindSet(b)
	if ka != nil && kb != nil && !slices.ContainsFunc(ka, func(k string) bool { return slices.Contains(kb, k) }) {
		return true
	}
	if va, vb := valueSet(a.resolved), valueSet(b.resolved); va != nil && vb != nil && !overlap(va, vb) {
		return true
	}
	if (a.nullable || a.nullOnly) && (b.nullable || b.nullOnly) {
		return false // both allow null
	}
	if group(a.kind) != "object" || group(b.kind) != "object" {
		return false
	}
	return excludes(a, b, tolerant) || excludes(b, a, tolerant)
}

// excludes reports whether a requires a member whose values b refuses.
func excludes(a, b *variantInfo, tolerant bool) bool {
	bp := b.resolved.get("properties")
	ap := b.resolved.get("additionalProperties")
	closed := !tolerant && ap != nil && ap.kind == 'b' && !ap.b && !b.resolved.has("patternProperties")
	for _, m := range a.required {
		p := bp.get(m)
		switch {
		case p == nil && closed:
			return true
		case p != nil && p.kind == 'b' && !p.b:
			return true
		}
		if va, vb := valueSet(a.resolved.get("properties").get(m)), valueSet(p); va != nil && vb != nil && !overlap(va, vb) {
			return true
		}
	}
	return false
}

// kindSet is the JSON types (integer as number, with null) a variant
// allows, or nil when any.
func kindSet(vi *variantInfo) []string {
	switch {
	case vi.nullOnly:
		return []string{"null"}
	case vi.kind == "":
		return nil
	case vi.nullable:
		return []string{group(vi.kind), "null"}
	}
	return []string{group(vi.kind)}
}

// valueSet is the canonical values a schema's const or enum allows, or nil
// when it has neither.
func valueSet(n *node) []string {
	if c := n.get("const"); c != nil {
		return []string{c.Canonical()}
	}
	if e := n.get("enum"); e != nil && e.kind == 'a' {
		out := []string{}
		for _, v := range e.arr {
			out = append(out, v.Canonical())
		}
		return out
	}
	return nil
}

func overlap(a, b []string) bool {
	return slices.ContainsFunc(a, func(s string) bool { return slices.Contains(b, s) })
}

// variantNames names the variants of a union (infos, in schema order),
// each by the first of these that no other variant still unnamed shares
// and no variant took already: a pin (config or x-go-name, on the variant
// or the definition it refers to), taken even when another variant has
// it (the collision is then reported); its title; the value of its const
// discriminator, or of its first required member whose schema is a const
// (its own const, for a const variant); the definition name of a $ref
// variant; the required member unique to it (disc and unique come from
// telling the variants apart), its only required member, or its first
// required member no other variant mentions; its format; its JSON type;
// for variants of one JSON type still unnamed, a property no other variant
// mentions, then the JSON type again (for the one left); then its JSON
// type and its place among the variants of that type (String1, String2),
// and Variant<index> only when even that is taken. The names depend on the
// union's own schema only.
func (b *builder) variantNames(d *doc, infos []*variantInfo, disc map[int]string, discMember string, unique map[int]string) []string {
	n := len(infos)
	const steps = 9
	cands := make([][steps]string, n)
	for i, vi := range infos {
		c := &cands[i]
		c[0] = variantPin(b, d, vi)
		c[1] = ident.Ident(vi.resolved.getStr("title"))
		switch {
		case disc[i] != "":
			c[2] = ident.Ident(strings.Trim(vi.discValueText(discMember), `"`))
		case vi.constVal != nil && vi.constVal.kind != 'o' && vi.constVal.kind != 'a':
			c[2] = constSegment(vi.constVal)
		default:
			for _, p := range vi.props {
				if cv := constOf(vi.resolved.get("properties").get(p)); cv != nil && slices.Contains(vi.required, p) && cv.kind != 'o' && cv.kind != 'a' && cv.kind != 'z' {
					c[2] = constSegment(cv)
					break
				}
			}
		}
		if isDefRef(vi.node) {
			c[3] = ident.Ident(lastToken(vi.node.getStr("$ref")))
		}
		switch {
		case unique[i] != "":
			c[4] = ident.Ident(unique[i])
		case len(vi.required) == 1:
			c[4] = ident.Ident(vi.required[0])
		default:
			for _, r := range vi.required {
				if !mentionedByOthers(infos, i, r) {
					c[4] = ident.Ident(r)
					break
				}
			}
		}
		if vi.kind == "string" {
			c[5] = ident.Ident(vi.resolved.getStr("format"))
		}
		c[6] = kindSegment(vi.kind)
		// Variants of one JSON type still unnamed: a property no other
		// variant mentions names one, and the JSON type the one left.
		c[7] = ident.Ident(ownProperty(infos, i))
		c[8] = c[6]
	}
	names := make([]string, n)
	used := map[string]bool{}
	for i := range infos {
		if p := cands[i][0]; p != "" {
			names[i] = p
			used[p] = true
		}
	}
	for step := 1; step < steps; step++ {
		count := map[string]int{}
		for i := range infos {
			if names[i] == "" {
				count[cands[i][step]]++
			}
		}
		for i := range infos {
			if c := cands[i][step]; names[i] == "" && c != "" && count[c] == 1 && !used[c] {
				names[i] = c
				used[c] = true
			}
		}
	}
	ordinal := map[string]int{}
	for i, vi := range infos {
		k := kindSegment(vi.kind)
		ordinal[k]++
		if names[i] != "" {
			continue
		}
		c := k + strconv.Itoa(ordinal[k])
		if k == "" || used[c] {
			c = "Variant" + strconv.Itoa(i)
		}
		names[i] = c
		used[c] = true
	}
	return names
}

// variantPin is the Go name pinned for a variant: at its place, or, for a
// $ref variant, at the definition it refers to; "" when none (or when the
// pin is not an identifier, which building its type reports).
func variantPin(b *builder, d *doc, vi *variantInfo) string {
	p := d.s.Pins[vi.node.ptr]
	if p == "" {
		p = vi.node.getStr("x-go-name")
	}
	if p == "" && vi.node.has("$ref") {
		if t, ok := b.follow(d, vi.node); ok {
			p = d.s.Pins[t.ptr]
			if p == "" {
				p = t.getStr("x-go-name")
			}
		}
	}
	if !ident.Valid(p) {
		return ""
	}
	return p
}

// constSegment names a scalar const value: a string by its words, a
// number as enum constants are named, true and false as they are.
func constSegment(c *node) string {
	switch c.kind {
	case 's':
		return ident.Ident(c.str)
	case 'n':
		return numSegment(string(c.num))
	case 'b':
		return ident.Ident(strconv.FormatBool(c.b))
	}
	return ""
}

// mentionedByOthers reports whether a variant other than i declares or
// requires member m.
func mentionedByOthers(infos []*variantInfo, i int, m string) bool {
	for j, o := range infos {
		if j != i && (slices.Contains(o.props, m) || slices.Contains(o.required, m)) {
			return true
		}
	}
	return false
}

// ownProperty is the first property of variant i that no other variant
// declares or requires, or "".
func ownProperty(infos []*variantInfo, i int) string {
	for _, p := range infos[i].props {
		own := true
		for j, o := range infos {
			if j != i && (slices.Contains(o.props, p) || slices.Contains(o.required, p)) {
				own = false
				break
			}
		}
		if own {
			return p
		}
	}
	return ""
}

// tryOrder is the documented order in which variants of one JSON type that
// nothing else tells apart are tried: the most specific first (for
// objects, more required members, then closed before open, then more
// declared properties; otherwise more constraint keywords), then schema
// order. Decoding takes the first variant that accepts the value.
func tryOrder(infos []*variantInfo, idx []int) []int {
	score := func(i int) [4]int {
		r := infos[i].resolved
		closed := 0
		if ap := r.get("additionalProperties"); ap != nil && ap.kind == 'b' && !ap.b {
			closed = 1
		}
		n := 0
		for _, k := range r.keys {
			if !annotationKeys[k] && !strings.HasPrefix(k, "x-") && k != "type" {
				n++
			}
		}
		return [4]int{len(infos[i].required), closed, len(infos[i].props), n}
	}
	out := slices.Clone(idx)
	slices.SortStableFunc(out, func(a, b int) int {
		sa, sb := score(a), score(b)
		for k := range sa {
			if sa[k] != sb[k] {
				return sb[k] - sa[k]
			}
		}
		return a - b
	})
	return out
}

func (vi *variantInfo) discValueText(member string) string {
	p := vi.resolved.get("properties").get(member)
	if c := p.get("const"); c != nil {
		return c.JSON()
	}
	if e := p.get("enum"); e != nil && len(e.arr) == 1 {
		return e.arr[0].JSON()
	}
	return ""
}

func isDefRef(n *node) bool {
	r := n.getStr("$ref")
	return strings.HasPrefix(r, "#/$defs/") || strings.HasPrefix(r, "#/definitions/")
}

func lastToken(ref string) string {
	return unescape(ref[strings.LastIndexByte(ref, '/')+1:])
}

func kindSegment(kind string) string {
	switch kind {
	case "boolean":
		return "Bool"
	case "object":
		return "Object"
	}
	return ident.Ident(kind)
}

// discriminator finds a member that every variant requires with a distinct
// scalar const.
func discriminator(infos []*variantInfo, idx []int) (string, []string, bool) {
	first := infos[idx[0]]
	for _, m := range first.props {
		var vals []string
		ok := true
		for _, i := range idx {
			vi := infos[i]
			c := constOf(vi.resolved.get("properties").get(m))
			if c == nil || c.kind == 'o' || c.kind == 'a' || c.kind == 'z' || !slices.Contains(vi.required, m) {
				ok = false
				break
			}
			if slices.Contains(vals, c.Canonical()) {
				ok = false
				break
			}
			vals = append(vals, c.Canonical())
		}
		if ok {
			return m, vals, true
		}
	}
	return "", nil, false
}

func constOf(n *node) *node {
	if n == nil {
		return nil
	}
	if c := n.get("const"); c != nil {
		return c
	}
	if e := n.get("enum"); e != nil && e.kind == 'a' && len(e.arr) == 1 {
		return e.arr[0]
	}
	return nil
}

// uniqueRequired finds, for every variant, a required member that no other
// variant mentions.
func uniqueRequired(infos []*variantInfo, idx []int) ([]string, bool) {
	var out []string
	for _, i := range idx {
		found := ""
		for _, r := range infos[i].required {
			clash := false
			for _, j := range idx {
				if j != i && (slices.Contains(infos[j].props, r) || slices.Contains(infos[j].required, r)) {
					clash = true
					break
				}
			}
			if !clash {
				found = r
				break
			}
		}
		if found == "" {
			return nil, false
		}
		out = append(out, found)
	}
	return out, true
}

// constEnum turns a oneOf/anyOf of consts of one JSON type (a documented
// enum) into an Enum.
func (b *builder) constEnum(d *doc, t *Type, infos []*variantInfo) bool {
	kind := ""
	for _, vi := range infos {
		if vi.constVal == nil || !onlyAnnotations(vi.resolved, "const", "enum", "type") {
			return false
		}
		k := group(vi.constVal.kindName())
		if k != "string" && k != "number" || kind != "" && k != kind {
			return false
		}
		kind = k
	}
	var vals []*node
	docs := map[*node]string{}
	for _, vi := range infos {
		vals = append(vals, vi.constVal)
		docs[vi.constVal] = strings.TrimSpace(strings.Join([]string{vi.resolved.getStr("title"), vi.resolved.getStr("description")}, " "))
	}
	b.enumValues(d, t, vals, docs)
	return true
}

func (b *builder) enum(d *doc, n, enum *node, t *Type, types []string) bool {
	if enum.kind != 'a' || len(enum.arr) == 0 {
		b.errorf(d, enum.ptr, "enum must be a non-empty array")
		t.Kind = Raw
		return false
	}
	nullable := false
	var vals []*node
	for _, v := range enum.arr {
		if v.kind == 'z' {
			nullable = true
			continue
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		onlyNull(t)
		return false
	}
	allStr, allNum, allInt, allBool := true, true, true, true
	for _, v := range vals {
		allStr = allStr && v.kind == 's'
		allNum = allNum && v.kind == 'n'
		allInt = allInt && v.kindName() == "integer"
		allBool = allBool && v.kind == 'b'
	}
	allows := func(k string) bool { return types == nil || slices.Contains(types, k) }
	switch {
	case len(vals) == 1 && vals[0].kind != 'o' && vals[0].kind != 'a':
		t.Kind = map[string]Kind{"string": String, "integer": Integer, "number": Number, "boolean": Boolean}[vals[0].kindName()]
		if t.Kind == Integer {
			t.IntType = b.intType(d, n)
			if t.IntType == "" {
				t.Kind = Number
			}
		}
		b.constraints(d, n, t)
		t.C.HasConst, t.C.Const, t.C.ConstJSON = true, vals[0].Canonical(), vals[0].JSON()
		return nullable
	case allStr && allows("string"), allNum && (allows("number") || allInt && allows("integer")):
		b.enumValues(d, t, vals, nil)
		if t.Base == Integer {
			t.IntType = b.intType(d, n)
			if t.IntType == "" {
				t.Base = Number
			}
		}
		b.constraints(d, n, t)
		return nullable
	case allBool && allows("boolean"):
		t.Kind = Boolean
	default:
		t.Kind, t.RawReason, t.NotNull = Raw, "the enum mixes JSON types", !nullable
		if k := vals[0].kind; (k == 'o' || k == 'a') && !slices.ContainsFunc(vals, func(v *node) bool { return v.kind != k }) {
			t.RawReason = "the schema's enum lists " + map[byte]string{'o': "objects", 'a': "arrays"}[k] + ", compared by value"
		}
	}
	b.constraints(d, n, t)
	for _, v := range vals {
		t.C.Enum = append(t.C.Enum, v.Canonical())
		t.C.EnumJSON = append(t.C.EnumJSON, v.JSON())
	}
	return nullable
}

// enumValues fills an Enum from its values. Constant names come from the
// values; a value without letters or digits, or two values that normalise
// to the same name, get Value<index> instead (index in the schema's list,
// so the name does not depend on which other values collide).
func (b *builder) enumValues(d *doc, t *Type, vals []*node, docs map[*node]string) {
	t.Kind, t.Named = Enum, true
	t.Base = String
	if vals[0].kind == 'n' {
		t.Base = Integer
		for _, v := range vals {
			if v.kindName() != "integer" {
				t.Base = Number
			}
		}
	}
	seen := map[string]bool{}
	for i, v := range vals {
		c := v.Canonical()
		if seen[c] {
			continue // duplicates add nothing
		}
		seen[c] = true
		ev := &EnumValue{JSON: v.JSON(), Canonical: c, Str: v.str, Loc: Loc{d.s, v.ptr}, Doc: docs[v]}
		if v.kind == 's' {
			ev.Segment = ident.Ident(v.str)
			if v.str == "" {
				ev.Segment = "Empty"
			}
		} else {
			ev.Segment = numSegment(string(v.num))
		}
		ev.Pinned = d.s.pinAt(v.ptr)
		if ev.Segment == "" {
			ev.Segment = fmt.Sprintf("Value%d", i)
		}
		t.Values = append(t.Values, ev)
	}
	segs := map[string]int{}
	for _, ev := range t.Values {
		segs[ev.Segment]++
	}
	for i, ev := range t.Values {
		if segs[ev.Segment] > 1 {
			ev.Segment = fmt.Sprintf("Value%d", slices.IndexFunc(vals, func(n *node) bool { return n.Canonical() == t.Values[i].Canonical }))
		}
	}
}

func numSegment(s string) string {
	r := strings.NewReplacer("-", "Minus", "+", "", ".", "_", "e", "E")
	return r.Replace(s)
}

// typeUnion splits a schema with several types (type: [string, integer])
// into one variant per type, each keeping the keywords that apply to it.
func (b *builder) typeUnion(d *doc, n *node, t *Type, types []string, depth int) bool {
	t.Kind, t.Named, t.OneOf = Union, true, true
	for _, ty := range types {
		vn := n.clone()
		vn.set("type", &node{kind: 's', str: ty, ptr: n.ptr + "/type"})
		vn.del("x-go-name")
		vt := &Type{Parent: t, Segment: kindSegment(ty), Loc: Loc{d.s, n.ptr}}
		b.fill(d, vn, vt, depth+1)
		vt.Title, vt.Description = "", ""
		t.Variants = append(t.Variants, &Variant{Segment: vt.Segment, Type: vt, JSONKind: group(ty), Loc: Loc{d.s, n.ptr}})
	}
	return false
}

// The merge problems that mean no value matches (see unsatisfiable).
const (
	falsePart    = "allOf contains the schema false"
	noCommonType = "allOf cannot be merged into one type: the parts allow no common type"
)

func allOfNode(ptr string, parts ...*node) *node {
	return &node{kind: 'o', keys: []string{"allOf"}, ptr: ptr,
		obj: map[string]*node{"allOf": {kind: 'a', arr: parts, ptr: ptr}}}
}

// merge folds $ref-with-siblings and allOf into one schema node. It returns
// a reason instead when the parts cannot be combined into one Go type.
func (b *builder) merge(d *doc, n *node, depth int) (*node, string) {
	if depth > MaxDepth {
		b.errorf(d, n.ptr, "schema nests deeper than %d levels", MaxDepth)
		return nil, "nesting too deep"
	}
	out := n.clone()
	out.del("allOf")
	out.del("$ref")
	var parts []*node
	if r := n.get("$ref"); r != nil {
		parts = append(parts, &node{kind: 'o', keys: []string{"$ref"}, obj: map[string]*node{"$ref": r}, ptr: n.ptr})
	}
	if a := n.get("allOf"); a != nil {
		if a.kind != 'a' || len(a.arr) == 0 {
			b.errorf(d, a.ptr, "allOf must be a non-empty array of schemas")
			return nil, "invalid allOf"
		}
		parts = append(parts, a.arr...)
	}
	for _, p := range parts {
		p, ok := b.follow(d, p)
		if !ok {
			return nil, "unresolvable $ref"
		}
		if p.kind == 'b' {
			if p.b {
				continue
			}
			return nil, falsePart
		}
		if p.kind != 'o' {
			b.errorf(d, p.ptr, "a schema must be an object or a boolean")
			return nil, "invalid schema"
		}
		if p.has("allOf") || p.has("$ref") {
			m, problem := b.merge(d, p, depth+1)
			if problem != "" {
				return nil, problem
			}
			p = m
		}
		if problem := mergeInto(out, p); problem == noCommonType {
			return nil, noCommonType
		} else if problem != "" {
			return nil, "allOf cannot be merged into one type: " + problem
		}
	}
	return out, ""
}

func mergeInto(out, p *node) string {
	for _, k := range p.keys {
		v := p.obj[k]
		cur := out.obj[k]
		if cur == nil {
			if k != "$defs" && k != "definitions" {
				out.set(k, v)
			}
			continue
		}
		switch {
		case annotationKeys[k] || strings.HasPrefix(k, "x-") || k == "format":
			// keep the first
		case k == "type":
			a, b := typeSet(cur), typeSet(v)
			var both []*node
			for _, t := range a {
				if slices.Contains(b, t) || t == "integer" && slices.Contains(b, "number") {
					both = append(both, &node{kind: 's', str: t, ptr: cur.ptr})
				} else if t == "number" && slices.Contains(b, "integer") {
					both = append(both, &node{kind: 's', str: "integer", ptr: cur.ptr})
				}
			}
			if len(both) == 0 {
				return noCommonType
			}
			out.set(k, &node{kind: 'a', arr: both, ptr: cur.ptr})
		case k == "properties":
			if cur.kind != 'o' || v.kind != 'o' {
				return "properties must be objects"
			}
			m := cur.clone()
			for _, pk := range v.keys {
				if old := m.obj[pk]; old != nil {
					m.set(pk, allOfNode(old.ptr, old, v.obj[pk]))
				} else {
					m.set(pk, v.obj[pk])
				}
			}
			out.set(k, m)
		case k == "required":
			m := cur.clone()
			for _, e := range v.arr {
				if !slices.ContainsFunc(m.arr, func(x *node) bool { return x.str == e.str }) {
					m.arr = append(m.arr, e)
				}
			}
			out.set(k, m)
		case k == "additionalProperties" || k == "items":
			if cur.kind == 'b' && !cur.b || v.kind == 'b' && !v.b {
				out.set(k, &node{kind: 'b', b: false, ptr: cur.ptr})
			} else if v.kind != 'b' {
				out.set(k, allOfNode(cur.ptr, cur, v))
			}
		case k == "minimum" || k == "minLength" || k == "minItems" || k == "minProperties" || k == "exclusiveMinimum":
			if r1, ok1 := cur.rat(); ok1 {
				if r2, ok2 := v.rat(); ok2 && r2.Cmp(r1) > 0 {
					out.set(k, v)
				}
			}
		case k == "maximum" || k == "maxLength" || k == "maxItems" || k == "maxProperties" || k == "exclusiveMaximum":
			if r1, ok1 := cur.rat(); ok1 {
				if r2, ok2 := v.rat(); ok2 && r2.Cmp(r1) < 0 {
					out.set(k, v)
				}
			}
		case k == "pattern":
			if cur.kind == 's' && v.kind == 's' && cur.str != v.str {
				ps := out.get("\x00patterns")
				if ps == nil {
					ps = &node{kind: 'a'}
				} else {
					ps = ps.clone()
				}
				ps.arr = append(ps.arr, v)
				out.set("\x00patterns", ps)
			}
		case k == "uniqueItems":
			if v.kind == 'b' && v.b {
				out.set(k, v)
			}
		default:
			if cur.Canonical() != v.Canonical() {
				return fmt.Sprintf("both parts have %q", k)
			}
		}
	}
	return ""
}

func typeSet(n *node) []string {
	if n.kind == 's' {
		return []string{n.str}
	}
	var out []string
	for _, e := range n.arr {
		out = append(out, e.str)
	}
	return out
}
