package config

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Error is a problem at a place in a config file. It prints as
// "file:line:col: path: message".
type Error struct {
	File      string
	Line, Col int    // 1-based; 0 if unknown
	Path      string // like servers[0].stdio.command; "" at the top
	Msg       string
	Server    string // id of the server the problem is in, if known
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Server != "" {
		fmt.Fprintf(&b, " (server %q)", e.Server)
	}
	return b.String()
}

// decoder is a strict decoder over yaml.Node: every key must be known,
// every value of the expected kind, and every problem is collected with its
// position instead of stopping at the first.
type decoder struct {
	file     string
	errs     []*Error
	serverID string // id of the server being decoded
}

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	e := &Error{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...), Server: d.serverID}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

// err joins the collected errors, sorted by position.
func (d *decoder) err() error {
	if len(d.errs) == 0 {
		return nil
	}
	sort.SliceStable(d.errs, func(i, j int) bool {
		a, b := d.errs[i], d.errs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	errs := make([]error, len(d.errs))
	for i, e := range d.errs {
		errs[i] = e
	}
	return joinErrors(errs)
}

// joined prints one error per line and still unwraps to each *Error.
type joined []error

func (j joined) Error() string {
	s := make([]string, len(j))
	for i, e := range j {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

func (j joined) Unwrap() []error { return j }

func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return joined(errs)
}

// describe names a node's kind for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!int":
			return "the integer " + n.Value
		case "!!float":
			return "the number " + n.Value
		case "!!bool":
			return "the boolean " + n.Value
		case "!!null":
			return "null"
		case "!!timestamp":
			return "the timestamp " + n.Value
		}
		return fmt.Sprintf("a %s value", n.ShortTag())
	}
	return "nothing"
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// field is one key/value pair of a mapping.
type field struct {
	key, val *yaml.Node
	path     string
}

// mapping checks that n is a mapping with only known keys and returns its
// fields by key. A null value counts as an empty mapping when nullOK.
func (d *decoder) mapping(n *yaml.Node, path string, known []string) map[string]field {
	out := map[string]field{}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "expected a mapping, found %s", describe(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			d.errorf(k, path, "keys must be strings, found %s", describe(k))
			continue
		}
		if prev, dup := out[k.Value]; dup {
			d.errorf(k, path, "duplicate key %q (first at line %d)", k.Value, prev.key.Line)
			continue
		}
		if known != nil && !slices.Contains(known, k.Value) {
			d.errorf(k, path, "unknown key %q (known keys: %s)", k.Value, strings.Join(known, ", "))
			continue
		}
		out[k.Value] = field{key: k, val: v, path: join(path, k.Value)}
	}
	return out
}

// pairs returns a free-form mapping's fields in file order.
func (d *decoder) pairs(n *yaml.Node, path string) []field {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "expected a mapping, found %s", describe(n))
		return nil
	}
	var out []field
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			d.errorf(k, path, "keys must be strings, found %s", describe(k))
			continue
		}
		if line, dup := seen[k.Value]; dup {
			d.errorf(k, path, "duplicate key %q (first at line %d)", k.Value, line)
			continue
		}
		seen[k.Value] = k.Line
		out = append(out, field{key: k, val: v, path: join(path, k.Value)})
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// str returns n's string value; other scalars are refused rather than
// converted, with a hint, so that `version: 1.10` never turns into "1.1".
func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		return n.Value, true
	}
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		d.errorf(n, path, "expected a string, found %s (quote it: %q)", describe(n), n.Value)
	} else {
		d.errorf(n, path, "expected a string, found %s", describe(n))
	}
	return "", false
}

func (d *decoder) strList(n *yaml.Node, path string) []string {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "expected a list of strings, found %s", describe(n))
		return nil
	}
	out := []string{}
	for i, it := range n.Content {
		if s, ok := d.str(it, fmt.Sprintf("%s[%d]", path, i)); ok {
			out = append(out, s)
		}
	}
	return out
}

func (d *decoder) integer(n *yaml.Node, path string) (int, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		if v, err := strconv.Atoi(n.Value); err == nil {
			return v, true
		}
	}
	d.errorf(n, path, "expected an integer, found %s", describe(n))
	return 0, false
}

// findAlias reports the first alias in the tree. Aliases are refused: they
// make positions ambiguous and can blow up in size.
func findAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		return n
	}
	for _, c := range n.Content {
		if a := findAlias(c); a != nil {
			return a
		}
	}
	return nil
}

// toJSON converts a YAML value into JSON, keeping mapping key order (a
// schema's property order drives generated field order).
func (d *decoder) toJSON(n *yaml.Node, path string) (json.RawMessage, bool) {
	var b strings.Builder
	ok := d.writeJSON(&b, n, path)
	return json.RawMessage(b.String()), ok
}

func (d *decoder) writeJSON(b *strings.Builder, n *yaml.Node, path string) bool {
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		ok := true
		for i, f := range d.pairs(n, path) {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(f.key.Value)
			b.Write(k)
			b.WriteByte(':')
			ok = d.writeJSON(b, f.val, f.path) && ok
		}
		b.WriteByte('}')
		return ok
	case yaml.SequenceNode:
		b.WriteByte('[')
		ok := true
		for i, it := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			ok = d.writeJSON(b, it, fmt.Sprintf("%s[%d]", path, i)) && ok
		}
		b.WriteByte(']')
		return ok
	case yaml.ScalarNode:
		var v any
		switch n.ShortTag() {
		case "!!str", "!!timestamp":
			v = n.Value
		case "!!null":
			v = nil
		case "!!bool", "!!int":
			if err := n.Decode(&v); err != nil {
				d.errorf(n, path, "%v", err)
				return false
			}
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				d.errorf(n, path, "%s has no JSON form", describe(n))
				return false
			}
			v = f
		default:
			d.errorf(n, path, "%s has no JSON form", describe(n))
			return false
		}
		j, err := json.Marshal(v)
		if err != nil {
			d.errorf(n, path, "%v", err)
			return false
		}
		b.Write(j)
		return true
	}
	d.errorf(n, path, "%s has no JSON form", describe(n))
	return false
}
