package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Error is a problem at a place in an input file. It prints as
// "file:line:col: /json/pointer: message"; parts that are unknown are left out.
type Error struct {
	File    string
	Line    int // 1-based; 0 if unknown
	Col     int // 1-based, in bytes; 0 if unknown
	Pointer string
	Err     error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
		}
		b.WriteString(": ")
	}
	if e.Pointer != "" {
		b.WriteString(e.Pointer)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// LineCol converts a byte offset in data into a 1-based line and column.
func LineCol(data []byte, off int) (line, col int) {
	if off < 0 {
		off = 0
	}
	if off > len(data) {
		off = len(data)
	}
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = off - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// Index maps the JSON Pointer of every value in a JSON document to the byte
// offset where that value starts. It is how errors found in decoded data are
// traced back to a line and column.
type Index struct {
	data []byte
	once sync.Once
	offs map[string]int
}

// NewIndex indexes data, which must be valid JSON.
func NewIndex(data []byte) (*Index, error) {
	ix := &Index{data: data}
	var err error
	ix.once.Do(func() { err = ix.build() })
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// lazyIndex indexes data, which the caller has already decoded as JSON,
// when a position is first asked for: most inputs have no error to
// position, and the index of a large one is most of the memory and much
// of the time its parse takes.
func lazyIndex(data []byte) *Index { return &Index{data: data} }

func (ix *Index) build() error {
	ix.offs = map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(ix.data))
	dec.UseNumber()
	return ix.value(dec, "")
}

// valueStart returns the offset of the next value after the decoder's
// position, skipping white space and the separators ':' and ','.
func (ix *Index) valueStart(dec *json.Decoder) int {
	off := int(dec.InputOffset())
	for off < len(ix.data) {
		switch ix.data[off] {
		case ' ', '\t', '\r', '\n', ':', ',':
			off++
			continue
		}
		break
	}
	return off
}

func (ix *Index) value(dec *json.Decoder, ptr string) error {
	ix.offs[ptr] = ix.valueStart(dec)
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			if err := ix.value(dec, ptr+"/"+EscapePointer(k)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := ix.value(dec, ptr+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// Offset returns the byte offset of the value at ptr, or of its nearest
// indexed ancestor, and whether ptr itself was found.
func (ix *Index) Offset(ptr string) (int, bool) {
	if ix == nil {
		return 0, false
	}
	// Valid JSON indexes without error; were it not, positions would
	// fall back to the document's start, which is still right.
	ix.once.Do(func() { _ = ix.build() })
	for p := ptr; ; {
		if off, ok := ix.offs[p]; ok {
			return off, p == ptr
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return 0, false
		}
		p = p[:i]
	}
}

// Errorf builds an Error for the value at ptr in file.
func (ix *Index) Errorf(file, ptr, format string, args ...any) *Error {
	e := &Error{File: file, Pointer: ptr, Err: fmt.Errorf(format, args...)}
	if ix != nil {
		if off, _ := ix.Offset(ptr); true {
			e.Line, e.Col = LineCol(ix.data, off)
		}
	}
	return e
}

// Built once: a Replacer's tables are costly and these run for every
// schema node the generator visits.
var (
	pointerEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
	pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// EscapePointer escapes one JSON Pointer reference token (RFC 6901).
func EscapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return pointerEscaper.Replace(s)
}

// UnescapePointer reverses EscapePointer.
func UnescapePointer(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	return pointerUnescaper.Replace(s)
}

// syntaxError turns a JSON decoding error into a positioned Error.
func syntaxError(file string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	e := &Error{File: file, Err: err}
	switch {
	case errors.As(err, &se):
		// Offset counts the bytes read, including the offending one:
		// point at that byte rather than past it.
		off := int(se.Offset)
		if off > 0 && !strings.HasPrefix(se.Error(), "unexpected end") {
			off--
		}
		e.Line, e.Col = LineCol(data, off)
		e.Err = fmt.Errorf("invalid JSON: %v", se)
	case errors.As(err, &te):
		e.Line, e.Col = LineCol(data, int(te.Offset))
		if te.Field != "" {
			e.Pointer = "/" + strings.ReplaceAll(te.Field, ".", "/")
		}
		e.Err = fmt.Errorf("expected %s, found JSON %s", te.Type, te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		e.Line, e.Col = LineCol(data, len(data))
		e.Err = errors.New("invalid JSON: unexpected end of input")
	}
	return e
}
