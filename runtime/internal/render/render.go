// Package render turns a tool's structured JSON output into the lean text
// a language model reads instead of compact JSON: an array of flat objects
// becomes a table whose header names the columns once, other values nest
// as YAML-like indented lines, and short descriptions from the output
// schema annotate a member the first time it appears. The rendering is
// deterministic and lossless: every value, and the order of every object's
// members, can be read back exactly (the tests parse it back).
//
// A text is read back so: if the whole text is valid JSON, it is that JSON
// value (the Fallback, written when the lean form would pass its budget or
// MaxDepth; a lean scalar or inline list that happens to be JSON means the
// same value). Otherwise it is lean text, lines separated by "\n" and
// nothing else, each line's indent a run of spaces (two per level):
//
//	text     = members | items | table | inline
//	members  = member { member }                  (one indent)
//	member   = key ":" [comment] NL block         (a non-empty object, or an
//	                                               array that is no table or inline)
//	         | key table-head                     (a table)
//	         | key ": " inline [comment]
//	block    = members | items | table            (indented by two)
//	items    = item { item }
//	item     = "- " first line of a value; its further lines are indented by
//	           two past the dash, as if the dash were two spaces
//	table    = table-head rows
//	table-head = "[" n "]{" col { "|" col } "}:" [comment] NL
//	rows     = n lines, indented by two: cell { "|" cell }, one cell per
//	           column; an empty cell is a member that row lacks
//	inline   = scalar | "[]" | "{}" | "[" scalar { ", " scalar } "]"
//	scalar   = "null" | "true" | "false" | number | string
//	number   = a JSON number literal, as sent
//	string   = bare | quoted
//	key      = bare key ([A-Za-z_$][A-Za-z0-9_.$-]*) | quoted
//	quoted   = a JSON string literal, in which every character that is not
//	           bareRune is a \u escape (\n, \r, \t for those three)
//	comment  = "  # " description (lean-described only), to the line's end
//
// A bare string is one that reads as nothing else where it stands: not
// empty, no leading or trailing space, every character bareRune, none of
// '"', '\' or '#', not starting with '"', '[', '{', "'" or "- ", not
// "-", nothing a lenient reader takes for a number ("01", "+1", ".5",
// "1_000", "1 000", "0x1F", "1:30") or for a boolean or null ("yes", "NaN",
// "~"; see lookalikeWords), look-alike characters read as what they look
// like ("−1", "１２", "ｔｒｕｅ"; see numberFold), and no ':' after "- ",
// no '|' in a cell, none of ",[]" in an inline list. Anything else is quoted. A table is used for an array
// of objects whose members are scalars with bare keys in one order, when
// at most as many cells are empty as are filled, plus one row's worth. A
// description is shown only up to its first line break of any convention,
// and only when what is left is at most MaxDescription runes, all
// bareRune; so no character but "\n" in the text breaks a line for any
// reader, and none is invisible.
package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDescription is the longest description shown (in runes): longer
// ones cost more than they help.
const MaxDescription = 80

// MaxDepth is the deepest nesting rendered lean: each level indents its
// lines by two more spaces, so deep values cost more than their JSON.
const MaxDepth = 32

// Lean renders data (one JSON value) as lean text. schema, when not nil, is
// the value's JSON Schema; its short descriptions annotate members.
//
// The text is bounded: the lean form is at most twice the length of data's
// compact JSON plus 64 bytes. A value nested deeper than MaxDepth, or
// whose lean form would pass that budget, is written instead as its
// compact JSON (Fallback), at most three times data's length. The
// rendering stops as soon as it passes the budget or the depth, so time
// and memory are linear in data too. Data that is not JSON, or that
// encoding/json refuses (nested past 10,000 levels), is an error.
func Lean(data, schema []byte) (string, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return "", fmt.Errorf("render: %w", err)
	}
	v, err := decode(compact.Bytes(), MaxDepth)
	if errors.Is(err, errTooDeep) {
		return Fallback(compact.Bytes()), nil
	}
	if err != nil {
		return "", err
	}
	r := &renderer{shown: map[string]bool{}, limit: 2*compact.Len() + 64}
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
		r.write(r.inline(v, ctxItem))
	}
	if r.over {
		return Fallback(compact.Bytes()), nil
	}
	return strings.TrimSuffix(string(r.out), "\n"), nil
}

// Fallback is the JSON a value is rendered as when its lean form would be
// too large: compact (as json.Compact writes it), with every character a
// bare string may not hold (see bareRune) written as a \u escape, so no
// line break of any convention, control, bidi or zero-width character
// appears raw even inside a string; a byte that is not UTF-8 is written
// as U+FFFD, as a decoder reads it. compact must be compact JSON.
func Fallback(compact []byte) string {
	var b strings.Builder
	b.Grow(len(compact))
	for i := 0; i < len(compact); {
		r, n := utf8.DecodeRune(compact[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(r) // as a decoder reads it
		case r >= 0x20 && r < 0x7f || r >= utf8.RuneSelf && bareRune(r):
			b.Write(compact[i : i+n])
		default:
			writeEscape(&b, r)
		}
		i += n
	}
	return b.String()
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

var errTooDeep = errors.New("render: nested too deep")

// Decode reads one JSON value.
func Decode(data []byte) (*Value, error) { return decode(data, -1) }

// decode reads one JSON value nested at most max levels (-1: any).
func decode(data []byte, max int) (*Value, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d, max)
	if errors.Is(err, errTooDeep) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("render: data after the JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder, max int) (*Value, error) {
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
		if max == 0 {
			return nil, errTooDeep
		}
		if x == '[' {
			v := &Value{Kind: Array}
			for d.More() {
				it, err := decodeValue(d, max-1)
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
			m, err := decodeValue(d, max-1)
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

// table returns the columns of an array written as a table: objects each
// with members that are all scalars and keys that are distinct and bare,
// listed in the columns' order (the keys in order of first appearance),
// and at most as many empty cells as filled ones plus one row's worth, so
// a table is never much larger than its values.
func table(v *Value) ([]string, bool) {
	var cols []string
	index := map[string]int{}
	filled := 0
	for _, it := range v.Items {
		if it.Kind != Object || len(it.Members) == 0 {
			return nil, false
		}
		last := -1
		for _, m := range it.Members {
			if !scalar(m.Value) || !bareKey(m.Key) {
				return nil, false
			}
			i, ok := index[m.Key]
			if !ok {
				i = len(cols)
				index[m.Key] = i
				cols = append(cols, m.Key)
			}
			// A row must list its members in the columns' order, each once,
			// or the order would be lost.
			if i <= last {
				return nil, false
			}
			last = i
			filled++
		}
	}
	if len(v.Items)*len(cols) > 2*filled+len(cols) {
		return nil, false
	}
	return cols, true
}

type renderer struct {
	out   []byte
	limit int  // the budget, in bytes
	over  bool // past the budget: stop, the caller falls back
	root  map[string]any
	shown map[string]bool // schema paths whose description was shown
}

func (r *renderer) write(s string) {
	if r.over {
		return
	}
	r.out = append(r.out, s...)
	r.over = len(r.out) > r.limit
}

func (r *renderer) pad(n int) {
	for range n {
		r.write(" ")
	}
}

// members writes an object's members at indent; path is the value's
// place with array indexes as "*", to show each description once.
func (r *renderer) members(v *Value, s map[string]any, indent int, path string) {
	for _, m := range v.Members {
		if r.over {
			return
		}
		ms := r.property(s, m.Key)
		p := subPath(ms, path, m.Key)
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
	r.pad(indent)
	r.write(s)
	if comment != "" {
		r.write("  # ")
		r.write(comment)
	}
	r.write("\n")
}

// table writes an array of flat objects: the header once, a row per item.
func (r *renderer) table(key string, v *Value, cols []string, s map[string]any, indent int, path string) {
	is := r.itemSchema(s)
	var notes []string
	if d := r.desc(s, path); d != "" {
		notes = append(notes, d)
	}
	for _, c := range cols {
		if d := r.desc(r.property(is, c), subPath(is, subPath(is, path, "*"), c)); d != "" {
			notes = append(notes, c+": "+d)
		}
	}
	r.line(indent, fmt.Sprintf("%s[%d]{%s}:", key, len(v.Items), strings.Join(cols, "|")), strings.Join(notes, "; "))
	index := make(map[string]int, len(cols))
	for i, c := range cols {
		index[c] = i
	}
	cells := make([]string, len(cols))
	for _, it := range v.Items {
		if r.over {
			return
		}
		clear(cells)
		for _, m := range it.Members {
			cells[index[m.Key]] = r.inline(m.Value, ctxCell)
		}
		r.line(indent+2, strings.Join(cells, "|"), "")
	}
}

// items writes an array's items as "- " lines at indent: each item as if
// at indent+2, its first line then taking the dash in place of the two
// spaces before it.
func (r *renderer) items(v *Value, s map[string]any, indent int, path string) {
	is := r.itemSchema(s)
	p := subPath(is, path, "*")
	for _, it := range v.Items {
		if r.over {
			return
		}
		start := len(r.out)
		switch {
		case it.Kind == Object && len(it.Members) > 0:
			r.members(it, is, indent+2, p)
		case it.Kind == Array && len(it.Items) > 0 && !inlineList(it):
			if cols, ok := table(it); ok {
				r.table("", it, cols, is, indent+2, p)
			} else {
				r.items(it, is, indent+2, p)
			}
		default:
			r.line(indent+2, r.inline(it, ctxItem), "")
		}
		if d := start + indent; d+2 <= len(r.out) {
			r.out[d], r.out[d+1] = '-', ' '
		}
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

// bareRune reports whether r may stand unescaped: a graphic character
// (letter, mark, number, punctuation, symbol) or the ASCII space. Not:
// controls (C0, DEL, C1 such as U+0085), format characters (bidi controls,
// zero-width characters, the BOM), line and paragraph separators (U+2028,
// U+2029), spaces other than U+0020, private-use and unassigned code
// points.
func bareRune(r rune) bool {
	return r == ' ' || unicode.IsGraphic(r) && !unicode.Is(unicode.Zs, r)
}

// lookalikeWords are the words that readers of YAML-like text take for a
// boolean, null or number, compared without case and after a leading
// sign or dot (".inf", "-Infinity").
var lookalikeWords = map[string]bool{
	"true": true, "false": true, "null": true, "yes": true, "no": true, "on": true, "off": true,
	"nan": true, "inf": true, "infinity": true, "none": true, "nil": true, "undefined": true, "~": true, "∞": true,
}

// numberish matches, in a string folded by numberFold, what a lenient
// reader takes for a number: digits with a sign, leading zeros, a leading
// or trailing dot, an exponent, and '_', ',', '.', "'" or ' ' between or
// after the digits ("01", "+1", "- 1", "1_000", "1,000", "1 000", "1'000",
// "1.000,5", ".5", "1.", "1e3"), hex, octal and binary literals ("0x1F"),
// and sexagesimal ones ("1:30").
var numberish = regexp.MustCompile(`^[+-]? *(([0-9][0-9_,.' ]*|\.[0-9][0-9_,.' ]*)([eE][+-]?[0-9]+)?|0[xXoObB][0-9a-fA-F_]+|[0-9]+(:[0-5]?[0-9])+(\.[0-9]*)?)$`)

// numberFold is s as a reader who does not look closely sees it: the
// fullwidth forms of ASCII as ASCII, a decimal digit of any script as a
// digit, any dash or minus sign as '-', plus look-alikes as '+', dot and
// comma look-alikes as '.' and ',', apostrophes and primes as "'", any
// space as ' ', and combining marks dropped. ASCII text is returned as it
// is.
func numberFold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFEE0 // fullwidth ASCII
		}
		switch {
		case r < utf8.RuneSelf:
		case unicode.In(r, unicode.Mn, unicode.Me):
			continue
		case unicode.IsDigit(r):
			r = '0'
		case unicode.Is(unicode.Pd, r), strings.ContainsRune("\u2212\u207b\u208b\u2796\u02d7", r):
			r = '-'
		case strings.ContainsRune("\ufe62\u207a\u208a\u2795\u02d6", r):
			r = '+'
		case strings.ContainsRune("\u066b\u00b7\u2024\ufe52\u3002\uff61\u2027", r):
			r = '.'
		case strings.ContainsRune("\u066c\u060c\ufe50\u3001\uff64\u201a", r):
			r = ','
		case strings.ContainsRune("\u2018\u2019\u02bc\u02b9\u2032\u00b4", r):
			r = '\''
		case unicode.Is(unicode.Zs, r):
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// looksLikeNumber reports whether a reader could take s for a number, a
// boolean or null, once look-alike characters are read as what they look
// like (numberFold).
func looksLikeNumber(s string) bool {
	f := numberFold(s)
	return numberish.MatchString(f) || lookalikeWords[strings.ToLower(strings.TrimLeft(f, "+-. "))]
}

// bareString reports whether s can be written without quotes in c and
// still be read back as this string and nothing else.
func bareString(s string, c context) bool {
	if s == "" || s != strings.TrimSpace(s) || looksLikeNumber(s) || s == "-" {
		return false
	}
	switch s[0] {
	case '"', '[', '{', '\'':
		return false
	}
	if strings.HasPrefix(s, "- ") {
		return false
	}
	for _, r := range s {
		if !bareRune(r) || r == '"' || r == '\\' || r == '#' {
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

// quote is a JSON string literal that escapes, besides '"' and '\',
// every character that is not bareRune, so the literal holds no line
// break of any convention and nothing invisible.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case bareRune(r):
			b.WriteRune(r)
		default:
			writeEscape(&b, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// writeEscape writes r as JSON's \n, \r, \t or \u escape (a surrogate
// pair past U+FFFF).
func writeEscape(b *strings.Builder, r rune) {
	const hex = "0123456789abcdef"
	switch r {
	case '\n':
		b.WriteString(`\n`)
		return
	case '\r':
		b.WriteString(`\r`)
		return
	case '\t':
		b.WriteString(`\t`)
		return
	}
	u := func(c rune) {
		b.WriteString(`\u`)
		b.WriteByte(hex[c>>12&15])
		b.WriteByte(hex[c>>8&15])
		b.WriteByte(hex[c>>4&15])
		b.WriteByte(hex[c&15])
	}
	if r > 0xFFFF {
		r1, r2 := utf16.EncodeRune(r)
		u(r1)
		u(r2)
		return
	}
	u(r)
}

// maxPath bounds the paths descriptions are remembered by: past it (a
// member nested under long keys) no description is shown, so what the
// paths cost stays in proportion to the data.
const maxPath = 256

// noPath is the path of a value whose descriptions are not shown.
const noPath = "\x00"

// subPath is path's member key, for descriptions: noPath where there is
// no schema or the path would be too long.
func subPath(s map[string]any, path, key string) string {
	if s == nil || path == noPath || len(path)+1+len(key) > maxPath {
		return noPath
	}
	return path + "/" + key
}

// desc is the short description of schema s, once per path.
func (r *renderer) desc(s map[string]any, path string) string {
	if s == nil || path == noPath || r.shown[path] {
		return ""
	}
	d, _ := s["description"].(string)
	// The first line, whatever breaks it; one holding anything that is not
	// bareRune is not shown, so a comment never breaks a line or hides text.
	if i := strings.IndexFunc(strings.TrimSpace(d), lineBreak); i >= 0 {
		d = strings.TrimSpace(d)[:i]
	}
	d = strings.TrimSpace(d)
	if d == "" || utf8.RuneCountInString(d) > MaxDescription || strings.ContainsFunc(d, func(r rune) bool { return !bareRune(r) }) {
		return ""
	}
	r.shown[path] = true
	return d
}

// lineBreak: a character some reader breaks lines at.
func lineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
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
		// The first 16 branches of each: enough for real unions, and a
		// bound on what each member costs.
		for _, b := range list[:min(len(list), 16)] {
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
