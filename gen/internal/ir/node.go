package ir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgen/mcpgen/manifest"
)

// node is a JSON value that keeps object member order (property order
// drives field order) and the JSON Pointer it was found at.
type node struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys []string
	obj  map[string]*node
	arr  []*node
	str  string
	num  json.Number
	b    bool
	ptr  string
}

func parseNode(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec, "")
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("unexpected data after the schema")
	}
	return n, nil
}

func parseValue(dec *json.Decoder, ptr string) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	n := &node{ptr: ptr}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n.kind = 'o'
			n.obj = map[string]*node{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := parseValue(dec, ptr+"/"+escape(k))
				if err != nil {
					return nil, err
				}
				if _, dup := n.obj[k]; !dup {
					n.keys = append(n.keys, k)
				}
				n.obj[k] = v
			}
		case '[':
			n.kind = 'a'
			for i := 0; dec.More(); i++ {
				v, err := parseValue(dec, ptr+"/"+strconv.Itoa(i))
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
	case string:
		n.kind, n.str = 's', t
	case json.Number:
		n.kind, n.num = 'n', t
	case bool:
		n.kind, n.b = 'b', t
	case nil:
		n.kind = 'z'
	}
	return n, nil
}

func escape(s string) string { return manifest.EscapePointer(s) }

func unescape(s string) string { return manifest.UnescapePointer(s) }

// get returns member k of an object node, or nil.
func (n *node) get(k string) *node {
	if n == nil || n.kind != 'o' {
		return nil
	}
	return n.obj[k]
}

func (n *node) has(k string) bool { return n.get(k) != nil }

// getStr returns a string member, or "".
func (n *node) getStr(k string) string {
	if v := n.get(k); v != nil && v.kind == 's' {
		return v.str
	}
	return ""
}

// kindName is the JSON type of the node's value.
func (n *node) kindName() string {
	switch n.kind {
	case 'o':
		return "object"
	case 'a':
		return "array"
	case 's':
		return "string"
	case 'n':
		if r, ok := new(big.Rat).SetString(string(n.num)); ok && r.IsInt() {
			return "integer"
		}
		return "number"
	case 'b':
		return "boolean"
	}
	return "null"
}

// JSON renders the node compactly, members in their original order.
func (n *node) JSON() string {
	var b strings.Builder
	n.write(&b, false)
	return b.String()
}

// Canonical renders the node in the canonical form of
// mcpruntime.CanonicalJSON (sorted members, numbers as reduced rationals),
// so that generated code can compare JSON values by text.
func (n *node) Canonical() string {
	var b strings.Builder
	n.write(&b, true)
	return b.String()
}

func (n *node) write(b *strings.Builder, canon bool) {
	switch n.kind {
	case 'o':
		keys := n.keys
		if canon {
			keys = slices.Sorted(slices.Values(keys))
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k, canon)
			b.WriteByte(':')
			n.obj[k].write(b, canon)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, e := range n.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			e.write(b, canon)
		}
		b.WriteByte(']')
	case 's':
		writeString(b, n.str, canon)
	case 'n':
		if canon {
			if r, ok := new(big.Rat).SetString(string(n.num)); ok {
				b.WriteString(r.RatString())
				return
			}
		}
		b.WriteString(string(n.num))
	case 'b':
		b.WriteString(strconv.FormatBool(n.b))
	default:
		b.WriteString("null")
	}
}

func writeString(b *strings.Builder, s string, canon bool) {
	if canon {
		b.WriteString(strconv.Quote(s)) // as mcpruntime.CanonicalJSON does
		return
	}
	enc, _ := json.Marshal(s)
	b.Write(enc)
}

// clone copies an object node shallowly, so members can be changed.
func (n *node) clone() *node {
	c := *n
	c.keys = slices.Clone(n.keys)
	c.obj = make(map[string]*node, len(n.obj))
	for k, v := range n.obj {
		c.obj[k] = v
	}
	c.arr = slices.Clone(n.arr)
	return &c
}

func (n *node) set(k string, v *node) {
	if _, ok := n.obj[k]; !ok {
		n.keys = append(n.keys, k)
	}
	n.obj[k] = v
}

func (n *node) del(k string) {
	if _, ok := n.obj[k]; ok {
		delete(n.obj, k)
		n.keys = slices.DeleteFunc(n.keys, func(s string) bool { return s == k })
	}
}

// rat returns a number node's value.
func (n *node) rat() (*big.Rat, bool) {
	if n == nil || n.kind != 'n' {
		return nil, false
	}
	return new(big.Rat).SetString(string(n.num))
}
