package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Kind says which form an input file had.
type Kind int

const (
	// KindManifest is an mcpgen manifest (has "mcpgenManifest").
	KindManifest Kind = iota + 1
	// KindToolsList is a raw MCP tools/list result: {"tools":[...]}.
	KindToolsList
	// KindTool is a single MCP Tool object.
	KindTool
)

func (k Kind) String() string {
	switch k {
	case KindManifest:
		return "manifest"
	case KindToolsList:
		return "tools/list result"
	case KindTool:
		return "tool"
	}
	return "unknown"
}

// File is a parsed input with the index that positions its errors.
type File struct {
	Name     string
	Kind     Kind
	Manifest *Manifest
	Index    *Index
}

// Errorf returns an Error positioned at ptr in this file.
func (f *File) Errorf(ptr, format string, args ...any) *Error {
	return f.Index.Errorf(f.Name, ptr, format, args...)
}

// Parse reads an mcpgen manifest, a raw tools/list result or a single Tool
// object, detecting which from its members, so users can feed whatever an
// inspector printed. name is used in error positions only. Every problem
// found is reported, each as an *Error, joined.
func Parse(name string, data []byte) (*File, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			l, c := LineCol(data, firstNonSpace(data))
			return nil, &Error{File: name, Line: l, Col: c, Err: fmt.Errorf("expected a JSON object (manifest, tools/list result or tool), found %s", te.Value)}
		}
		return nil, syntaxError(name, data, err)
	}
	// Unmarshal has checked that data is JSON.
	f := &File{Name: name, Index: lazyIndex(data), Manifest: &Manifest{}}
	var errs []error
	switch {
	case top["mcpgenManifest"] != nil:
		f.Kind = KindManifest
		errs = f.parseManifest(top)
	case top["tools"] != nil:
		f.Kind = KindToolsList
		f.Manifest.Format = FormatVersion
		f.Manifest.Tools, errs = f.entries(top["tools"], "/tools", keyName, true)
	case top["name"] != nil && top["inputSchema"] != nil:
		f.Kind = KindTool
		f.Manifest.Format = FormatVersion
		e, err := NewEntry(bytes.TrimSpace(data), keyName)
		if err != nil {
			errs = append(errs, f.Errorf("", "%v", err))
		}
		f.Manifest.Tools = []Entry{e}
	default:
		return nil, f.Errorf("", "not an mcpgen manifest, tools/list result or tool: expected a %q, %q or %q member", "mcpgenManifest", "tools", "inputSchema")
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, d := range f.Manifest.Duplicates() {
		errs = append(errs, f.Errorf("", "duplicate %s", d))
	}
	return f, errors.Join(errs...)
}

func firstNonSpace(b []byte) int {
	return len(b) - len(bytes.TrimLeft(b, " \t\r\n"))
}

var manifestMembers = map[string]bool{
	"mcpgenManifest": true, "id": true, "protocolVersion": true, "serverInfo": true, "capabilities": true,
	"instructions": true, "tools": true, "resources": true, "resourceTemplates": true, "prompts": true,
}

func (f *File) parseManifest(top map[string]json.RawMessage) []error {
	m := f.Manifest
	var errs []error
	if err := json.Unmarshal(top["mcpgenManifest"], &m.Format); err != nil || m.Format < 1 {
		return []error{f.Errorf("/mcpgenManifest", "format version must be a positive integer")}
	}
	if m.Format > FormatVersion {
		return []error{f.Errorf("/mcpgenManifest", "manifest format %d is newer than this mcpgen understands (%d); upgrade mcpgen", m.Format, FormatVersion)}
	}
	// The envelope is ours, so it is strict; the entries inside are the
	// server's, kept as they are.
	for k := range top {
		if !manifestMembers[k] {
			errs = append(errs, f.Errorf("/"+EscapePointer(k), "unknown manifest member %q", k))
		}
	}
	str := func(key string, dst *string) {
		if v, ok := top[key]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				errs = append(errs, f.Errorf("/"+key, "must be a string"))
			}
		}
	}
	str("id", &m.ID)
	str("protocolVersion", &m.ProtocolVersion)
	str("instructions", &m.Instructions)
	obj := func(key string, dst *json.RawMessage) {
		if v, ok := top[key]; ok {
			if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '{' {
				errs = append(errs, f.Errorf("/"+key, "must be an object"))
				return
			}
			*dst = v
		}
	}
	obj("serverInfo", &m.ServerInfo)
	obj("capabilities", &m.Capabilities)
	var es []error
	m.Tools, es = f.entries(top["tools"], "/tools", keyName, false)
	errs = append(errs, es...)
	m.Resources, es = f.entries(top["resources"], "/resources", keyURI, false)
	errs = append(errs, es...)
	m.ResourceTemplates, es = f.entries(top["resourceTemplates"], "/resourceTemplates", keyURITemplate, false)
	errs = append(errs, es...)
	m.Prompts, es = f.entries(top["prompts"], "/prompts", keyName, false)
	errs = append(errs, es...)
	return errs
}

func (f *File) entries(raw json.RawMessage, ptr, key string, required bool) ([]Entry, []error) {
	if raw == nil {
		if required {
			return nil, []error{f.Errorf(ptr, "missing")}
		}
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, []error{f.Errorf(ptr, "must be an array")}
	}
	var out []Entry
	var errs []error
	for i, it := range items {
		p := ptr + "/" + strconv.Itoa(i)
		e, err := NewEntry(it, key)
		if err != nil {
			errs = append(errs, f.Errorf(p, "%v", err))
			continue
		}
		e.Pointer = p
		out = append(out, e)
	}
	return out, errs
}
