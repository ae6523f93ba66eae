package mcpruntime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Invoker is a tool as a language-model loop sees it: a descriptor to
// advertise and a JSON-in, text-out call. *Tool implements it.
type Invoker interface {
	Descriptor() *Descriptor
	Invoke(ctx context.Context, args json.RawMessage) (ModelResult, error)
}

// Resumer is an Invoker whose gated calls can be resumed after a person's
// decision. *Tool implements it.
type Resumer interface {
	Invoker
	ResumeInvoke(ctx context.Context, id string) (ModelResult, error)
}

// Toolset is a fixed, least-privilege set of tools for an agent. It offers
// only the tools it was built from and no way to reach the connection
// behind them, so an agent holding a Toolset without a tool cannot call it.
type Toolset struct {
	byName map[string]Invoker
	names  []string // sorted
}

// NewToolset builds a toolset. Two tools with one wire name, or a nil tool,
// are an error.
func NewToolset(tools ...Invoker) (*Toolset, error) {
	s := &Toolset{byName: make(map[string]Invoker, len(tools))}
	for i, t := range tools {
		if t == nil || t.Descriptor() == nil {
			return nil, fmt.Errorf("toolset: tool %d is nil", i)
		}
		name := t.Descriptor().Name
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("toolset: tool %q given twice", name)
		}
		s.byName[name] = t
		s.names = append(s.names, name)
	}
	slices.Sort(s.names)
	return s, nil
}

// Names returns the wire names of the tools, sorted.
func (s *Toolset) Names() []string { return slices.Clone(s.names) }

// Descriptors returns the tools' descriptors, sorted by wire name, e.g. to
// advertise the tools to a model.
func (s *Toolset) Descriptors() []*Descriptor {
	ds := make([]*Descriptor, len(s.names))
	for i, n := range s.names {
		ds[i] = s.byName[n].Descriptor()
	}
	return ds
}

// Lookup returns the tool with the given wire name.
func (s *Toolset) Lookup(name string) (Invoker, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Filter returns the subset of tools keep accepts, e.g. only read-only ones.
func (s *Toolset) Filter(keep func(*Descriptor) bool) *Toolset {
	out := &Toolset{byName: map[string]Invoker{}}
	for _, n := range s.names {
		if t := s.byName[n]; keep(t.Descriptor()) {
			out.byName[n] = t
			out.names = append(out.names, n)
		}
	}
	return out
}

// Invoke dispatches a model's tool call by wire name. A name outside the set
// is a model-facing failure listing the tools it may use, not a Go error:
// models do ask for tools they were not given. A gated call comes back with
// the result's Pending set, as from Tool.Invoke; the Go error is for what
// the model cannot fix.
func (s *Toolset) Invoke(ctx context.Context, name string, args json.RawMessage) (ModelResult, error) {
	t, ok := s.byName[name]
	if !ok {
		avail := "none"
		if len(s.names) > 0 {
			avail = strings.Join(s.names, ", ")
		}
		return ModelResult{IsError: true, Text: fmt.Sprintf("There is no tool %q available to you. Available tools: %s.", name, avail)}, nil
	}
	return t.Invoke(ctx, args)
}

// Resume resumes a gated call of the named tool once a person has decided
// (see Tool.ResumeInvoke): the approved call's result, or a denial, as the
// tool's result for the model. tool is the approval's Tool.
func (s *Toolset) Resume(ctx context.Context, tool, id string) (ModelResult, error) {
	t, ok := s.byName[tool]
	if !ok {
		return ModelResult{}, fmt.Errorf("toolset: resume approval %s: no tool %q in the set", id, tool)
	}
	r, ok := t.(Resumer)
	if !ok {
		return ModelResult{}, fmt.Errorf("toolset: resume approval %s: tool %q cannot be resumed", id, tool)
	}
	return r.ResumeInvoke(ctx, id)
}
