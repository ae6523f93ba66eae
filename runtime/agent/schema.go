package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Dialect is the form of JSON Schema a provider takes for tool inputs.
type Dialect int

const (
	// DialectJSONSchema is plain JSON Schema as Anthropic, Gemini and
	// OpenAI's non-strict mode take it: the root is an object schema,
	// $schema and $id are dropped and local $refs are inlined (a recursive
	// one is kept with its definitions).
	DialectJSONSchema Dialect = iota
	// DialectStrict is OpenAI's strict mode (strict: true): every object
	// closed (additionalProperties: false) and listing every property in
	// required, optional properties made nullable, the constraints strict
	// mode enforces kept (pattern without lookaround or backreferences;
	// format date-time, time, date, duration, email, hostname, ipv4, ipv6
	// or uuid; multipleOf, minimum, maximum, exclusiveMinimum,
	// exclusiveMaximum; minItems, maxItems), and the other keywords removed
	// (the other constraints are appended to the description; the runtime
	// still validates every constraint on the way back). Before the typed
	// decode, a null the model sent for an optional property is removed, so
	// it reads as absent.
	DialectStrict
)

func (d Dialect) String() string {
	if d == DialectStrict {
		return "strict"
	}
	return "jsonschema"
}

// view is a tool's projected input schema.
type view struct {
	schema []byte
	strict bool
	nulls  *nullPlan // strict only: which nulls mean absent
}

// nullPlan mirrors an object schema made strict: strip names the optional
// members that became nullable, so a null there means "absent".
type nullPlan struct {
	strip map[string]bool
	props map[string]*nullPlan
	items *nullPlan
}

func project(raw []byte, d Dialect) (*view, error) {
	root, err := parseSchema(raw)
	if err != nil {
		return nil, err
	}
	delete(root, "$schema")
	delete(root, "$id")
	in := &inliner{root: root}
	plain, _ := in.inline(root, "#").(map[string]any)
	if plain == nil {
		plain = map[string]any{}
	}
	if !in.kept {
		delete(plain, "$defs")
		delete(plain, "definitions")
	}
	if _, ok := plain["type"]; !ok {
		plain["type"] = "object"
	}
	if d == DialectStrict && !in.kept {
		if s, plan, ok := strictify(plain); ok {
			if m, _ := s.(map[string]any); m != nil {
				b, err := encode(m)
				return &view{schema: b, strict: true, nulls: plan}, err
			}
		}
	}
	b, err := encode(plain)
	return &view{schema: b}, err
}

func parseSchema(raw []byte) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) || bytes.Equal(raw, []byte("true")) {
		return map[string]any{"type": "object"}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	return m, nil
}

func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// inliner replaces local $refs by a copy of their target.
type inliner struct {
	root  map[string]any
	stack []string
	kept  bool // a recursive $ref stayed
}

func (in *inliner) inline(v any, at string) any {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, "#") {
			if slices.Contains(in.stack, ref) {
				in.kept = true
				return copyMap(x)
			}
			target, ok := resolvePointer(in.root, ref[1:])
			if !ok {
				in.kept = true // unresolvable: leave it for the provider to refuse, visibly
				return copyMap(x)
			}
			in.stack = append(in.stack, ref)
			out := in.inline(target, ref)
			in.stack = in.stack[:len(in.stack)-1]
			// Keywords beside $ref (draft 2019-09 and later) refine the
			// target: a description, usually.
			if m, ok := out.(map[string]any); ok && len(x) > 1 {
				m = copyMap(m)
				for k, sib := range x {
					if k != "$ref" {
						m[k] = in.inline(sib, at)
					}
				}
				return m
			}
			return out
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "$defs" || k == "definitions" {
				out[k] = e // inlined where used; kept only when a $ref remains
				continue
			}
			out[k] = in.inline(e, at)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = in.inline(e, at)
		}
		return out
	}
	return v
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// resolvePointer follows a JSON Pointer (RFC 6901) from root.
func resolvePointer(root any, ptr string) (any, bool) {
	if ptr == "" {
		return root, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := root
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
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

// strictKeep are the keywords kept in strict mode; constraints strict mode
// enforces are kept too (enforced), the other constraints are moved into
// the description (strictHint), everything else is dropped.
var strictKeep = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"enum": true, "const": true, "anyOf": true, "description": true, "title": true,
}

var strictHint = []string{
	"minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
	"exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems", "default",
}

// strictFormats are the string formats strict mode enforces.
var strictFormats = map[string]bool{
	"date-time": true, "time": true, "date": true, "duration": true, "email": true,
	"hostname": true, "ipv4": true, "ipv6": true, "uuid": true,
}

// lookaround matches the regular expression features beyond what strict
// mode's patterns are known to take: lookahead, lookbehind and
// backreferences.
var lookaround = regexp.MustCompile(`\(\?[=!<]|\\[1-9]|\\k<`)

// enforced reports whether strict mode enforces the constraint k: v (its
// documented set: pattern and the formats above for strings; multipleOf,
// minimum, maximum and the exclusive bounds as numbers; minItems and
// maxItems), so it stays in the schema.
func enforced(k string, v any) bool {
	switch k {
	case "pattern":
		p, ok := v.(string)
		return ok && !lookaround.MatchString(p)
	case "format":
		f, ok := v.(string)
		return ok && strictFormats[f]
	case "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		_, ok := v.(json.Number)
		return ok
	case "minItems", "maxItems":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		i, err := n.Int64()
		return err == nil && i >= 0
	}
	return false
}

// strictify rewrites a schema for strict mode; ok is false when it cannot
// be (a free-form object or value, allOf, a tuple).
func strictify(v any) (any, *nullPlan, bool) {
	x, ok := v.(map[string]any)
	if !ok {
		return nil, nil, false // true/false schemas
	}
	if _, ok := x["allOf"]; ok {
		return nil, nil, false
	}
	out := map[string]any{}
	var hints []string
	for _, k := range strictHint {
		if h, ok := x[k]; ok && !enforced(k, h) {
			b, _ := encode(h)
			hints = append(hints, k+": "+string(b))
		}
	}
	for k, e := range x {
		if strictKeep[k] || enforced(k, e) {
			out[k] = e
		}
	}
	if one, ok := x["oneOf"]; ok {
		if _, has := out["anyOf"]; has {
			return nil, nil, false
		}
		out["anyOf"] = one // for a model the two read alike; validation tells them apart
	}
	if len(hints) > 0 {
		d, _ := out["description"].(string)
		if d != "" {
			d += " "
		}
		out["description"] = d + "(" + strings.Join(hints, "; ") + ")"
	}
	var plan *nullPlan
	switch {
	case isType(out, "object"):
		props, _ := out["properties"].(map[string]any)
		ap, hasAP := out["additionalProperties"]
		if hasAP && ap != false {
			return nil, nil, false // a map: strict mode cannot say it
		}
		if props == nil && !hasAP {
			return nil, nil, false // free-form
		}
		req := map[string]bool{}
		if rs, ok := out["required"].([]any); ok {
			for _, r := range rs {
				if s, ok := r.(string); ok {
					req[s] = true
				}
			}
		}
		plan = &nullPlan{strip: map[string]bool{}, props: map[string]*nullPlan{}}
		newProps := map[string]any{}
		names := make([]string, 0, len(props))
		for name, p := range props {
			s, sub, ok := strictify(p)
			if !ok {
				return nil, nil, false
			}
			if !req[name] && !admitsNull(s) {
				s = nullable(s)
				plan.strip[name] = true
			}
			if sub != nil {
				plan.props[name] = sub
			}
			newProps[name] = s
			names = append(names, name)
		}
		slices.Sort(names)
		all := make([]any, len(names))
		for i, n := range names {
			all[i] = n
		}
		out["properties"] = newProps
		out["required"] = all
		out["additionalProperties"] = false
	case isType(out, "array"):
		items, ok := out["items"]
		if !ok {
			return nil, nil, false
		}
		s, sub, ok := strictify(items)
		if !ok {
			return nil, nil, false
		}
		out["items"] = s
		if sub != nil {
			plan = &nullPlan{items: sub}
		}
	}
	if branches, ok := out["anyOf"].([]any); ok {
		nb := make([]any, len(branches))
		for i, b := range branches {
			s, _, ok := strictify(b)
			if !ok {
				return nil, nil, false
			}
			nb[i] = s
		}
		out["anyOf"] = nb
	} else if _, typed := out["type"]; !typed {
		_, e := out["enum"]
		_, c := out["const"]
		if !e && !c {
			return nil, nil, false // any value
		}
	}
	return out, plan, true
}

func types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	if _, ok := s["properties"]; ok {
		return []string{"object"}
	}
	return nil
}

func isType(s map[string]any, t string) bool { return slices.Contains(types(s), t) }

func admitsNull(v any) bool {
	s, ok := v.(map[string]any)
	if !ok {
		return true
	}
	if isType(s, "null") {
		return true
	}
	if en, ok := s["enum"].([]any); ok && slices.Contains(en, nil) {
		return true
	}
	if bs, ok := s["anyOf"].([]any); ok {
		for _, b := range bs {
			if admitsNull(b) {
				return true
			}
		}
	}
	return false
}

// nullable makes a strict schema admit null too.
func nullable(v any) any {
	s := copyMap(v.(map[string]any))
	ts := types(s)
	_, hasType := s["type"]
	_, hasAny := s["anyOf"]
	switch {
	case hasType && len(ts) > 0 && !hasAny:
		nt := make([]any, 0, len(ts)+1)
		for _, t := range ts {
			nt = append(nt, t)
		}
		s["type"] = append(nt, "null")
		if en, ok := s["enum"].([]any); ok {
			s["enum"] = append(slices.Clone(en), nil)
		}
		if _, ok := s["const"]; ok {
			return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
		}
		return s
	case hasAny && !hasType:
		bs := slices.Clone(s["anyOf"].([]any))
		s["anyOf"] = append(bs, map[string]any{"type": "null"})
		return s
	default:
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	}
}

// stripNulls removes the nulls plan says mean "absent" from a model's
// arguments. Arguments that are not a JSON object go through unchanged:
// the typed decode reports them.
func stripNulls(args []byte, plan *nullPlan) []byte {
	if plan == nil || !bytes.Contains(args, []byte("null")) {
		return args
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return args
	}
	if !plan.apply(v) {
		return args
	}
	b, err := encode(v)
	if err != nil {
		return args
	}
	return b
}

func (p *nullPlan) apply(v any) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil && p.strip[k] {
				delete(x, k)
				changed = true
				continue
			}
			if sub := p.props[k]; sub != nil && sub.apply(e) {
				changed = true
			}
		}
	case []any:
		if p.items != nil {
			for _, e := range x {
				if p.items.apply(e) {
					changed = true
				}
			}
		}
	}
	return changed
}
