// Package render turns a tool's structured JSON output into the lean text
// a language model reads instead of compact JSON: an array of flat objects
// becomes a table whose header names the columns once, other values nest
// as YAML-like indented lines, and short descriptions from the output
// schema annotate a member the first time it appears. The rendering is
// deterministic and lossless: every value, and the order of every object's
// members, can be read back exactly (the tests parse it back).
//
// The grammar, for a reader (or a parser):
//
//	value    = scalar | object | array
//	scalar   = null | true | false | number | string
//	string   = a bare string, or a JSON string literal when a bare one
//	           could be read as something else
//	member   = key ": " scalar | key ": []" | key ": {}" | key ": " inline
//	         | key ":" NL (members or items, indented by two)
//	         | key "[" n "]{" col "|" col ... "}:" NL rows (indented by two)
//	inline   = "[" scalar ", " scalar ... "]"          (an array of scalars)
//	item     = "- " value-first-line, its further lines indented by two
//	row      = cell "|" cell ...; an empty cell is a member the object lacks
//	comment  = "  # " text at the end of a member or table header line
package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxDescription is the longest description shown (in runes): longer
// ones cost more than they help.
const MaxDescription = 80

// Lean renders data (one JSON value) as lean text. schema, when not nil, is
// the value's JSON Schema; its short descriptions annotate members.
func Lean(data, schema []byte) (string, error) {
	v, err := Decode(data)
	if err != nil {
		return "", err
	}
	r := &renderer{shown: map[string]bool{}}
	if len(bytes.TrimSpace(schema)) > 0 {
		var root any
		if json.Unmarshal(schema, &root) == nil {
			r.root, _ = root.(map[string]any)
		}
	}
	var s map[string]any
	if r.root != nil {
		s = r.root
	}
	switch {
	case v.Kind == Object && len(v.Members) > 0:
		r.members(v, s, 0, "")
	case v.Kind == Array && len(v.Items) > 0 && !inlineList(v):
		if cols, ok := table(v); ok {
			r.table("", v, cols, s, 0, "")
		} else {
			r.items(v, s, 0, "")
		}
	default:
		// Alone, a string with a colon would read as an object.
		r.b.WriteString(r.inline(v, ctxItem))
	}
	return strings.TrimSuffix(r.b.String(), "\n"), nil
}

// Kind is a JSON value's kind.
type Kind int

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a decoded JSON value that keeps its members' order (and any
// duplicate members) and its numbers' text, so nothing is lost.
type Value struct {
	Kind Kind
	// Text: a string's value, a number's literal, "true" or "false".
	Text    string
	Items   []*Value
	Members []Member
}

// Member is one member of an object.
type Member struct {
	Key   string
	Value *Value
}

// Decode reads one JSON value.
func Decode(data []byte) (*Value, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("render: data after the JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (*Value, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case nil:
		return &Value{Kind: Null}, nil
	case bool:
		return &Value{Kind: Bool, Text: fmt.Sprint(x)}, nil
	case json.Number:
		return &Value{Kind: Number, Text: string(x)}, nil
	case string:
		return &Value{Kind: String, Text: x}, nil
	case json.Delim:
		if x == '[' {
			v := &Value{Kind: Array}
			for d.More() {
				it, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				v.Items = append(v.Items, it)
			}
			_, err := d.Token()
			return v, err
		}
		v := &Value{Kind: Object}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			m, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			v.Members = append(v.Members, Member{Key: k.(string), Value: m})
		}
		_, err := d.Token()
		return v, err
	}
	return nil, fmt.Errorf("unexpected token %v", t)
}

// JSON writes v back as compact JSON (members in their order).
func (v *Value) JSON() string {
	var b strings.Builder
	v.writeJSON(&b)
	return b.String()
}

func (v *Value) writeJSON(b *strings.Builder) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case String:
		b.WriteString(quote(v.Text))
	case Array:
		b.WriteByte('[')
		for i, it := range v.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.writeJSON(b)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, m := range v.Members {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quote(m.Key))
			b.WriteByte(':')
			m.Value.writeJSON(b)
		}
		b.WriteByte('}')
	default:
		b.WriteString(v.Text)
	}
}

func scalar(v *Value) bool { return v.Kind != Array && v.Kind != Object }

// inlineList: an array of scalars is written on one line.
func inlineList(v *Value) bool {
	for _, it := range v.Items {
		if !scalar(it) {
			return false
		}
	}
	return true
}

// table returns the columns of an array written as a table: objects each with members that are all scalars and keys that are
// distinct and bare. Columns are the keys in order of first appearance.
func table(v *Value) ([]string, bool) {
	var cols []string
	seen := map[string]bool{}
	for _, it := range v.Items {
		if it.Kind != Object || len(it.Members) == 0 {
			return nil, false
		}
		keys := map[string]bool{}
		for _, m := range it.Members {
			if !scalar(m.Value) || keys[m.Key] || !bareKey(m.Key) {
				return nil, false
			}
			keys[m.Key] = true
			if !seen[m.Key] {
				seen[m.Key] = true
				cols = append(cols, m.Key)
			}
		}
	}
	// A row must list its members in the columns' order, or the order
	// would be lost.
	for _, it := range v.Items {
		i := 0
		for _, m := range it.Members {
			for i < len(cols) && cols[i] != m.Key {
				i++
			}
			if i == len(cols) {
				return nil, false
			}
		}
	}
	return cols, true
}

type renderer struct {
	b     strings.Builder
	root  map[string]any
	shown map[string]bool // schema paths whose description was shown
}

func pad(n int) string { return strings.Repeat(" ", n) }

// members writes an object's members at indent; path is the value's
// place with array indexes as "*", to show each description once.
func (r *renderer) members(v *Value, s map[string]any, indent int, path string) {
	for _, m := range v.Members {
		ms := r.property(s, m.Key)
		p := path + "/" + m.Key
		key := m.Key
		if !bareKey(key) {
			key = quote(key)
		}
		mv := m.Value
		switch {
		case mv.Kind == Object && len(mv.Members) > 0:
			r.line(indent, key+":", r.desc(ms, p))
			r.members(mv, ms, indent+2, p)
		case mv.Kind == Array && len(mv.Items) > 0 && !inlineList(mv):
			if cols, ok := table(mv); ok {
				r.table(key, mv, cols, ms, indent, p)
				continue
			}
			r.line(indent, key+":", r.desc(ms, p))
			r.items(mv, ms, indent+2, p)
		default:
			r.line(indent, key+": "+r.inline(mv, ctxValue), r.desc(ms, p))
		}
	}
}

func (r *renderer) line(indent int, s, comment string) {
	r.b.WriteString(pad(indent))
	r.b.WriteString(s)
	if comment != "" {
		r.b.WriteString("  # ")
		r.b.WriteString(comment)
	}
	r.b.WriteByte('\n')
}

// table writes an array of flat objects: the header once, a row per item.
func (r *renderer) table(key string, v *Value, cols []string, s map[string]any, indent int, path string) {
	is := r.itemSchema(s)
	var notes []string
	if d := r.desc(s, path); d != "" {
		notes = append(notes, d)
	}
	for _, c := range cols {
		if d := r.desc(r.property(is, c), path+"/*/"+c); d != "" {
			notes = append(notes, c+": "+d)
		}
	}
	r.line(indent, fmt.Sprintf("%s[%d]{%s}:", key, len(v.Items), strings.Join(cols, "|")), strings.Join(notes, "; "))
	for _, it := range v.Items {
		cells := make([]string, len(cols))
		for _, m := range it.Members {
			for i, c := range cols {
				if c == m.Key {
					cells[i] = r.inline(m.Value, ctxCell)
				}
			}
		}
		r.line(indent+2, strings.Join(cells, "|"), "")
	}
}

// items writes an array's items as "- " lines at indent.
func (r *renderer) items(v *Value, s map[string]any, indent int, path string) {
	is := r.itemSchema(s)
	p := path + "/*"
	for _, it := range v.Items {
		var sub renderer
		sub.root, sub.shown = r.root, r.shown
		switch {
		case it.Kind == Object && len(it.Members) > 0:
			sub.members(it, is, indent+2, p)
		case it.Kind == Array && len(it.Items) > 0 && !inlineList(it):
			if cols, ok := table(it); ok {
				sub.table("", it, cols, is, indent+2, p)
			} else {
				sub.items(it, is, indent+2, p)
			}
		default:
			sub.line(indent+2, sub.inline(it, ctxItem), "")
		}
		// The item's first line takes the dash in place of its indent.
		out := sub.b.String()
		r.b.WriteString(pad(indent) + "- " + out[indent+2:])
	}
}

type context int

const (
	ctxValue context = iota // after "key: "
	ctxItem                 // after "- "
	ctxCell                 // in a table row
	ctxList                 // in an inline list
)

// inline writes a scalar, an empty container or an array of scalars.
func (r *renderer) inline(v *Value, c context) string {
	switch v.Kind {
	case String:
		if bareString(v.Text, c) {
			return v.Text
		}
		return quote(v.Text)
	case Array:
		parts := make([]string, len(v.Items))
		for i, it := range v.Items {
			parts[i] = r.inline(it, ctxList)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case Object:
		return "{}"
	case Null:
		return "null"
	}
	return v.Text
}

var (
	bareKeyRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_.$-]*$`)
	numberRE  = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
)

func bareKey(k string) bool { return bareKeyRE.MatchString(k) }

// bareString reports whether s can be written without quotes in c and
// still be read back as this string and nothing else.
func bareString(s string, c context) bool {
	if s == "" || s != strings.TrimSpace(s) || numberRE.MatchString(s) {
		return false
	}
	switch s {
	case "true", "false", "null", "-":
		return false
	}
	switch s[0] {
	case '"', '[', '{':
		return false
	}
	if strings.HasPrefix(s, "- ") {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' || r == '#' || r == utf8.RuneError {
			return false
		}
	}
	switch c {
	case ctxItem:
		return !strings.Contains(s, ":")
	case ctxCell:
		return !strings.Contains(s, "|")
	case ctxList:
		return !strings.ContainsAny(s, ",[]")
	}
	return true
}

// quote is a JSON string literal without HTML escaping.
func quote(s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// desc is the short description of schema s, once per path.
func (r *renderer) desc(s map[string]any, path string) string {
	if s == nil || r.shown[path] {
		return ""
	}
	d, _ := s["description"].(string)
	d, _, _ = strings.Cut(strings.TrimSpace(d), "\n")
	d = strings.TrimSpace(d)
	if d == "" || utf8.RuneCountInString(d) > MaxDescription {
		return ""
	}
	r.shown[path] = true
	return d
}

// resolve follows a local $ref.
func (r *renderer) resolve(s map[string]any) map[string]any {
	for range 8 { // a chain of refs, not a cycle
		ref, ok := s["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") || r.root == nil {
			return s
		}
		var cur any = r.root
		for _, tok := range strings.Split(strings.TrimPrefix(ref, "#"), "/")[1:] {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			m, _ := cur.(map[string]any)
			cur = m[tok]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return s
		}
		if _, has := s["description"]; has {
			// The referring schema's own description wins.
			c := map[string]any{}
			for k, v := range next {
				c[k] = v
			}
			c["description"] = s["description"]
			next = c
		}
		s = next
	}
	return s
}

// branches are s and the schemas of its unions and intersections, where
// a member's schema may be declared.
func (r *renderer) branches(s map[string]any) []map[string]any {
	s = r.resolve(s)
	out := []map[string]any{s}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		list, _ := s[k].([]any)
		for _, b := range list {
			if m, ok := b.(map[string]any); ok {
				out = append(out, r.resolve(m))
			}
		}
	}
	return out
}

// property is the schema of member key of an object of schema s.
func (r *renderer) property(s map[string]any, key string) map[string]any {
	if s == nil {
		return nil
	}
	for _, b := range r.branches(s) {
		if props, ok := b["properties"].(map[string]any); ok {
			if p, ok := props[key].(map[string]any); ok {
				return r.resolve(p)
			}
		}
	}
	for _, b := range r.branches(s) {
		if p, ok := b["additionalProperties"].(map[string]any); ok {
			return r.resolve(p)
		}
	}
	return nil
}

// itemSchema is the schema of the items of an array of schema s.
func (r *renderer) itemSchema(s map[string]any) map[string]any {
	if s == nil {
		return nil
	}
	for _, b := range r.branches(s) {
		if p, ok := b["items"].(map[string]any); ok {
			return r.resolve(p)
		}
	}
	return nil
}
