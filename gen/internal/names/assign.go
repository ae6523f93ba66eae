package names

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpgen/mcpgen/gen/internal/ir"
)

// Reserved are the method names generated types carry; a field with one of
// these names gets a trailing underscore (a fixed rule, not order-dependent).
var Reserved = []string{"Validate", "MarshalJSON", "UnmarshalJSON"}

// ExtraField is the name of the field that keeps undeclared members.
const ExtraField = "AdditionalProperties"

// Problem is a naming error at a place in a schema.
type Problem struct {
	Loc ir.Loc
	Msg string
	// Also is the other position of a collision, named in Msg by its
	// Where; the caller may rewrite that with a line and column.
	Also *ir.Loc
}

// scope is what a name may depend on: one tool's schemas (input and
// output), or one resource's content schema.
type scope struct {
	tool     string
	resource bool
}

func scopeOf(t *ir.Type) scope {
	if t.Loc.Schema == nil {
		return scope{}
	}
	return scope{t.Loc.Schema.Tool, t.Loc.Schema.Resource}
}

// Assign gives every named type in types (all named types of one package,
// from ir.Named), and every enum constant, field and union variant in
// them, its Go name. A type's name depends only on the schemas of its own
// tool and on pins: never on which other tools exist or what they are
// called, so adding, removing or changing one tool leaves every name of
// the others as it was. Within a tool, a name is its parent's name and its
// own segment (a root's is <Tool>Input or <Tool>Output, a $defs entry's
// parent is its root), with two rules that look at the tool's names only:
// a segment that starts with the words its parent's name ends with leaves
// them out (stutter), and a long name is shortened (see shorten).
func Assign(types []*ir.Type) {
	byScope := map[scope][]*ir.Type{}
	var order []scope
	for _, t := range types {
		k := scopeOf(t)
		if byScope[k] == nil {
			order = append(order, k)
		}
		byScope[k] = append(byScope[k], t)
	}
	for _, k := range order {
		nameScope(byScope[k])
	}
	for _, t := range types {
		for _, ev := range t.Values {
			ev.GoName = t.GoName + ev.Segment
			if ev.Pinned != "" {
				ev.GoName = ev.Pinned
			}
		}
		for _, v := range t.Variants {
			v.GoName = v.Segment
		}
		for _, f := range t.Fields {
			if f.Fixed == "" && slices.Contains(Reserved, f.GoName) {
				f.GoName += "_"
			}
		}
	}
}

// nameScope names the types of one tool.
func nameScope(ts []*ir.Type) {
	plainOf := map[*ir.Type]string{}
	var plain func(t *ir.Type, depth int) string
	plain = func(t *ir.Type, depth int) string {
		if n, ok := plainOf[t]; ok {
			return n
		}
		n := t.Segment
		switch {
		case t.Pinned != "":
			n = t.Pinned
		case t.Parent != nil && depth < 200:
			n = plain(t.Parent, depth+1) + t.Segment
		}
		if t.Hidden {
			n = lowerFirst(n)
		}
		plainOf[t] = n
		return n
	}
	// taken holds the names the tool's types would have without the
	// stutter rule, and those given so far: a name without stutter must
	// not be another type's.
	taken := map[string]bool{}
	for _, t := range ts {
		taken[plain(t, 0)] = true
	}
	final := map[*ir.Type]string{}
	eff := map[*ir.Type]string{} // the segment as appended, after the stutter rule
	var name func(t *ir.Type, depth int) string
	name = func(t *ir.Type, depth int) string {
		if n, ok := final[t]; ok {
			return n
		}
		n := t.Segment
		switch {
		case t.Pinned != "":
			n = t.Pinned
		case t.Parent != nil && depth < 200:
			p := name(t.Parent, depth+1)
			seg := unstutter(p, t.Segment, t.Named, func(c string) bool { return c != plain(t, 0) && taken[c] })
			n, eff[t] = p+seg, seg
		}
		if t.Hidden {
			n = lowerFirst(n)
		}
		final[t] = n
		if t.Named {
			taken[n] = true
		}
		return n
	}
	for _, t := range ts {
		t.GoName = name(t, 0)
	}
	shorten(ts, eff)
}

// unstutter returns the segment to append to the name p: seg without the
// words it starts with that p ends with (ItemsItem + ItemOwner →
// ItemsItemOwner). For a named type (declared) the result must not be a
// name taken in the tool; when leaving words out gives a taken name (the
// parent's own, when nothing is left: a member text in a variant Text),
// "Value" follows what is left (...RichTextItemText + Text →
// ...RichTextItemTextValue), and when that is taken too the segment stays
// as it is.
func unstutter(p, seg string, named bool, isTaken func(string) bool) string {
	rest := seg
	for {
		k := overlap(p, rest)
		if k == 0 {
			break
		}
		rest = rest[k:]
		if rest == "" {
			break
		}
	}
	if rest == seg || !named || !isTaken(p+rest) {
		// Nothing left is the parent's name, free when the parent is not
		// declared (an array of arrays: ...ItemsItem + Item).
		return rest
	}
	if !isTaken(p + rest + "Value") {
		return rest + "Value"
	}
	return seg
}

// overlap returns the length in bytes of the longest run of whole words
// that seg starts with and p ends with, or 0.
func overlap(p, seg string) int {
	pw, sw := words(p), words(seg)
	for k := min(len(pw), len(sw)); k > 0; k-- {
		if slices.Equal(pw[len(pw)-k:], sw[:k]) {
			return len(strings.Join(sw[:k], ""))
		}
	}
	return 0
}

// words splits a Go identifier into its words: a word starts at an
// upper-case letter that follows a lower-case letter or a digit, and at the
// last capital of a run of capitals that a lower-case letter follows
// (APIPost → API, Post). Digits and underscores stay with the word before.
func words(s string) []string {
	var out []string
	start := 0
	var prev, prev2 rune
	for i, r := range s {
		if i > 0 {
			switch {
			case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
				out = append(out, s[start:i])
				start = i
			case unicode.IsLower(r) && unicode.IsUpper(prev) && unicode.IsUpper(prev2):
				j := i - utf8.RuneLen(prev)
				if j > start {
					out = append(out, s[start:j])
					start = j
				}
			}
		}
		prev2, prev = prev, r
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// MaxName is the length past which a nested type's name is shortened.
const MaxName = 40

// shorten applies the rule for long nested names within one tool's types
// ts: a type named after its parents (<Base><Seg1>...<SegN>, Base being a
// tool's Input or Output, a $defs entry or a pinned type) whose name is
// longer than MaxName is named <Base> and its last segments instead, as
// many as fit within MaxName (at least one; a generic Item or Value before
// the last is left out, and a last one keeps the segment before it:
// ...RichTextItemsItem), provided the result does not stutter and no other
// type of the tool has or would get that name; otherwise it keeps its full
// name. eff holds the segments as the names were built with them.
func shorten(ts []*ir.Type, eff map[*ir.Type]string) {
	full := map[string]bool{}
	for _, t := range ts {
		full[t.GoName] = true
	}
	short := map[*ir.Type]string{}
	count := map[string]int{}
	base := func(t *ir.Type) bool { return t.Parent == nil || t.Pinned != "" || t.DefName != "" || t.Root != nil }
	for _, t := range ts {
		if len(t.GoName) <= MaxName || t.Hidden || base(t) {
			continue
		}
		var segs []string
		b := t
		for !base(b) && len(segs) < 200 {
			if s := eff[b]; s != "" {
				segs = append(segs, s)
			}
			b = b.Parent
		}
		if b.Hidden || len(segs) < 2 {
			continue
		}
		// segs runs from t up; keep the fewest last segments that fit,
		// leaving out the generic Item and Value before the last one.
		tail, rest := segs[0], segs[1:]
		if tail == "Item" || tail == "Value" {
			// An item is named by what holds it: ...RichTextItemsItem.
			tail, rest = segs[1]+tail, segs[2:]
		}
		stutters := false
		for _, sg := range rest {
			if sg == "Item" || sg == "Value" {
				continue
			}
			if len(b.GoName)+len(sg)+len(tail) > MaxName {
				break
			}
			if overlap(sg, tail) > 0 {
				stutters = true
				break
			}
			tail = sg + tail
		}
		name := b.GoName + tail
		if name == t.GoName || stutters || overlap(b.GoName, tail) > 0 {
			continue
		}
		short[t] = name
		count[name]++
	}
	for t, n := range short {
		if count[n] == 1 && !full[n] {
			t.GoName = n
		}
	}
}

// Collisions checks every declaration the types of one package make (each
// name once: several types of one shape and name are one declaration),
// with the decoders of the roots and more package-level declarations
// (extra: the generated bindings, whose Pos must be ir.Locs), and returns
// each collision, and each field of a struct whose Go name another of its
// fields has.
func Collisions(roots []*ir.Root, types []*ir.Type, extra []Decl) []Problem {
	var decls []Decl
	var probs []Problem
	declared := map[string][]*ir.Type{} // name → the canonical types declaring it
	var decl []*ir.Type                 // the types that declare a name, in order
	for _, t := range types {
		c := t.Canonical()
		if slices.Contains(declared[t.GoName], c) {
			continue
		}
		declared[t.GoName] = append(declared[t.GoName], c)
		decl = append(decl, t)
		d := Decl{Name: t.GoName, Where: t.Loc.Where(), Pos: t.Loc, Hint: typeHint(t)}
		if t.Root != nil {
			d.Where = fmt.Sprintf("tool %q (%s)", t.Root.Schema.Tool, d.Where)
			d.Hint = "rename one of the tools (config tools.rename)"
		}
		decls = append(decls, d)
	}
	// A decoder's name follows its type's; report it only when the type's
	// own name is free, so one collision is one error.
	typeClash := map[string]bool{}
	for _, c := range Check(decls) {
		typeClash[c.B.Name] = true
	}
	for _, r := range roots {
		if !typeClash[r.Type.GoName] {
			decls = append(decls, Decl{Name: "Decode" + r.Type.GoName, Where: r.Type.Loc.Where() + " (decoder)", Pos: r.Type.Loc,
				Hint: "rename one of the tools (config tools.rename)"})
		}
	}
	for _, t := range decl {
		c := t.Canonical()
		for i, ev := range t.Values {
			if c != t && ev.GoName == c.Values[i].GoName {
				continue // the shared type's constant itself
			}
			decls = append(decls, Decl{Name: ev.GoName, Where: ev.Loc.Where(), Pos: ev.Loc, Hint: pinHint(ev.Loc)})
		}
		for _, v := range t.Variants {
			// The variant's constructor, <Union>Of<Variant>.
			decls = append(decls, Decl{Name: t.GoName + "Of" + v.GoName, Where: v.Loc.Where() + " (constructor)", Pos: v.Loc, Hint: pinHint(v.Loc)})
		}
		if c != t {
			continue // its fields are the shared type's
		}
		fields := map[string]*ir.Field{}
		if t.Kind == ir.Struct && t.Extra != nil {
			fields[ExtraField] = nil
		}
		for _, f := range t.Fields {
			if f.Fixed != "" {
				continue
			}
			if other, dup := fields[f.GoName]; dup {
				where := "the field that keeps undeclared members"
				var also *ir.Loc
				if other != nil {
					where = quote(other.JSONName) + " at " + other.Loc.Where()
					also = &other.Loc
				}
				probs = append(probs, Problem{Loc: f.Loc, Also: also, Msg: "property " + quote(f.JSONName) + " has Go name " + f.GoName +
					", as does " + where + "; " + pinHint(f.Loc)})
				continue
			}
			fields[f.GoName] = f
		}
	}
	decls = append(decls, extra...)
	for _, c := range Check(decls) {
		loc, ok := c.B.Pos.(ir.Loc)
		pr := Problem{Loc: loc, Msg: c.Message()}
		if a, aok := c.A.Pos.(ir.Loc); !ok {
			pr.Loc = a
		} else if aok {
			pr.Also = &a
		}
		probs = append(probs, pr)
	}
	return probs
}

// ConfigKey is the config names key (and gen.Config.GoNames key) that pins
// the Go name of what is at l: "<tool>#/inputSchema/<pointer>", or "" for a
// place no such key reaches (a resource's content schema).
func ConfigKey(l ir.Loc) string {
	s := l.Schema
	if s == nil || s.Resource {
		return ""
	}
	return s.Tool + "#/" + strings.ToLower(s.Role[:1]) + s.Role[1:] + "Schema" + l.Pointer
}

// pinHint says how to give what is at l another name.
func pinHint(l ir.Loc) string {
	if k := ConfigKey(l); k != "" {
		return "name one of them in the config (names: {" + strconv.Quote(k) + ": OtherName}) or with x-go-name in the schema"
	}
	return "name one of them with x-go-name in the schema"
}

func typeHint(t *ir.Type) string {
	if t.Loc.Schema != nil && t.Loc.Schema.Resource {
		return "pin another Go name for the resource (config resources.bind[<uri>].goName) or name the type with x-go-name in the schema"
	}
	return pinHint(t.Loc) + ", or rename a tool (config tools.rename)"
}

func quote(s string) string { return strconv.Quote(s) }
