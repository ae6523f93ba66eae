package mcpotel

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
)

// The tests against the CRM server process, with the SDK, are in
// internal/crmtrace (a module of its own); these need neither.

func TestClassify(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("call tool %q: %w", "x", err) }
	for _, c := range []struct {
		err                   error
		isError               bool
		outcome, typ, rpcCode string
	}{
		{nil, false, OutcomeOK, "", ""},
		{nil, true, OutcomeToolError, "tool_error", ""},
		{&mcpruntime.ApprovalRequiredError{Approval: &mcpruntime.Approval{}}, false, OutcomePending, "", ""},
		{&mcpruntime.ApprovalError{Err: mcpruntime.ErrApprovalPending}, false, OutcomePending, "", ""},
		{&mcpruntime.ApprovalError{Err: mcpruntime.ErrApprovalDenied}, false, OutcomeDenied, "", ""},
		{wrap(&mcpruntime.ProtocolError{Code: -32602, Message: "bad"}), false, OutcomeError, "-32602", "-32602"},
		{&mcpruntime.TimeoutError{Tool: "x", Timeout: time.Second}, false, OutcomeError, "timeout", ""},
		{wrap(context.DeadlineExceeded), false, OutcomeError, "timeout", ""},
		{wrap(context.Canceled), false, OutcomeError, "canceled", ""},
		{&manager.CircuitOpenError{Server: "s", Tool: "x"}, false, OutcomeError, "circuit_open", ""},
		{&manager.DriftError{Server: "s", Tool: "x"}, false, OutcomeError, "drift", ""},
		{&manager.AccessError{Agent: "a", Server: "s"}, false, OutcomeError, "agent_not_allowed", ""},
		{wrap(&mcpruntime.MissingToolError{Tools: []string{"x"}}), false, OutcomeError, "missing_tool", ""},
		{&mcpruntime.ConnectError{Server: "s", Err: errors.New("refused")}, false, OutcomeError, "connect_error", ""},
		{wrap(&mcpruntime.ConnectionLostError{Server: "s"}), false, OutcomeError, "connection_lost", ""},
		{fmt.Errorf("no Caller: %w", mcpruntime.ErrNotSent), false, OutcomeError, "not_sent", ""},
		{&mcpruntime.ResourceExpiredError{URI: "u"}, false, OutcomeError, "resource_expired", ""},
		{&mcpruntime.ResourceTooLargeError{What: "u"}, false, OutcomeError, "too_large", ""},
		{&mcpruntime.ApprovalError{Err: mcpruntime.ErrApprovalExpired}, false, OutcomeError, "approval_expired", ""},
		{&mcpruntime.ApprovalError{Err: mcpruntime.ErrApprovalMismatch}, false, OutcomeError, "approval_mismatch", ""},
		{&mcpruntime.ApprovalError{Err: mcpruntime.ErrOutcomeUnknown}, false, OutcomeError, "approval_outcome_unknown", ""},
		{&mcpruntime.ApprovalError{Err: mcpruntime.ErrApprovedCallFailed}, false, OutcomeError, "approval_call_failed", ""},
		{&mcpruntime.ApprovalError{Err: mcpruntime.ErrApprovedCallNotSent}, false, OutcomeError, "approval_not_sent", ""},
		{errors.New("something"), false, OutcomeError, "_OTHER", ""},
	} {
		outcome, typ, code := classify(&mcpruntime.Ending{Err: c.err, IsError: c.isError})
		if outcome != c.outcome || typ != c.typ || code != c.rpcCode {
			t.Errorf("%v (isError %v): %q %q %q, want %q %q %q", c.err, c.isError, outcome, typ, code, c.outcome, c.typ, c.rpcCode)
		}
	}
}

// TestTraceContext: the members a gate stores and ConnOption writes are
// the W3C trace context of the context's span, and nothing without one.
func TestTraceContext(t *testing.T) {
	o, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if m := o.TraceContext(context.Background()); m != nil {
		t.Errorf("trace context without a span: %v", m)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	m := o.TraceContext(ctx)
	if want := "00-01020300000000000000000000000000-0405060000000000-01"; len(m) != 1 || m["traceparent"] != want {
		t.Errorf("trace context %v, want traceparent %s", m, want)
	}
	a := &mcpruntime.Approval{ID: "a", Trace: m}
	if l, ok := o.link(a); !ok || l.SpanContext.TraceID() != sc.TraceID() || l.SpanContext.SpanID() != sc.SpanID() {
		t.Errorf("link from %v: %+v", m, l)
	}
	if _, ok := o.link(&mcpruntime.Approval{Trace: map[string]string{"traceparent": "garbage"}}); ok {
		t.Error("a link from a garbled traceparent")
	}
}
