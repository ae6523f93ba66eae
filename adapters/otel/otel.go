package mcpotel

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"go.opentelemetry.io/otel"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "github.com/mcpgen/mcpgen/adapters/otel"

// The attributes of this package's own, outside the conventions.
const (
	// AttrServer is the server's label in the program (the registry id
	// under the manager, WithServerName, or the connection's name).
	AttrServer = attribute.Key("mcpgen.server")
	// AttrOutcome is how the operation ended: one of the Outcome values.
	AttrOutcome = attribute.Key("mcpgen.outcome")
	// AttrApprovalID is the approval a call was held for or resumes.
	AttrApprovalID = attribute.Key("mcpgen.approval.id")
	// AttrApprovalState is an approval's state after the event.
	AttrApprovalState = attribute.Key("mcpgen.approval.state")
	// AttrApprovalWhy is what held the call.
	AttrApprovalWhy = attribute.Key("mcpgen.approval.why")
	// AttrApprovalDigest is the digest of the arguments an approval
	// covers (not the arguments).
	AttrApprovalDigest = attribute.Key("mcpgen.approval.digest")
	// AttrApprovalExpires is when a pending approval expires (RFC 3339).
	AttrApprovalExpires = attribute.Key("mcpgen.approval.expires")
	// AttrApprovalDelivery says of a failed execution whether its request
	// reached the server ("not-sent", "unknown", or "answered").
	AttrApprovalDelivery = attribute.Key("mcpgen.approval.delivery")
	// AttrRunID and AttrRunTainted: the run the operation belongs to, and
	// whether it had ingested external content before the operation.
	AttrRunID      = attribute.Key("mcpgen.run.id")
	AttrRunTainted = attribute.Key("mcpgen.run.tainted")
	// AttrTaintSource ("tool", "resource" or "prompt"), AttrTaintExternal,
	// AttrTaintIsError and AttrTaintDigest describe a ledger record.
	AttrTaintSource   = attribute.Key("mcpgen.taint.source")
	AttrTaintExternal = attribute.Key("mcpgen.taint.external")
	AttrTaintIsError  = attribute.Key("mcpgen.taint.is_error")
	AttrTaintDigest   = attribute.Key("mcpgen.taint.digest")
	// AttrRetryAttempt is the attempt that failed (1-based), AttrRetryDelay
	// the wait before the next one, in seconds.
	AttrRetryAttempt = attribute.Key("mcpgen.retry.attempt")
	AttrRetryDelay   = attribute.Key("mcpgen.retry.delay")
	// AttrBreakerFrom and AttrBreakerTo are a circuit's states ("closed",
	// "open", "half-open") around a transition.
	AttrBreakerFrom = attribute.Key("mcpgen.breaker.from")
	AttrBreakerTo   = attribute.Key("mcpgen.breaker.to")
)

// The values of AttrOutcome.
const (
	OutcomeOK        = "ok"         // the server answered with a result
	OutcomeToolError = "tool_error" // the result is flagged isError
	OutcomePending   = "pending"    // a gate holds the call (or its approval is not decided yet)
	OutcomeDenied    = "denied"     // a person denied the call
	OutcomeError     = "error"      // anything else: error.type says what
)

// The names of the span events.
const (
	EventApprovalPending  = "mcpgen.approval.pending"
	EventApprovalResumed  = "mcpgen.approval.resumed"
	EventApprovalReplayed = "mcpgen.approval.replayed"
	EventApprovalOutcome  = "mcpgen.approval.outcome"
	EventApprovalDecided  = "mcpgen.approval.decided"
	EventTaint            = "mcpgen.taint.recorded"
	EventRetry            = "mcpgen.retry"
	EventBreaker          = "mcpgen.breaker"
)

// DurationBuckets are the bucket boundaries (seconds) the conventions
// give mcp.client.operation.duration.
var DurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Option configures an Observer.
type Option func(*config)

type config struct {
	tp        trace.TracerProvider
	mp        metric.MeterProvider
	prop      propagation.TextMapPropagator
	args, res bool
}

// WithTracerProvider sets where spans go (default: otel.GetTracerProvider
// at New).
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithMeterProvider sets where metrics go (default: otel.GetMeterProvider
// at New).
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithPropagator sets how the trace context is written into requests'
// params._meta and into approvals (default: W3C Trace Context alone,
// traceparent and tracestate, as the conventions say; a propagator with
// baggage would send the baggage to every server too).
func WithPropagator(p propagation.TextMapPropagator) Option { return func(c *config) { c.prop = p } }

// RecordArguments records each tool call's arguments as
// gen_ai.tool.call.arguments (the conventions' opt-in attribute). Off by
// default: arguments are the program's data. They never hold the caller's
// token: the runtime takes the identity argument out before the observer
// sees them.
func RecordArguments() Option { return func(c *config) { c.args = true } }

// RecordResults records each tool call's result as gen_ai.tool.call.result
// (the raw JSON the server sent, token scrubbed), and error messages as
// span status descriptions (a server may build them from the arguments).
// Off by default.
func RecordResults() Option { return func(c *config) { c.res = true } }

// Observer is an mcpruntime.Observer that makes OpenTelemetry spans and
// metrics as the conventions for MCP and for GenAI tool execution say. It
// is safe for concurrent use.
type Observer struct {
	cfg      config
	tracer   trace.Tracer
	duration mcpconv.ClientOperationDuration
}

var (
	_ mcpruntime.Observer     = (*Observer)(nil)
	_ mcpruntime.TraceCarrier = (*Observer)(nil)
)

// New returns an Observer. Attach it to tools with
// mcpruntime.WithObserver (generated clients pass it to their reads too),
// to reads with mcpruntime.ReadObserver, to a gate's decisions with
// mcpruntime.GateObserver and to a manager with manager.WithObserver; give
// connections ConnOption so that the server joins the trace.
func New(opts ...Option) (*Observer, error) {
	c := config{prop: propagation.TraceContext{}}
	for _, o := range opts {
		o(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.prop == nil {
		c.prop = propagation.TraceContext{}
	}
	o := &Observer{cfg: c, tracer: c.tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))}
	d, err := mcpconv.NewClientOperationDuration(c.mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL)),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	if err != nil {
		return nil, err
	}
	o.duration = d
	return o, nil
}

// ConnOption is the mcpgo option that writes the trace context of each
// request's context into its params._meta (the propagator's keys:
// traceparent and tracestate by default), so that the server's spans join
// the caller's trace. For a manager, pass it with
// mcpgo.WithConnOptions to the Connector.
func (o *Observer) ConnOption() mcpgo.Option {
	return mcpgo.WithMetaInjector(func(ctx context.Context, set func(key, value string)) {
		o.cfg.prop.Inject(ctx, setter(set))
	})
}

// TraceContext implements mcpruntime.TraceCarrier: the propagator's
// members for ctx, which a gate stores with the approval it creates.
func (o *Observer) TraceContext(ctx context.Context) map[string]string {
	m := propagation.MapCarrier{}
	o.cfg.prop.Inject(ctx, m)
	if len(m) == 0 {
		return nil
	}
	return m
}

// setter is a propagation carrier that only writes.
type setter func(key, value string)

func (s setter) Get(string) string     { return "" }
func (s setter) Set(key, value string) { s(key, value) }
func (s setter) Keys() []string        { return nil }

// spanName is the conventions' "{mcp.method.name} {target}", the target
// being the tool or prompt; a read is named by its method alone (its URI
// is an attribute).
func spanName(op *mcpruntime.Operation) string {
	switch {
	case op.Tool != "":
		return op.Method + " " + op.Tool
	case op.Prompt != "":
		return op.Method + " " + op.Prompt
	}
	return op.Method
}

// Begin implements mcpruntime.Observer: a CLIENT span named and
// attributed as the conventions say.
func (o *Observer) Begin(ctx context.Context, op *mcpruntime.Operation) context.Context {
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, semconv.McpMethodNameKey.String(op.Method))
	if op.Server != "" {
		attrs = append(attrs, AttrServer.String(op.Server))
	}
	switch op.Method {
	case mcpruntime.MethodToolsCall:
		attrs = append(attrs, semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(op.Tool))
		if op.ToolCallID != "" {
			attrs = append(attrs, semconv.GenAIToolCallID(op.ToolCallID))
		}
		if op.Approval != "" {
			attrs = append(attrs, AttrApprovalID.String(op.Approval))
		}
		if o.cfg.args && op.Args != nil {
			attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(string(op.Args)))
		}
	case mcpruntime.MethodPromptsGet:
		attrs = append(attrs, semconv.GenAIPromptName(op.Prompt))
	case mcpruntime.MethodResourcesRead:
		attrs = append(attrs, semconv.McpResourceURI(op.URI))
	}
	if op.Run != nil {
		_, tainted := op.Run.Tainted()
		attrs = append(attrs, AttrRunID.String(op.Run.ID()), AttrRunTainted.Bool(tainted))
	}
	ctx, _ = o.tracer.Start(ctx, spanName(op), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...),
		trace.WithTimestamp(op.Start))
	return ctx
}

// End implements mcpruntime.Observer: the outcome, the connection's
// attributes, the span's status, and the duration metric.
func (o *Observer) End(ctx context.Context, op *mcpruntime.Operation, e *mcpruntime.Ending) {
	span := trace.SpanFromContext(ctx)
	outcome, errType, status := classify(e)
	common := make([]attribute.KeyValue, 0, 12)
	common = append(common, AttrOutcome.String(outcome))
	if op.Server != "" {
		common = append(common, AttrServer.String(op.Server))
	}
	switch op.Method {
	case mcpruntime.MethodToolsCall:
		common = append(common, semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(op.Tool))
	case mcpruntime.MethodPromptsGet:
		common = append(common, semconv.GenAIPromptName(op.Prompt))
	}
	common = append(common, endpointAttrs(op.Endpoint())...)
	if errType != "" {
		common = append(common, semconv.ErrorTypeKey.String(errType))
	}
	if status != "" {
		common = append(common, semconv.RPCResponseStatusCode(status))
	}
	o.duration.Record(ctx, e.Duration.Seconds(), mcpconv.MethodNameAttr(op.Method), common...)

	span.SetAttributes(common...)
	if o.cfg.res && e.Result != nil && e.Result.Raw != nil {
		span.SetAttributes(semconv.GenAIToolCallResultKey.String(string(e.Result.Raw)))
	}
	if errType != "" {
		desc := ""
		if o.cfg.res && e.Err != nil {
			desc = message(e.Err)
		}
		span.SetStatus(codes.Error, desc)
	}
	span.End(trace.WithTimestamp(op.Start.Add(e.Duration)))
}

// endpointAttrs are the conventions' transport attributes.
func endpointAttrs(ep mcpruntime.Endpoint) []attribute.KeyValue {
	var a []attribute.KeyValue
	switch ep.Transport {
	case mcpruntime.TransportStdio:
		a = append(a, semconv.NetworkTransportPipe)
	case mcpruntime.TransportStreamableHTTP, mcpruntime.TransportSSE:
		a = append(a, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
	}
	if ep.Address != "" {
		a = append(a, semconv.ServerAddress(ep.Address))
		if ep.Port > 0 {
			a = append(a, semconv.ServerPort(ep.Port))
		}
	}
	if ep.ProtocolVersion != "" {
		a = append(a, semconv.McpProtocolVersion(ep.ProtocolVersion))
	}
	return a
}

// classify returns the outcome, error.type ("" when the operation did not
// fail) and rpc.response.status_code ("" without a JSON-RPC error).
func classify(e *mcpruntime.Ending) (outcome, errType, status string) {
	if e.Err == nil {
		if e.IsError {
			return OutcomeToolError, "tool_error", ""
		}
		return OutcomeOK, "", ""
	}
	var are *mcpruntime.ApprovalRequiredError
	var pe *mcpruntime.ProtocolError
	switch {
	case errors.As(e.Err, &are), errors.Is(e.Err, mcpruntime.ErrApprovalPending):
		return OutcomePending, "", ""
	case errors.Is(e.Err, mcpruntime.ErrApprovalDenied):
		return OutcomeDenied, "", ""
	case errors.As(e.Err, &pe):
		code := strconv.Itoa(pe.Code)
		return OutcomeError, code, code
	}
	return OutcomeError, ErrorType(e.Err), ""
}

// ErrorType is the error.type this package records for an error other
// than a JSON-RPC error (whose code it records) and a held or denied call
// (which are not failures):
//
//	timeout                the call's timeout or deadline passed
//	canceled               the caller cancelled
//	circuit_open           the manager's breaker refused the call
//	drift                  the tool's schemas changed (manager, DriftFail)
//	agent_not_allowed      the registry entry does not allow the agent
//	missing_tool           the server does not offer the tool
//	connect_error          no session could be set up
//	connection_lost        the session ended under the request
//	not_sent               another failure before the request left
//	resource_expired       the server no longer has the resource
//	too_large              the response exceeds the read limit
//	approval_expired       the approval expired undecided
//	approval_mismatch      the approval is for another call
//	approval_not_found     there is no such approval
//	approval_outcome_unknown  the approved call was started, outcome never recorded
//	approval_call_failed   the approved call was made once and failed
//	approval_not_sent      the approved call was not sent
//	_OTHER                 anything else
func ErrorType(err error) string {
	var te *mcpruntime.TimeoutError
	var ce *manager.CircuitOpenError
	var me *mcpruntime.MissingToolError
	var cne *mcpruntime.ConnectError
	var cle *mcpruntime.ConnectionLostError
	var big *mcpruntime.ResourceTooLargeError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ce):
		return "circuit_open"
	case errors.Is(err, manager.ErrDrift):
		return "drift"
	case errors.Is(err, manager.ErrAgentNotAllowed):
		return "agent_not_allowed"
	case errors.Is(err, mcpruntime.ErrApprovalExpired):
		return "approval_expired"
	case errors.Is(err, mcpruntime.ErrApprovalMismatch):
		return "approval_mismatch"
	case errors.Is(err, mcpruntime.ErrApprovalNotFound):
		return "approval_not_found"
	case errors.Is(err, mcpruntime.ErrOutcomeUnknown):
		return "approval_outcome_unknown"
	case errors.Is(err, mcpruntime.ErrApprovedCallFailed):
		return "approval_call_failed"
	case errors.Is(err, mcpruntime.ErrApprovedCallNotSent):
		return "approval_not_sent"
	case errors.As(err, &te), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &me):
		return "missing_tool"
	case errors.Is(err, mcpruntime.ErrResourceExpired):
		return "resource_expired"
	case errors.As(err, &big):
		return "too_large"
	case errors.As(err, &cne):
		return "connect_error"
	case errors.As(err, &cle):
		return "connection_lost"
	case errors.Is(err, mcpruntime.ErrNotSent):
		return "not_sent"
	}
	return "_OTHER"
}

// message is an error's text for a span status: a JSON-RPC error's
// message, as the conventions say, or the error's text.
func message(err error) string {
	var pe *mcpruntime.ProtocolError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return err.Error()
}

// Event implements mcpruntime.Observer: span events on the operation's
// span, and a span of its own for a gate's decision.
func (o *Observer) Event(ctx context.Context, e *mcpruntime.Event) {
	span := trace.SpanFromContext(ctx)
	switch e.Kind {
	case mcpruntime.EventApprovalPending:
		a := e.Approval
		span.AddEvent(EventApprovalPending, trace.WithAttributes(AttrApprovalID.String(a.ID), AttrApprovalWhy.String(a.Why),
			AttrApprovalDigest.String(a.Digest), AttrApprovalExpires.String(a.Expires.UTC().Format(time.RFC3339))))
		span.SetAttributes(AttrApprovalID.String(a.ID))
	case mcpruntime.EventApprovalResumed, mcpruntime.EventApprovalReplayed:
		a := e.Approval
		name := EventApprovalResumed
		if e.Kind == mcpruntime.EventApprovalReplayed {
			name = EventApprovalReplayed
		}
		span.AddEvent(name, trace.WithAttributes(AttrApprovalID.String(a.ID), AttrApprovalState.String(string(a.State))))
		if l, ok := o.link(a); ok {
			span.AddLink(l)
		}
		if o.cfg.args && e.Kind == mcpruntime.EventApprovalResumed {
			span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(string(a.Args)))
		}
	case mcpruntime.EventApprovalOutcome:
		a := e.Approval
		attrs := []attribute.KeyValue{AttrApprovalID.String(a.ID), AttrApprovalState.String(string(a.State))}
		if out := a.Outcome; out != nil && out.Error != "" {
			d := string(out.Delivery)
			if d == "" {
				d = "answered"
			}
			attrs = append(attrs, AttrApprovalDelivery.String(d))
		}
		span.AddEvent(EventApprovalOutcome, trace.WithAttributes(attrs...))
	case mcpruntime.EventApprovalDecided:
		o.decided(ctx, e.Approval)
	case mcpruntime.EventTaint:
		p := e.Provenance
		src := "tool"
		switch {
		case p.Resource != "":
			src = "resource"
		case p.Prompt != "":
			src = "prompt"
		}
		span.AddEvent(EventTaint, trace.WithAttributes(AttrTaintSource.String(src), AttrTaintExternal.Bool(p.External),
			AttrTaintIsError.Bool(p.IsError), AttrTaintDigest.String(p.Digest)))
	case mcpruntime.EventRetry:
		attrs := []attribute.KeyValue{AttrRetryAttempt.Int(e.Attempt), AttrRetryDelay.Float64(e.Delay.Seconds())}
		if t := errType(e.Err); t != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(t))
		}
		span.AddEvent(EventRetry, trace.WithAttributes(attrs...))
	case mcpruntime.EventBreaker:
		span.AddEvent(EventBreaker, trace.WithAttributes(AttrServer.String(e.Server), semconv.GenAIToolName(e.Tool),
			AttrBreakerFrom.String(e.From), AttrBreakerTo.String(e.To)))
	}
}

// errType is error.type for any error.
func errType(err error) string {
	var pe *mcpruntime.ProtocolError
	if errors.As(err, &pe) {
		return strconv.Itoa(pe.Code)
	}
	return ErrorType(err)
}

// link is a link to the span of the call an approval held.
func (o *Observer) link(a *mcpruntime.Approval) (trace.Link, bool) {
	if len(a.Trace) == 0 {
		return trace.Link{}, false
	}
	sc := trace.SpanContextFromContext(o.cfg.prop.Extract(context.Background(), propagation.MapCarrier(a.Trace)))
	if !sc.IsValid() {
		return trace.Link{}, false
	}
	return trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{AttrApprovalID.String(a.ID)}}, true
}

// decided is a span for a person's decision, linked to the held call: an
// INTERNAL span "approve {tool}", "deny {tool}" or "expire {tool}", a child
// of the decider's span when its context has one.
func (o *Observer) decided(ctx context.Context, a *mcpruntime.Approval) {
	verb := map[mcpruntime.ApprovalState]string{mcpruntime.StateApproved: "approve", mcpruntime.StateDenied: "deny", mcpruntime.StateExpired: "expire"}[a.State]
	if verb == "" {
		return
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		semconv.GenAIToolName(a.Tool), AttrServer.String(a.Server), AttrApprovalID.String(a.ID), AttrApprovalState.String(string(a.State)))}
	if l, ok := o.link(a); ok {
		opts = append(opts, trace.WithLinks(l))
	}
	_, span := o.tracer.Start(ctx, verb+" "+a.Tool, opts...)
	span.AddEvent(EventApprovalDecided, trace.WithAttributes(AttrApprovalID.String(a.ID), AttrApprovalState.String(string(a.State))))
	span.End()
}
