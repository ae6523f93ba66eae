package config

import (
	"bytes"
	"errors"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// AppendServer returns the config file data with entry, one server entry
// of a block list written with its dash at column 3 ("  - id: ..."),
// added as the last item of servers. The rest of the file, comments
// included, is kept byte for byte; the entry is indented like the items
// already there. It does not validate the result: Parse it.
func AppendServer(name string, data, entry []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(name, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &Error{File: name, Msg: "expected a mapping with version and servers"}
	}
	top := doc.Content[0]
	var servers, next *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "servers" {
			servers = top.Content[i+1]
			if i+2 < len(top.Content) {
				next = top.Content[i+2]
			}
		}
	}
	switch {
	case servers == nil:
		return nil, &Error{File: name, Msg: "no servers list to add to"}
	case servers.Kind != yaml.SequenceNode || servers.Style&yaml.FlowStyle != 0 || len(servers.Content) == 0:
		return nil, &Error{File: name, Line: servers.Line, Col: servers.Column, Path: "servers",
			Msg: "can add a server only to a non-empty block list (one \"- id: ...\" item per server); add it by hand"}
	}
	lines := strings.SplitAfter(string(data), "\n")
	// The column of the dash: an item node starts after "- ".
	first := servers.Content[0]
	text := lines[first.Line-1]
	dash := strings.LastIndex(text[:min(first.Column-1, len(text))], "-")
	if dash < 0 || strings.TrimSpace(text[:dash]) != "" {
		return nil, &Error{File: name, Line: first.Line, Col: first.Column, Path: "servers[0]",
			Msg: "cannot tell the list's indentation; add the server by hand"}
	}
	indented, err := reindent(entry, dash-2)
	if err != nil {
		return nil, err
	}
	at := len(lines) // after the last line
	if next != nil {
		// Before the key that follows servers and the comments and blank
		// lines directly above it.
		at = next.Line - 1
		for at > 0 && (strings.TrimSpace(lines[at-1]) == "" || strings.HasPrefix(lines[at-1], "#")) {
			at--
		}
	}
	var b bytes.Buffer
	for _, l := range lines[:at] {
		b.WriteString(l)
	}
	if b.Len() > 0 && !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
		b.WriteByte('\n')
	}
	b.Write(indented)
	for _, l := range lines[at:] {
		b.WriteString(l)
	}
	return b.Bytes(), nil
}

// reindent shifts every non-empty line of entry by delta spaces (negative:
// removes them).
func reindent(entry []byte, delta int) ([]byte, error) {
	var b bytes.Buffer
	for _, l := range strings.SplitAfter(string(entry), "\n") {
		switch {
		case strings.TrimSpace(l) == "":
			b.WriteString(l)
		case delta >= 0:
			b.WriteString(strings.Repeat(" ", delta) + l)
		case strings.HasPrefix(l, strings.Repeat(" ", -delta)):
			b.WriteString(l[-delta:])
		default:
			return nil, errors.New("internal error: a server entry line is indented less than its dash")
		}
	}
	if !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}
