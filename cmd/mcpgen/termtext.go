package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Servers control much of what mcpgen prints: tool results and errors,
// names and descriptions, elicitation questions, progress and log
// messages. A terminal acts on control characters, so a server could clear
// the screen, retitle the window, hide text (conceal), overwrite a line
// with \r or reorder it with bidirectional overrides, and so hide or fake
// a question. Everything mcpgen writes goes through termWriter, and text
// placed inside one line through oneLine, which show such characters
// instead of passing them on:
//
//   - C0 controls (U+0000–U+001F) but newline and tab (a carriage return
//     right before a newline is dropped: the newline ends the line anyway);
//     DEL (U+007F); C1 controls
//     (U+0080–U+009F); the bidirectional marks, embeddings, overrides and
//     isolates (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and
//     the line and paragraph separators (U+2028, U+2029) are written as \u
//     and four hex digits: ESC as \u001b, so an escape sequence shows as
//     text and does nothing;
//   - bytes that are not UTF-8 are written as U+FFFD.
//
// \uXXXX is also how JSON escapes the same character, so JSON mcpgen
// prints stays valid and means the same.

// neutral reports whether r is shown escaped.
func neutral(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// termText returns s safe for a terminal; lines keeps newlines and tabs
// (and \r before \n), otherwise they are escaped too.
func termText(s string, lines bool) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || r == '\r' || neutral(r) && !(lines && kept(s, i, r)) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case lines && r == '\r' && kept(s, i, r):
			// \r\n: the \n alone
		case neutral(r) && !(lines && kept(s, i, r)):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// kept reports whether the control r at s[i] is one a multi-line text
// keeps.
func kept(s string, i int, r rune) bool {
	return r == '\n' || r == '\t' || r == '\r' && i+1 < len(s) && s[i+1] == '\n'
}

// oneLine is text from a server placed inside one line of mcpgen's output:
// a newline or tab in it is escaped too, so it cannot start a line of its
// own that looks like mcpgen's.
func oneLine(s string) string { return termText(s, false) }

// termWriter passes on what is written to it through termText (newlines
// kept). A UTF-8 sequence, or a \r, cut by the end of one Write waits for
// the next; Flush writes what is left. It is safe for concurrent use
// (handlers print from the connection's goroutines).
type termWriter struct {
	mu    sync.Mutex
	w     io.Writer
	carry []byte
}

func (t *termWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	buf := append(t.carry, p...)
	cut := len(buf)
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	if cut > 0 && cut == len(buf) && buf[cut-1] == '\r' {
		cut-- // a \n may follow
	}
	out := termText(string(buf[:cut]), true)
	t.carry = append(t.carry[:0:0], buf[cut:]...)
	if _, err := io.WriteString(t.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes an incomplete sequence left from the last Write.
func (t *termWriter) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.carry) == 0 {
		return nil
	}
	out := termText(string(t.carry), false)
	t.carry = nil
	_, err := io.WriteString(t.w, out)
	return err
}
