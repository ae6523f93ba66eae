// Package names assigns Go names to the types, fields, constants and
// variants of the IR and checks the whole set for collisions. It never
// renames in the order names are met: two names that normalise to the same
// identifier are an error, resolved by a pinned name.
package names

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Decl is one declared name: its identifier, where it comes from, and
// whether a user pinned it.
type Decl struct {
	Name   string
	Where  string // "file:/json/pointer", used in messages and for ordering
	Pinned bool
	// Pos positions the error; opaque to this package.
	Pos any
	// Hint says how to resolve a collision, when the default advice does
	// not fit.
	Hint string
}

// Collision is two declarations with the same identifier.
type Collision struct {
	A, B Decl
}

// Check sorts ds by name and origin and returns every collision, each
// reported at the later of the two origins so that the report does not
// depend on input order.
func Check(ds []Decl) []Collision {
	ds = slices.Clone(ds)
	slices.SortFunc(ds, func(a, b Decl) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Where, b.Where))
	})
	var out []Collision
	for i := 1; i < len(ds); i++ {
		if ds[i].Name == ds[i-1].Name {
			out = append(out, Collision{A: ds[i-1], B: ds[i]})
		}
	}
	return out
}

// Message explains a collision and how to resolve it.
func (c Collision) Message() string {
	hint := c.B.Hint
	if hint == "" {
		hint = "name one of them in the config (names) or with x-go-name in the schema"
	}
	return fmt.Sprintf("Go name %s is also produced by %s; %s", c.B.Name, c.A.Where, hint)
}
