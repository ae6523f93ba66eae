// Package ident turns JSON names (tool names, property names, enum values)
// into exported Go identifiers.
package ident

import (
	"fmt"
	"go/token"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// initialisms are written in upper case, as Go style asks (userId → UserID).
var initialisms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "CPU": true, "CSS": true, "CSV": true, "DNS": true, "EOF": true,
	"GUID": true, "HTML": true, "HTTP": true, "HTTPS": true, "ID": true, "IP": true, "JSON": true, "JWT": true,
	"LHS": true, "MCP": true, "QPS": true, "RAM": true, "RHS": true, "RPC": true, "SHA": true, "SLA": true,
	"SMTP": true, "SQL": true, "SSH": true, "SSO": true, "TCP": true, "TLS": true, "TTL": true, "UDP": true,
	"UI": true, "UID": true, "URI": true, "URL": true, "UTF8": true, "UUID": true, "VM": true, "XML": true,
	"XMPP": true, "XSRF": true, "XSS": true, "YAML": true,
}

// Words splits s into words: runs of letters and digits, broken further
// where a lower-case letter or digit is followed by an upper-case one
// ("userId") and before the last capital of a capital run that a lower-case
// letter follows ("HTTPServer"). Everything else separates words.
func Words(s string) []string {
	var words []string
	rs := []rune(s)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, string(rs[start:end]))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			flush(i)
			start = i
		case unicode.IsLower(r) && unicode.IsUpper(prev) && i-1 > start && unicode.IsUpper(rs[i-2]):
			if r == 's' && (i+1 == len(rs) || !unicode.IsLower(rs[i+1])) && initialisms[string(rs[start:i])] {
				continue // a plural initialism: URLs, IDs
			}
			flush(i - 1)
			start = i - 1
		}
	}
	flush(len(rs))
	return words
}

// word capitalises one word, upper-casing initialisms (also plural: IDs).
func word(w string) string {
	up := strings.ToUpper(w)
	if initialisms[up] {
		return up
	}
	if n := len(up); n > 2 && strings.HasSuffix(w, "s") && initialisms[up[:n-1]] {
		return up[:n-1] + "s"
	}
	r, size := utf8.DecodeRuneInString(w)
	return string(unicode.ToTitle(r)) + strings.ToLower(w[size:])
}

// symbols spell the ASCII symbols that lead or end a name, so that $type
// and type, or +1 and -1, get different identifiers.
var symbols = map[rune]string{
	'!': "Bang", '"': "Quote", '#': "Hash", '$': "Dollar", '%': "Percent", '&': "And", '\'': "Apos",
	'(': "LParen", ')': "RParen", '*': "Star", '+': "Plus", ',': "Comma", '-': "Dash", '.': "Dot",
	'/': "Slash", ':': "Colon", ';': "Semi", '<': "Lt", '=': "Eq", '>': "Gt", '?': "Question", '@': "At",
	'[': "LBracket", '\\': "Backslash", ']': "RBracket", '^': "Caret", '_': "Underscore", '`': "Backtick",
	'{': "LBrace", '|': "Pipe", '}': "RBrace", '~': "Tilde",
}

// spell writes the symbols of rs. Spaces spell nothing; an underscore
// only when the name has nothing else (_meta is Meta); a dash before a
// digit is Minus (-1 is Minus1); any other rune is U and its code point.
func spell(b *strings.Builder, rs []rune, next rune, alone bool) {
	for i, r := range rs {
		switch {
		case unicode.IsSpace(r), r == '_' && !alone:
		case r == '-' && (i+1 < len(rs) && unicode.IsDigit(rs[i+1]) || i+1 == len(rs) && unicode.IsDigit(next)):
			b.WriteString("Minus")
		case symbols[r] != "":
			b.WriteString(symbols[r])
		default:
			fmt.Fprintf(b, "U%04X", r)
		}
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Ident returns the exported Go identifier for s, or "" when s has no
// letters, digits or symbols. Words are capitalised and joined, with
// initialisms upper-cased; symbols between words separate them, while
// symbols before the first word or after the last are spelled ($type →
// DollarType, @context → AtContext, - → Dash, +1 → Plus1, -1 → Minus1,
// c++ → CPlusPlus; see symbols and spell). A result that would not start
// with an upper-case letter (a digit, or a letter without case) gets an X
// in front.
func Ident(s string) string {
	rs := []rune(s)
	first := slices.IndexFunc(rs, isWordRune)
	var b strings.Builder
	if first < 0 {
		spell(&b, rs, 0, true)
		return b.String()
	}
	last := len(rs) - 1
	for !isWordRune(rs[last]) {
		last--
	}
	spell(&b, rs[:first], rs[first], false)
	for _, w := range Words(string(rs[first : last+1])) {
		b.WriteString(word(w))
	}
	spell(&b, rs[last+1:], 0, false)
	id := b.String()
	if id == "" {
		return ""
	}
	if r, _ := utf8.DecodeRuneInString(id); !unicode.IsUpper(r) {
		id = "X" + id
	}
	return id
}

// Valid reports whether s is an exported Go identifier (for pinned names).
func Valid(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if i == 0 && !unicode.IsUpper(r) {
			return false
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
			return false
		}
	}
	return true
}

// ValidPackage reports whether s can be a Go package name: an identifier
// that is not a keyword or the blank identifier.
func ValidPackage(s string) bool {
	if s == "" || s == "_" || token.IsKeyword(s) || !token.IsIdentifier(s) {
		return false
	}
	return true
}
