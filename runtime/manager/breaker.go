package manager

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// BreakerConfig configures the per-tool circuit breaker. The zero value
// means the defaults: 5 consecutive failures open the circuit, calls fail
// fast for 30 s, then trial calls go through one at a time and 2 successes
// close it (a failure opens it again).
type BreakerConfig struct {
	Disabled         bool
	FailureThreshold int           // consecutive failures that open the circuit (default 5)
	CoolDown         time.Duration // how long an open circuit fails fast (default 30 s)
	SuccessThreshold int           // trial successes that close it again (default 2)
}

func (c BreakerConfig) withDefaults() BreakerConfig {
	if c.FailureThreshold <= 0 {
		c.FailureThreshold = 5
	}
	if c.CoolDown <= 0 {
		c.CoolDown = 30 * time.Second
	}
	if c.SuccessThreshold <= 0 {
		c.SuccessThreshold = 2
	}
	return c
}

// ErrCircuitOpen matches every *CircuitOpenError.
var ErrCircuitOpen = errors.New("circuit open")

// CircuitOpenError is returned without calling the server while a tool's
// circuit is open (or a trial call is already in flight).
type CircuitOpenError struct {
	Server, Tool string
	Failures     int       // the consecutive failures that opened it
	Until        time.Time // when trial calls are let through
}

func (e *CircuitOpenError) Error() string {
	return fmt.Sprintf("tool %q on server %q is failing (%d failures in a row); not calling it until %s",
		e.Tool, e.Server, e.Failures, e.Until.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrCircuitOpen) true.
func (e *CircuitOpenError) Is(target error) bool { return target == ErrCircuitOpen }

// BreakerState is a circuit's state.
type BreakerState int

const (
	BreakerClosed   BreakerState = iota // calls go through
	BreakerOpen                         // calls fail fast
	BreakerHalfOpen                     // one trial call at a time
)

func (s BreakerState) String() string {
	return [...]string{"closed", "open", "half-open"}[s]
}

// breaker is one tool's circuit. The clock is injected so tests need no
// sleeps.
type breaker struct {
	cfg          BreakerConfig
	now          func() time.Time
	server, tool string

	mu        sync.Mutex
	state     BreakerState
	failures  int // consecutive, while closed
	opened    int // failures that opened it
	successes int // trial successes, while half-open
	until     time.Time
	trial     bool // a trial call is in flight
}

func newBreaker(cfg BreakerConfig, now func() time.Time, server, tool string) *breaker {
	return &breaker{cfg: cfg.withDefaults(), now: now, server: server, tool: tool}
}

// outcome is what a call tells the breaker.
type outcome int

const (
	callSucceeded outcome = iota // the server answered
	callFailed                   // the server failed or did not answer in time
	// callIgnored says nothing about the server (the caller cancelled, no
	// request was made): a trial slot is released, a run of failures kept.
	callIgnored
)

// allow asks to make a call. On success the caller must report the
// outcome with done.
func (b *breaker) allow() (done func(outcome), err error) { return b.allowNoting(nil) }

// allowNoting is allow, appending to moves (when not nil) the state
// changes that it and done make, for the manager's observer.
func (b *breaker) allowNoting(moves *[]transition) (done func(outcome), err error) {
	if b == nil || b.cfg.Disabled {
		return func(outcome) {}, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case BreakerOpen:
		if b.now().Before(b.until) {
			return nil, b.openError()
		}
		b.move(moves, BreakerHalfOpen)
		b.successes = 0
		fallthrough
	case BreakerHalfOpen:
		if b.trial {
			return nil, b.openError()
		}
		b.trial = true
		return b.report(true, moves), nil
	}
	return b.report(false, moves), nil
}

func (b *breaker) openError() error {
	return &CircuitOpenError{Server: b.server, Tool: b.tool, Failures: b.opened, Until: b.until}
}

func (b *breaker) report(trial bool, moves *[]transition) func(outcome) {
	var once sync.Once
	return func(o outcome) {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if trial {
				b.trial = false
			}
			if o == callIgnored {
				return
			}
			failed := o == callFailed
			switch {
			// Outcomes of calls let through before the circuit opened
			// do not count once it has.
			case trial && b.state == BreakerHalfOpen && failed:
				b.trip(b.opened, moves)
			case trial && b.state == BreakerHalfOpen:
				b.successes++
				if b.successes >= b.cfg.SuccessThreshold {
					b.move(moves, BreakerClosed)
					b.failures = 0
				}
			case !trial && b.state == BreakerClosed && failed:
				b.failures++
				if b.failures >= b.cfg.FailureThreshold {
					b.trip(b.failures, moves)
				}
			case !trial && b.state == BreakerClosed:
				b.failures = 0
			}
		})
	}
}

func (b *breaker) trip(n int, moves *[]transition) {
	b.move(moves, BreakerOpen)
	b.opened, b.failures, b.successes = n, 0, 0
	b.until = b.now().Add(b.cfg.CoolDown)
}

// transition is a change of a circuit's state.
type transition struct{ from, to BreakerState }

// move sets the state, noting the change in moves.
func (b *breaker) move(moves *[]transition, to BreakerState) {
	if moves != nil && b.state != to {
		*moves = append(*moves, transition{b.state, to})
	}
	b.state = to
}

// State returns the circuit's state as of now.
func (b *breaker) State() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == BreakerOpen && !b.now().Before(b.until) {
		return BreakerHalfOpen
	}
	return b.state
}
