package manager

import (
	mcpruntime "github.com/mcpgen/mcpgen/runtime"

	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

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

func TestBreakerOpensCoolsDownAndCloses(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	b := newBreaker(BreakerConfig{}, clk.now, "crm", "get_deal")
	call := func(failed bool) error {
		done, err := b.allow()
		if err != nil {
			return err
		}
		if failed {
			done(callFailed)
		} else {
			done(callSucceeded)
		}
		return nil
	}
	for i := range 4 {
		if err := call(true); err != nil {
			t.Fatalf("failure %d: circuit already open: %v", i+1, err)
		}
	}
	_ = call(false) // a success resets the count
	for range 5 {
		_ = call(true)
	}
	err := call(false)
	var oe *CircuitOpenError
	if !errors.As(err, &oe) || !errors.Is(err, ErrCircuitOpen) || oe.Failures != 5 {
		t.Fatalf("after 5 failures: %v", err)
	}
	if !strings.Contains(err.Error(), `"get_deal"`) || !strings.Contains(err.Error(), `"crm"`) {
		t.Errorf("error does not name the tool and server: %v", err)
	}
	clk.advance(29 * time.Second)
	if call(false) == nil {
		t.Fatal("circuit closed before the cool-down")
	}
	clk.advance(time.Second)
	if b.State() != BreakerHalfOpen {
		t.Fatalf("state after cool-down = %v", b.State())
	}
	// One trial at a time.
	done, err := b.allow()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.allow(); err == nil {
		t.Error("a second trial call was let through")
	}
	done(callSucceeded)
	if b.State() != BreakerHalfOpen {
		t.Fatalf("closed after one success")
	}
	if err := call(false); err != nil {
		t.Fatal(err)
	}
	if b.State() != BreakerClosed {
		t.Fatalf("state after 2 successes = %v", b.State())
	}
	// A failed trial opens it again for a full cool-down.
	for range 5 {
		_ = call(true)
	}
	clk.advance(30 * time.Second)
	_ = call(true)
	if b.State() != BreakerOpen {
		t.Fatalf("state after a failed trial = %v", b.State())
	}
}

func TestBreakerDisabledAndConfigured(t *testing.T) {
	clk := &fakeClock{t: time.Unix(0, 0)}
	off := newBreaker(BreakerConfig{Disabled: true}, clk.now, "s", "t")
	for range 100 {
		done, err := off.allow()
		if err != nil {
			t.Fatal(err)
		}
		done(callFailed)
	}
	b := newBreaker(BreakerConfig{FailureThreshold: 1, CoolDown: time.Minute, SuccessThreshold: 1}, clk.now, "s", "t")
	done, _ := b.allow()
	done(callFailed)
	if b.State() != BreakerOpen {
		t.Fatal("threshold 1 did not open")
	}
	clk.advance(time.Minute)
	done, _ = b.allow()
	done(callSucceeded)
	if b.State() != BreakerClosed {
		t.Fatal("success threshold 1 did not close")
	}
}

func TestBackoffGrowsWithJitter(t *testing.T) {
	m := NewManager(nil, nil, WithBackoff(100*time.Millisecond, time.Second), WithJitter(func() float64 { return 0.999 }))
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		got := m.backoff(i)
		w *= time.Millisecond
		if got > w || got < w/2 {
			t.Errorf("backoff(%d) = %v, want within [%v, %v]", i, got, w/2, w)
		}
	}
	m = NewManager(nil, nil, WithBackoff(100*time.Millisecond, time.Second), WithJitter(func() float64 { return 0 }))
	if got := m.backoff(0); got != 50*time.Millisecond {
		t.Errorf("backoff with zero jitter = %v", got)
	}
}

type calcInput struct {
	A int `json:"a"`
	B int `json:"b"`
}

func (in *calcInput) Validate() error {
	if in.B == 0 {
		return &mcpruntime.ValidationError{Violations: []mcpruntime.Violation{{Pointer: "/b", Message: "must not be 0"}}}
	}
	return nil
}

func TestGoToolGuarantees(t *testing.T) {
	desc := &mcpruntime.Descriptor{Name: "divide", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"additionalProperties":false}`)}
	calls := 0
	div := mcpruntime.NewGoTool[calcInput](desc, mcpruntime.GoToolOptions{}, func(_ context.Context, in calcInput) (mcpruntime.ModelResult, error) {
		calls++
		return mcpruntime.ModelResult{Text: "quotient " + string(rune('0'+in.A/in.B))}, nil
	})
	run := mcpruntime.NewRun("r")
	ctx := mcpruntime.WithRun(context.Background(), run)
	m, err := div.Invoke(ctx, json.RawMessage(`{"a":6,"b":0,"c":1}`))
	if err != nil || !m.IsError || !strings.Contains(m.Text, "/b") || !strings.Contains(m.Text, "/c") || calls != 0 {
		t.Fatalf("invalid input: %+v, %v, calls %d", m, err, calls)
	}
	m, err = div.Invoke(ctx, json.RawMessage(`{"a":6,"b":3}`))
	if err != nil || m.IsError || m.Text != "quotient 2" {
		t.Fatalf("valid input: %+v, %v", m, err)
	}
	if _, tainted := run.Tainted(); tainted {
		t.Error("internal Go tool tainted the run")
	}

	block := make(chan struct{})
	defer close(block)
	slow := mcpruntime.NewGoTool[calcInput](&mcpruntime.Descriptor{Name: "slow"}, mcpruntime.GoToolOptions{Timeout: time.Millisecond, External: true},
		func(context.Context, calcInput) (mcpruntime.ModelResult, error) {
			<-block // ignores its context
			return mcpruntime.ModelResult{Text: "late"}, nil
		})
	m, err = slow.Invoke(ctx, json.RawMessage(`{"b":1}`))
	if err != nil || !m.IsError || !strings.Contains(m.Text, "did not answer within 1ms") {
		t.Fatalf("timeout: %+v, %v", m, err)
	}

	boom := mcpruntime.NewGoTool[calcInput](&mcpruntime.Descriptor{Name: "boom"}, mcpruntime.GoToolOptions{External: true}, func(context.Context, calcInput) (mcpruntime.ModelResult, error) {
		panic("index out of range")
	})
	if _, err := boom.Invoke(ctx, json.RawMessage(`{"b":1}`)); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("panic: %v", err)
	}
	ext := mcpruntime.NewGoTool[calcInput](&mcpruntime.Descriptor{Name: "fetch"}, mcpruntime.GoToolOptions{External: true}, func(context.Context, calcInput) (mcpruntime.ModelResult, error) {
		return mcpruntime.ModelResult{Text: "page"}, nil
	})
	if _, err := ext.Invoke(ctx, json.RawMessage(`{"b":1}`)); err != nil {
		t.Fatal(err)
	}
	if p, tainted := run.Tainted(); !tainted || p.Tool != "fetch" {
		t.Errorf("external Go tool did not taint the run: %+v", p)
	}
}

func TestGoToolBreakerInManager(t *testing.T) {
	clk := &fakeClock{t: time.Unix(0, 0)}
	m := NewManager(NewRegistry(NewMemoryServerStore(), Policy{}), nil, WithClock(clk.now), WithBreaker(BreakerConfig{FailureThreshold: 2}))
	calls := 0
	failing := mcpruntime.NewGoTool[calcInput](&mcpruntime.Descriptor{Name: "flaky"}, mcpruntime.GoToolOptions{}, func(context.Context, calcInput) (mcpruntime.ModelResult, error) {
		calls++
		return mcpruntime.ModelResult{}, errors.New("backend down")
	})
	ts, err := m.Toolset(context.Background(), "agent", nil, failing)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := ts.Invoke(context.Background(), "flaky", json.RawMessage(`{"b":1}`)); err == nil {
			t.Fatal("no error")
		}
	}
	_, err = ts.Invoke(context.Background(), "flaky", json.RawMessage(`{"b":1}`))
	if !errors.Is(err, ErrCircuitOpen) || calls != 2 {
		t.Fatalf("third call: %v (calls %d)", err, calls)
	}
	if m.CircuitState("", "flaky") != BreakerOpen {
		t.Error("CircuitState does not report the open circuit")
	}
}

// A call the caller cancelled says nothing about the server: during a
// half-open trial it releases the slot without closing or opening the
// circuit, and while closed it keeps the run of failures.
func TestBreakerIgnoresCancellation(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	b := newBreaker(BreakerConfig{FailureThreshold: 2, SuccessThreshold: 1, CoolDown: time.Second}, clk.now, "s", "t")
	once := func(o outcome) error {
		done, err := b.allow()
		if err == nil {
			done(o)
		}
		return err
	}
	_ = once(callFailed)
	_ = once(callIgnored)
	_ = once(callFailed)
	if b.State() != BreakerOpen {
		t.Fatalf("a cancellation reset the run of failures: %s", b.State())
	}
	clk.advance(2 * time.Second)
	if err := once(callIgnored); err != nil {
		t.Fatal(err)
	}
	if b.State() != BreakerHalfOpen {
		t.Errorf("a cancelled trial moved the circuit to %s", b.State())
	}
	if err := once(callSucceeded); err != nil {
		t.Fatalf("the cancelled trial kept its slot: %v", err)
	}
	if b.State() != BreakerClosed {
		t.Errorf("after a successful trial: %s", b.State())
	}
}
