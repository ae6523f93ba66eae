package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// MaxNameLen is the longest tool name every provider accepts.
const MaxNameLen = 64

// MaxPrefixLen bounds a Source's prefix, so a namespaced name keeps room
// for the tool's own name.
const MaxPrefixLen = 24

// nameSep joins a prefix and a tool name.
const nameSep = "__"

var (
	validName   = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	validPrefix = regexp.MustCompile(`^[a-zA-Z0-9-]+(_[a-zA-Z0-9-]+)*$`)
)

// ValidName reports whether name is a tool name every provider accepts.
func ValidName(name string) bool { return validName.MatchString(name) }

// Source is one server's tools for a Set.
type Source struct {
	// Prefix namespaces the tools' names ("crm" gives "crm__get_deal"). It
	// is required when a Set has several sources, optional with one. It
	// may hold ASCII letters, digits, '-' and single '_'s, at most
	// MaxPrefixLen characters.
	Prefix string
	Tools  *mcpruntime.Toolset
	// Rendering, when set, is how the source's tools write structured
	// output for the model (Toolset.WithRendering with no names): "lean"
	// saves tokens on large results.
	Rendering mcpruntime.Rendering
	// Description says what the source's tools are for, in a line, to a
	// model that has not loaded them (see Deferred): OpenAI's namespace
	// description, and the fallback search tool's summary of the sources.
	Description string
}

// modelName is the provider-valid name of a tool: the wire name itself
// when it is valid, otherwise its characters outside [a-zA-Z0-9_-] as '_',
// cut to fit, and a digest of the wire name so two names that map to the
// same characters stay apart.
func modelName(prefix, wire string) string {
	name := wire
	if prefix != "" {
		name = prefix + nameSep + wire
	}
	if ValidName(name) {
		return name
	}
	var b strings.Builder
	for _, r := range wire {
		switch {
		case r < 128 && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(wire))
	tag := "_" + hex.EncodeToString(sum[:4])
	base := b.String()
	if prefix != "" {
		base = prefix + nameSep + base
	}
	if room := MaxNameLen - len(tag); len(base) > room {
		base = base[:room]
	}
	return base + tag
}

func checkPrefix(p string) error {
	if len(p) > MaxPrefixLen || !validPrefix.MatchString(p) {
		return fmt.Errorf("agent: prefix %q: want 1 to %d of a-z, A-Z, 0-9, '-' and single '_'", p, MaxPrefixLen)
	}
	return nil
}

// entry is one tool of a Set.
type entry struct {
	name   string // model-facing
	wire   string
	source int
	tool   mcpruntime.Invoker
	ts     *mcpruntime.Toolset
}

// Set is the tools of one or more servers as a model sees them. It is
// immutable and safe for concurrent use.
type Set struct {
	entries []*entry // sorted by name
	byName  map[string]*entry
	dialect Dialect
	views   map[string]*view
	sources []sourceInfo
}

type sourceInfo struct{ prefix, description string }

// New builds a Set over sources for the dialect d. With several sources
// every one needs a distinct Prefix. Names are checked here: two tools
// that would get one model-facing name are an error, so a model's call
// always names exactly one tool.
func New(d Dialect, sources ...Source) (*Set, error) {
	if len(sources) == 0 {
		return nil, fmt.Errorf("agent: no toolset given")
	}
	s := &Set{byName: map[string]*entry{}, dialect: d, views: map[string]*view{}}
	prefixes := map[string]bool{}
	// gated maps the server label, server identity (Descriptor.Server)
	// and wire name of each tool with a gate to its entry: an approval is
	// bound to those, so two such tools would each accept the other's
	// approvals.
	type bound struct{ server, identity, wire string }
	gated := map[bound]*entry{}
	for i, src := range sources {
		if src.Tools == nil {
			return nil, fmt.Errorf("agent: source %d has no toolset", i)
		}
		if src.Rendering != "" {
			ts, err := src.Tools.WithRendering(src.Rendering)
			if err != nil {
				return nil, fmt.Errorf("agent: source %d: %w", i, err)
			}
			src.Tools = ts
		}
		s.sources = append(s.sources, sourceInfo{src.Prefix, src.Description})
		if src.Prefix != "" || len(sources) > 1 {
			if err := checkPrefix(src.Prefix); err != nil {
				return nil, fmt.Errorf("%w (source %d; a prefix is required when several servers are merged)", err, i)
			}
			if prefixes[src.Prefix] {
				return nil, fmt.Errorf("agent: prefix %q given twice", src.Prefix)
			}
			prefixes[src.Prefix] = true
		}
		for _, wire := range src.Tools.Names() {
			t, _ := src.Tools.Lookup(wire)
			e := &entry{name: modelName(src.Prefix, wire), wire: wire, source: i, tool: t, ts: src.Tools}
			if o, dup := s.byName[e.name]; dup {
				return nil, fmt.Errorf("agent: tools %q and %q would both be named %q for the model", o.tool.Descriptor().Name, wire, e.name)
			}
			if server, ok := src.Tools.Gated(wire); ok {
				k := bound{server, t.Descriptor().Server, wire}
				if o, dup := gated[k]; dup {
					of := ""
					if k.identity != "" {
						of = fmt.Sprintf(" (bindings of %q)", k.identity)
					}
					return nil, fmt.Errorf("agent: tools %q and %q both have a gate and are tool %q of server %q%s, so an approval for one could be resumed through the other: give the servers distinct names (mcpgo.WithName, mcpruntime.WithServerName)", o.name, e.name, wire, server, of)
				}
				gated[k] = e
			}
			v, err := project(t.Descriptor().InputSchema, d)
			if err != nil {
				return nil, fmt.Errorf("agent: tool %q: input schema: %w", wire, err)
			}
			s.byName[e.name] = e
			s.views[e.name] = v
			s.entries = append(s.entries, e)
		}
	}
	slices.SortFunc(s.entries, func(a, b *entry) int { return strings.Compare(a.name, b.name) })
	return s, nil
}

// Dialect returns the dialect the Set was built for.
func (s *Set) Dialect() Dialect { return s.dialect }

// Names returns the model-facing names, sorted.
func (s *Set) Names() []string {
	out := make([]string, len(s.entries))
	for i, e := range s.entries {
		out[i] = e.name
	}
	return out
}

// Lookup maps a model-facing name back to its source's index and the
// tool's wire name.
func (s *Set) Lookup(name string) (source int, wire string, ok bool) {
	e, ok := s.byName[name]
	if !ok {
		return 0, "", false
	}
	return e.source, e.tool.Descriptor().Name, true
}

// Tool is the model-facing definition of one tool.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the projected schema (see Dialect), a JSON object.
	InputSchema []byte
	// Strict says the schema is in OpenAI's strict form and the provider
	// may be told to enforce it. With DialectStrict a tool whose schema
	// cannot be made strict (a free-form object, allOf) is offered
	// unenforced, with Strict false; its arguments are validated all the
	// same.
	Strict bool
	// Descriptor is the tool as snapshotted.
	Descriptor *mcpruntime.Descriptor
	// Source is the index of the tool's source in New's arguments, Prefix
	// its prefix ("" for a source without one) and Local the name without
	// the prefix and its separator: the tool's name inside a namespace of
	// its source.
	Source int
	Prefix string
	Local  string
}

// Sources returns the number of sources of the set.
func (s *Set) Sources() int { return len(s.sources) }

// SourceInfo returns the Prefix and Description of source i.
func (s *Set) SourceInfo(i int) (prefix, description string) {
	if i < 0 || i >= len(s.sources) {
		return "", ""
	}
	return s.sources[i].prefix, s.sources[i].description
}

// Tools returns the model-facing tool definitions, sorted by name.
func (s *Set) Tools() []Tool {
	out := make([]Tool, len(s.entries))
	for i, e := range s.entries {
		out[i] = s.tool(e)
	}
	return out
}

func (s *Set) tool(e *entry) Tool {
	d := e.tool.Descriptor()
	desc := d.Description
	if desc == "" {
		desc = d.Title
	}
	v := s.views[e.name]
	prefix := s.sources[e.source].prefix
	local := e.name
	if prefix != "" {
		local = strings.TrimPrefix(e.name, prefix+nameSep)
	}
	return Tool{Name: e.name, Description: desc, InputSchema: slices.Clone(v.schema), Strict: v.strict, Descriptor: d,
		Source: e.source, Prefix: prefix, Local: local}
}
