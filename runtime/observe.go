package mcpruntime

import (
	"context"
	"encoding/json"
	"slices"
	"time"
)

// Observer sees what a program does through the runtime's guards, for
// traces and metrics: every tool call (Call, Invoke, Resume, ResumeInvoke),
// resource read (ReadResource, ReadTemplate, ReadURI, ReadLink) and prompt
// get of the tools and reads it is attached to (WithObserver,
// ReadObserver), with what happens inside them: a gate holding or resuming
// the call, results entering the run's ledger, the manager's retries and
// circuit breaker. Package github.com/mcpgen/mcpgen/adapters/otel
// implements it with OpenTelemetry.
//
// An Observer runs on the call path: it must be safe for concurrent use
// and must not block. It never sees a token: the arguments it is given are
// the call's without the identity argument, results and errors are the
// scrubbed ones, and approvals never hold a token. Arguments and results
// are still the program's data; an observer records them only when its user
// asks for it.
type Observer interface {
	// Begin is called once per operation, before the gate. The context it
	// returns (ctx or one derived from it) is the one the operation goes on
	// with: the connection sees it, so an observer's span there reaches
	// the server (mcpgo.WithMetaInjector), and so do Event and End.
	Begin(ctx context.Context, op *Operation) context.Context
	// Event reports something that happened within the operation of ctx.
	Event(ctx context.Context, e *Event)
	// End is called once for every Begin, with how the operation ended.
	End(ctx context.Context, op *Operation, e *Ending)
}

// TraceCarrier is an Observer that can write the trace context of ctx as
// text members (W3C traceparent and tracestate). A gate stores them with an
// approval it creates (Approval.Trace), so that the call's resume, in any
// process, can be linked to the call that was held.
type TraceCarrier interface {
	TraceContext(ctx context.Context) map[string]string
}

// The methods an Operation names, as MCP spells them.
const (
	MethodToolsCall     = "tools/call"
	MethodResourcesRead = "resources/read"
	MethodPromptsGet    = "prompts/get"
)

// Operation is one observed tool call, resource read or prompt get.
// Observers read it and must not change it.
type Operation struct {
	// Method is MethodToolsCall, MethodResourcesRead or MethodPromptsGet.
	Method string
	// Server is the server's label (WithServerName, ReadServerName, the
	// registry id under the manager, or the connection's name).
	Server string
	// Tool is the tool's wire name and Descriptor its descriptor, for a
	// tools/call.
	Tool       string
	Descriptor *Descriptor
	// URI is the resource read; Prompt the prompt's name.
	URI    string
	Prompt string
	// ToolCallID is the model's id for the call (WithToolCallID; the agent
	// loop of runtime/agent sets it), "" when the call did not come from a
	// model's tool call.
	ToolCallID string
	// Approval is the approval a resume makes the call of; "" for a fresh
	// call.
	Approval string
	// Args are a fresh tools/call's arguments, without the identity
	// argument (a resume's are in its EventApprovalResumed). Observers
	// must not change or keep them.
	Args json.RawMessage
	// Run is the run the context carries (WithRun), or nil.
	Run *Run
	// Start is when Begin was called.
	Start time.Time

	conn Caller
}

// Endpoint says what the operation's connection is connected to, when the
// connection can tell (an Endpointer); the zero Endpoint otherwise. Ask at
// End: a connection connects on its first use.
func (op *Operation) Endpoint() Endpoint {
	if e, ok := op.conn.(Endpointer); ok {
		return e.Endpoint()
	}
	return Endpoint{}
}

// Endpointer is a connection that can say what it is connected to; the
// mcpgo connections and the manager's callers are.
type Endpointer interface {
	Endpoint() Endpoint
}

// The transports of an Endpoint.
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
	TransportInProcess      = "in-process"
)

// Endpoint describes a connection: never its URL's path, query or user
// info, nor a header, which may carry secrets.
type Endpoint struct {
	// Transport is one of the Transport constants, or "" when unknown.
	Transport string
	// Address and Port are the server's host and port over HTTP
	// transports (the port the URL names, or the scheme's).
	Address string
	Port    int
	// ProtocolVersion is the MCP version the connection negotiated, ""
	// before it connected.
	ProtocolVersion string
}

// Ending is how an observed operation ended.
type Ending struct {
	// Err is the error it ended with, as the caller gets it (redacted):
	// nil when the server answered with a result. A gated call ends with
	// an *ApprovalRequiredError: it was held, not failed.
	Err error
	// Result is a tools/call's result (nil otherwise, or without one);
	// IsError says the tool flagged it as failed.
	Result  *Result
	IsError bool
	// Duration is the time since Begin.
	Duration time.Duration
}

// EventKind names an Event.
type EventKind string

// The events an Observer is told of.
const (
	// EventApprovalPending: the gate held the call; Approval is the
	// approval it stored.
	EventApprovalPending EventKind = "approval.pending"
	// EventApprovalDecided: Gate.Approve or Gate.Deny changed an approval
	// (to approved, denied or expired); Approval is as stored. Sent to the
	// gate's observer (GateObserver), with the decider's context.
	EventApprovalDecided EventKind = "approval.decided"
	// EventApprovalResumed: this resume won the approval and makes the
	// approved call; Approval is in state executing.
	EventApprovalResumed EventKind = "approval.resumed"
	// EventApprovalReplayed: the resume returns the recorded outcome of the
	// one execution; Approval is in state done.
	EventApprovalReplayed EventKind = "approval.replayed"
	// EventApprovalOutcome: the one execution's outcome was recorded;
	// Approval is in state done, with its Outcome.
	EventApprovalOutcome EventKind = "approval.outcome"
	// EventTaint: a result was recorded in the run's ledger (with no run,
	// the provenance it would have had); Provenance is the record.
	EventTaint EventKind = "taint.recorded"
	// EventRetry: the manager makes the call again after attempt Attempt
	// (1-based) failed with Err, in Delay.
	EventRetry EventKind = "retry"
	// EventBreaker: the circuit breaker of Tool on Server went from From to
	// To ("closed", "open", "half-open").
	EventBreaker EventKind = "breaker"
)

// Event is something that happened within an observed operation. Observers
// must not change what it points to.
type Event struct {
	Kind       EventKind
	Approval   *Approval
	Provenance *Provenance
	// Retries.
	Attempt int
	Delay   time.Duration
	Err     error
	// Breaker transitions.
	Server, Tool string
	From, To     string
}

// WithObserver attaches o to the tool: every call is an operation o sees.
func WithObserver(o Observer) Option {
	return func(t *toolOptions) { t.observer = o }
}

// ReadObserver attaches o to a read or prompt get (WithToolOptions passes
// WithObserver on too).
func ReadObserver(o Observer) ReadOption {
	return func(r *readOptions) { r.observer = o }
}

// GateObserver reports the gate's decisions (EventApprovalDecided) to o.
func GateObserver(o Observer) GateOption {
	return func(g *Gate) { g.observer = o }
}

type observerKey struct{}

// ObserverFrom returns the Observer of the operation ctx belongs to, or
// nil; the connection manager sends its retries and breaker transitions
// there.
func ObserverFrom(ctx context.Context) Observer {
	o, _ := ctx.Value(observerKey{}).(Observer)
	return o
}

// Report tells the Observer of the operation ctx belongs to about e, for
// a Caller of one's own that has something to report; it does nothing
// outside an observed operation.
func Report(ctx context.Context, e Event) {
	if o := ObserverFrom(ctx); o != nil {
		ev := e // on the heap only when reported
		o.Event(ctx, &ev)
	}
}

type toolCallIDKey struct{}

// WithToolCallID returns a context for the call a model asked for with id
// (its tool_use id or tool_call_id), so that observers can name it.
func WithToolCallID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, toolCallIDKey{}, id)
}

// ToolCallID returns the id WithToolCallID set, or "".
func ToolCallID(ctx context.Context) string {
	id, _ := ctx.Value(toolCallIDKey{}).(string)
	return id
}

// begin starts an observed operation: the observer's context, which also
// carries the observer for the guards and the manager.
func begin(ctx context.Context, o Observer, op *Operation) context.Context {
	op.ToolCallID, op.Run, op.Start = ToolCallID(ctx), RunFrom(ctx), time.Now()
	return context.WithValue(o.Begin(ctx, op), observerKey{}, o)
}

// observing is the outermost guard of an observed tool (nil when the tool
// has no observer, so an unobserved call pays nothing).
func observing(o Observer, conn Caller) interceptor {
	if o == nil {
		return nil
	}
	return func(next handler) handler {
		return func(ctx context.Context, c *call) (*Result, error) {
			op := &Operation{Method: MethodToolsCall, Server: c.server, Tool: c.desc.Name, Descriptor: c.desc, Approval: c.approval, conn: conn}
			if c.approval == "" {
				op.Args = c.args
			}
			ctx = begin(ctx, o, op)
			c.obs = o
			res, err := next(ctx, c)
			o.End(ctx, op, &Ending{Err: err, Result: res, IsError: res != nil && res.IsError, Duration: time.Since(op.Start)})
			return res, err
		}
	}
}

// traceOf is what a gate stores of the call's trace context.
func (c *call) traceOf(ctx context.Context) map[string]string {
	if t, ok := c.obs.(TraceCarrier); ok {
		return t.TraceContext(ctx)
	}
	return nil
}

// observeRead makes an observed read: read runs with the observer's
// context.
func observeRead[R any](ctx context.Context, o Observer, op *Operation, read func(context.Context) (R, error)) (R, error) {
	ctx = begin(ctx, o, op)
	r, err := read(ctx)
	o.End(ctx, op, &Ending{Err: err, Duration: time.Since(op.Start)})
	return r, err
}

// observedRead is readOptions.read under its observer.
func (o readOptions) observedRead(ctx context.Context, c Caller, uri string) (*ResourceResult, error) {
	obs := o.observer
	o.observer = nil
	return observeRead(ctx, obs, &Operation{Method: MethodResourcesRead, Server: o.server, URI: uri, conn: c}, func(ctx context.Context) (*ResourceResult, error) {
		return o.read(ctx, c, uri)
	})
}

// observedPrompt is GetPrompt under the observer of o.
func observedPrompt(ctx context.Context, o readOptions, c Caller, d *PromptDescriptor, args map[string]string, opts []ReadOption) (*PromptResult, error) {
	return observeRead(ctx, o.observer, &Operation{Method: MethodPromptsGet, Server: o.server, Prompt: d.Name, conn: c}, func(ctx context.Context) (*PromptResult, error) {
		return GetPrompt(ctx, c, d, args, append(slices.Clip(opts), ReadObserver(nil))...)
	})
}

// reportTaint reports a read's provenance record to the observer of ctx.
func reportTaint(ctx context.Context, p Provenance) {
	if o := ObserverFrom(ctx); o != nil {
		q := p // on the heap only when reported
		o.Event(ctx, &Event{Kind: EventTaint, Provenance: &q})
	}
}

// decided reports a decision to the gate's observer.
func (g *Gate) decided(ctx context.Context, a *Approval) {
	if g.observer != nil && a != nil {
		g.observer.Event(ctx, &Event{Kind: EventApprovalDecided, Approval: a})
	}
}
