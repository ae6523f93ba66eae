package mcpruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// GoToolOptions configure a tool written in Go.
type GoToolOptions struct {
	// Timeout bounds each call (0: DefaultTimeout; NoTimeout: none). When
	// it passes the model is told so at once; a function that ignores its
	// context keeps running in the background until it returns, and its
	// result is dropped.
	Timeout time.Duration
	// External marks the output as coming from outside the program (a web
	// page, an uploaded file): it taints the run like an MCP result.
	External bool
}

// NewGoTool makes a Go function a tool with the same guarantees as a
// generated MCP tool: the model's arguments are decoded strictly into I
// and validated (every problem goes back to the model with its JSON
// Pointer and fn is not called), each call is bounded by a timeout, a
// panic in fn becomes an error, and the output is recorded in the run's
// ledger with the External flag. I is an Input-like type with a Validate
// method, as the generator emits or as written by hand.
func NewGoTool[I any, PI Validator[I]](desc *Descriptor, opts GoToolOptions, fn func(ctx context.Context, in I) (ModelResult, error)) *GoTool {
	g := &GoTool{desc: desc, external: opts.External, timeout: effectiveTimeout(opts.Timeout)}
	g.invoke = func(ctx context.Context, args json.RawMessage) (ModelResult, bool, error) {
		args = bytes.TrimSpace(args)
		if len(args) == 0 || bytes.Equal(args, []byte("null")) {
			args = json.RawMessage("{}")
		}
		var in I
		vs := decodeArgs(args, &in, desc.closedInput())
		if len(vs) == 0 || vs[0].Pointer != "" {
			for _, v := range validationViolations(PI(&in).Validate(), nil) {
				if !coveredBy(v, vs) {
					vs = append(vs, v)
				}
			}
		}
		if len(vs) > 0 {
			return ModelResult{IsError: true, Text: argumentsText(desc.Name, vs)}, false, nil
		}
		return g.run(ctx, func(ctx context.Context) (ModelResult, error) { return fn(ctx, in) })
	}
	return g
}

// GoTool is a tool written in Go (see NewGoTool). It implements Invoker.
type GoTool struct {
	desc     *Descriptor
	external bool
	timeout  time.Duration
	// invoke reports whether the function produced the result; what the
	// runtime says itself (bad arguments, a timeout) is not recorded.
	invoke func(ctx context.Context, args json.RawMessage) (ModelResult, bool, error)
}

// Descriptor implements Invoker.
func (g *GoTool) Descriptor() *Descriptor { return g.desc }

// Invoke implements Invoker: the function's result is recorded in the
// run's ledger as FuncTool records it.
func (g *GoTool) Invoke(ctx context.Context, args json.RawMessage) (ModelResult, error) {
	m, ran, err := g.invoke(ctx, args)
	if !ran || err != nil {
		return m, err
	}
	ft := FuncTool{Desc: g.desc, External: g.external, Func: func(context.Context, json.RawMessage) (ModelResult, error) { return m, nil }}
	return ft.Invoke(ctx, args)
}

// run calls f under the timeout, in its own goroutine so that a function
// ignoring its context cannot hold the caller past it.
func (g *GoTool) run(ctx context.Context, f func(context.Context) (ModelResult, error)) (ModelResult, bool, error) {
	if g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, g.timeout, &TimeoutError{Tool: g.desc.Name, Timeout: g.timeout})
		defer cancel()
	}
	type outcome struct {
		m   ModelResult
		err error
	}
	ch := make(chan outcome, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- outcome{err: fmt.Errorf("tool %q panicked: %v", g.desc.Name, r)}
			}
		}()
		m, err := f(ctx)
		ch <- outcome{m, err}
	}()
	select {
	case o := <-ch:
		if _, ok := context.Cause(ctx).(*TimeoutError); ok && o.err != nil {
			return g.timedOut(ctx)
		}
		return o.m, true, o.err
	case <-ctx.Done():
		if _, ok := context.Cause(ctx).(*TimeoutError); ok {
			return g.timedOut(ctx)
		}
		return ModelResult{}, false, fmt.Errorf("tool %q: %w", g.desc.Name, ctx.Err())
	}
}

func (g *GoTool) timedOut(ctx context.Context) (ModelResult, bool, error) {
	return ModelResult{IsError: true, TimedOut: true, Text: fmt.Sprintf("The tool did not answer within %s. It may be slow or stuck; try again later or differently.", g.timeout)}, false, nil
}

// effectiveTimeout reads a GoToolOptions timeout: 0 is the default,
// negative (NoTimeout) none.
func effectiveTimeout(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultTimeout
	case d < 0:
		return 0
	}
	return d
}
