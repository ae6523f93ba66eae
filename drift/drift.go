// Package drift compares two snapshots of one MCP server and classifies every
// difference by what it does to code generated from the older one and to its
// callers: Breaking (a removed tool, a new required argument, a narrowed
// input, a widened output, a read-only tool turned into a mutation...) or
// Compatible (a new tool, a new optional argument, a reworded description).
//
// The rule behind the schema comparison: an input schema may only accept
// more than before (callers keep sending what they sent), an output schema
// may only produce less (existing decoders and validators keep accepting
// what arrives). A change the comparison cannot order, such as a rewritten
// pattern, is Breaking: the report errs on the side of a human looking.
//
// Generated output decoders accept two widenings by design, and the
// comparison calls them Compatible: members a closed output object does
// not declare (kept in AdditionalProperties), and output enum values of
// the old values' JSON type (carried, Valid reports false). docs/cli.md
// states the rule.
package drift

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgen/mcpgen/manifest"
)

// Class is the severity of a change.
type Class int

const (
	// None means no change.
	None Class = iota
	// Compatible changes leave generated code and its callers working.
	Compatible
	// Breaking changes can break generated code, its callers, or the
	// safety assumptions made from annotations.
	Breaking
)

func (c Class) String() string {
	switch c {
	case Compatible:
		return "compatible"
	case Breaking:
		return "breaking"
	}
	return "none"
}

// MarshalText makes Class readable in JSON reports.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// ParseClass reads a Class name ("compatible", "breaking"; "any" is Compatible).
func ParseClass(s string) (Class, error) {
	switch s {
	case "compatible", "any":
		return Compatible, nil
	case "breaking":
		return Breaking, nil
	}
	return None, fmt.Errorf("unknown drift class %q (want breaking, compatible or any)", s)
}

// Change is one difference between two snapshots.
type Change struct {
	Class Class `json:"class"`
	// Kind of the changed object: server, tool, resource, resourceTemplate, prompt.
	Kind string `json:"kind"`
	// Name of the changed object (tool name, resource uri...); "" for the server.
	Name string `json:"name,omitempty"`
	// Pointer locates the change inside the object, e.g.
	// /inputSchema/properties/state/enum.
	Pointer string `json:"pointer,omitempty"`
	// Message says what changed, e.g. `required argument "owner" added`.
	Message string `json:"message"`
}

func (c Change) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", c.Class, c.Kind)
	if c.Name != "" {
		fmt.Fprintf(&b, " %s", c.Name)
	}
	if c.Pointer != "" {
		fmt.Fprintf(&b, " %s", c.Pointer)
	}
	fmt.Fprintf(&b, ": %s", c.Message)
	return b.String()
}

// Max returns the most severe class among changes (None when empty).
func Max(changes []Change) Class {
	m := None
	for _, c := range changes {
		m = max(m, c.Class)
	}
	return m
}

// Compare lists the differences from old to new, sorted by kind, name and
// pointer, so the report is stable.
func Compare(old, new *manifest.Manifest) []Change {
	d := &differ{}
	if old.ProtocolVersion != new.ProtocolVersion {
		d.add(Compatible, "server", "", "/protocolVersion", "protocol version changed from %q to %q", old.ProtocolVersion, new.ProtocolVersion)
	}
	d.serverInfo(old.ServerInfo, new.ServerInfo)
	if old.Instructions != new.Instructions {
		d.add(Compatible, "server", "", "/instructions", "instructions changed")
	}
	d.entries("tool", old.Tools, new.Tools, d.tool)
	d.entries("resource", old.Resources, new.Resources, d.resource)
	d.entries("resourceTemplate", old.ResourceTemplates, new.ResourceTemplates, d.resource)
	d.entries("prompt", old.Prompts, new.Prompts, d.prompt)
	order := map[string]int{"server": 0, "tool": 1, "resource": 2, "resourceTemplate": 3, "prompt": 4}
	slices.SortStableFunc(d.out, func(a, b Change) int {
		return cmp.Or(cmp.Compare(order[a.Kind], order[b.Kind]), strings.Compare(a.Name, b.Name),
			strings.Compare(a.Pointer, b.Pointer), strings.Compare(a.Message, b.Message))
	})
	return d.out
}

type differ struct{ out []Change }

func (d *differ) add(c Class, kind, name, ptr, format string, args ...any) {
	d.out = append(d.out, Change{Class: c, Kind: kind, Name: name, Pointer: ptr, Message: fmt.Sprintf(format, args...)})
}

func (d *differ) serverInfo(a, b json.RawMessage) {
	var oa, ob map[string]any
	_ = json.Unmarshal(a, &oa)
	_ = json.Unmarshal(b, &ob)
	for _, k := range []string{"name", "version", "title"} {
		if !equalJSON(oa[k], ob[k]) {
			d.add(Compatible, "server", "", "/serverInfo/"+k, "%s changed from %s to %s", k, show(oa[k]), show(ob[k]))
		}
	}
}

type entryFunc func(kind, name string, old, new map[string]any)

func (d *differ) entries(kind string, old, new []manifest.Entry, f entryFunc) {
	om, nm := decodeEntries(old), decodeEntries(new)
	for _, k := range sortedKeys(om) {
		if _, ok := nm[k]; !ok {
			d.add(Breaking, kind, k, "", "%s removed", kindWord(kind))
		}
	}
	for _, k := range sortedKeys(nm) {
		o, ok := om[k]
		if !ok {
			d.add(Compatible, kind, k, "", "%s added", kindWord(kind))
			continue
		}
		f(kind, k, o, nm[k])
	}
}

func kindWord(kind string) string {
	if kind == "resourceTemplate" {
		return "resource template"
	}
	return kind
}

func decodeEntries(es []manifest.Entry) map[string]map[string]any {
	m := make(map[string]map[string]any, len(es))
	for _, e := range es {
		var v map[string]any
		if json.Unmarshal(e.Raw, &v) == nil {
			m[e.Key] = v
		}
	}
	return m
}

func (d *differ) text(kind, name string, old, new map[string]any, keys ...string) {
	for _, k := range keys {
		if !equalJSON(old[k], new[k]) {
			d.add(Compatible, kind, name, "/"+k, "%s changed", k)
		}
	}
}

// Annotation hints with the spec's defaults for absent values.
var hintDefaults = map[string]bool{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}

func hint(tool map[string]any, name string) bool {
	if a, ok := tool["annotations"].(map[string]any); ok {
		if v, ok := a[name].(bool); ok {
			return v
		}
	}
	return hintDefaults[name]
}

func (d *differ) tool(kind, name string, old, new map[string]any) {
	d.text(kind, name, old, new, "title", "description")
	ro, rn := hint(old, "readOnlyHint"), hint(new, "readOnlyHint")
	switch {
	case ro && !rn:
		d.add(Breaking, kind, name, "/annotations/readOnlyHint", "read-only tool became a mutation (readOnlyHint true → false)")
	case !ro && rn:
		d.add(Compatible, kind, name, "/annotations/readOnlyHint", "tool became read-only (readOnlyHint false → true)")
	}
	// Destructiveness and idempotency only matter for mutations.
	if !rn {
		if do, dn := hint(old, "destructiveHint"), hint(new, "destructiveHint"); !do && dn && !ro {
			d.add(Breaking, kind, name, "/annotations/destructiveHint", "tool became destructive (destructiveHint false → true)")
		} else if do && !dn {
			d.add(Compatible, kind, name, "/annotations/destructiveHint", "tool is no longer destructive (destructiveHint true → false)")
		}
		if io, in := hint(old, "idempotentHint"), hint(new, "idempotentHint"); io && !in {
			d.add(Breaking, kind, name, "/annotations/idempotentHint", "tool is no longer idempotent: retries are no longer safe")
		} else if !io && in {
			d.add(Compatible, kind, name, "/annotations/idempotentHint", "tool became idempotent")
		}
	}
	if oo, on := hint(old, "openWorldHint"), hint(new, "openWorldHint"); oo != on {
		d.add(Compatible, kind, name, "/annotations/openWorldHint", "openWorldHint %t → %t", oo, on)
	}
	if a, b := taskSupport(old), taskSupport(new); a != b {
		c := Compatible
		if b == "required" {
			c = Breaking
		}
		d.add(c, kind, name, "/execution/taskSupport", "task support changed from %q to %q", a, b)
	}

	sc := &schemaCmp{d: d, kind: kind, name: name}
	sc.compare(schemaAt(old, "inputSchema"), schemaAt(new, "inputSchema"), "/inputSchema", input)
	os, okO := old["outputSchema"]
	ns, okN := new["outputSchema"]
	switch {
	case okO && !okN:
		d.add(Breaking, kind, name, "/outputSchema", "output schema removed: the typed output goes away")
	case !okO && okN:
		d.add(Compatible, kind, name, "/outputSchema", "output schema added: a typed output becomes available")
	case okO && okN:
		sc.compare(root(os), root(ns), "/outputSchema", output)
	}
}

func taskSupport(tool map[string]any) string {
	if e, ok := tool["execution"].(map[string]any); ok {
		if s, ok := e["taskSupport"].(string); ok {
			return s
		}
	}
	return "forbidden"
}

func (d *differ) resource(kind, name string, old, new map[string]any) {
	d.text(kind, name, old, new, "name", "title", "description", "size")
	if !equalJSON(old["mimeType"], new["mimeType"]) {
		d.add(Breaking, kind, name, "/mimeType", "mime type changed from %s to %s", show(old["mimeType"]), show(new["mimeType"]))
	}
}

func (d *differ) prompt(kind, name string, old, new map[string]any) {
	d.text(kind, name, old, new, "title", "description")
	oa, na := promptArgs(old), promptArgs(new)
	for _, k := range sortedKeys(oa) {
		if _, ok := na[k]; !ok {
			d.add(Breaking, kind, name, "/arguments", "argument %q removed", k)
		}
	}
	for _, k := range sortedKeys(na) {
		o, ok := oa[k]
		switch {
		case !ok && na[k]:
			d.add(Breaking, kind, name, "/arguments", "required argument %q added", k)
		case !ok:
			d.add(Compatible, kind, name, "/arguments", "optional argument %q added", k)
		case !o && na[k]:
			d.add(Breaking, kind, name, "/arguments", "argument %q became required", k)
		case o && !na[k]:
			d.add(Compatible, kind, name, "/arguments", "argument %q became optional", k)
		}
	}
}

// promptArgs maps argument name to whether it is required.
func promptArgs(p map[string]any) map[string]bool {
	out := map[string]bool{}
	list, _ := p["arguments"].([]any)
	for _, a := range list {
		if m, ok := a.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				r, _ := m["required"].(bool)
				out[n] = r
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func show(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
