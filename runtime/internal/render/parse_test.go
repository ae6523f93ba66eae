package render

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// parse reads lean text back into a Value, following the grammar in the
// package doc. It exists to prove the rendering loses nothing: a value
// that renders to text this cannot read back exactly fails the tests.
func parse(text string) (*Value, error) {
	p := &parser{}
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimLeft(l, " ")
		p.lines = append(p.lines, pline{indent: len(l) - len(t), text: stripComment(t)})
	}
	v, err := p.block(0)
	if err != nil {
		return nil, err
	}
	if p.i != len(p.lines) {
		return nil, fmt.Errorf("line %d: %q left over", p.i+1, p.lines[p.i].text)
	}
	return v, nil
}

type pline struct {
	indent int
	text   string
}

type parser struct {
	lines []pline
	i     int
}

// stripComment removes a trailing "  # ..." outside JSON strings.
func stripComment(s string) string {
	in := false
	for i := 0; i < len(s); i++ {
		switch {
		case in && s[i] == '\\':
			i++
		case s[i] == '"':
			in = !in
		case !in && strings.HasPrefix(s[i:], "  # "):
			return s[:i]
		}
	}
	return s
}

var (
	bareKeyPrefix = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_.$-]*`)
	headerRE      = regexp.MustCompile(`^\[(\d+)\]\{([^}]*)\}:$`)
)

// key splits a member line into its key and the rest.
func key(s string) (string, string, bool) {
	if strings.HasPrefix(s, `"`) {
		end := quotedEnd(s)
		if end < 0 {
			return "", "", false
		}
		var k string
		if json.Unmarshal([]byte(s[:end]), &k) != nil {
			return "", "", false
		}
		rest := s[end:]
		return k, rest, strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "[")
	}
	k := bareKeyPrefix.FindString(s)
	rest := s[len(k):]
	if k == "" || !(strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "[") && strings.HasSuffix(rest, "}:")) {
		return "", "", false
	}
	return k, rest, true
}

// quotedEnd is the index just past the JSON string s starts with.
func quotedEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// block reads the value whose first line is the current one, at indent.
func (p *parser) block(indent int) (*Value, error) {
	l := p.lines[p.i]
	if l.indent != indent {
		return nil, fmt.Errorf("line %d: indent %d, want %d", p.i+1, l.indent, indent)
	}
	switch {
	case strings.HasPrefix(l.text, "- "):
		return p.items(indent)
	case headerRE.MatchString(l.text):
		return p.table(indent, l.text)
	}
	if _, _, ok := key(l.text); ok {
		return p.members(indent)
	}
	p.i++
	return inline(l.text)
}

func (p *parser) members(indent int) (*Value, error) {
	v := &Value{Kind: Object}
	for p.i < len(p.lines) && p.lines[p.i].indent == indent {
		l := p.lines[p.i]
		k, rest, ok := key(l.text)
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not a member", p.i+1, l.text)
		}
		var mv *Value
		var err error
		switch {
		case strings.HasPrefix(rest, "["):
			mv, err = p.table(indent, rest)
		case rest == ":":
			p.i++
			if p.i == len(p.lines) {
				return nil, fmt.Errorf("member %q has no value", k)
			}
			mv, err = p.block(indent + 2)
		case strings.HasPrefix(rest, ": "):
			p.i++
			mv, err = inline(rest[2:])
		default:
			err = fmt.Errorf("line %d: bad member %q", p.i+1, l.text)
		}
		if err != nil {
			return nil, err
		}
		v.Members = append(v.Members, Member{Key: k, Value: mv})
	}
	return v, nil
}

func (p *parser) items(indent int) (*Value, error) {
	v := &Value{Kind: Array}
	for p.i < len(p.lines) && p.lines[p.i].indent == indent && strings.HasPrefix(p.lines[p.i].text, "- ") {
		// The item's first line, as if indented past the dash.
		p.lines[p.i] = pline{indent: indent + 2, text: p.lines[p.i].text[2:]}
		it, err := p.block(indent + 2)
		if err != nil {
			return nil, err
		}
		v.Items = append(v.Items, it)
	}
	return v, nil
}

func (p *parser) table(indent int, header string) (*Value, error) {
	m := headerRE.FindStringSubmatch(header)
	if m == nil {
		return nil, fmt.Errorf("line %d: bad table header %q", p.i+1, header)
	}
	n, _ := strconv.Atoi(m[1])
	cols := strings.Split(m[2], "|")
	p.i++
	v := &Value{Kind: Array}
	for range n {
		if p.i == len(p.lines) || p.lines[p.i].indent != indent+2 {
			return nil, fmt.Errorf("table %q: missing rows", header)
		}
		cells := split(p.lines[p.i].text, "|")
		if len(cells) != len(cols) {
			return nil, fmt.Errorf("line %d: %d cells, want %d", p.i+1, len(cells), len(cols))
		}
		row := &Value{Kind: Object}
		for i, c := range cells {
			if c == "" {
				continue
			}
			cv, err := inline(c)
			if err != nil {
				return nil, err
			}
			row.Members = append(row.Members, Member{Key: cols[i], Value: cv})
		}
		v.Items = append(v.Items, row)
		p.i++
	}
	return v, nil
}

// split cuts s at sep outside JSON strings.
func split(s, sep string) []string {
	var out []string
	in, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case in && s[i] == '\\':
			i++
		case s[i] == '"':
			in = !in
		case !in && strings.HasPrefix(s[i:], sep):
			out = append(out, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(out, s[start:])
}

// inline reads a scalar, an empty container or an inline list.
func inline(s string) (*Value, error) {
	switch {
	case s == "null":
		return &Value{Kind: Null}, nil
	case s == "true" || s == "false":
		return &Value{Kind: Bool, Text: s}, nil
	case s == "{}":
		return &Value{Kind: Object}, nil
	case s == "[]":
		return &Value{Kind: Array}, nil
	case numberRE.MatchString(s):
		return &Value{Kind: Number, Text: s}, nil
	case strings.HasPrefix(s, `"`):
		var str string
		if quotedEnd(s) != len(s) || json.Unmarshal([]byte(s), &str) != nil {
			return nil, fmt.Errorf("bad string %q", s)
		}
		return &Value{Kind: String, Text: str}, nil
	case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
		v := &Value{Kind: Array}
		for _, it := range split(s[1:len(s)-1], ", ") {
			iv, err := inline(it)
			if err != nil {
				return nil, err
			}
			v.Items = append(v.Items, iv)
		}
		return v, nil
	case s == "" || s != strings.TrimSpace(s):
		return nil, fmt.Errorf("bad scalar %q", s)
	case looksLikeNumber(s):
		// A reader less strict than this one could take it for a number,
		// a boolean or null.
		return nil, fmt.Errorf("bare string %q looks like a number, boolean or null", s)
	}
	return &Value{Kind: String, Text: s}, nil
}

// readBack reads a rendering as the package doc says a reader should: a
// text that is valid JSON is that JSON (the fallback, or a lean scalar or
// inline list, which mean the same), anything else is the lean grammar.
func readBack(text string) (*Value, error) {
	if json.Valid([]byte(text)) {
		return Decode([]byte(text))
	}
	return parse(text)
}
