package ir

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Share makes the structurally identical inline object types of one input
// file one type, so that a function can take "an entity" whatever tool it
// came from. Only unpinned structs that are not a root, not a $defs entry
// and not part of a recursive type are shared; inputs and outputs never
// share (their decoders differ). taken holds every Go name the package
// declares without sharing.
//
// The shared type is named by the longest suffix of type-name segments
// that every copy's name ends with (create_entities' and delete_entities'
// ...EntitiesItem → EntitiesItem), when that suffix is more than a generic
// Item or Value, is not taken, and no other shared group wants it (an
// input and an output group that want one name get their role after it:
// RelationsItemInput, RelationsItemOutput); otherwise it keeps the name
// of the copy that comes first by tool name, role and JSON Pointer. Neither depends on the order tools are listed in.
func Share(roots []*Root, taken map[string]bool) {
	var all []*Type
	seen := map[*Type]bool{}
	var walk func(t *Type)
	walk = func(t *Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		all = append(all, t)
		for _, f := range t.Fields {
			walk(f.Type)
		}
		walk(t.Elem)
		walk(t.Extra)
		for _, v := range t.Variants {
			walk(v.Type)
		}
		for _, m := range t.Matchers() {
			walk(m.Type)
		}
	}
	for _, r := range roots {
		walk(r.Type)
	}
	sigs := &sigMemo{memo: map[*Type]string{}, ids: map[string]string{}}
	groups := map[string][]*Type{}
	for _, t := range all {
		if t.Kind != Struct || !t.Named || t.Hidden || t.Root != nil || t.Pinned != "" || t.DefName != "" || slices.ContainsFunc(t.Fields, func(f *Field) bool { return f.Indirect }) {
			continue
		}
		k := t.Loc.Schema.File + "\x00" + signature(t, sigs, map[*Type]bool{})
		groups[k] = append(groups[k], t)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k, g := range groups {
			if len(g) > 1 && !yield(k) {
				return
			}
		}
	})
	want := map[string]int{}
	names := map[string]string{}
	for _, k := range keys {
		g := groups[k]
		slices.SortFunc(g, func(a, b *Type) int {
			// By tool, role and place in the schema: not by position in the
			// file, which changes with the order tools are listed in.
			return cmp.Or(strings.Compare(a.Loc.Schema.Tool, b.Loc.Schema.Tool), strings.Compare(a.Loc.Schema.Role, b.Loc.Schema.Role),
				strings.Compare(a.Loc.Pointer, b.Loc.Pointer), strings.Compare(strings.Join(chain(a), "."), strings.Join(chain(b), ".")))
		})
		if n := commonSuffix(g); n != "" && !taken[n] {
			names[k] = n
			want[n]++
		}
	}
	// Groups that want one name and differ in role (an input and an
	// output copy of one shape) get the role after it.
	roles := map[string]map[string]bool{}
	for _, k := range keys {
		if n := names[k]; n != "" {
			if roles[n] == nil {
				roles[n] = map[string]bool{}
			}
			roles[n][groups[k][0].Loc.Schema.Role] = true
		}
	}
	subst := map[*Type]*Type{}
	for _, k := range keys {
		g := groups[k]
		switch n := names[k]; {
		case n == "":
		case want[n] == 1:
			g[0].Parent, g[0].Segment = nil, n
		case len(roles[n]) == want[n] && !taken[n+g[0].Loc.Schema.Role]:
			g[0].Parent, g[0].Segment = nil, n+g[0].Loc.Schema.Role
		}
		for _, t := range g[1:] {
			subst[t] = g[0]
		}
	}
	if len(subst) == 0 {
		return
	}
	to := func(t *Type) *Type {
		if c, ok := subst[t]; ok {
			return c
		}
		return t
	}
	for _, t := range all {
		for _, f := range t.Fields {
			f.Type = to(f.Type)
		}
		t.Elem, t.Extra = to(t.Elem), to(t.Extra)
		for _, v := range t.Variants {
			v.Type = to(v.Type)
		}
		for _, m := range t.Matchers() {
			m.Type = to(m.Type)
		}
	}
}

// chain is the naming segments of t from its root's child down to t.
func chain(t *Type) []string {
	var out []string
	for u := t; u != nil && u.Root == nil; u = u.Parent {
		out = append(out, u.Segment)
		if u.DefName != "" || u.Pinned != "" {
			break
		}
	}
	slices.Reverse(out)
	return out
}

// commonSuffix is the joined segments every type's chain ends with, or ""
// when that is empty or only a generic segment.
func commonSuffix(g []*Type) string {
	first := chain(g[0])
	n := len(first)
	for _, t := range g[1:] {
		c := chain(t)
		k := 0
		for k < n && k < len(c) && first[len(first)-1-k] == c[len(c)-1-k] {
			k++
		}
		n = k
	}
	suffix := first[len(first)-n:]
	if !slices.ContainsFunc(suffix, func(s string) bool { return s != "Item" && s != "Value" && s != "Extra" }) {
		return ""
	}
	return strings.Join(suffix, "")
}

// sigMemo interns signatures: a type's signature names each child by the
// short ID of the child's signature instead of spelling it out, so
// signatures stay the size of one type's own members, not of the tree
// below it (written out, they were most of planning's memory at gateway
// scale). IDs are given one per distinct signature text, so two types get
// one ID exactly when their descriptions are the same.
type sigMemo struct {
	memo map[*Type]string // type -> ID
	ids  map[string]string
}

// signature describes everything about t that generated code depends on,
// except documentation, so that two types with one signature generate the
// same code. It returns the description's ID.
func signature(t *Type, sm *sigMemo, onPath map[*Type]bool) string {
	if t == nil {
		return "-"
	}
	memo := sm.memo
	if s, ok := memo[t]; ok {
		return s
	}
	if onPath[t] {
		return "cycle"
	}
	onPath[t] = true
	defer delete(onPath, t)
	var b strings.Builder
	fmt.Fprintf(&b, "%d|%t|%t|%t|%s|%d|%s|%t|%s|", t.Kind, t.Named, t.Closed, t.NotNull, t.IntType, t.Base, t.Format, t.Loc.Schema.Tolerant(), strings.Join(t.Notes, ";"))
	b.WriteString(constraintSig(&t.C))
	fmt.Fprintf(&b, "|n%t|d%v", t.Never, t.DepRequired)
	for _, v := range t.Values {
		fmt.Fprintf(&b, "|v%s=%s", v.Canonical, v.Segment)
	}
	fmt.Fprintf(&b, "|u%t,%s", t.OneOf, t.Discriminator)
	for _, v := range t.Variants {
		fmt.Fprintf(&b, "|V%s,%s,%s,%s,%d,%s", v.Segment, v.JSONKind, v.Disc, v.Unique, v.Try, signature(v.Type, sm, onPath))
	}
	fmt.Fprintf(&b, "|e%t,%s|x%t,%s", t.ElemNullable, signature(t.Elem, sm, onPath), t.ExtraNullable, signature(t.Extra, sm, onPath))
	for _, f := range t.Fields {
		fmt.Fprintf(&b, "|f%q,%s,%t,%t,%t,%s,%s", f.JSONName, f.GoName, f.Required, f.Nullable, f.Indirect, f.Fixed, signature(f.Type, sm, onPath))
	}
	for _, m := range []*Matcher{t.Not, t.If, t.Then, t.Else, t.Rest, t.Contains, t.PropertyNames} {
		if m == nil {
			b.WriteString("|m-")
		} else {
			fmt.Fprintf(&b, "|m%t,%s", m.Nullable, signature(m.Type, sm, onPath))
		}
	}
	for _, m := range t.Prefix {
		fmt.Fprintf(&b, "|p%t,%s", m.Nullable, signature(m.Type, sm, onPath))
	}
	id, ok := sm.ids[b.String()]
	if !ok {
		id = "#" + strconv.Itoa(len(sm.ids))
		sm.ids[b.String()] = id
	}
	memo[t] = id
	return id
}

func constraintSig(c *Constraints) string {
	i := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	n := func(p *Num) string {
		if p == nil {
			return "-"
		}
		return p.Text
	}
	var ps []string
	for _, p := range c.Patterns {
		ps = append(ps, p.Source)
	}
	return fmt.Sprintf("%s,%s,%q,%s,%s,%s,%s,%s,%s,%s,%t,%s,%s,%t,%s,%q", i(c.MinLength), i(c.MaxLength), ps, n(c.Minimum), n(c.Maximum),
		n(c.ExclusiveMin), n(c.ExclusiveMax), n(c.MultipleOf), i(c.MinItems), i(c.MaxItems), c.UniqueItems, i(c.MinProperties), i(c.MaxProperties),
		c.HasConst, c.Const, c.Enum)
}
