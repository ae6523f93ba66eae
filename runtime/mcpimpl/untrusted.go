package mcpimpl

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// Limits on template values a model (or anyone not trusted) sends, as
// CheckTemplateValues enforces them.
const (
	// MaxTemplateValue is the longest untrusted value, or list item, in
	// bytes before encoding.
	MaxTemplateValue = 1024
	// MaxTemplateURI is the longest URI untrusted values may expand to,
	// in bytes.
	MaxTemplateURI = 8192
)

// CheckTemplateValues checks values that someone the program does not
// trust (a language model, through a resource reader) chose for t, before
// anything is expanded or sent. The expansion percent-encodes values, but
// servers decode them again before their handlers see them (mcp-go
// does), some more than once, and some fold look-alike characters, so
// encoding alone does not keep a value inside its place in the URI. Each
// value, list item included, is read as a server could read it:
// percent-decoded (%XX, and the %uXXXX some servers read) until nothing
// changes, with Unicode format characters (zero-width characters, bidi
// controls, the BOM, the soft hyphen) removed, and the fullwidth forms of ASCII (U+FF01 to U+FF5E: U+FF0F is '/', U+FF0E '.')
// and the look-alikes of '/' (U+2044, U+2215, U+2571, U+29F8), of '\'
// (U+2216, U+2572, U+29F5, U+29F9, U+FE68) and of '.' (U+2024, U+2025 as
// "..", U+2026 as "...", U+3002, U+FE52, U+FF61) taken for those
// characters. For every operator it refuses:
//   - a value over MaxTemplateValue bytes;
//   - an empty value (also one empty once read so) where the operator is
//     not a named one (';', '?', '&' allow an empty value);
//   - bytes that are not UTF-8 once decoded (an overlong encoding of '.'
//     or '/' among them);
//   - a control character (C0, DEL, C1) or U+2028, U+2029;
//   - a backslash;
//   - a segment that is only dots (".", "..", "..." ...), trailing spaces
//     and a path parameter (";x") aside.
//
// A value of an operator that encodes '/' (all but '+' and '#') is one
// segment, so a '/' in it is refused too. A value of reserved expansion
// ('+', '#') may hold plain '/' separators: then each segment is checked
// on its own, a '/' spelt any other way (percent-encoded, a look-alike) is
// refused, and so is an empty segment inside the value ("a//b"), or a
// leading '/' where the template puts a '/' just before the value (not
// after "://", where it starts the path). A
// prefix modifier ({var:3}) is applied first: what is checked is what is
// sent. The expanded URI may be at most MaxTemplateURI bytes.
//
// Each problem is a Violation at the value's JSON Pointer ("/name", or
// "/name/i" for a list item); the URI's length is one at "". Values of
// other types are left to Expand.
func CheckTemplateValues(t *mcpruntime.URITemplate, vars mcpruntime.TemplateVars) []mcpruntime.Violation {
	var vs []mcpruntime.Violation
	uses := usesOf(t)
	checked := map[string]bool{}
	for _, u := range uses {
		if checked[u.Name] {
			continue
		}
		checked[u.Name] = true
		var mine []varUse
		for _, o := range uses {
			if o.Name == u.Name {
				mine = append(mine, o)
			}
		}
		ptr := "/" + strings.ReplaceAll(strings.ReplaceAll(u.Name, "~", "~0"), "/", "~1")
		switch x := vars[u.Name].(type) {
		case string:
			vs = appendProblem(vs, ptr, x, mine)
		case *string:
			if x != nil {
				vs = appendProblem(vs, ptr, *x, mine)
			}
		case []string:
			for i, it := range x {
				vs = appendProblem(vs, fmt.Sprintf("%s/%d", ptr, i), it, mine)
			}
		}
	}
	if len(vs) > 0 {
		return vs
	}
	if uri, err := t.Expand(vars); err == nil && len(uri) > MaxTemplateURI {
		vs = append(vs, mcpruntime.Violation{Message: fmt.Sprintf("the values expand to a URI of %d bytes, over the limit of %d bytes", len(uri), MaxTemplateURI)})
	}
	return vs
}

// varUse is one appearance of a variable in a template.
type varUse struct {
	mcpruntime.TemplateVar
	// afterSlash: the expression's first variable, right after a literal
	// ending in '/' (not in "://", where a leading '/' starts the path).
	afterSlash bool
}

// usesOf lists the appearances of t's variables, in order: the
// expressions of the (valid) template as written, each split at its
// commas as the parser splits them.
func usesOf(t *mcpruntime.URITemplate) []varUse {
	vars := t.Variables()
	out := make([]varUse, 0, len(vars))
	raw := t.String()
	for i := 0; i < len(raw) && len(out) < len(vars); i++ {
		if raw[i] != '{' {
			continue
		}
		end := strings.IndexByte(raw[i:], '}')
		n := strings.Count(raw[i:i+end], ",") + 1
		after := i > 0 && raw[i-1] == '/' && !strings.HasSuffix(raw[:i], "://")
		for j := 0; j < n && len(out) < len(vars); j++ {
			out = append(out, varUse{TemplateVar: vars[len(out)], afterSlash: after && j == 0})
		}
		i += end
	}
	return out
}

func appendProblem(vs []mcpruntime.Violation, ptr, s string, uses []varUse) []mcpruntime.Violation {
	if len(s) > MaxTemplateValue {
		return append(vs, mcpruntime.Violation{Pointer: ptr, Message: fmt.Sprintf("%d bytes, over the limit of %d bytes for a template value", len(s), MaxTemplateValue)})
	}
	for _, u := range uses {
		if msg := untrustedProblem(s, u); msg != "" {
			return append(vs, mcpruntime.Violation{Pointer: ptr, Message: msg})
		}
	}
	return vs
}

// untrustedProblem says what is wrong with s where u stands, or "".
func untrustedProblem(s string, u varUse) string {
	if u.Prefix > 0 {
		s = prefixRunes(s, u.Prefix)
	}
	named, reserved := strings.Contains(";?&", u.Operator) && u.Operator != "", u.Operator == "+" || u.Operator == "#"
	c := asServerReads(s)
	if !named && (s == "" || c == "") {
		return "must not be empty: it would leave a gap in the resource's path"
	}
	if msg := charProblem(c); msg != "" {
		return msg
	}
	if !reserved {
		if strings.Contains(c, "/") {
			return fmt.Sprintf("%s holds a '/' (plain, percent-encoded or a look-alike): the server decodes the value, so it would reach another path", short(s))
		}
		if dotSegment(c) {
			return fmt.Sprintf("%s would change the resource's path (a %q segment once decoded)", short(s), c)
		}
		return ""
	}
	segs := strings.Split(s, "/")
	for _, seg := range segs {
		cs := asServerReads(seg)
		switch {
		case strings.Contains(cs, "/"):
			return fmt.Sprintf("%s holds a '/' that is percent-encoded or a look-alike (in segment %s): only a plain '/' may separate segments", short(s), short(seg))
		case dotSegment(cs):
			return fmt.Sprintf("%s would change the resource's path (a %q segment once decoded)", short(s), cs)
		}
	}
	for i, seg := range segs {
		switch {
		case seg == "" && i > 0 && i < len(segs)-1:
			return fmt.Sprintf("%s has an empty segment (\"//\"), which some servers read as the root", short(s))
		case seg == "" && i == 0 && len(segs) > 1 && u.afterSlash:
			return fmt.Sprintf("%s starts with '/' right after a '/' of the template, which some servers read as the root", short(s))
		}
	}
	return ""
}

func prefixRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// charProblem looks for characters refused wherever they stand.
func charProblem(c string) string {
	if !utf8.ValidString(c) {
		return "holds bytes that are not UTF-8 once percent-decoded (an overlong or broken encoding)"
	}
	for _, r := range c {
		switch {
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			return fmt.Sprintf("holds a control or line-breaking character (U+%04X), raw or percent-encoded", r)
		case r == '\\':
			return "holds a backslash (plain, percent-encoded or a look-alike), a path separator on some servers"
		}
	}
	return ""
}

// dotSegment: only dots, once a path parameter (';' on, which some
// servers drop) and trailing spaces (which some file systems drop) are
// dropped.
func dotSegment(c string) bool {
	c, _, _ = strings.Cut(c, ";")
	c = strings.TrimRight(c, " ")
	return c != "" && strings.Trim(c, ".") == ""
}

// short quotes s for a message, cut to 64 bytes.
func short(s string) string {
	if len(s) > 64 {
		i := 64
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		return fmt.Sprintf("%q…", s[:i])
	}
	return fmt.Sprintf("%q", s)
}

// asServerReads is s as a server could read it: percent-decoded until
// nothing changes, format characters removed, look-alikes folded.
func asServerReads(s string) string {
	for range len(s) + 1 {
		next := pctDecode(foldLookalikes(dropFormat(s)))
		if next == s {
			break
		}
		s = next
	}
	return s
}

func pctDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+5 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') && isHex(s[i+2]) && isHex(s[i+3]) && isHex(s[i+4]) && isHex(s[i+5]) {
			r := rune(unhex(s[i+2]))<<12 | rune(unhex(s[i+3]))<<8 | rune(unhex(s[i+4]))<<4 | rune(unhex(s[i+5]))
			b.WriteRune(r)
			i += 5
			continue
		}
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// dropFormat removes Unicode format characters (Cf), keeping bytes that
// are not UTF-8 as they are.
func dropFormat(s string) string {
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if n > 1 && unicode.Is(unicode.Cf, r) || r == '\uFEFF' {
			changed = true
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	if !changed {
		return s
	}
	return b.String()
}

var lookalikes = strings.NewReplacer(
	"\u2044", "/", "\u2215", "/", "\u2571", "/", "\u29F8", "/",
	"\u2216", `\`, "\u2572", `\`, "\u29F5", `\`, "\u29F9", `\`, "\uFE68", `\`,
	"\u2024", ".", "\u2025", "..", "\u2026", "...", "\u3002", ".", "\uFE52", ".", "\uFF61", ".",
)

// foldLookalikes reads the look-alikes as the ASCII characters, and the
// fullwidth forms of ASCII (U+FF01 to U+FF5E) as ASCII, as NFKC does. Bytes
// that are not UTF-8 stay as they are.
func foldLookalikes(s string) string {
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r >= 0xFF01 && r <= 0xFF5E {
			b.WriteByte(byte(r - 0xFEE0))
			changed = true
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	if changed {
		s = b.String()
	}
	return lookalikes.Replace(s)
}
