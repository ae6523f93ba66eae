package manager

import (
	"context"
	"encoding/json"
	"errors"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// guardedGo puts a Go tool behind a circuit breaker of its own.
type guardedGo struct {
	mcpruntime.Invoker
	b *breaker
}

func (m *Manager) guardGo(t mcpruntime.Invoker) mcpruntime.Invoker {
	name := t.Descriptor().Name
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.goTools[name]
	if b == nil {
		b = newBreaker(m.breaker, m.now, "", name)
		m.goTools[name] = b
	}
	return &guardedGo{Invoker: t, b: b}
}

// Invoke implements Invoker.
func (g *guardedGo) Invoke(ctx context.Context, args json.RawMessage) (mcpruntime.ModelResult, error) {
	done, err := g.b.allow()
	if err != nil {
		return mcpruntime.ModelResult{}, err
	}
	m, err := g.Invoker.Invoke(ctx, args)
	switch {
	case m.TimedOut || (err != nil && ctx.Err() == nil):
		done(callFailed)
	case err != nil && errors.Is(ctx.Err(), context.Canceled):
		done(callIgnored) // the caller gave up: nothing learnt about the tool
	default:
		done(callSucceeded)
	}
	return m, err
}
