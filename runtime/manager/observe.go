package manager

import (
	"context"
	"time"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// WithObserver attaches o: the tools of the toolsets the manager builds
// are observed by it (mcpruntime.WithObserver, given before each source's
// Options, which may replace it), and the manager's retries and circuit
// breaker transitions (mcpruntime.EventRetry, EventBreaker) go to the
// observer of the call's operation, or to o when the call is not observed.
func WithObserver(o mcpruntime.Observer) ManagerOption {
	return func(m *Manager) { m.observer = o }
}

// observerOf returns the observer events of ctx go to, or nil.
func (m *Manager) observerOf(ctx context.Context) mcpruntime.Observer {
	if o := mcpruntime.ObserverFrom(ctx); o != nil {
		return o
	}
	return m.observer
}

// retrying reports a retry after attempt (1-based) failed with err.
func (m *Manager) retrying(ctx context.Context, attempt int, delay time.Duration, err error) {
	if o := m.observerOf(ctx); o != nil {
		o.Event(ctx, &mcpruntime.Event{Kind: mcpruntime.EventRetry, Attempt: attempt, Delay: delay, Err: err})
	}
}

// allow asks the tool's breaker for a call, reporting the state changes it
// and its done make to the observer of ctx. Unobserved calls keep no
// record of them.
func (s *server) allow(ctx context.Context, tool string) (func(outcome), error) {
	b := s.breakerFor(tool)
	o := s.m.observerOf(ctx)
	if o == nil {
		return b.allow()
	}
	var moves []transition
	report := func() {
		for _, t := range moves {
			o.Event(ctx, &mcpruntime.Event{Kind: mcpruntime.EventBreaker, Server: s.id, Tool: tool, From: t.from.String(), To: t.to.String()})
		}
		moves = moves[:0]
	}
	done, err := b.allowNoting(&moves)
	report()
	if err != nil {
		return nil, err
	}
	return func(out outcome) {
		done(out)
		report()
	}, nil
}

// Endpoint implements mcpruntime.Endpointer: the current session's, when
// its connector's sessions can tell.
func (c *managedCaller) Endpoint() mcpruntime.Endpoint {
	c.s.mu.Lock()
	sess := c.s.sess
	c.s.mu.Unlock()
	if e, ok := sess.(mcpruntime.Endpointer); ok {
		return e.Endpoint()
	}
	return mcpruntime.Endpoint{}
}
