package mcpruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// GatePolicy decides whether a call needs a person's approval before it is
// made. args are the call's arguments without the identity argument.
type GatePolicy func(d *Descriptor, args json.RawMessage) bool

// GateMutations is the default policy: a tool that is not annotated
// read-only may change state, so its calls are gated. With the
// specification's defaults a tool without annotations is a mutation (and
// destructive).
func GateMutations(d *Descriptor, _ json.RawMessage) bool { return !d.Annotations.ReadOnly }

// GateAlways gates every call.
func GateAlways(*Descriptor, json.RawMessage) bool { return true }

// GateNever gates no call.
func GateNever(*Descriptor, json.RawMessage) bool { return false }

// DefaultApprovalTTL is how long a pending approval waits for a decision.
const DefaultApprovalTTL = 24 * time.Hour

// GateOption configures a Gate.
type GateOption func(*Gate)

// GateDefault sets the policy for tools without a rule of their own
// (default GateMutations).
func GateDefault(p GatePolicy) GateOption { return func(g *Gate) { g.def = p } }

// GateTool sets the policy for one tool by wire name, overriding the
// default: GateAlways, GateNever, or a predicate on the arguments.
func GateTool(name string, p GatePolicy) GateOption {
	return func(g *Gate) { g.tools[name] = p }
}

// GateAfterTaint makes the gate taint-aware: once the run (see WithRun) has
// ingested external content, every call to a tool not annotated read-only
// needs approval, whatever the policies say. It guards against instructions
// injected through tool output steering the model into changes.
func GateAfterTaint() GateOption { return func(g *Gate) { g.taintAware = true } }

// GateTTL sets how long pending approvals wait (default
// DefaultApprovalTTL).
func GateTTL(d time.Duration) GateOption { return func(g *Gate) { g.ttl = d } }

// GateClock replaces time.Now, for tests of expiry.
func GateClock(now func() time.Time) GateOption { return func(g *Gate) { g.now = now } }

// Gate holds gated calls for a person's decision and makes each approved
// call exactly once. Give it to tools with WithGate; one Gate (and store)
// can serve every tool of a program.
type Gate struct {
	store      ApprovalStore
	def        GatePolicy
	tools      map[string]GatePolicy
	taintAware bool
	ttl        time.Duration
	now        func() time.Time
	observer   Observer

	mu sync.Mutex
	// inflight has a channel per approval this process is executing,
	// closed when the outcome is recorded, so concurrent resumers in the
	// process wait for it instead of failing.
	inflight map[string]chan struct{}
}

// NewGate returns a gate keeping approvals in store.
func NewGate(store ApprovalStore, opts ...GateOption) *Gate {
	g := &Gate{store: store, def: GateMutations, tools: map[string]GatePolicy{}, ttl: DefaultApprovalTTL, now: time.Now, inflight: map[string]chan struct{}{}}
	for _, o := range opts {
		o(g)
	}
	if g.def == nil {
		g.def = GateMutations
	}
	if g.ttl <= 0 {
		g.ttl = DefaultApprovalTTL
	}
	return g
}

// Store returns the gate's approval store.
func (g *Gate) Store() ApprovalStore { return g.store }

// Get returns an approval, with expiry applied to its state.
func (g *Gate) Get(ctx context.Context, id string) (*Approval, error) {
	a, err := g.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	a.State = a.effectiveState(g.now())
	return a, nil
}

// Pending returns the approvals waiting for a decision, oldest first.
func (g *Gate) Pending(ctx context.Context) ([]*Approval, error) {
	all, err := g.store.List(ctx)
	if err != nil {
		return nil, err
	}
	now := g.now()
	var out []*Approval
	for _, a := range all {
		if a.effectiveState(now) == StatePending {
			out = append(out, a)
		}
	}
	return out, nil
}

// errNoChange makes a store Update write nothing without it being an error.
var errNoChange = errors.New("no change")

// Approve approves a pending approval. digest must be the approval's
// Digest, the arguments the person was shown: an approval covers exactly
// those. Approving twice is not an error.
func (g *Gate) Approve(ctx context.Context, id, digest string) error {
	now := g.now()
	var fail error
	stored, err := g.store.Update(ctx, id, func(a *Approval) error {
		if a.Digest != digest {
			return &ApprovalError{ID: id, Tool: a.Tool, Err: ErrApprovalMismatch, Detail: fmt.Sprintf("it covers arguments %s, not %s", a.Digest, digest)}
		}
		switch a.effectiveState(now) {
		case StatePending:
			a.State, a.Decided = StateApproved, now
			return nil
		case StateDenied:
			return &ApprovalError{ID: id, Tool: a.Tool, Err: ErrApprovalDenied, Detail: a.Reason}
		case StateExpired:
			fail = &ApprovalError{ID: id, Tool: a.Tool, Err: ErrApprovalExpired}
			if a.State != StateExpired {
				a.State = StateExpired
				return nil
			}
			return fail
		default: // approved, executing, done
			return errNoChange
		}
	})
	if errors.Is(err, errNoChange) {
		return nil
	}
	if err != nil {
		return err
	}
	g.decided(ctx, stored)
	return fail
}

// ErrApprovalStarted: a Deny came after the approved call had started.
var ErrApprovalStarted = errors.New("the approved call has already started")

// Deny denies a pending (or approved, not yet started) approval. The tool
// never runs; resuming it gives the model a denial carrying reason.
func (g *Gate) Deny(ctx context.Context, id, reason string) error {
	now := g.now()
	var fail error
	stored, err := g.store.Update(ctx, id, func(a *Approval) error {
		switch a.effectiveState(now) {
		case StatePending, StateApproved:
			a.State, a.Decided, a.Reason = StateDenied, now, reason
			return nil
		case StateDenied:
			return errNoChange
		case StateExpired:
			fail = &ApprovalError{ID: id, Tool: a.Tool, Err: ErrApprovalExpired}
			if a.State != StateExpired {
				a.State = StateExpired
				return nil
			}
			return fail
		default:
			return &ApprovalError{ID: id, Tool: a.Tool, Err: ErrApprovalStarted}
		}
	})
	if errors.Is(err, errNoChange) {
		return nil
	}
	if err != nil {
		return err
	}
	g.decided(ctx, stored)
	return fail
}

// denialText is what the model receives for a denied call.
func denialText(a *ApprovalError) string {
	reason := a.Detail
	if reason == "" {
		reason = "no reason was given"
	}
	return fmt.Sprintf("A person reviewing this call to %q denied it, so it was not made. Reason: %s", a.Tool, reason)
}

// decide says whether the call is gated, and why.
func (g *Gate) decide(ctx context.Context, c *call) (string, bool) {
	if g.taintAware && !c.desc.Annotations.ReadOnly {
		if r := RunFrom(ctx); r != nil {
			if p, ok := r.Tainted(); ok {
				return fmt.Sprintf("the run has ingested external content (from %s) and the tool may change state", p.source()), true
			}
		}
	}
	if p, ok := g.tools[c.desc.Name]; ok && p != nil {
		return "a rule for this tool", p(c.desc, c.args)
	}
	if g.def(c.desc, c.args) {
		return "the tool may change state (it is not annotated read-only)", true
	}
	return "", false
}

// intercept is the gate guard. A fresh call that the policy gates is
// stored as pending and not made; a resumed call is made at most once.
func (g *Gate) intercept(next handler) handler {
	return func(ctx context.Context, c *call) (*Result, error) {
		if c.approval != "" {
			return g.execute(ctx, c, next)
		}
		why, gated := g.decide(ctx, c)
		if !gated {
			return next(ctx, c)
		}
		args := c.args
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, args); err != nil {
			return nil, fmt.Errorf("tool %q: arguments: %w", c.desc.Name, err)
		}
		digest, err := ArgsDigest(compact.Bytes())
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", c.desc.Name, err)
		}
		now := g.now()
		a := &Approval{
			ID: randomID(), Tool: c.desc.Name, Server: c.server, ServerIdentity: c.desc.Server, SchemaHash: c.desc.SchemaHash, Args: compact.Bytes(), Digest: digest,
			Principal: c.principal, Why: why, State: StatePending, Created: now, Expires: now.Add(g.ttl),
		}
		if c.obs != nil {
			a.Trace = c.traceOf(ctx)
		}
		if err := g.store.Create(ctx, a); err != nil {
			return nil, fmt.Errorf("tool %q: store approval: %w", c.desc.Name, err)
		}
		if c.obs != nil {
			c.obs.Event(ctx, &Event{Kind: EventApprovalPending, Approval: a})
		}
		return nil, &ApprovalRequiredError{Approval: a}
	}
}

// boundTo checks that a was made for the tool desc of server, so that it
// is never spent on another server's tool of the same name: by the label,
// and by the identity of the server the bindings were generated from.
func boundTo(a *Approval, desc *Descriptor, server string) error {
	if a.Tool == desc.Name && a.Server == server && a.ServerIdentity == desc.Server && a.SchemaHash == desc.SchemaHash {
		return nil
	}
	return &ApprovalError{ID: a.ID, Tool: a.Tool, Err: ErrApprovalMismatch, Detail: fmt.Sprintf("it is for tool %q of server %q (bindings of %q) with schemas %q, not tool %q of server %q (bindings of %q) with schemas %q",
		a.Tool, a.Server, a.ServerIdentity, a.SchemaHash, desc.Name, server, desc.Server, desc.SchemaHash)}
}

// binding checks that a approves this very call: the stored arguments
// still hash to the approved digest and the principal is the same.
func binding(a *Approval, c *call) error {
	if d, err := ArgsDigest(a.Args); err != nil || d != a.Digest {
		return &ApprovalError{ID: a.ID, Tool: a.Tool, Err: ErrApprovalMismatch, Detail: "the stored arguments no longer hash to the approved digest " + a.Digest}
	}
	if a.Principal != c.principal {
		return &ApprovalError{ID: a.ID, Tool: a.Tool, Err: ErrApprovalMismatch, Detail: fmt.Sprintf("it was requested by principal %q, not %q", a.Principal, c.principal)}
	}
	return nil
}

// execute makes the approved call once. The store's compare-and-swap from
// approved to executing picks one winner; other resumers in this Gate wait
// for its outcome, resumers elsewhere wait through an ApprovalWaiter store,
// and every later resume returns the recorded outcome.
func (g *Gate) execute(ctx context.Context, c *call, next handler) (*Result, error) {
	id := c.approval
	waiter, _ := g.store.(ApprovalWaiter)
	for {
		now := g.now()
		var (
			won, foreign bool // foreign: executing, not by this Gate
			wait         chan struct{}
			expired      *ApprovalError
			seen         *Approval
			release      func()
		)
		a, err := g.claim(ctx, waiter, id, &release, func(a *Approval) error {
			if err := boundTo(a, c.desc, c.server); err != nil {
				return err
			}
			switch a.effectiveState(now) {
			case StatePending:
				return &ApprovalError{ID: id, Tool: a.Tool, Err: ErrApprovalPending}
			case StateDenied:
				return &ApprovalError{ID: id, Tool: a.Tool, Err: ErrApprovalDenied, Detail: a.Reason}
			case StateExpired:
				expired = &ApprovalError{ID: id, Tool: a.Tool, Err: ErrApprovalExpired}
				if a.State != StateExpired {
					a.State = StateExpired
					return nil
				}
				return expired
			case StateApproved:
				if err := binding(a, c); err != nil {
					return err
				}
				if ctx.Err() != nil {
					// A call on an ended context would fail before or
					// after reaching the server; not starting it keeps
					// the approval usable.
					return &ApprovalError{ID: id, Tool: a.Tool, Err: ErrApprovedCallNotSent,
						Detail: fmt.Sprintf("the resume's context had ended (%v), so nothing was started; the approval is still approved and a resume with a live context makes the call", context.Cause(ctx))}
				}
				a.State, a.Started = StateExecuting, now
				won = true
				// Registered under the store's lock, so a resumer that sees
				// executing next also sees the channel.
				g.mu.Lock()
				g.inflight[id] = make(chan struct{})
				g.mu.Unlock()
				return nil
			case StateExecuting:
				if err := binding(a, c); err != nil {
					return err
				}
				g.mu.Lock()
				wait = g.inflight[id]
				g.mu.Unlock()
				if wait == nil && waiter == nil {
					return &ApprovalError{ID: id, Tool: a.Tool, Err: ErrOutcomeUnknown, Detail: "started " + a.Started.UTC().Format(time.RFC3339)}
				}
				foreign = wait == nil
				return errNoChange
			default: // done
				if err := binding(a, c); err != nil {
					return err
				}
				seen = a.clone()
				return errNoChange
			}
		})
		switch {
		case won && err != nil:
			// The transition was not stored: nothing ran; let waiters retry.
			g.finish(id)
			if _, ok := err.(*ApprovalError); ok {
				return nil, err // it names the approval
			}
			return nil, fmt.Errorf("approval %s: %w", id, err)
		case won:
			if release != nil {
				defer release()
			}
			if c.obs != nil {
				c.obs.Event(ctx, &Event{Kind: EventApprovalResumed, Approval: a})
			}
			return g.run(ctx, c, a, next)
		case foreign:
			w, err := waiter.Wait(ctx, id)
			if err != nil {
				return nil, err
			}
			if w.State == StateExecuting {
				return nil, &ApprovalError{ID: id, Tool: w.Tool, Err: ErrOutcomeUnknown, Detail: "started " + w.Started.UTC().Format(time.RFC3339) +
					"; the store no longer sees its runner (its process ended, or lost its connection to the store), so this resume cannot wait for the outcome; a later resume returns it if the runner still records it"}
			}
			continue
		case wait != nil:
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case seen != nil:
			if c.obs != nil {
				c.obs.Event(ctx, &Event{Kind: EventApprovalReplayed, Approval: seen})
			}
			return replay(ctx, c, seen)
		case expired != nil && err == nil:
			return nil, expired
		default:
			return nil, err
		}
	}
}

// claim runs the resume's compare-and-swap, through Claim when the store
// can mark the winner as running, so that resumers elsewhere can wait.
func (g *Gate) claim(ctx context.Context, w ApprovalWaiter, id string, release *func(), fn func(*Approval) error) (*Approval, error) {
	if w == nil {
		return g.store.Update(ctx, id, fn)
	}
	a, rel, err := w.Claim(ctx, id, fn)
	*release = rel
	return a, err
}

func (g *Gate) finish(id string) {
	g.mu.Lock()
	if ch, ok := g.inflight[id]; ok {
		close(ch)
		delete(g.inflight, id)
	}
	g.mu.Unlock()
}

// run makes the call with the approved arguments and records the outcome.
// The outcome is recorded even if ctx has ended meanwhile.
func (g *Gate) run(ctx context.Context, c *call, a *Approval, next handler) (*Result, error) {
	defer g.finish(a.ID)
	c.args = cloneRaw(a.Args)
	res, err := next(ctx, c)
	out := &Outcome{Finished: g.now(), Provenance: c.prov}
	if err != nil {
		out.Error, out.Delivery = err.Error(), delivery(err)
	} else if out.Result, err = encodeResult(res); err != nil {
		out.Error = "encode result: " + err.Error()
	}
	done, uerr := g.store.Update(context.WithoutCancel(ctx), a.ID, func(s *Approval) error {
		if s.State != StateExecuting {
			return fmt.Errorf("state is %s, not executing", s.State)
		}
		s.State, s.Outcome = StateDone, out
		return nil
	})
	if uerr != nil {
		// The result is the only copy there is: it goes to the caller.
		nr := &ApprovalError{ID: a.ID, Tool: a.Tool, Err: ErrOutcomeNotRecorded, Detail: uerr.Error()}
		if err != nil {
			return nil, fmt.Errorf("%w; %w", err, nr)
		}
		return res, nr
	}
	if c.obs != nil {
		c.obs.Event(ctx, &Event{Kind: EventApprovalOutcome, Approval: done})
	}
	return res, err
}

// replay returns the recorded outcome of the one execution. The result
// enters this run too, so it is recorded in this run's ledger.
func replay(ctx context.Context, c *call, a *Approval) (*Result, error) {
	o := a.Outcome
	if o == nil {
		return nil, &ApprovalError{ID: a.ID, Tool: a.Tool, Err: ErrOutcomeUnknown, Detail: "done without an outcome"}
	}
	if o.Error != "" {
		switch o.Delivery {
		case DeliveryNotSent:
			return nil, &ApprovalError{ID: a.ID, Tool: a.Tool, Err: ErrApprovedCallNotSent,
				Detail: "the one execution could not send it, so the server never saw it; the approval is used up, ask for a new one: " + o.Error}
		case DeliveryUnknown:
			return nil, &ApprovalError{ID: a.ID, Tool: a.Tool, Err: ErrOutcomeUnknown,
				Detail: "the request was sent, or may have been, and no answer came; check on the server whether it was applied: " + o.Error}
		}
		return nil, &ApprovalError{ID: a.ID, Tool: a.Tool, Err: ErrApprovedCallFailed, Detail: o.Error}
	}
	res, err := ParseResult(o.Result)
	if _, task, _ := ParseCreatedTask(o.Result); task {
		// An approved task start's outcome is its task (task.go).
		res, err = &Result{Raw: cloneRaw(o.Result)}, nil
	}
	if err != nil {
		return nil, &ApprovalError{ID: a.ID, Tool: a.Tool, Err: ErrOutcomeUnknown, Detail: "recorded result unreadable: " + err.Error()}
	}
	if o.Provenance != nil {
		p := *o.Provenance
		c.prov = &p
		if r := RunFrom(ctx); r != nil {
			r.Record(p)
		}
		if c.obs != nil {
			c.obs.Event(ctx, &Event{Kind: EventTaint, Provenance: c.prov})
		}
	}
	return res, nil
}
