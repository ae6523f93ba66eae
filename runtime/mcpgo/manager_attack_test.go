package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// Regression tests for the connection manager against real server
// processes: the caller's timeout, retries that do not nest, and breakers
// that ignore a caller's cancellation.

// Manager.Caller bounds every call by the entry's toolTimeout, even on a
// context without a deadline.
func TestManagerCallerAppliesToolTimeout(t *testing.T) {
	e := newEnv(t)
	e.stdio("slow", "serve", func(c *manager.ServerConfig) { c.ToolTimeout = 300 * time.Millisecond })
	m := e.manager()
	c, err := m.Caller(context.Background(), "agent", "slow")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CallTool(context.Background(), "sleep", json.RawMessage(`{}`))
	var te *mcpruntime.TimeoutError
	if !errors.As(err, &te) || te.Tool != "sleep" || te.Timeout != 300*time.Millisecond {
		t.Fatalf("a hung tool through Manager.Caller: %v", err)
	}
	// A tool built over the caller tells the model.
	r, err := newPlain(sleepDesc, c, mcpruntime.WithTimeout(0)).Invoke(context.Background(), nil)
	if err != nil || !r.TimedOut {
		t.Errorf("invoke = %+v, %v", r, err)
	}
}

// countingConnector counts the connection attempts the manager makes
// through the real connector.
type countingConnector struct {
	manager.Connector
	n atomic.Int64
}

func (c *countingConnector) Connect(ctx context.Context, cfg manager.ServerConfig, ev manager.SessionEvents) (manager.Session, error) {
	c.n.Add(1)
	return c.Connector.Connect(ctx, cfg, ev)
}

// A server that exits at start is started 1 + maxRetries times for one
// toolset or one call, not once per retry of every layer; a program that
// does not exist is tried once.
func TestManagerRetriesDoNotNest(t *testing.T) {
	for _, tc := range []struct {
		retries int
		want    int
	}{{2, 3}, {manager.NoRetries, 1}} {
		e := newEnv(t)
		e.stdio("dead", "", func(c *manager.ServerConfig) { c.MaxRetries = tc.retries }, attackModeEnv, "exit")
		e.stdio("dead2", "", func(c *manager.ServerConfig) { c.MaxRetries = tc.retries }, attackModeEnv, "exit")
		m := e.manager()
		_, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "dead"}})
		var ce *manager.ConnectError
		if !errors.As(err, &ce) || ce.Attempts != tc.want {
			t.Errorf("maxRetries %d: toolset: %v", tc.retries, err)
		}
		if n := countLines(t, e.file("dead.pids")); n != tc.want {
			t.Errorf("maxRetries %d: a toolset over a server that exits at start started it %d times, want %d", tc.retries, n, tc.want)
		}
		c, err := m.Caller(context.Background(), "agent", "dead2")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CallTool(context.Background(), "count", json.RawMessage(`{}`)); !errors.As(err, &ce) {
			t.Errorf("maxRetries %d: call: %v", tc.retries, err)
		}
		if n := countLines(t, e.file("dead2.pids")); n != tc.want {
			t.Errorf("maxRetries %d: a call started the server %d times, want %d", tc.retries, n, tc.want)
		}
	}

	// An allowed program missing from the PATH is a permanent error.
	e := newEnv(t)
	p := manager.Policy{StdioCommands: []string{"mcpgen-fixture", "mcpgen-no-such-program"}}
	reg := manager.NewRegistry(manager.NewMemoryServerStore(), p)
	if _, err := reg.Save(context.Background(), manager.ServerConfig{ID: "missing", Transport: manager.Transport{Kind: manager.TransportStdio, Command: "mcpgen-no-such-program"}}); err != nil {
		t.Fatal(err)
	}
	cc := &countingConnector{Connector: mcpgo.NewConnector(p)}
	m := manager.NewManager(reg, cc, manager.WithSleep(func(ctx context.Context, _ time.Duration) error { e.sleeps.Add(1); return ctx.Err() }))
	t.Cleanup(func() { _ = m.CloseAll() })
	_, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "missing"}})
	var perm *manager.PermanentError
	if !errors.As(err, &perm) || cc.n.Load() != 1 || e.sleeps.Load() != 0 {
		t.Errorf("missing program: %d attempts, %d waits: %v", cc.n.Load(), e.sleeps.Load(), err)
	}
}

// A caller cancelling a call says nothing about the server: during a
// half-open trial it neither closes nor reopens the circuit and frees the
// trial slot; while closed it does not reset the run of failures.
func TestManagerBreakerIgnoresCancellation(t *testing.T) {
	e := newEnv(t)
	e.stdio("attack", "", nil, attackModeEnv, "serve")
	arrived := newArrival()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	m := e.managerWith([]mcpgo.ConnectorOption{mcpgo.WithServerStderr(arrived)},
		manager.WithBreaker(manager.BreakerConfig{FailureThreshold: 2, SuccessThreshold: 1, CoolDown: time.Minute}),
		manager.WithClock(clk.now))
	c, err := m.Caller(context.Background(), "agent", "attack")
	if err != nil {
		t.Fatal(err)
	}
	// An expired deadline fails the call without any timing: the server
	// was "too slow".
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancelExpired()
	fail := func() { _, _ = c.CallTool(expired, "block", json.RawMessage(`{}`)) }
	// cancelled makes a call the caller cancels once the server has it.
	cancelled := func() error {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			select {
			case <-arrived.ch:
				cancel()
			case <-done:
			}
		}()
		_, err := c.CallTool(ctx, "block", json.RawMessage(`{}`))
		close(done)
		cancel()
		return err
	}
	state := func() manager.BreakerState { return m.CircuitState("attack", "block") }

	fail()
	if err := cancelled(); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	fail()
	if state() != manager.BreakerOpen {
		t.Fatalf("failure, cancellation, failure with threshold 2: %s (the cancellation reset the run)", state())
	}
	clk.advance(2 * time.Minute)
	if err := cancelled(); !errors.Is(err, context.Canceled) {
		t.Fatalf("trial: %v", err)
	}
	if state() != manager.BreakerHalfOpen {
		t.Errorf("a cancelled trial moved the circuit to %s", state())
	}
	// The slot is free: the next call is a trial again, not refused.
	if err := cancelled(); errors.Is(err, manager.ErrCircuitOpen) || !errors.Is(err, context.Canceled) {
		t.Errorf("second trial: %v", err)
	}
	if _, err := c.CallTool(context.Background(), "count", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if state() != manager.BreakerHalfOpen {
		t.Errorf("another tool's success changed this circuit: %s", state())
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
