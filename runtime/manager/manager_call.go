package manager

import (
	"strconv"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// managedCaller is the Caller the manager hands to tools: every call goes
// through the server's breaker, concurrency cap, drift check and retries.
type managedCaller struct {
	s     *server
	tools map[string]*mcpruntime.Descriptor // the descriptors the tools were built from
	// timeout bounds each call (Manager.Caller); 0 for a toolset's caller,
	// whose tools apply the entry's timeout themselves.
	timeout time.Duration
}

// Name labels the server in provenance records and approvals.
func (c *managedCaller) Name() string { return c.s.id }

// CallTool implements Caller.
func (c *managedCaller) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpruntime.Result, error) {
	d := c.timeout
	if cur := c.s.config(); d > 0 && cur.ID != "" {
		d = cur.EffectiveToolTimeout() // the entry as of the last connection
	}
	if d <= 0 {
		return c.s.call(ctx, c.tools[name], name, args)
	}
	te := &mcpruntime.TimeoutError{Tool: name, Timeout: d}
	ctx, cancel := context.WithTimeoutCause(ctx, d, te)
	defer cancel()
	res, err := c.s.call(ctx, c.tools[name], name, args)
	if err != nil && errors.Is(context.Cause(ctx), te) {
		return nil, &mcpruntime.TimeoutError{Tool: name, Timeout: d, Err: err}
	}
	return res, err
}

// StartTool implements mcpruntime.TaskCaller: a task start goes through
// the server's breaker, cap and drift check like a call, and is retried
// only when it was not sent (it creates a task).
func (c *managedCaller) StartTool(ctx context.Context, name string, args json.RawMessage, ttl time.Duration) (*mcpruntime.Result, error) {
	return c.s.send(ctx, c.tools[name], name, false, func(ctx context.Context, sess Session) (*mcpruntime.Result, error) {
		tc, ok := sess.(mcpruntime.TaskCaller)
		if !ok {
			return nil, fmt.Errorf("server %q: the session cannot run tasks: %w", c.s.id, ErrNotSent)
		}
		return tc.StartTool(ctx, name, args, ttl)
	})
}

// TaskStatus implements mcpruntime.TaskCaller; a request about a task
// changes nothing and is retried like an idempotent call.
func (c *managedCaller) TaskStatus(ctx context.Context, ref mcpruntime.TaskRef) (mcpruntime.TaskStatus, error) {
	return c.taskStatus(ctx, ref, func(ctx context.Context, tc mcpruntime.TaskCaller) (mcpruntime.TaskStatus, error) {
		return tc.TaskStatus(ctx, ref)
	})
}

// CancelTask implements mcpruntime.TaskCaller.
func (c *managedCaller) CancelTask(ctx context.Context, ref mcpruntime.TaskRef) (mcpruntime.TaskStatus, error) {
	return c.taskStatus(ctx, ref, func(ctx context.Context, tc mcpruntime.TaskCaller) (mcpruntime.TaskStatus, error) {
		return tc.CancelTask(ctx, ref)
	})
}

// TaskResult implements mcpruntime.TaskCaller.
func (c *managedCaller) TaskResult(ctx context.Context, ref mcpruntime.TaskRef) (*mcpruntime.Result, error) {
	return c.s.send(ctx, nil, ref.Tool, true, func(ctx context.Context, sess Session) (*mcpruntime.Result, error) {
		tc, ok := sess.(mcpruntime.TaskCaller)
		if !ok {
			return nil, fmt.Errorf("server %q: the session cannot run tasks: %w", c.s.id, ErrNotSent)
		}
		return tc.TaskResult(ctx, ref)
	})
}

func (c *managedCaller) taskStatus(ctx context.Context, ref mcpruntime.TaskRef, f func(context.Context, mcpruntime.TaskCaller) (mcpruntime.TaskStatus, error)) (mcpruntime.TaskStatus, error) {
	var st mcpruntime.TaskStatus
	_, err := c.s.send(ctx, nil, ref.Tool, true, func(ctx context.Context, sess Session) (*mcpruntime.Result, error) {
		tc, ok := sess.(mcpruntime.TaskCaller)
		if !ok {
			return nil, fmt.Errorf("server %q: the session cannot run tasks: %w", c.s.id, ErrNotSent)
		}
		var err error
		st, err = f(ctx, tc)
		return &mcpruntime.Result{}, err
	})
	return st, err
}

// TaskSession passes on the session's, for a TaskRef.
func (c *managedCaller) TaskSession() string {
	c.s.mu.Lock()
	sess := c.s.sess
	c.s.mu.Unlock()
	if ts, ok := sess.(interface{ TaskSession() string }); ok {
		return ts.TaskSession()
	}
	return ""
}

var _ mcpruntime.TaskCaller = (*managedCaller)(nil)

// ToolNames implements ToolLister, from the manager's tool cache.
func (c *managedCaller) ToolNames(ctx context.Context) ([]string, error) {
	ts, err := c.s.tools(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return names, nil
}

// call makes one logical tool call: breaker, drift check, concurrency cap,
// then the call itself with retries where they cannot run the tool twice.
func (s *server) call(ctx context.Context, desc *mcpruntime.Descriptor, name string, args json.RawMessage) (res *mcpruntime.Result, err error) {
	return s.send(ctx, desc, name, desc != nil && desc.Annotations.Idempotent, func(ctx context.Context, sess Session) (*mcpruntime.Result, error) {
		return sess.CallTool(ctx, name, args)
	})
}

// send is call for any request about tool name (a call, a task start or
// a request about its task); idempotent requests are retried after a
// transport failure.
func (s *server) send(ctx context.Context, desc *mcpruntime.Descriptor, name string, idempotent bool, do func(context.Context, Session) (*mcpruntime.Result, error)) (res *mcpruntime.Result, err error) {
	done, err := s.allow(ctx, name)
	if err != nil {
		return nil, err
	}
	defer func() { done(breakerOutcome(ctx, err)) }()

	sess, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	if desc != nil && desc.SchemaHash != "" {
		if err := s.checkDrift(ctx, desc); err != nil {
			return nil, err
		}
	}
	if sem := s.semaphore(); sem != nil {
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
		case <-ctx.Done():
			return nil, fmt.Errorf("server %q: waiting for a free call slot (maxConcurrentCalls %d): %w", s.id, cap(sem), context.Cause(ctx))
		}
	}
	retries := s.config().EffectiveMaxRetries()
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if sess, err = s.session(ctx); err != nil {
				return nil, err
			}
		}
		res, err = do(ctx, sess)
		if err == nil {
			return res, nil
		}
		s.dropIfDone(sess)
		if ctx.Err() != nil {
			return nil, err
		}
		var perm *PermanentError
		if errors.As(err, &perm) {
			return nil, err
		}
		notSent := errors.Is(err, ErrNotSent)
		if !notSent && !(idempotent && transportError(err)) {
			if transportError(err) {
				// At most once: a mutation that may have run is not
				// repeated behind the caller's back.
				var le *mcpruntime.ConnectionLostError
				if errors.As(err, &le) {
					return nil, fmt.Errorf("%w (not retried: the tool is not annotated idempotent)", err)
				}
				return nil, fmt.Errorf("%w (the request may have reached the server; not retried: the tool is not annotated idempotent)", namingServer(s.id, err))
			}
			return nil, err
		}
		if attempt >= retries {
			if attempt > 0 {
				return nil, fmt.Errorf("%d attempts: %w", attempt+1, namingServer(s.id, err))
			}
			return nil, err
		}
		delay := s.m.backoff(attempt)
		s.m.retrying(ctx, attempt+1, delay, err)
		if s.m.sleep(ctx, delay) != nil {
			return nil, err
		}
	}
}

// transportError reports whether err is a failure of the connection rather
// than an answer from the server.
func transportError(err error) bool {
	var pe *mcpruntime.ProtocolError
	var me *mcpruntime.MissingToolError
	var te *mcpruntime.TimeoutError
	return !errors.As(err, &pe) && !errors.As(err, &me) && !errors.As(err, &te) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// breakerOutcome decides what the breaker counts: the server failing or
// not answering in time is a failure; an answer, even one saying the call
// itself was wrong, is a success; the caller giving up, or a call refused
// before any request (drift, access, the manager closed), says nothing
// about the server and is ignored.
func breakerOutcome(ctx context.Context, err error) outcome {
	if err == nil {
		return callSucceeded
	}
	if ctx.Err() != nil {
		// The per-call timeout (or the caller's deadline) passing means
		// the server was too slow; a cancellation is the caller's doing.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return callFailed
		}
		return callIgnored
	}
	var pe *mcpruntime.ProtocolError
	var me *mcpruntime.MissingToolError
	var ce *CircuitOpenError
	switch {
	case errors.As(err, &ce), errors.Is(err, ErrDrift), errors.Is(err, ErrAgentNotAllowed), errors.Is(err, ErrManagerClosed):
		return callIgnored
	case errors.As(err, &me):
		return callSucceeded
	case errors.As(err, &pe):
		// Internal errors and the implementation-defined server errors
		// count; invalid params or an unknown method are the caller's.
		if pe.Code == -32603 || (pe.Code <= -32000 && pe.Code >= -32099) {
			return callFailed
		}
		return callSucceeded
	}
	return callFailed
}

// checkDrift compares the bindings' schema hash with the live tool's.
func (s *server) checkDrift(ctx context.Context, desc *mcpruntime.Descriptor) error {
	ts, err := s.toolsAged(ctx, true)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ts, func(t ToolInfo) bool { return t.Name == desc.Name })
	if i < 0 {
		return &mcpruntime.MissingToolError{Server: s.id, Tools: []string{desc.Name}, Available: toolNames(ts)}
	}
	got := ts[i].SchemaHash()
	if got == desc.SchemaHash {
		return nil
	}
	return s.drifted(&DriftError{Server: s.id, Tool: desc.Name, Want: desc.SchemaHash, Got: got})
}

// drifted applies the drift policy: the error under DriftFail, otherwise
// one report per tool and live hash.
func (s *server) drifted(de *DriftError) error {
	if s.m.drift == DriftFail {
		return de
	}
	s.mu.Lock()
	seen := s.warned[de.Tool] == de.Got
	s.warned[de.Tool] = de.Got
	s.mu.Unlock()
	if !seen && s.m.onDrift != nil {
		s.m.onDrift(de)
	}
	return nil
}

func toolNames(ts []ToolInfo) []string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return names
}

// ToolSource selects tools of one registered server for an agent.
type ToolSource struct {
	// Server is the registered server id.
	Server string
	// Tools are the wire names to offer; empty offers every tool (every
	// bound tool with Bind, every listed tool without).
	Tools []string
	// Bind builds the typed tools generated for the server over c, passing
	// opts to each (a generated package's constructors do). Without Bind
	// the tools are built from the live listing: their arguments must be a
	// JSON object and are otherwise checked by the server only.
	Bind func(c mcpruntime.Caller, opts ...mcpruntime.Option) []mcpruntime.Invoker
	// Options are passed to every tool of the source after the manager's
	// own (the server's timeout and name): identity, gates.
	Options []mcpruntime.Option
}

// PreflightError lists everything that keeps a toolset from being built:
// servers nobody registered, servers the agent may not use, tools the
// server or the bindings lack, servers that cannot be reached. Nothing was
// called.
type PreflightError struct {
	Agent    string
	Problems []error
}

func (e *PreflightError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "toolset for agent %q: ", e.Agent)
	if len(e.Problems) == 1 {
		b.WriteString(e.Problems[0].Error())
		return b.String()
	}
	fmt.Fprintf(&b, "%d problems:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.Error())
	}
	return b.String()
}

// Unwrap returns the problems, so errors.Is and errors.As see each.
func (e *PreflightError) Unwrap() []error { return e.Problems }

// Toolset resolves an agent's tool sources into one toolset, checking
// before any call that every server is registered and open to the agent
// and offers every tool named, and that the bindings have them: a
// *PreflightError lists all that is missing. Go tools (NewGoTool, or any
// Invoker) join the set with a circuit breaker of their own.
func (m *Manager) Toolset(ctx context.Context, agent string, sources []ToolSource, goTools ...mcpruntime.Invoker) (*mcpruntime.Toolset, error) {
	var probs []error
	cfgs := make([]ServerConfig, len(sources))
	for i, src := range sources {
		cfg, err := m.access(ctx, agent, src.Server)
		if err != nil {
			probs = append(probs, err)
		}
		cfgs[i] = cfg
	}
	if len(probs) > 0 {
		// Offline problems first: no connection for a toolset that cannot
		// be built anyway.
		return nil, &PreflightError{Agent: agent, Problems: probs}
	}
	var tools []mcpruntime.Invoker
	for i, src := range sources {
		ts, err := m.resolve(ctx, cfgs[i], src)
		if err != nil {
			probs = append(probs, err)
			continue
		}
		tools = append(tools, ts...)
	}
	for _, t := range goTools {
		if t == nil || t.Descriptor() == nil {
			probs = append(probs, errors.New("a Go tool is nil"))
			continue
		}
		tools = append(tools, m.guardGo(t))
	}
	if len(probs) > 0 {
		return nil, &PreflightError{Agent: agent, Problems: probs}
	}
	return mcpruntime.NewToolset(tools...)
}

func (m *Manager) resolve(ctx context.Context, cfg ServerConfig, src ToolSource) ([]mcpruntime.Invoker, error) {
	s, err := m.server(cfg.ID)
	if err != nil {
		return nil, err
	}
	live, err := s.tools(ctx)
	if err != nil {
		return nil, err
	}
	c := &managedCaller{s: s, tools: map[string]*mcpruntime.Descriptor{}}
	opts := append([]mcpruntime.Option{mcpruntime.WithTimeout(cfg.EffectiveToolTimeout()), mcpruntime.WithServerName(cfg.ID), mcpruntime.WithObserver(m.observer)}, src.Options...)
	var candidates []mcpruntime.Invoker
	if src.Bind != nil {
		candidates = src.Bind(c, opts...)
	} else {
		for _, t := range live {
			candidates = append(candidates, mcpruntime.NewTool[dynamicArgs, dynamicOutput](t.Descriptor(), c, opts...))
		}
	}
	byName := map[string]mcpruntime.Invoker{}
	for _, t := range candidates {
		if t != nil && t.Descriptor() != nil {
			byName[t.Descriptor().Name] = t
		}
	}
	want := src.Tools
	if len(want) == 0 {
		want = slices.Sorted(func(yield func(string) bool) {
			for n := range byName {
				if !yield(n) {
					return
				}
			}
		})
	}
	liveNames := toolNames(live)
	var unbound, missing []string
	var out []mcpruntime.Invoker
	var errs []error
	for _, n := range want {
		t, ok := byName[n]
		switch {
		case !ok && src.Bind != nil && slices.Contains(liveNames, n):
			unbound = append(unbound, n)
		case !ok || !slices.Contains(liveNames, n):
			missing = append(missing, n)
		default:
			d := t.Descriptor()
			c.tools[n] = d
			out = append(out, t)
			// Drift found now fails at start under DriftFail.
			if i := slices.IndexFunc(live, func(l ToolInfo) bool { return l.Name == n }); d.SchemaHash != "" && live[i].SchemaHash() != d.SchemaHash {
				if err := s.drifted(&DriftError{Server: cfg.ID, Tool: n, Want: d.SchemaHash, Got: live[i].SchemaHash()}); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if len(missing) > 0 {
		errs = append(errs, &mcpruntime.MissingToolError{Server: cfg.ID, Tools: missing, Available: liveNames})
	}
	if len(unbound) > 0 {
		errs = append(errs, fmt.Errorf("server %q: the bindings have no %s (regenerate them to include it)", cfg.ID, quoteList(unbound)))
	}
	return out, errors.Join(errs...)
}

// dynamicArgs are the arguments of a tool built from the live listing:
// any JSON object, kept as sent.
type dynamicArgs struct{ raw json.RawMessage }

func (a *dynamicArgs) UnmarshalJSON(b []byte) error {
	a.raw = append(a.raw[:0], b...)
	return nil
}

func (a dynamicArgs) MarshalJSON() ([]byte, error) {
	if len(a.raw) == 0 {
		return []byte("{}"), nil
	}
	return a.raw, nil
}

func (*dynamicArgs) Validate() error { return nil }

// dynamicOutput accepts any structured output; the raw bytes stay in the
// Result.
type dynamicOutput struct{}

func (*dynamicOutput) UnmarshalJSON([]byte) error { return nil }
func (*dynamicOutput) Validate() error            { return nil }

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// namingServer makes sure err names the server, once: the session layer's
// errors already do.
func namingServer(id string, err error) error {
	if strings.Contains(err.Error(), strconv.Quote(id)) {
		return err
	}
	return fmt.Errorf("server %q: %w", id, err)
}
