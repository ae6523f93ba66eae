// Package callresult reads a tools/call result in one pass with the
// runtime's strict scanner, into the runtime's own Result types.
//
// It takes only the well-trodden path: whenever encoding/json might decode
// the input differently, or fail on it, Parse reports false and the runtime
// decodes that input with encoding/json instead, which also gives the error
// its message. So a malformed result, a member name that encoding/json
// matches case-insensitively ("Content", or one with a Kelvin sign), a
// duplicate member, or a member of an unexpected type all take the
// encoding/json path, and a result Parse accepts decodes exactly as
// encoding/json decodes it (the runtime's differential tests check both).
package callresult

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/mcpgen/mcpgen/runtime/internal/jsonscan"
)

// Block is the runtime's Content type, field for field: Parse fills values
// of that type through a conversion, so the two cannot drift apart without
// the runtime failing to compile.
type Block[R any] = struct {
	Type        string
	Text        string
	Data        string
	MIMEType    string
	URI         string
	Name        string
	Title       string
	Description string
	Size        *int64
	Resource    *R
	Annotations json.RawMessage
	Meta        json.RawMessage
	Raw         json.RawMessage
}

// Resource is the runtime's ResourceContents type, field for field.
type Resource = struct {
	URI      string
	MIMEType string
	Text     string
	Blob     string
	IsBlob   bool
	Meta     json.RawMessage
	Raw      json.RawMessage
}

// Result is a parsed tools/call result with content blocks of type C.
type Result[C any] struct {
	Content           []C
	StructuredContent json.RawMessage
	Meta              json.RawMessage
	IsError           bool
}

// The members each level reads, as encoding/json names them (the runtime's
// wire structs).
var (
	resultNames   = []string{"content", "structuredContent", "_meta", "isError"}
	blockNames    = []string{"type", "text", "data", "mimeType", "uri", "name", "title", "description", "size", "resource", "annotations", "_meta"}
	resourceNames = []string{"uri", "mimeType", "text", "blob", "_meta"}
)

// Indexes into blockNames.
const (
	bType = iota
	bText
	bData
	bMIMEType
	bURI
	bName
	bTitle
	bDescription
	bSize
	bResource
	bAnnotations
	bMeta
)

// Parse reads the tools/call result data (exactly one JSON object, with
// optional surrounding whitespace) and reports whether it took the path
// encoding/json would take to the same Result. Every raw member of the
// result aliases data, capped so that an append cannot overwrite its
// neighbour; the caller owns data and must not change it afterwards.
func Parse[C ~Block[R], R ~Resource](data []byte) (Result[C], bool) {
	var (
		res  Result[C]
		seen [4]bool
		// The first blocks are collected here and copied to a slice of
		// the right length: most results have one or two.
		first [4]C
		n     int
		more  []C
	)
	i := jsonscan.SkipSpace(data, 0)
	end, ok := members(data, i, func(name []byte, j int) (int, bool) {
		k, ok := field(name, resultNames)
		if !ok || k >= 0 && seen[k] {
			return j, false
		}
		if k < 0 {
			return jsonscan.Value(data, j, 1)
		}
		seen[k] = true
		switch k {
		case 0:
			return elements(data, j, func(j int) (int, bool) {
				var c C
				e, ok := block(data, j, &c)
				if n < len(first) {
					first[n] = c
				} else {
					more = append(more, c)
				}
				n++
				return e, ok
			})
		case 3:
			switch {
			case lit(data, j, "true"):
				res.IsError = true
				return j + 4, true
			case lit(data, j, "false"):
				return j + 5, true
			case lit(data, j, "null"):
				return j + 4, true
			}
			return j, false
		}
		e, ok := jsonscan.Value(data, j, 1)
		if k == 1 {
			res.StructuredContent = data[j:e:e]
		} else {
			res.Meta = data[j:e:e]
		}
		return e, ok
	})
	if !ok || !seen[0] || jsonscan.SkipSpace(data, end) != len(data) {
		return Result[C]{}, false
	}
	if n > 0 {
		res.Content = make([]C, 0, n)
		res.Content = append(res.Content, first[:min(n, len(first))]...)
		res.Content = append(res.Content, more...)
	}
	return res, true
}

// block reads the content block at data[i] into dst.
func block[C ~Block[R], R ~Resource](data []byte, i int, dst *C) (int, bool) {
	var vals [bMeta + 1]json.RawMessage
	var plain [len(vals)]bool
	end, ok := collect(data, i, 3, blockNames, vals[:], plain[:])
	if !ok || vals[bType] == nil || vals[bType][0] != '"' {
		return end, false
	}
	b := Block[R]{Type: kind(vals[bType], plain[bType]), Raw: data[i:end:end]}
	switch b.Type {
	case "text", "image", "audio", "resource_link", "resource":
	default:
		// A kind this package does not know: encoding/json reads only its
		// type, and Raw keeps the rest.
		*dst = C(b)
		return end, true
	}
	for k, f := range [...]*string{bText: &b.Text, bData: &b.Data, bMIMEType: &b.MIMEType, bURI: &b.URI, bName: &b.Name, bTitle: &b.Title, bDescription: &b.Description} {
		if f != nil {
			if *f, ok = str(vals[k], plain[k]); !ok {
				return end, false
			}
		}
	}
	if v := vals[bSize]; v != nil && !isNull(v) {
		// As encoding/json reads an int64: no fraction, no exponent.
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return end, false
		}
		b.Size = &n
	}
	b.Annotations, b.Meta = vals[bAnnotations], vals[bMeta]
	if b.Type == "resource" {
		// encoding/json reads the resource of this kind only, and an
		// absent one is an error.
		r, ok := resource[R](vals[bResource])
		if !ok {
			return end, false
		}
		b.Resource = r
	}
	*dst = C(b)
	return end, true
}

// resource reads the resource of an embedded resource block.
func resource[R ~Resource](data json.RawMessage) (*R, bool) {
	if len(data) == 0 || data[0] != '{' {
		return nil, false
	}
	var vals [5]json.RawMessage // resourceNames
	var plain [len(vals)]bool
	if _, ok := collect(data, 0, 4, resourceNames, vals[:], plain[:]); !ok {
		return nil, false
	}
	rc := Resource{Meta: vals[4], Raw: data}
	var ok bool
	if rc.URI, ok = str(vals[0], plain[0]); !ok {
		return nil, false
	}
	if rc.MIMEType, ok = str(vals[1], plain[1]); !ok {
		return nil, false
	}
	// Text and blob are pointers in the wire struct (null is absence), and
	// both must be strings when present even though blob wins.
	text, tok := str(vals[2], plain[2])
	blob, bok := str(vals[3], plain[3])
	if !tok || !bok {
		return nil, false
	}
	switch {
	case vals[3] != nil && !isNull(vals[3]):
		rc.Blob, rc.IsBlob = blob, true
	default:
		rc.Text = text
	}
	r := R(rc)
	return &r, true
}

// collect walks the object at data[i], whose member values are at nesting
// depth depth, keeping in vals the value of each member named in names
// (and in plain whether a string value is free of escapes). A duplicate of
// one of them ends the walk with false: encoding/json's handling of those
// depends on the field's type, and no server sends them.
func collect(data []byte, i, depth int, names []string, vals []json.RawMessage, plain []bool) (int, bool) {
	return members(data, i, func(name []byte, j int) (int, bool) {
		k, ok := field(name, names)
		if !ok || k >= 0 && vals[k] != nil {
			return j, false
		}
		var e int
		if j < len(data) && data[j] == '"' {
			var p bool
			e, p, ok = jsonscan.String(data, j)
			if k >= 0 {
				plain[k] = p
			}
		} else {
			e, ok = jsonscan.Value(data, j, depth)
		}
		if ok && k >= 0 {
			vals[k] = data[j:e:e]
		}
		return e, ok
	})
}

// members walks the JSON object at data[i], calling member with each
// member's name and the offset of its value; member returns the offset
// just past the value. members returns the offset just past the object.
func members(data []byte, i int, member func(name []byte, j int) (int, bool)) (int, bool) {
	if i >= len(data) || data[i] != '{' {
		return i, false
	}
	i = jsonscan.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, false
		}
		end, plain, ok := jsonscan.String(data, i)
		if !ok {
			return i, false
		}
		name, ok := jsonscan.UnquoteBytes(data[i:end], plain)
		if !ok {
			return i, false
		}
		i = jsonscan.SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		if i, ok = member(name, jsonscan.SkipSpace(data, i+1)); !ok {
			return i, false
		}
		i = jsonscan.SkipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = jsonscan.SkipSpace(data, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// elements walks the JSON array at data[i], calling elem with the offset
// of each element; elem returns the offset just past it.
func elements(data []byte, i int, elem func(j int) (int, bool)) (int, bool) {
	if i >= len(data) || data[i] != '[' {
		return i, false
	}
	i = jsonscan.SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = elem(i); !ok {
			return i, false
		}
		i = jsonscan.SkipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = jsonscan.SkipSpace(data, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// field returns the index of name in names, or -1 for a member encoding/json
// ignores. It returns false for a name encoding/json would match to one of
// names without being it: encoding/json also matches case-insensitively,
// folding some non-ASCII letters to ASCII ones (the Kelvin sign to k), so
// any such name, and any non-ASCII name, is left to encoding/json.
func field(name []byte, names []string) (int, bool) {
	for k, n := range names {
		if string(name) == n {
			return k, true
		}
	}
	for _, c := range name {
		if c >= utf8.RuneSelf {
			return -1, false
		}
	}
	for _, n := range names {
		if asciiEqualFold(name, n) {
			return -1, false
		}
	}
	return -1, true
}

func asciiEqualFold(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// str converts the value of a string member: absent and null are "" (a
// JSON null leaves a Go string alone), anything but a string is not
// taken.
func str(v json.RawMessage, plain bool) (string, bool) {
	if v == nil || isNull(v) {
		return "", true
	}
	if v[0] != '"' {
		return "", false
	}
	return jsonscan.Unquote(v, plain)
}

// kind is str for the type member, without an allocation for the kinds
// MCP defines.
func kind(v json.RawMessage, plain bool) string {
	if plain {
		switch string(v[1 : len(v)-1]) {
		case "text":
			return "text"
		case "image":
			return "image"
		case "audio":
			return "audio"
		case "resource_link":
			return "resource_link"
		case "resource":
			return "resource"
		}
	}
	s, _ := jsonscan.Unquote(v, plain) // a scanned string: always unquotes
	return s
}

func isNull(v json.RawMessage) bool { return string(v) == "null" }

func lit(data []byte, i int, s string) bool {
	return len(data)-i >= len(s) && string(data[i:i+len(s)]) == s
}
