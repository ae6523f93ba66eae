package mcpruntime

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpgen/mcpgen/runtime/internal/render"
)

// Rendering is how a tool's structured output is written for a language
// model. Only the model's text differs: the typed Go result and Result
// are the same whatever the rendering.
type Rendering string

const (
	// RenderJSON writes structuredContent as compact JSON (the default).
	RenderJSON Rendering = "json"
	// RenderLean writes it for fewer tokens, losing no value, in a grammar
	// docs/agents.md states; at most twice the JSON's size plus 64 bytes and
	// 32 levels deep, else as escaped compact JSON, in time linear in it.
	RenderLean Rendering = "lean"
	// RenderLeanDescribed is RenderLean with the output schema's short
	// descriptions beside a member the first time it appears: more tokens,
	// and a hint of what the fields mean.
	RenderLeanDescribed Rendering = "lean-described"
)

func (r Rendering) valid() bool {
	return r == RenderJSON || r == RenderLean || r == RenderLeanDescribed
}

// WithRendering sets how Invoke writes the tool's structured output for a
// model (default RenderJSON; a value that is neither is RenderJSON). A
// Toolset's rendering for all its tools does not override it.
func WithRendering(r Rendering) Option {
	return func(o *toolOptions) { o.rendering = r }
}

// ModelTextAs is ModelText in the rendering mode; schema is the output
// schema whose short descriptions RenderLeanDescribed shows.
func (r *Result) ModelTextAs(mode Rendering, schema json.RawMessage) string {
	if mode == RenderLean {
		schema = nil
	}
	if (mode == RenderLean || mode == RenderLeanDescribed) && !r.IsError && r.HasStructuredContent() {
		if s, err := render.Lean(r.StructuredContent, schema); err == nil {
			return s
		}
	}
	return r.ModelText()
}

// ownRendering is implemented by tools given WithRendering.
type ownRendering interface{ hasRendering() bool }

func (t *Tool[I, O]) hasRendering() bool { return t.core.rendering != "" }

// WithRendering returns a copy of the toolset whose tools write their
// structured output for the model in r. With no names it applies to every
// tool not given its own WithRendering; with names, to those tools only,
// whatever they were given. A name outside the set is an error.
func (s *Toolset) WithRendering(r Rendering, tools ...string) (*Toolset, error) {
	if !r.valid() {
		return nil, fmt.Errorf("toolset: rendering %q: want %q, %q or %q", r, RenderJSON, RenderLean, RenderLeanDescribed)
	}
	out := &Toolset{byName: map[string]Invoker{}, names: s.names}
	for n, t := range s.byName {
		out.byName[n] = t
	}
	apply := func(n string) {
		t := out.byName[n]
		if w, ok := t.(rendered); ok {
			t = w.Invoker
		}
		out.byName[n] = rendered{Invoker: t, mode: r}
	}
	for _, n := range tools {
		if _, ok := s.byName[n]; !ok {
			return nil, fmt.Errorf("toolset: rendering: no tool %q in the set", n)
		}
		apply(n)
	}
	if len(tools) == 0 {
		for _, n := range s.names {
			if o, ok := out.byName[n].(ownRendering); !ok || !o.hasRendering() {
				apply(n)
			}
		}
	}
	return out, nil
}

// rendered is a toolset's tool whose model text is rewritten in mode.
type rendered struct {
	Invoker
	mode Rendering
}

func (t rendered) Invoke(ctx context.Context, args json.RawMessage) (ModelResult, error) {
	m, err := t.Invoker.Invoke(ctx, args)
	return t.render(m), err
}

func (t rendered) ResumeInvoke(ctx context.Context, id string) (ModelResult, error) {
	r, ok := t.Invoker.(Resumer)
	if !ok {
		return ModelResult{}, fmt.Errorf("toolset: resume approval %s: tool %q cannot be resumed", id, t.Descriptor().Name)
	}
	m, err := r.ResumeInvoke(ctx, id)
	return t.render(m), err
}

func (t rendered) render(m ModelResult) ModelResult {
	if m.IsError || m.Pending != nil || m.Result == nil || !m.Result.HasStructuredContent() {
		return m
	}
	m.Text = m.Result.ModelTextAs(t.mode, t.Descriptor().OutputSchema)
	return m
}
