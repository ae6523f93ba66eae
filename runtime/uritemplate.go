package mcpruntime

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// URI templates (RFC 6570), as MCP resource templates use them. Levels 1 to
// 4 are supported for string and list values: every operator ({var},
// {+var}, {#var}, {.var}, {/var}, {;var}, {?var}, {&var}), the prefix
// modifier {var:3} and the explode modifier {var*}. Associative-array values
// are not supported.

// TemplateVars are the values a template is expanded with. A value is a
// string, a *string (nil: undefined), or a []string (a list; nil or empty:
// undefined). A variable absent from the map is undefined and expands to
// nothing, as RFC 6570 says.
type TemplateVars map[string]any

// TemplateVar is one variable reference in a template.
type TemplateVar struct {
	Name string
	// Operator is the expression's operator: "", "+", "#", ".", "/", ";",
	// "?" or "&".
	Operator string
	// Explode is the * modifier; Prefix the :n modifier (0: none).
	Explode bool
	Prefix  int
}

// URITemplate is a parsed RFC 6570 template.
type URITemplate struct {
	raw   string
	parts []tmplPart
}

type tmplPart struct {
	lit  string // a literal (already encoded), when op is 0
	expr bool
	op   byte
	vars []TemplateVar
}

// ParseURITemplate parses s. Errors name the offset of the problem.
func ParseURITemplate(s string) (*URITemplate, error) {
	t := &URITemplate{raw: s}
	var lit strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("uri template %q: offset %d: unclosed expression", s, i)
			}
			if lit.Len() > 0 {
				t.parts = append(t.parts, tmplPart{lit: lit.String()})
				lit.Reset()
			}
			p, err := parseExpr(s[i+1 : i+end])
			if err != nil {
				return nil, fmt.Errorf("uri template %q: offset %d: %w", s, i, err)
			}
			t.parts = append(t.parts, p)
			i += end + 1
		case '}':
			return nil, fmt.Errorf("uri template %q: offset %d: '}' outside an expression", s, i)
		case '%':
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				lit.WriteString(s[i : i+3])
				i += 3
				continue
			}
			lit.WriteString("%25")
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, fmt.Errorf("uri template %q: offset %d: invalid UTF-8", s, i)
			}
			if size == 1 && (isUnreserved(c) || isReserved(c)) {
				lit.WriteByte(c)
			} else {
				lit.WriteString(pctEncode(s[i : i+size]))
			}
			i += size
		}
	}
	if lit.Len() > 0 {
		t.parts = append(t.parts, tmplPart{lit: lit.String()})
	}
	return t, nil
}

func parseExpr(body string) (tmplPart, error) {
	p := tmplPart{expr: true}
	if body == "" {
		return p, fmt.Errorf("empty expression")
	}
	op := ""
	if strings.IndexByte("+#./;?&", body[0]) >= 0 {
		p.op, op, body = body[0], body[:1], body[1:]
	} else if strings.IndexByte("=,!@|", body[0]) >= 0 {
		return p, fmt.Errorf("operator %q is reserved for future extensions", body[0])
	}
	for _, spec := range strings.Split(body, ",") {
		v := TemplateVar{Operator: op}
		switch {
		case strings.HasSuffix(spec, "*"):
			v.Explode = true
			spec = spec[:len(spec)-1]
		case strings.Contains(spec, ":"):
			name, n, _ := strings.Cut(spec, ":")
			max, err := strconv.Atoi(n)
			if err != nil || max < 1 || max > 9999 || n[0] == '+' || n[0] == '0' {
				return p, fmt.Errorf("variable %q: prefix length must be 1 to 9999", name)
			}
			v.Prefix = max
			spec = name
		}
		if !validVarName(spec) {
			return p, fmt.Errorf("invalid variable name %q", spec)
		}
		v.Name = spec
		p.vars = append(p.vars, v)
	}
	return p, nil
}

// validVarName checks RFC 6570's varname: varchars (ALPHA, DIGIT, "_",
// pct-encoded) with single dots between them.
func validVarName(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.':
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

// String returns the template as written.
func (t *URITemplate) String() string { return t.raw }

// Variables returns the variable references in order of appearance.
func (t *URITemplate) Variables() []TemplateVar {
	var out []TemplateVar
	for _, p := range t.parts {
		out = append(out, p.vars...)
	}
	return out
}

// Expand expands the template. A value of an unsupported type, a prefix
// modifier on a list, or a variable name vars has but the template lacks
// is an error (a misspelt name would otherwise expand to nothing).
func (t *URITemplate) Expand(vars TemplateVars) (string, error) {
	for name := range vars {
		if !slices.ContainsFunc(t.Variables(), func(v TemplateVar) bool { return v.Name == name }) {
			return "", fmt.Errorf("uri template %q has no variable %q", t.raw, name)
		}
	}
	var b strings.Builder
	for _, p := range t.parts {
		if !p.expr {
			b.WriteString(p.lit)
			continue
		}
		if err := p.expand(&b, vars); err != nil {
			return "", fmt.Errorf("uri template %q: %w", t.raw, err)
		}
	}
	return b.String(), nil
}

// ExpandURITemplate parses template and expands it with vars.
func ExpandURITemplate(template string, vars TemplateVars) (string, error) {
	t, err := ParseURITemplate(template)
	if err != nil {
		return "", err
	}
	return t.Expand(vars)
}

type opRule struct {
	first, sep string
	named      bool
	ifEmpty    string
	reserved   bool // reserved characters pass unencoded
}

func ruleFor(op byte) opRule {
	switch op {
	case '+':
		return opRule{sep: ",", reserved: true}
	case '#':
		return opRule{first: "#", sep: ",", reserved: true}
	case '.':
		return opRule{first: ".", sep: "."}
	case '/':
		return opRule{first: "/", sep: "/"}
	case ';':
		return opRule{first: ";", sep: ";", named: true}
	case '?':
		return opRule{first: "?", sep: "&", named: true, ifEmpty: "="}
	case '&':
		return opRule{first: "&", sep: "&", named: true, ifEmpty: "="}
	}
	return opRule{sep: ","}
}

func (p tmplPart) expand(b *strings.Builder, vars TemplateVars) error {
	r := ruleFor(p.op)
	first := true
	emit := func(s string) {
		if first {
			b.WriteString(r.first)
			first = false
		} else {
			b.WriteString(r.sep)
		}
		b.WriteString(s)
	}
	enc := func(s string) string { return encodeValue(s, r.reserved) }
	for _, v := range p.vars {
		var str *string
		var list []string
		switch x := vars[v.Name].(type) {
		case nil:
		case string:
			str = &x
		case *string:
			str = x
		case []string:
			list = x
		default:
			return fmt.Errorf("variable %q: unsupported value type %T (want string, *string or []string)", v.Name, x)
		}
		switch {
		case str != nil:
			val := *str
			if v.Prefix > 0 {
				val = prefixRunes(val, v.Prefix)
			}
			switch {
			case !r.named:
				emit(enc(val))
			case val == "":
				emit(v.Name + r.ifEmpty)
			default:
				emit(v.Name + "=" + enc(val))
			}
		case len(list) > 0:
			if v.Prefix > 0 {
				return fmt.Errorf("variable %q: a prefix modifier does not apply to a list", v.Name)
			}
			items := make([]string, len(list))
			for i, it := range list {
				items[i] = enc(it)
			}
			switch {
			case !v.Explode && r.named:
				emit(v.Name + "=" + strings.Join(items, ","))
			case !v.Explode:
				emit(strings.Join(items, ","))
			case r.named:
				for i, it := range items {
					if list[i] == "" {
						emit(v.Name + r.ifEmpty)
					} else {
						emit(v.Name + "=" + it)
					}
				}
			default:
				for _, it := range items {
					emit(it)
				}
			}
		}
	}
	return nil
}

func prefixRunes(s string, n int) string {
	for pos := range s {
		if n--; n < 0 {
			return s[:pos]
		}
	}
	return s
}

// encodeValue percent-encodes s as UTF-8: everything but unreserved
// characters, or, with reserved, everything but unreserved and reserved
// characters and existing pct-encoded triplets.
func encodeValue(s string, reserved bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isUnreserved(c):
			b.WriteByte(c)
		case reserved && isReserved(c):
			b.WriteByte(c)
		case reserved && c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteString(s[i : i+3])
			i += 2
		default:
			b.WriteString(pctEncode(s[i : i+1]))
		}
	}
	return b.String()
}

func pctEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte('%')
		b.WriteByte(hex[s[i]>>4])
		b.WriteByte(hex[s[i]&15])
	}
	return b.String()
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func isReserved(c byte) bool { return strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0 }

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
