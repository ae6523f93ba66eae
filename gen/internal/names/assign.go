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

func quote(s string) string { return strconv.Quote(s) }
