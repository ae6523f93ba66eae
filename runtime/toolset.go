package mcpruntime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
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

func (t *Tool[I, O]) coreOf() *toolCore { return &t.core }

// gated returns the named tool's core when it has a gate: a *Tool, or a
// resource reader (which embeds a ReaderGate).
func (s *Toolset) gated(tool string) (*toolCore, error) {
	t := s.byName[tool]
	if w, ok := t.(rendered); ok {
		t = w.Invoker
	}
	if c, ok := t.(interface{ coreOf() *toolCore }); ok && c.coreOf().gate != nil {
		return c.coreOf(), nil
	}
	return nil, fmt.Errorf("toolset: no tool %q with a gate in the set", tool)
}

// Gated returns the server label the named tool's approvals are bound to
// (WithServerName, or the Caller's Name), and whether it has a gate (a
// Tool given WithGate, or a resource reader given one).
func (s *Toolset) Gated(tool string) (server string, ok bool) {
	c, err := s.gated(tool)
	if err != nil {
		return "", false
	}
	return c.server, true
}

// Approval returns the stored approval id, expiry applied, if it was made
// for the named tool (same wire name, server and schema hash) and for the
// principal the tool acts as in ctx (its WithIdentity or ReadIdentity; ""
// for a tool without one); otherwise an error wrapping
// ErrApprovalMismatch. A context without the principal the tool needs is
// the identity's error. Show a person this, never a copy handed over by
// someone else.
func (s *Toolset) Approval(ctx context.Context, tool, id string) (*Approval, error) {
	c, err := s.gated(tool)
	var a *Approval
	var principal string
	if err == nil {
		principal, err = c.principal(ctx)
	}
	if err == nil {
		a, err = c.gate.Get(ctx, id)
	}
	if err == nil {
		err = ownedBy(a, c, principal)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// principal is the ID of the principal the tool acts as in ctx.
func (t *toolCore) principal(ctx context.Context) (string, error) {
	c, err := t.newCall(ctx, nil)
	if err != nil {
		return "", err
	}
	return c.principal, nil
}

// ownedBy checks that a was made through the tool t for principal.
func ownedBy(a *Approval, t *toolCore, principal string) error {
	if err := boundTo(a, t.desc, t.server); err != nil {
		return err
	}
	if a.Principal != principal {
		return &ApprovalError{ID: a.ID, Tool: a.Tool, Err: ErrApprovalMismatch, Detail: fmt.Sprintf("it was requested by principal %q, not %q", a.Principal, principal)}
	}
	return nil
}

// MarkContinued records once, atomically, that a paused agent loop went on
// with the result of the named tool's decided approval id (runtime/agent's
// Set.Resume does): a second mark, from any process sharing the store,
// fails with ErrApprovalContinued. The approval must be one Approval would
// return for ctx. Resume is not affected.
func (s *Toolset) MarkContinued(ctx context.Context, tool, id string) error {
	c, err := s.gated(tool)
	if err != nil {
		return err
	}
	principal, err := c.principal(ctx)
	if err != nil {
		return err
	}
	now := c.gate.now()
	_, err = c.gate.store.Update(ctx, id, func(a *Approval) error {
		st := a.effectiveState(now)
		switch err := ownedBy(a, c, principal); {
		case err != nil:
			return err
		case !a.Continued.IsZero():
			return &ApprovalError{ID: id, Tool: a.Tool, Err: ErrApprovalContinued, Detail: "at " + a.Continued.UTC().Format(time.RFC3339)}
		case st == StatePending || st == StateApproved:
			return &ApprovalError{ID: id, Tool: a.Tool, Err: ErrApprovalPending}
		}
		a.Continued = now
		return nil
	})
	return err
}
