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
	constVal *node
	props    []string
	required []string
}

func (b *builder) analyse(d *doc, v *node, depth int) (*variantInfo, string) {
	vi := &variantInfo{node: v}
	r, ok := b.follow(d, v)
	if !ok {
		return nil, "unresolvable $ref"
	}
	if r.kind == 'o' && (r.has("allOf") || r.has("$ref")) {
		m, problem := b.merge(d, r, depth+1)
		if problem != "" {
			return nil, problem
		}
		r = m
	}
	vi.resolved = r
	if r.kind == 'b' {
		if r.b {
			return vi, ""
		}
		return nil, "a variant is the schema false"
	}
	if r.kind != 'o' {
		return nil, "a variant is not a schema"
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
	types = slices.DeleteFunc(slices.Clone(types), func(s string) bool { return s == "null" })
	switch {
	case len(types) == 1:
		vi.kind = types[0]
	case len(types) == 0 && vi.constVal != nil:
		vi.kind = vi.constVal.kindName()
	case len(types) == 0 && r.get("enum") != nil && r.get("enum").kind == 'a' && len(r.get("enum").arr) > 0:
		vi.kind = group(r.get("enum").arr[0].kindName())
		for _, e := range r.get("enum").arr {
			if group(e.kindName()) != vi.kind {
				vi.kind = ""
			}
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

func group(kind string) string {
	if kind == "integer" {
		return "number"
	}
	return kind
}

// singleVariant recognises oneOf/anyOf with one non-null variant and nothing
// else that shapes the type (anyOf [T, {type: null}]): that is T, nullable.
func (b *builder) singleVariant(d *doc, n *node, depth int) (*node, bool, bool) {
	if n.kind != 'o' || n.has("oneOf") == n.has("anyOf") || !onlyAnnotations(n, "oneOf", "anyOf") {
		return nil, false, false
	}
	list := n.get("oneOf")
	if list == nil {
		list = n.get("anyOf")
	}
	if list.kind != 'a' {
		return nil, false, false
	}
	var rest []*node
	nullable := false
	for _, v := range list.arr {
		vi, problem := b.analyse(d, v, depth)
		if problem != "" {
			return nil, false, false
		}
		if vi.nullOnly {
			nullable = true
			continue
		}
		rest = append(rest, v)
	}
	if len(rest) != 1 {
		return nil, false, false
	}
	return rest[0], nullable, true
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
	nullable := false
	seen := map[string]bool{}
	for _, v := range b.flatten(d, list.arr, key, 0) {
		if key == "anyOf" {
			// A duplicate adds nothing to an anyOf (to a oneOf it makes
			// every value it accepts invalid, which trying the variants
			// reports).
			if r, ok := b.follow(d, v); ok {
				if c := r.Canonical(); seen[c] {
					continue
				} else {
					seen[c] = true
				}
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
		if vi.nullOnly {
			nullable = true
			continue
		}
		if types != nil && vi.kind != "" && !slices.Contains(types, vi.kind) && !(vi.kind == "integer" && slices.Contains(types, "number")) {
			continue // excluded by the sibling type keyword
		}
		infos = append(infos, vi)
	}
	switch len(infos) {
	case 0:
		onlyNull(t)
		return false
	case 1:
		target := infos[0].resolved
		return b.fill(d, target, t, depth+1) || nullable
	}
	if b.constEnum(d, t, infos) {
		return nullable
	}
	groups := map[string][]int{}
	for i, vi := range infos {
		if vi.kind == "" {
			t.Kind, t.RawReason = Raw, undiscriminated
			return nullable
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
		if g == "object" {
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
	segs := make([]string, len(infos))
	for i, vi := range infos {
		switch {
		case disc[i] != "":
			segs[i] = ident.Ident(strings.Trim(vi.discValueText(discMember), `"`))
		case vi.resolved.getStr("title") != "":
			segs[i] = ident.Ident(vi.resolved.getStr("title"))
		case isDefRef(vi.node):
			segs[i] = ident.Ident(lastToken(vi.node.getStr("$ref")))
		case unique[i] != "":
			segs[i] = ident.Ident(unique[i])
		case try[i] > 0 && ownProperty(infos, i) != "":
			segs[i] = ident.Ident(ownProperty(infos, i))
		default:
			segs[i] = kindSegment(vi.kind)
		}
	}
	dup := map[string]bool{}
	for _, sg := range segs {
		if sg == "" || countOf(segs, sg) > 1 {
			dup[sg] = true
		}
	}
	for i := range segs {
		if dup[segs[i]] {
			segs[i] = "Variant" + strconv.Itoa(i)
		}
	}
	for i, vi := range infos {
		node := vi.node
		if hasBase {
			node = vi.resolved
		}
		vt, _ := b.build(d, node, t, segs[i], depth+1)
		if vt.Kind == Struct && !vt.Closed && vt.Extra == nil {
			// Members a variant does not declare can decide which variant
			// a value is (tried variants of a oneOf): keep them.
			vt.Extra = &Type{Kind: Raw, RawReason: "the schema does not restrict undeclared members", Loc: vt.Loc}
		}
		if p := d.s.pinAt(vi.node.ptr); p != "" && vt.Pinned == "" && vt.Parent == t {
			vt.Pinned = p
		}
		t.Variants = append(t.Variants, &Variant{
			Segment: segs[i], Type: vt, JSONKind: group(vi.kind), Disc: disc[i], Unique: unique[i], Try: try[i],
			Loc: Loc{d.s, vi.node.ptr},
		})
	}
	return nullable
}

// flatten replaces every variant that is itself a oneOf or anyOf (and
// nothing else but annotations), directly or through a $ref, by its
// variants, so that a union of unions is one union.
func (b *builder) flatten(d *doc, vs []*node, key string, depth int) []*node {
	var out []*node
	for _, v := range vs {
		r, ok := b.follow(d, v)
		inner := ""
		if ok && r.kind == 'o' && r.has("oneOf") != r.has("anyOf") && onlyAnnotations(r, "oneOf", "anyOf") {
			inner = "oneOf"
			if r.has("anyOf") {
				inner = "anyOf"
			}
		}
		if inner == "" || depth >= MaxDepth || r.get(inner).kind != 'a' || len(r.get(inner).arr) == 0 {
			out = append(out, v)
			continue
		}
		out = append(out, b.flatten(d, r.get(inner).arr, key, depth+1)...)
	}
	return out
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

func countOf(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
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
			return nil, "allOf contains the schema false"
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
		if problem := mergeInto(out, p); problem != "" {
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
				return "the parts allow no common type"
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
