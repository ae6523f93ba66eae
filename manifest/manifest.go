// Package manifest defines mcpgen's snapshot manifest: a committed,
// deterministic record of what one MCP server offers (server info, negotiated
// protocol, capabilities, and every tool, resource, resource template and
// prompt exactly as the server sent them).
//
// Tool objects are kept verbatim: mcp-go's client types drop most JSON Schema
// keywords, so the snapshot keeps the raw tools/list JSON and only re-indents
// it. Encode is deterministic: a fixed envelope key order, entries sorted by
// their identifying key, no timestamps or host data.
package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// FormatVersion is the manifest format this package writes. Readers reject
// newer formats instead of guessing.
const FormatVersion = 1

// Manifest is one server's snapshot.
type Manifest struct {
	// Format is the manifest format version (FormatVersion when written).
	Format int
	// ID is the server id from the config (a Go-package-friendly name).
	ID string
	// ServerInfo is the server's implementation info, verbatim.
	ServerInfo json.RawMessage
	// ProtocolVersion is the negotiated MCP protocol revision.
	ProtocolVersion string
	// Capabilities is the server's capabilities object, verbatim.
	Capabilities json.RawMessage
	// Instructions is the server's optional usage text.
	Instructions string
	// Tools, sorted by name.
	Tools []Entry
	// Resources, sorted by uri.
	Resources []Entry
	// ResourceTemplates, sorted by uriTemplate.
	ResourceTemplates []Entry
	// Prompts, sorted by name.
	Prompts []Entry
}

// Entry is one listed object (tool, resource, template or prompt) kept
// verbatim. Key is its identifying member (name, uri or uriTemplate).
type Entry struct {
	Key string
	Raw json.RawMessage
	// Pointer is the JSON Pointer of the entry in the file it was read from
	// ("" for entries built in memory); used to position errors.
	Pointer string
}

// entry kinds and the member that identifies them.
const (
	keyName        = "name"
	keyURI         = "uri"
	keyURITemplate = "uriTemplate"
)

// NewEntry validates raw as a JSON object with a non-empty string member
// named key and returns the entry. The bytes are copied.
func NewEntry(raw json.RawMessage, key string) (Entry, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return Entry{}, fmt.Errorf("not a JSON object: %w", err)
	}
	var k string
	if err := json.Unmarshal(probe[key], &k); err != nil || k == "" {
		return Entry{}, fmt.Errorf("missing or non-string %q member", key)
	}
	return Entry{Key: k, Raw: append(json.RawMessage(nil), raw...)}, nil
}

// Sort orders every list by its key; ties (which a sane server never sends)
// fall back to the raw bytes so the order is still total and deterministic.
func (m *Manifest) Sort() {
	for _, l := range []*[]Entry{&m.Tools, &m.Resources, &m.ResourceTemplates, &m.Prompts} {
		slices.SortStableFunc(*l, func(a, b Entry) int {
			if c := strings.Compare(a.Key, b.Key); c != 0 {
				return c
			}
			return bytes.Compare(a.Raw, b.Raw)
		})
	}
}

// Duplicates returns, per list, the keys that occur more than once.
func (m *Manifest) Duplicates() []string {
	var out []string
	for _, l := range []struct {
		kind string
		es   []Entry
	}{{"tool", m.Tools}, {"resource", m.Resources}, {"resource template", m.ResourceTemplates}, {"prompt", m.Prompts}} {
		seen := map[string]bool{}
		for _, e := range l.es {
			if seen[e.Key] {
				out = append(out, fmt.Sprintf("%s %q", l.kind, e.Key))
			}
			seen[e.Key] = true
		}
	}
	return out
}

// Encode renders the manifest deterministically: envelope keys in a fixed
// order, lists sorted (Encode sorts a copy), raw values re-indented with
// their member order kept (property order drives generated field order).
func Encode(m *Manifest) ([]byte, error) {
	c := *m
	c.Tools = slices.Clone(m.Tools)
	c.Resources = slices.Clone(m.Resources)
	c.ResourceTemplates = slices.Clone(m.ResourceTemplates)
	c.Prompts = slices.Clone(m.Prompts)
	c.Sort()
	if c.Format == 0 {
		c.Format = FormatVersion
	}

	var b bytes.Buffer
	b.WriteString("{\n")
	first := true
	member := func(name string) {
		if !first {
			b.WriteString(",\n")
		}
		first = false
		b.WriteString("  ")
		writeString(&b, name)
		b.WriteString(": ")
	}
	raw := func(name string, v json.RawMessage) error {
		member(name)
		return indent(&b, v, "  ")
	}
	member("mcpgenManifest")
	fmt.Fprintf(&b, "%d", c.Format)
	member("id")
	writeString(&b, c.ID)
	member("protocolVersion")
	writeString(&b, c.ProtocolVersion)
	if err := raw("serverInfo", orEmptyObject(c.ServerInfo)); err != nil {
		return nil, fmt.Errorf("serverInfo: %w", err)
	}
	if err := raw("capabilities", orEmptyObject(c.Capabilities)); err != nil {
		return nil, fmt.Errorf("capabilities: %w", err)
	}
	if c.Instructions != "" {
		member("instructions")
		writeString(&b, c.Instructions)
	}
	for _, l := range []struct {
		name string
		es   []Entry
	}{{"tools", c.Tools}, {"resources", c.Resources}, {"resourceTemplates", c.ResourceTemplates}, {"prompts", c.Prompts}} {
		member(l.name)
		if len(l.es) == 0 {
			b.WriteString("[]")
			continue
		}
		b.WriteString("[\n")
		for i, e := range l.es {
			b.WriteString("    ")
			if err := indent(&b, e.Raw, "    "); err != nil {
				return nil, fmt.Errorf("%s %q: %w", l.name, e.Key, err)
			}
			if i < len(l.es)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("  ]")
	}
	b.WriteString("\n}\n")
	return b.Bytes(), nil
}

func orEmptyObject(v json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(v)) == 0 {
		return json.RawMessage("{}")
	}
	return v
}

// indent writes v re-indented. Empty objects and arrays stay on one line.
func indent(b *bytes.Buffer, v json.RawMessage, prefix string) error {
	var tmp bytes.Buffer
	if err := json.Indent(&tmp, bytes.TrimSpace(v), prefix, "  "); err != nil {
		return err
	}
	b.Write(tmp.Bytes())
	return nil
}

// writeString writes s as a JSON string without HTML escaping, so that
// descriptions with <, > and & stay readable in diffs.
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}
