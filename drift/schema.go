package drift

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgen/mcpgen/manifest"
)

// dir says which way a schema is used: inputs may widen, outputs may narrow.
type dir int

const (
	input dir = iota
	output
)

// node is a schema value together with the document its $refs resolve in.
type node struct {
	v    any
	root any
}

func root(v any) node { return node{v: v, root: v} }

func schemaAt(tool map[string]any, k string) node { return root(tool[k]) }

// maxDepth bounds how deep the comparison descends; recursive schemas are
// cut off by the visited set long before, this guards hostile nesting.
const maxDepth = 64

type schemaCmp struct {
	d          *differ
	kind, name string
	seen       map[[2]string]bool // $ref pairs already compared
}

// narrowed records a change that makes the schema accept less: breaking
// for an input (callers' values may now be rejected), compatible for an
// output (existing decoders accept all that can still arrive).
func (s *schemaCmp) narrowed(d dir, ptr, format string, args ...any) {
	c := Breaking
	if d == output {
		c = Compatible
	}
	s.d.add(c, s.kind, s.name, ptr, format, args...)
}

// widened is the mirror of narrowed.
func (s *schemaCmp) widened(d dir, ptr, format string, args ...any) {
	c := Compatible
	if d == output {
		c = Breaking
	}
	s.d.add(c, s.kind, s.name, ptr, format, args...)
}

func (s *schemaCmp) compare(o, n node, ptr string, d dir) {
	s.cmp(o, n, ptr, d, 0)
}

func (s *schemaCmp) cmp(o, n node, ptr string, d dir, depth int) {
	if depth > maxDepth {
		return
	}
	var ro, rn string
	o, ro = o.resolve()
	n, rn = n.resolve()
	if ro != "" || rn != "" {
		if s.seen == nil {
			s.seen = map[[2]string]bool{}
		}
		k := [2]string{ro, rn}
		if s.seen[k] {
			return
		}
		s.seen[k] = true
	}
	om, oAny := asSchema(o.v)
	nm, nAny := asSchema(n.v)
	switch {
	case oAny == acceptAll && nAny == acceptAll, oAny == acceptNone && nAny == acceptNone:
		return
	case oAny == acceptNone || nAny == acceptAll:
		s.widened(d, ptr, "schema now accepts any value")
		return
	case nAny == acceptNone:
		s.narrowed(d, ptr, "schema now accepts no value")
		return
	}
	om, oNull := splitNullable(om)
	nm, nNull := splitNullable(nm)
	switch {
	case !oNull && nNull:
		if d == input {
			s.d.add(Compatible, s.kind, s.name, ptr, "now accepts null")
		} else {
			s.d.add(Breaking, s.kind, s.name, ptr, "may now be null")
		}
	case oNull && !nNull:
		if d == input {
			s.d.add(Breaking, s.kind, s.name, ptr, "no longer accepts null")
		} else {
			s.d.add(Compatible, s.kind, s.name, ptr, "can no longer be null")
		}
	}

	ot, nt := types(om), types(nm)
	if !slices.Equal(ot, nt) {
		switch {
		case len(ot) == 0:
			s.narrowed(d, ptr+"/type", "type restricted from any to %s", strings.Join(nt, "|"))
		case len(nt) == 0:
			s.widened(d, ptr+"/type", "type widened from %s to any", strings.Join(ot, "|"))
		default:
			// Any change of JSON type changes the Go type of generated code.
			s.d.add(Breaking, s.kind, s.name, ptr+"/type", "type changed from %s to %s", strings.Join(ot, "|"), strings.Join(nt, "|"))
			return
		}
	}

	s.enum(om, nm, ptr, d)
	s.bounds(om, nm, ptr, d)
	if !equalJSON(om["description"], nm["description"]) && ptr != "/inputSchema" && ptr != "/outputSchema" {
		s.d.add(Compatible, s.kind, s.name, ptr+"/description", "description changed")
	}
	if !equalJSON(om["default"], nm["default"]) {
		s.d.add(Compatible, s.kind, s.name, ptr+"/default", "default changed from %s to %s", show(om["default"]), show(nm["default"]))
	}
	s.object(o, n, om, nm, ptr, d, depth)
	if oi, ok := om["items"]; ok {
		if ni, ok := nm["items"]; ok {
			s.cmp(node{oi, o.root}, node{ni, n.root}, ptr+"/items", d, depth+1)
		} else {
			s.widened(d, ptr+"/items", "item schema removed")
		}
	} else if _, ok := nm["items"]; ok {
		s.narrowed(d, ptr+"/items", "item schema added")
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		s.union(o, n, om, nm, k, ptr, d, depth)
	}
}

type acceptance int

const (
	someValues acceptance = iota
	acceptAll
	acceptNone
)

// asSchema classifies boolean and empty schemas.
func asSchema(v any) (map[string]any, acceptance) {
	switch t := v.(type) {
	case bool:
		if t {
			return nil, acceptAll
		}
		return nil, acceptNone
	case map[string]any:
		for k := range t {
			switch k {
			case "description", "title", "$schema", "$id", "$comment", "default", "examples":
				continue
			}
			return t, someValues
		}
		return t, acceptAll
	case nil:
		return nil, acceptAll
	}
	return nil, acceptAll
}

// splitNullable removes null from a type list or an anyOf/oneOf [T, null]
// pair, returning the non-null schema and whether null was allowed.
func splitNullable(m map[string]any) (map[string]any, bool) {
	if ts, ok := m["type"].([]any); ok {
		var rest []any
		null := false
		for _, t := range ts {
			if t == "null" {
				null = true
			} else {
				rest = append(rest, t)
			}
		}
		if null {
			c := clone(m)
			if len(rest) == 1 {
				c["type"] = rest[0]
			} else {
				c["type"] = rest
			}
			return c, true
		}
	}
	if m["type"] == "null" {
		return map[string]any{}, true
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		vs, ok := m[k].([]any)
		if !ok || len(vs) != 2 {
			continue
		}
		for i, v := range vs {
			if vm, ok := v.(map[string]any); ok && vm["type"] == "null" && len(vm) == 1 {
				other, ok := vs[1-i].(map[string]any)
				if !ok {
					break
				}
				c := clone(m)
				delete(c, k)
				for kk, vv := range other {
					c[kk] = vv
				}
				return c, true
			}
		}
	}
	return m, false
}

func clone(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func types(m map[string]any) []string {
	var out []string
	switch t := m["type"].(type) {
	case string:
		out = []string{t}
	case []any:
		for _, v := range t {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (s *schemaCmp) enum(om, nm map[string]any, ptr string, d dir) {
	oe, oHas := om["enum"].([]any)
	ne, nHas := nm["enum"].([]any)
	// Generated output decoders carry enum values they do not list (Valid
	// reports false), as long as the value fits the Go type the old values
	// gave: a wider output enum is compatible. A one-value enum is a const
	// to the generator, checked in outputs too.
	carried := func(kind string) bool {
		ok := d == output && len(oe) > 1 && kind != "null"
		kinds := valueKinds(oe)
		return ok && (kinds[kind] || kind == "integer" && kinds["number"])
	}
	switch {
	case oHas && !nHas:
		nt := types(nm)
		ok := len(nt) > 0
		for _, t := range nt {
			ok = ok && carried(t)
		}
		if ok {
			s.d.add(Compatible, s.kind, s.name, ptr+"/enum", "enum removed: the bindings carry the values they do not list (Valid reports false)")
		} else {
			s.widened(d, ptr+"/enum", "enum removed: any value of the type is now allowed")
		}
	case !oHas && nHas:
		s.narrowed(d, ptr+"/enum", "restricted to enum %s", show(ne))
	case oHas && nHas:
		os, ns := jsonSet(oe), jsonSet(ne)
		for _, v := range sortedKeys(os) {
			if !ns[v] {
				s.narrowed(d, ptr+"/enum", "enum value %s removed", v)
			}
		}
		for _, v := range sortedKeys(ns) {
			switch {
			case os[v]:
			case carried(valueKind(v)):
				s.d.add(Compatible, s.kind, s.name, ptr+"/enum", "enum value %s added: the bindings carry it (Valid reports false)", v)
			case v == "null":
				s.widened(d, ptr+"/enum", "enum value null added: may now be null")
			default:
				s.widened(d, ptr+"/enum", "enum value %s added", v)
			}
		}
	}
	oc, oHas := om["const"]
	nc, nHas := nm["const"]
	switch {
	case oHas && nHas && !equalJSON(oc, nc):
		s.d.add(Breaking, s.kind, s.name, ptr+"/const", "const changed from %s to %s", show(oc), show(nc))
	case oHas && !nHas:
		s.widened(d, ptr+"/const", "const %s removed", show(oc))
	case !oHas && nHas:
		s.narrowed(d, ptr+"/const", "fixed to const %s", show(nc))
	}
}

// valueKind is the JSON type of the JSON text v, integers apart.
func valueKind(v string) string {
	var x any
	_ = json.Unmarshal([]byte(v), &x)
	switch x := x.(type) {
	case string:
		return "string"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

func valueKinds(vs []any) map[string]bool {
	m := map[string]bool{}
	for v := range jsonSet(vs) {
		m[valueKind(v)] = true
	}
	return m
}

func jsonSet(vs []any) map[string]bool {
	m := map[string]bool{}
	for _, v := range vs {
		b, _ := json.Marshal(v)
		m[string(b)] = true
	}
	return m
}

var (
	lowerBounds = []string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"}
	upperBounds = []string{"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"}
	// Keywords whose change cannot be ordered: any rewrite is treated as a
	// narrowing and a removal as a widening.
	opaque = []string{"pattern", "format", "multipleOf"}
)

func (s *schemaCmp) bounds(om, nm map[string]any, ptr string, d dir) {
	for _, k := range lowerBounds {
		s.bound(om, nm, k, ptr, d, func(o, n float64) bool { return n > o })
	}
	for _, k := range upperBounds {
		s.bound(om, nm, k, ptr, d, func(o, n float64) bool { return n < o })
	}
	for _, k := range opaque {
		ov, oHas := om[k]
		nv, nHas := nm[k]
		switch {
		case oHas && !nHas:
			s.widened(d, ptr+"/"+k, "%s %s removed", k, show(ov))
		case !oHas && nHas:
			s.narrowed(d, ptr+"/"+k, "%s %s added", k, show(nv))
		case oHas && !equalJSON(ov, nv):
			s.d.add(Breaking, s.kind, s.name, ptr+"/"+k, "%s changed from %s to %s", k, show(ov), show(nv))
		}
	}
	if ou, nu := om["uniqueItems"] == true, nm["uniqueItems"] == true; ou != nu {
		if nu {
			s.narrowed(d, ptr+"/uniqueItems", "items must now be unique")
		} else {
			s.widened(d, ptr+"/uniqueItems", "items no longer need to be unique")
		}
	}
}

// bound compares one numeric keyword; tighter says whether n is stricter than o.
func (s *schemaCmp) bound(om, nm map[string]any, k, ptr string, d dir, tighter func(o, n float64) bool) {
	ov, oHas := om[k].(float64)
	nv, nHas := nm[k].(float64)
	p := ptr + "/" + k
	switch {
	case !oHas && !nHas:
	case !oHas:
		s.narrowed(d, p, "%s %s added", k, num(nv))
	case !nHas:
		s.widened(d, p, "%s %s removed", k, num(ov))
	case ov == nv:
	case tighter(ov, nv):
		s.narrowed(d, p, "%s tightened from %s to %s", k, num(ov), num(nv))
	default:
		s.widened(d, p, "%s loosened from %s to %s", k, num(ov), num(nv))
	}
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func (s *schemaCmp) object(o, n node, om, nm map[string]any, ptr string, d dir, depth int) {
	op, _ := om["properties"].(map[string]any)
	np, _ := nm["properties"].(map[string]any)
	oreq, nreq := stringSet(om["required"]), stringSet(nm["required"])
	names := map[string]bool{}
	for k := range op {
		names[k] = true
	}
	for k := range np {
		names[k] = true
	}
	for k := range oreq {
		names[k] = true
	}
	for k := range nreq {
		names[k] = true
	}
	what := "argument"
	if d == output {
		what = "output member"
	}
	for _, k := range sortedKeys(names) {
		p := ptr + "/properties/" + manifest.EscapePointer(k)
		ov, inO := op[k]
		nv, inN := np[k]
		inO, inN = inO || oreq[k], inN || nreq[k]
		switch {
		case inO && !inN:
			s.d.add(Breaking, s.kind, s.name, p, "%s %q removed", what, k)
		case !inO && inN && d == input && nreq[k]:
			s.d.add(Breaking, s.kind, s.name, p, "required argument %q added", k)
		case !inO && inN && d == input:
			s.d.add(Compatible, s.kind, s.name, p, "optional argument %q added", k)
		case !inO && inN && isObject(om["additionalProperties"]):
			// Old bindings decode the new member with the schema of
			// undeclared members.
			s.cmp(node{om["additionalProperties"], o.root}, node{nv, n.root}, p, d, depth+1)
		case !inO && inN:
			s.d.add(Compatible, s.kind, s.name, p, "output member %q added", k)
		default:
			switch {
			case !oreq[k] && nreq[k] && d == input:
				s.d.add(Breaking, s.kind, s.name, p, "argument %q became required", k)
			case oreq[k] && !nreq[k] && d == input:
				s.d.add(Compatible, s.kind, s.name, p, "argument %q became optional", k)
			case oreq[k] && !nreq[k]:
				s.d.add(Breaking, s.kind, s.name, p, "output member %q may now be absent", k)
			case !oreq[k] && nreq[k]:
				s.d.add(Compatible, s.kind, s.name, p, "output member %q is now always present", k)
			}
			s.cmp(node{ov, o.root}, node{nv, n.root}, p, d, depth+1)
		}
	}
	oa, oHas := om["additionalProperties"]
	na, nHas := nm["additionalProperties"]
	oClosed, nClosed := oHas && oa == false, nHas && na == false
	switch {
	case !oClosed && nClosed:
		s.narrowed(d, ptr+"/additionalProperties", "unknown members are now rejected")
	case oClosed && !nClosed:
		// Generated decoders keep undeclared output members (AdditionalProperties
		// of a closed output object), so this is compatible in both directions.
		s.d.add(Compatible, s.kind, s.name, ptr+"/additionalProperties", "unknown members are now allowed")
	case isObject(oa) && isObject(na):
		s.cmp(node{oa, o.root}, node{na, n.root}, ptr+"/additionalProperties", d, depth+1)
	case isObject(oa) && !nClosed:
		// Old bindings decode undeclared members with the old schema.
		s.widened(d, ptr+"/additionalProperties", "undeclared members are no longer restricted by a schema")
	case isObject(na) && !oClosed:
		s.narrowed(d, ptr+"/additionalProperties", "undeclared members are now restricted by a schema")
	}
}

func isObject(v any) bool { _, ok := v.(map[string]any); return ok }

func stringSet(v any) map[string]bool {
	m := map[string]bool{}
	list, _ := v.([]any)
	for _, x := range list {
		if s, ok := x.(string); ok {
			m[s] = true
		}
	}
	return m
}

// union compares oneOf/anyOf/allOf lists: variants matched by equality
// first, then position; added variants widen (narrow, for allOf), removed
// ones narrow.
func (s *schemaCmp) union(o, n node, om, nm map[string]any, k, ptr string, d dir, depth int) {
	ov, _ := om[k].([]any)
	nv, _ := nm[k].([]any)
	if len(ov) == 0 && len(nv) == 0 {
		return
	}
	p := ptr + "/" + k
	if len(ov) == len(nv) {
		for i := range ov {
			s.cmp(node{ov[i], o.root}, node{nv[i], n.root}, fmt.Sprintf("%s/%d", p, i), d, depth+1)
		}
		return
	}
	added, removed := len(nv) > len(ov), len(nv) < len(ov)
	if k == "allOf" {
		added, removed = removed, added
	}
	switch {
	case added:
		s.widened(d, p, "%s now has %d variants (was %d)", k, len(nv), len(ov))
	case removed:
		s.narrowed(d, p, "%s now has %d variants (was %d)", k, len(nv), len(ov))
	}
}

// resolve follows local $refs ("#", "#/$defs/x", "#/definitions/x"). It
// returns the reference followed last ("" if none) for cycle detection. An
// unresolvable or remote ref is left as is and compared as a plain value.
func (n node) resolve() (node, string) {
	ref := ""
	for range 32 {
		m, ok := n.v.(map[string]any)
		if !ok {
			return n, ref
		}
		r, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(r, "#") {
			return n, ref
		}
		v, ok := lookup(n.root, r[1:])
		if !ok {
			return n, ref
		}
		n, ref = node{v, n.root}, r
	}
	return n, ref
}

func lookup(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = manifest.UnescapePointer(tok)
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
