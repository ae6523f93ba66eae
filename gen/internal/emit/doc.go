package emit

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Doc comments. What a schema or server describes is Markdown, more or
// less; a Go doc comment has rules of its own (go/doc/comment), and gofmt
// rewrites a declaration's comment by them. docText turns text into the
// lines of a comment that go doc reads as the Markdown meant, already in
// the form gofmt gives it, so that what is generated is what is tested:
//
//   - paragraphs keep their line breaks; a line longer than the width is
//     broken between words (a word longer than the width stays whole);
//   - a Markdown heading (# Title) is a paragraph of its title, and a
//     one-line paragraph that go doc would take for a heading (a capital,
//     no punctuation, between paragraphs) joins the paragraph after it:
//     go doc headings do not belong in a type's comment;
//   - list items (-, *, + or 1. at any indentation) are go doc's list
//     items ("  - item", continuation lines indented by four spaces),
//     nested lists flattened;
//   - fenced code (```) and lines indented by four spaces or a tab after
//     a blank line are a code block (indented by a tab), kept as written;
//   - tabs elsewhere are spaces, control characters are dropped.
//
// The generator's own text goes through the same rules.

// docWidth is the width of a comment's text after "// " in a top-level
// declaration's comment, so that lines stay within 80 columns;
// fieldDocWidth allows for the tab before a struct field's comment.
const (
	docWidth      = 77
	fieldDocWidth = 73
)

type docBlock struct {
	kind  byte // 'p' paragraph, 'l' list item, 'c' code
	lines []string
	num   string // a numbered item's marker ("1."), "" for a bullet
}

var (
	listMarkerRE = regexp.MustCompile(`^([-*+•]|\d{1,9}[.)])[ \t]+`)
	headingRE    = regexp.MustCompile(`^#{1,6}[ \t]+`)
)

// listMarker and heading match a line's start, the regular expressions run
// only for lines that can (most cannot: comments are written for every
// declaration).
var (
	listMarker = prefilter{listMarkerRE, "-*+•0123456789"}
	heading    = prefilter{headingRE, "#"}
)

type prefilter struct {
	re    *regexp.Regexp
	first string // the bytes a match can start with
}

func (f prefilter) MatchString(s string) bool {
	return s != "" && strings.IndexByte(f.first, s[0]) >= 0 && f.re.MatchString(s)
}

func (f prefilter) FindString(s string) string {
	if !f.MatchString(s) {
		return ""
	}
	return f.re.FindString(s)
}

func (f prefilter) ReplaceAllString(s, repl string) string {
	if !f.MatchString(s) {
		return s
	}
	return f.re.ReplaceAllString(s, repl)
}

// docText returns the comment lines (without "//") for text, at most
// width wide where words allow.
func docText(text string, width int) []string {
	blocks := parseDoc(text)
	// go doc has no numbered list right after a bullet list (or the other
	// way round): it reads the second as the first's last item going on.
	// A run of items of both kinds is a bullet list, numbers kept as text.
	for i := 0; i < len(blocks); {
		j := i
		mixed := false
		for j < len(blocks) && blocks[j].kind == 'l' {
			mixed = mixed || (blocks[j].num == "") != (blocks[i].num == "")
			j++
		}
		for k := i; mixed && k < j; k++ {
			if blocks[k].num != "" {
				blocks[k].lines[0] = blocks[k].num + " " + blocks[k].lines[0]
				blocks[k].num = ""
			}
		}
		i = max(j, i+1)
	}
	var out []string
	for i, b := range blocks {
		if i > 0 {
			prev := blocks[i-1]
			// A blank line between blocks, except between items of one
			// list and after a paragraph that joins the next (see above).
			if !(b.kind == 'l' && prev.kind == 'l') && !(prev.kind == 'p' && b.kind == 'p' && joins(blocks, i-1)) {
				out = append(out, "")
			}
		}
		switch b.kind {
		case 'p':
			for _, l := range b.lines {
				out = append(out, wrapLine(l, width, "", "")...)
			}
		case 'l':
			first, rest := "  - ", "    "
			if b.num != "" {
				first, rest = " "+b.num+" ", "    "
			}
			out = append(out, wrapLine(strings.Join(b.lines, " "), width, first, rest)...)
		case 'c':
			for _, l := range b.lines {
				if strings.TrimSpace(l) == "" {
					out = append(out, "")
				} else {
					out = append(out, "\t"+l)
				}
			}
		}
	}
	return out
}

// joins reports whether paragraph i is one line that go doc would take for
// a heading, and so is written with the paragraph after it.
func joins(blocks []docBlock, i int) bool {
	b := blocks[i]
	return i > 0 && i+1 < len(blocks) && b.kind == 'p' && blocks[i+1].kind == 'p' && len(b.lines) == 1 && headingLike(b.lines[0])
}

// headingLike reports whether line has the shape of an old-style go doc
// heading (go/doc/comment's isOldHeading).
func headingLike(line string) bool {
	r, _ := utf8.DecodeRuneInString(line)
	if !unicode.IsLetter(r) || !unicode.IsUpper(r) {
		return false
	}
	r, _ = utf8.DecodeLastRuneInString(line)
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return false
	}
	if strings.ContainsAny(line, ";:!?+*/=[]{}_^°&§~%#@<\">\\") {
		return false
	}
	for b := line; ; {
		var ok bool
		if _, b, ok = strings.Cut(b, "'"); !ok {
			break
		}
		if b != "s" && !strings.HasPrefix(b, "s ") {
			return false
		}
	}
	for b := line; ; {
		var ok bool
		if _, b, ok = strings.Cut(b, "."); !ok {
			break
		}
		if b == "" || strings.HasPrefix(b, " ") {
			return false
		}
	}
	return true
}

// parseDoc splits text into paragraphs, list items and code blocks.
func parseDoc(text string) []docBlock {
	var blocks []docBlock
	var cur *docBlock
	flush := func() {
		if cur != nil {
			blocks = append(blocks, *cur)
			cur = nil
		}
	}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		raw := clean(lines[i])
		trimmed := strings.TrimSpace(raw)
		indent := len(raw) - len(strings.TrimLeft(raw, " "))
		switch {
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence := trimmed[:3]
			flush()
			code := docBlock{kind: 'c'}
			for i++; i < len(lines); i++ {
				l := strings.TrimRight(strings.ReplaceAll(lines[i], "\r", ""), " \t")
				if strings.HasPrefix(strings.TrimSpace(l), fence) {
					break
				}
				code.lines = append(code.lines, strings.Map(dropControl, l))
			}
			code.lines = trimBlank(code.lines)
			if len(code.lines) > 0 {
				blocks = append(blocks, code)
			}
		case trimmed == "":
			flush()
		case cur != nil && cur.kind == 'c' && indent >= 4:
			cur.lines = append(cur.lines, raw[4:])
		case cur == nil && indent >= 4 && (i == 0 || strings.TrimSpace(clean(lines[i-1])) == "") && !listMarker.MatchString(trimmed):
			// Indented after a blank line: Markdown's code block.
			cur = &docBlock{kind: 'c', lines: []string{raw[4:]}}
		case listMarker.MatchString(trimmed):
			flush()
			m := listMarker.FindString(trimmed)
			b := docBlock{kind: 'l', lines: []string{strings.TrimSpace(trimmed[len(m):])}}
			if n := strings.TrimSpace(m); n[0] >= '0' && n[0] <= '9' {
				b.num = n[:len(n)-1] + "."
			}
			cur = &b
		case heading.MatchString(trimmed):
			flush()
			if t := strings.TrimSpace(strings.TrimRight(heading.ReplaceAllString(trimmed, ""), "# ")); t != "" {
				blocks = append(blocks, docBlock{kind: 'p', lines: []string{t}})
			}
		case cur != nil && cur.kind == 'l':
			cur.lines = append(cur.lines, trimmed)
		case cur != nil && cur.kind == 'p':
			cur.lines = append(cur.lines, trimmed)
		default:
			flush()
			cur = &docBlock{kind: 'p', lines: []string{trimmed}}
		}
	}
	flush()
	return blocks
}

// clean makes tabs spaces (a leading tab four) and drops control
// characters and line separators.
func clean(s string) string {
	if isPlain(s) {
		return strings.TrimRight(s, " ")
	}
	s = strings.ReplaceAll(s, "\r", "")
	lead := len(s) - len(strings.TrimLeft(s, " \t"))
	s = strings.ReplaceAll(s[:lead], "\t", "    ") + strings.ReplaceAll(s[lead:], "\t", " ")
	return strings.TrimRightFunc(strings.Map(dropControl, s), unicode.IsSpace)
}

// isPlain reports whether s is printable ASCII without tabs, which clean
// leaves as it is.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' {
			return false
		}
	}
	return true
}

func dropControl(r rune) rune {
	if r != '\t' && unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
		return -1
	}
	return r
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// wrapLine breaks s between words into lines of at most width runes, the
// first starting with first and the others with rest. A line never starts
// with what would make it something else to go doc or Markdown (a list
// marker, a heading's #): such a word stays on the line before.
func wrapLine(s string, width int, first, rest string) []string {
	if len(first)+len(s) <= width && s != "" && s[0] != ' ' && s[len(s)-1] != ' ' && !strings.Contains(s, "  ") {
		return []string{first + s} // fits, as most lines do (bytes are at least runes)
	}
	words := strings.Fields(s)
	if len(words) == 0 {
		return []string{strings.TrimRight(first, " ")}
	}
	var out []string
	var line strings.Builder
	line.WriteString(first)
	line.WriteString(words[0])
	n := utf8.RuneCountInString(first) + utf8.RuneCountInString(words[0])
	for _, w := range words[1:] {
		wn := utf8.RuneCountInString(w)
		if n+1+wn > width && !startsBlock(w) {
			out = append(out, line.String())
			line.Reset()
			line.WriteString(rest)
			line.WriteString(w)
			n = utf8.RuneCountInString(rest) + wn
			continue
		}
		line.WriteByte(' ')
		line.WriteString(w)
		n += 1 + wn
	}
	return append(out, line.String())
}

// startsBlock reports whether a line starting with word w would start a
// list item or a heading.
func startsBlock(w string) bool {
	switch {
	case w == "":
		return false
	case w[0] == '#':
		return strings.Trim(w, "#") == ""
	case strings.IndexByte(listMarker.first, w[0]) < 0:
		return false
	}
	return listMarker.MatchString(w + " ")
}
