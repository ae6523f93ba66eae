package mcpruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// call is one tool call on its way through the guards. Only the identity
// guard reads token; nothing stores the call.
type call struct {
	desc      *Descriptor
	server    string
	args      json.RawMessage
	principal string // "" when the tool has no identity
	token     Secret
	// approval is the id of the approval a Resume executes; its stored
	// arguments replace args.
	approval string
	// prov is set by the taint recorder when a result came back.
	prov *Provenance
	// obs is the tool's Observer (observe.go), nil when it has none.
	obs Observer
	// op is what the call asks of the connection (task.go): a call, a
	// task start with its ttl, or a request about task.
	op   callOp
	ttl  time.Duration
	task TaskRef
	// inline and inlineErr are the outcome a task's status came with.
	inline    *Result
	inlineErr *ProtocolError
}

type handler func(ctx context.Context, c *call) (*Result, error)

// interceptor wraps a handler with one guard.
type interceptor func(next handler) handler

// chain applies interceptors around h, the first outermost.
func chain(h handler, is ...interceptor) handler {
	for i := len(is) - 1; i >= 0; i-- {
		if is[i] != nil {
			h = is[i](h)
		}
	}
	return h
}

// timeout bounds the rest of the call and reports its expiry as a
// *TimeoutError.
func timeout(d time.Duration) interceptor {
	return func(next handler) handler {
		return func(ctx context.Context, c *call) (*Result, error) {
			if d > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeoutCause(ctx, d, &TimeoutError{Tool: c.desc.Name, Timeout: d})
				defer cancel()
			}
			res, err := next(ctx, c)
			if err != nil {
				var te *TimeoutError
				if ctx.Err() != nil && errors.As(context.Cause(ctx), &te) {
					return nil, &TimeoutError{Tool: te.Tool, Timeout: te.Timeout, Err: err}
				}
			}
			return res, err
		}
	}
}

// caller is the innermost handler: the connection itself.
func callerHandler(cl Caller) handler {
	return func(ctx context.Context, c *call) (*Result, error) {
		if cl == nil {
			return nil, fmt.Errorf("tool %q: no Caller (the binding was built with a nil connection): %w", c.desc.Name, ErrNotSent)
		}
		var res *Result
		var err error
		if c.op == opCall {
			res, err = cl.CallTool(ctx, c.desc.Name, c.args)
		} else if tc, ok := cl.(TaskCaller); ok {
			res, err = taskRequest(ctx, tc, c)
		} else {
			return nil, fmt.Errorf("tool %q: the connection cannot run tasks: %w", c.desc.Name, ErrNotSent)
		}
		if err != nil {
			// The connection's errors usually name the tool already; the
			// name is said once.
			if strings.Contains(err.Error(), fmt.Sprintf("tool %q", c.desc.Name)) {
				return nil, err
			}
			return nil, fmt.Errorf("call tool %q: %w", c.desc.Name, err)
		}
		if res == nil {
			return nil, fmt.Errorf("call tool %q: the connection returned no result", c.desc.Name)
		}
		return res, nil
	}
}
