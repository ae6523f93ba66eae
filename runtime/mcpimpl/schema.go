package mcpimpl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// StripProperty removes the property name from an object schema: its entry
// under "properties" and its name in "required" ("required" is dropped when
// it empties). The generator uses it to hide the identity argument from the
// Input type and from the schema a model is shown. Other members keep their
// order and bytes. found reports whether the schema had the property.
func StripProperty(schema json.RawMessage, name string) (out json.RawMessage, found bool, err error) {
	top, err := orderedObject(schema)
	if err != nil {
		return nil, false, fmt.Errorf("input schema: %w", err)
	}
	for i := 0; i < len(top); i++ {
		switch top[i].key {
		case "properties":
			props, err := orderedObject(top[i].val)
			if err != nil {
				return nil, false, fmt.Errorf("input schema: /properties: %w", err)
			}
			for j, p := range props {
				if p.key == name {
					props = append(props[:j:j], props[j+1:]...)
					found = true
					break
				}
			}
			top[i].val = encodeOrdered(props)
		case "required":
			var req []string
			if err := json.Unmarshal(top[i].val, &req); err != nil {
				return nil, false, errors.New("input schema: /required: not an array of strings")
			}
			kept := req[:0:0]
			for _, r := range req {
				if r != name {
					kept = append(kept, r)
				}
			}
			if len(kept) == len(req) {
				continue
			}
			found = true
			if len(kept) == 0 {
				top = append(top[:i:i], top[i+1:]...)
				i--
				continue
			}
			b, _ := marshalNoEscape(kept)
			top[i].val = b
		}
	}
	return encodeOrdered(top), found, nil
}

type member struct {
	key string
	val json.RawMessage
}

// orderedObject decodes a JSON object's members in document order.
func orderedObject(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		ms = append(ms, member{key: k, val: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the object")
	}
	return ms, nil
}

func encodeOrdered(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshalNoEscape(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
