package names

import (
	"fmt"
	"slices"
	"strconv"
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

// Assign gives every named type, enum constant, field and union variant in
// types (all named types of one package, from ir.Named) its Go name, and
// returns every collision. Names are computed from the schema structure
// alone, so the order of types does not matter; collisions are found by
// sorting the whole set.
func Assign(roots []*ir.Root, types []*ir.Type) []Problem { return AssignWith(roots, types, nil) }

// AssignWith is Assign with more package-level declarations to check
// against the types' names: the generated bindings (descriptors,
// factories, the Client). Each extra Decl's Pos must be an ir.Loc.
func AssignWith(roots []*ir.Root, types []*ir.Type, extra []Decl) []Problem {
	defs := map[string]int{}
	for _, t := range types {
		if t.DefName != "" {
			defs[t.DefName]++
		}
	}
	var name func(t *ir.Type, depth int) string
	name = func(t *ir.Type, depth int) string {
		if t.GoName != "" {
			return t.GoName
		}
		switch {
		case t.Pinned != "":
			t.GoName = t.Pinned
		case t.DefName != "" && defs[t.DefName] == 1:
			t.GoName = t.DefName
		case t.Parent != nil && depth < 200:
			t.GoName = name(t.Parent, depth+1) + t.Segment
		default:
			t.GoName = t.Segment
		}
		if t.Hidden {
			// Only Validate uses it (a not or if subschema): unexported,
			// and so are the types named after it.
			r, n := utf8.DecodeRuneInString(t.GoName)
			t.GoName = string(unicode.ToLower(r)) + t.GoName[n:]
		}
		return t.GoName
	}
	for _, t := range types {
		name(t, 0)
	}
	shorten(types, defs)
	var decls []Decl
	var probs []Problem
	for _, t := range types {
		d := Decl{Name: name(t, 0), Where: t.Loc.Where(), Pos: t.Loc}
		if t.Root != nil {
			d.Where = fmt.Sprintf("tool %q (%s)", t.Root.Schema.Tool, d.Where)
			d.Hint = "give one tool another naming name (config renames) or pin a type name (config goNames)"
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
			decls = append(decls, Decl{Name: "Decode" + r.Type.GoName, Where: r.Type.Loc.Where() + " (decoder)", Pos: r.Type.Loc})
		}
	}
	for _, t := range types {
		for _, ev := range t.Values {
			ev.GoName = t.GoName + ev.Segment
			if ev.Pinned != "" {
				ev.GoName = ev.Pinned
			}
			decls = append(decls, Decl{Name: ev.GoName, Where: ev.Loc.Where(), Pos: ev.Loc})
		}
		for _, v := range t.Variants {
			v.GoName = v.Segment
			// The variant's constructor, <Union>Of<Variant>.
			decls = append(decls, Decl{Name: t.GoName + "Of" + v.GoName, Where: v.Loc.Where() + " (constructor)", Pos: v.Loc})
		}
		fields := map[string]*ir.Field{}
		if t.Kind == ir.Struct && t.Extra != nil {
			fields[ExtraField] = nil
		}
		for _, f := range t.Fields {
			if f.Fixed != "" {
				continue
			}
			if slices.Contains(Reserved, f.GoName) {
				f.GoName += "_"
			}
			if other, dup := fields[f.GoName]; dup {
				where := "the field that keeps undeclared members"
				var also *ir.Loc
				if other != nil {
					where = quote(other.JSONName) + " at " + other.Loc.Where()
					also = &other.Loc
				}
				probs = append(probs, Problem{Loc: f.Loc, Also: also, Msg: "property " + quote(f.JSONName) + " has Go name " + f.GoName +
					", as does " + where + "; pin a different name for one of them (config goNames or x-go-name)"})
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

// MaxName is the length past which a nested type's name is shortened.
const MaxName = 40

// shorten applies the rule for long nested names: a type named after its
// parents (<Base><Seg1>...<SegN>, Base being a tool's Input or Output, a
// $defs name or a pinned name) whose name is longer than MaxName is named
// <Base> and its last segments instead, as many as fit within MaxName (at
// least one; a generic Item or Value before the last is left out, and a
// last one keeps the segment before it: ...RichTextItemsItem),
// provided no other type has or would get that name;
// otherwise it keeps its full name. The rule looks at the whole set of
// names only, never at the order types are met in.
func shorten(types []*ir.Type, defs map[string]int) {
	full := map[string]bool{}
	for _, t := range types {
		full[t.GoName] = true
	}
	short := map[*ir.Type]string{}
	count := map[string]int{}
	for _, t := range types {
		if len(t.GoName) <= MaxName || t.Hidden || t.Parent == nil || t.Pinned != "" || t.DefName != "" && defs[t.DefName] == 1 {
			continue
		}
		var segs []string
		base := t
		for base.Parent != nil && base.Pinned == "" && !(base.DefName != "" && defs[base.DefName] == 1) && len(segs) < 200 {
			segs = append(segs, base.Segment)
			base = base.Parent
		}
		if base.Hidden || len(segs) < 2 {
			continue
		}
		// segs runs from t up; keep the fewest last segments that fit,
		// leaving out the generic Item and Value before the last one.
		tail, rest := segs[0], segs[1:]
		if tail == "Item" || tail == "Value" {
			// An item is named by what holds it: ...RichTextItemsItem.
			tail, rest = segs[1]+tail, segs[2:]
		}
		for _, sg := range rest {
			if sg == "Item" || sg == "Value" {
				continue
			}
			if len(base.GoName)+len(sg)+len(tail) > MaxName {
				break
			}
			tail = sg + tail
		}
		name := base.GoName + tail
		if name == t.GoName {
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

func quote(s string) string { return strconv.Quote(s) }
