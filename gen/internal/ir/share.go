package ir

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Share decides which named types of one input are one Go type: those
// with one signature (everything generated code depends on but their
// names and documentation), across tools and within one, inputs, outputs
// and resource contents apart. Every type keeps the name package names
// gave it from its own tool's schemas; Share only sets Alias, so that each
// of those names is still declared, as the shared type or as an alias of
// it, whichever other tools exist.
//
// The shared type is the first of its group in an order that depends on
// the group alone: a pinned type first (a name the config or schema
// chose), then by tool, role, JSON Pointer and name. Each other type of
// the group is an alias of it (Alias), declared under its own name unless
// that is the shared type's (several places pinned to one name). With
// apart (config keepShapesApart) only types of one name are one type.
// Roots are never shared (their Validate and decoder are their tool's),
// nor types of a recursive shape (a signature cannot tell two cycles
// apart).
func Share(roots []*Root, types []*Type, apart bool) {
	var all []*Type
	seen := map[*Type]bool{}
	var walk func(t *Type)
	walk = func(t *Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		all = append(all, t)
		for _, c := range children(t) {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r.Type)
	}
	cyclic := reachesCycle(all)
	sigs := &sigMemo{memo: map[*Type]string{}, ids: map[string]string{}}
	groups := map[string][]*Type{}
	for _, t := range types {
		if !t.Named || t.Root != nil || t.Loc.Schema == nil || cyclic[t] {
			continue
		}
		k := t.Loc.Schema.Input + "\x00" + t.Loc.Schema.Role + "\x00" + signature(t, sigs, map[*Type]bool{})
		groups[k] = append(groups[k], t)
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		slices.SortFunc(g, func(a, b *Type) int {
			if (a.Pinned != "") != (b.Pinned != "") {
				if a.Pinned != "" {
					return -1
				}
				return 1
			}
			return cmp.Or(strings.Compare(a.Loc.Schema.Tool, b.Loc.Schema.Tool), strings.Compare(a.Loc.Schema.Role, b.Loc.Schema.Role),
				strings.Compare(a.Loc.Pointer, b.Loc.Pointer), strings.Compare(a.GoName, b.GoName))
		})
		first := map[string]*Type{}
		for _, t := range g {
			switch f, ok := first[t.GoName]; {
			case ok:
				t.Alias = f
			case apart || t == g[0]:
				first[t.GoName] = t
			default:
				t.Alias = g[0]
				first[t.GoName] = g[0]
			}
		}
	}
}

// Canonical is the type t is declared as: t, or the shared type it is an
// alias of.
func (t *Type) Canonical() *Type {
	if t.Alias != nil {
		return t.Alias
	}
	return t
}

// Declared lists, of the named types of one package in order, the
// declarations to write: one per Go name, the shared type itself where
// the name is its own.
func Declared(types []*Type) []*Type {
	seen := map[string]bool{}
	var out []*Type
	for _, t := range types {
		if seen[t.GoName] {
			continue
		}
		seen[t.GoName] = true
		if t.Alias != nil && t.Alias.GoName == t.GoName {
			t = t.Alias
		}
		out = append(out, t)
	}
	return out
}

// children are the types t refers to.
func children(t *Type) []*Type {
	var out []*Type
	for _, f := range t.Fields {
		out = append(out, f.Type)
	}
	if t.Elem != nil {
		out = append(out, t.Elem)
	}
	if t.Extra != nil {
		out = append(out, t.Extra)
	}
	for _, v := range t.Variants {
		out = append(out, v.Type)
	}
	for _, m := range t.Matchers() {
		out = append(out, m.Type)
	}
	return out
}

// reachesCycle returns the types from which a cycle of types can be
// reached (strongly connected components found once, in reverse
// topological order, so each is decided from those it reaches).
func reachesCycle(all []*Type) map[*Type]bool {
	index := map[*Type]int{}
	low := map[*Type]int{}
	onStack := map[*Type]bool{}
	out := map[*Type]bool{}
	var stack []*Type
	next := 0
	var visit func(t *Type)
	visit = func(t *Type) {
		index[t], low[t] = next, next
		next++
		stack = append(stack, t)
		onStack[t] = true
		for _, u := range children(t) {
			if _, seen := index[u]; !seen {
				visit(u)
				low[t] = min(low[t], low[u])
			} else if onStack[u] {
				low[t] = min(low[t], index[u])
			}
		}
		if low[t] != index[t] {
			return
		}
		var comp []*Type
		for {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[u] = false
			comp = append(comp, u)
			if u == t {
				break
			}
		}
		reach := len(comp) > 1
		for _, u := range comp {
			for _, c := range children(u) {
				reach = reach || c == u || out[c]
			}
		}
		if reach {
			for _, u := range comp {
				out[u] = true
			}
		}
	}
	for _, t := range all {
		if _, seen := index[t]; !seen {
			visit(t)
		}
	}
	return out
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
	fmt.Fprintf(&b, "%d|%t|%t|%t|%t|%s|%d|%s|%t|%s|", t.Kind, t.Named, t.Hidden, t.Closed, t.NotNull, t.IntType, t.Base, t.Format, t.Loc.Schema.Tolerant(), strings.Join(t.Notes, ";"))
	b.WriteString(constraintSig(&t.C))
	fmt.Fprintf(&b, "|n%t|d%v", t.Never, t.DepRequired)
	for _, v := range t.Values {
		fmt.Fprintf(&b, "|v%s=%s,%s", v.Canonical, v.Segment, v.Pinned)
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
