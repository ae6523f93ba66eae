package mcpruntime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpgen/mcpgen/runtime/internal/jsonscan"
	"io"
	"strconv"
	"strings"
)

// decodeJSON decodes data into dst and reports every problem as a
// violation. Unknown members are rejected when strict (only where dst's type
// has no UnmarshalJSON of its own: such types decide for themselves).
// encoding/json stops reporting after the first decoding problem, so at most
// one decoding violation comes back.
//
// Generated types decode themselves (their UnmarshalJSON is the strict
// single-pass decoder, reporting every violation), so they are called
// directly: going through json.Decoder would scan the arguments twice more
// for nothing. The encoding/json path stays for hand-written types (Go
// tools' inputs), which have no decoder of their own.
func decodeJSON(data []byte, dst any, strict bool) []Violation {
	if u, ok := dst.(json.Unmarshaler); ok && jsonscan.Valid(data) {
		if err := u.UnmarshalJSON(data); err != nil {
			return violationsOf(err, data)
		}
		return nil
	}
	if !json.Valid(data) {
		var se *json.SyntaxError
		if err := json.Unmarshal(data, new(any)); errors.As(err, &se) {
			return []Violation{{Message: fmt.Sprintf("not valid JSON (at byte %d): %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))}}
		}
		return []Violation{{Message: "not valid JSON"}}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if strict {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(dst)
	if err == nil || err == io.EOF {
		return nil
	}
	return violationsOf(err, data)
}

// violationsOf turns a decoding or validation error into violations with
// JSON Pointers into data where they can be found.
func violationsOf(err error, data []byte) []Violation {
	var ve *ValidationError
	if errors.As(err, &ve) && len(ve.Violations) > 0 {
		return ve.Violations
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		ptr := pointerAt(data, te.Offset)
		if ptr == "" && te.Field != "" && data != nil {
			ptr = "/" + strings.ReplaceAll(te.Field, ".", "/")
		}
		return []Violation{{Pointer: ptr, Message: fmt.Sprintf("expected %s, got JSON %s", goTypeWord(te.Type.String()), te.Value)}}
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if name, ok := strings.CutPrefix(msg, "unknown field "); ok {
		if key, uerr := strconv.Unquote(name); uerr == nil {
			return []Violation{{Pointer: pointerOfKey(data, key), Message: "unknown member (not in the schema)"}}
		}
	}
	return []Violation{{Message: msg}}
}

// goTypeWord names a Go type the way a JSON Schema reader would.
func goTypeWord(t string) string {
	t = t[strings.LastIndex(t, ".")+1:]
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map["):
		return "an object"
	default:
		return "a value of type " + t
	}
}

// span is one JSON value found while walking a document.
type span struct {
	ptr        string
	depth      int
	start, end int64
}

// walkValues calls fn for every value in data, containers after their
// contents. It stops quietly at the first syntax error.
func walkValues(data []byte, fn func(span)) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		arr     bool
		idx     int
		key     string
		wantKey bool
		ptr     string
		start   int64
	}
	var stack []*frame
	next := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.arr {
			p := f.ptr + "/" + strconv.Itoa(f.idx)
			f.idx++
			return p
		}
		f.wantKey = true
		return f.ptr + "/" + escapePointer(f.key)
	}
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return
		}
		after := dec.InputOffset()
		if n := len(stack); n > 0 && !stack[n-1].arr && stack[n-1].wantKey {
			if k, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].wantKey = k, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			ptr := next()
			stack = append(stack, &frame{arr: tok == json.Delim('['), wantKey: tok == json.Delim('{'), ptr: ptr, start: before})
		case json.Delim('}'), json.Delim(']'):
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			fn(span{ptr: f.ptr, depth: len(stack), start: f.start, end: after})
		default:
			depth := len(stack)
			fn(span{ptr: next(), depth: depth, start: before, end: after})
		}
	}
}

// pointerAt returns the pointer of the innermost value around byte offset
// off (encoding/json reports the offset just past the offending value).
func pointerAt(data []byte, off int64) string {
	best, bestDepth := "", -1
	walkValues(data, func(s span) {
		if s.start < off && off <= s.end && s.depth > bestDepth {
			best, bestDepth = s.ptr, s.depth
		}
	})
	return best
}

// pointerOfKey returns the pointer of the first member named key.
func pointerOfKey(data []byte, key string) string {
	want := "/" + escapePointer(key)
	found := ""
	walkValues(data, func(s span) {
		if found == "" && strings.HasSuffix(s.ptr, want) {
			found = s.ptr
		}
	})
	return found
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
