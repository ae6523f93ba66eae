package mcpruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpgen/mcpgen/runtime/internal/jsonscan"
)

// DefaultTimeout bounds each call unless WithTimeout says otherwise. Some
// transports (stdio in mcp-go) have no timeout of their own, so without it a
// hung server hangs the caller.
const DefaultTimeout = 30 * time.Second

// Option configures a Tool.
type Option func(*toolOptions)

type toolOptions struct {
	timeout     time.Duration
	tokens      TokenProvider
	identityArg string
	gate        *Gate
	server      string
	rendering   Rendering
	observer    Observer
	taskTTL     time.Duration
	handoff     bool
}

// WithTimeout sets the per-call timeout; 0 disables it (the context alone
// bounds the call). Negative values are treated as 0.
func WithTimeout(d time.Duration) Option {
	return func(o *toolOptions) { o.timeout = max(d, 0) }
}

// WithIdentity makes every call act for the principal p returns for the
// call's context (ContextPrincipal reads WithPrincipal). A call without a
// principal fails before anything is sent. The token goes to the server as
// an "Authorization: Bearer" header over HTTP transports, or in the
// argument WithIdentityArgument names; it never enters a result, a ledger
// record, an approval or an error. On a connection without headers (stdio,
// in-process) a tool without an identity argument is called without the
// token, since many stdio tools take none; the principal still counts for
// the gate, approvals and the ledger, and the first such call per server
// is logged (slog.Default, level Info) so that a missing identity argument
// is noticed.
func WithIdentity(p TokenProvider) Option {
	return func(o *toolOptions) { o.tokens = p }
}

// WithIdentityArgument says the tool takes the caller's token in the
// argument name (servers on stdio have no headers). The runtime sets it on
// every call, overriding whatever the arguments held, and removes it from a
// model's arguments before decoding them: the model never sees or sets it.
// Generated bindings pass it for the tools whose server configuration
// declares the argument, and leave it out of the Input type and the schema
// shown to models (see mcpimpl.StripProperty).
func WithIdentityArgument(name string) Option {
	return func(o *toolOptions) { o.identityArg = name }
}

// WithGate holds the tool's calls for approval as g decides.
func WithGate(g *Gate) Option {
	return func(o *toolOptions) { o.gate = g }
}

// WithServerName labels the server in provenance records and approvals
// (default: the Caller's Name method, when it has one).
func WithServerName(name string) Option {
	return func(o *toolOptions) { o.server = name }
}

// Validator is the constraint on generated Input and Output types: a
// pointer to T with a generated Validate method returning nil or a
// *ValidationError.
type Validator[T any] interface {
	*T
	Validate() error
}

// NoOutput is the Output type of tools that declare no output schema.
type NoOutput struct{}

// Validate accepts everything: there is no schema to check against.
func (*NoOutput) Validate() error { return nil }

// Tool is a typed binding for one tool: Call takes the generated Input and
// returns the generated Output plus everything else the server sent; Invoke
// is the same tool for a language model (JSON in, text out). A Tool is safe
// for concurrent use if its Caller is.
//
// Its methods are thin: the work is done by a toolCore that handles inputs
// and outputs as pointers behind interfaces, so a package of a thousand
// tools compiles one copy of the call path instead of one per tool.
type Tool[I, O any] struct {
	core toolCore
}

// toolCore is a Tool without its type parameters.
type toolCore struct {
	desc        *Descriptor
	caller      Caller
	timeout     time.Duration
	tokens      TokenProvider
	identityArg string
	declared    map[string]bool // input schema properties other than identityArg
	gate        *Gate
	server      string
	handle      handler
	strict      bool
	rendering   Rendering
	newIn       func() any // a new *I
	newOut      func() any // a new *O
	// poll is the chain of a task's requests (task.go): the bearer
	// token, the timeout, the result's provenance; no gate.
	poll    handler
	taskTTL time.Duration
	handoff bool
}

// NewTool builds a typed tool over c. It never touches the network.
// Generated factories call it as NewTool[XInput, XOutput](&xDescriptor, c,
// opts...); the pointer type parameters are inferred.
func NewTool[I, O any, PI Validator[I], PO Validator[O]](desc *Descriptor, c Caller, opts ...Option) *Tool[I, O] {
	t := &Tool[I, O]{}
	t.core.init(desc, c, opts, func() any { return PI(new(I)) }, func() any { return PO(new(O)) })
	return t
}

func (t *toolCore) init(desc *Descriptor, c Caller, opts []Option, newIn, newOut func() any) {
	o := toolOptions{timeout: DefaultTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if o.server == "" {
		if n, ok := c.(interface{ Name() string }); ok {
			o.server = n.Name()
		}
	}
	*t = toolCore{
		desc:        desc,
		caller:      c,
		timeout:     o.timeout,
		tokens:      o.tokens,
		identityArg: o.identityArg,
		gate:        o.gate,
		server:      o.server,
		strict:      desc.closedInput(),
		rendering:   o.rendering,
		newIn:       newIn,
		newOut:      newOut,
		taskTTL:     o.taskTTL,
		handoff:     o.handoff,
	}
	var gate interceptor
	if o.gate != nil {
		gate = o.gate.intercept
	}
	// The guards in their one order; doc.go explains it.
	if o.identityArg != "" {
		t.declared = declaredProperties(desc.InputSchema, o.identityArg)
	}
	t.handle = chain(callerHandler(c), observing(o.observer, c), gate, identity(o.identityArg, t.declared), timeout(o.timeout), recordTaint)
	t.poll = chain(callerHandler(c), identity("", nil), timeout(o.timeout), recordTaint)
}

// Descriptor returns the tool's descriptor.
func (t *Tool[I, O]) Descriptor() *Descriptor { return t.core.desc }

// Timeout returns the per-call timeout (0: none).
func (t *Tool[I, O]) Timeout() time.Duration { return t.core.timeout }

// TypedResult is a successful call's typed output together with everything
// the server sent (content blocks, raw structuredContent, _meta).
type TypedResult[O any] struct {
	// Output is the rehydrated output; the zero value when Source is
	// FromNothing.
	Output O
	Source OutputSource
	// Provenance says where the result came from: server, tool, time and a
	// digest of the content. It is also in the run's ledger (see WithRun).
	Provenance Provenance
	Result
}

// typedParts points into a TypedResult[O] for the core to fill in; only
// out is required (Invoke wants the check, not the copy).
type typedParts struct {
	out  any // *O
	src  *OutputSource
	prov *Provenance
	res  *Result
	kept *bool // set when a result came with ErrOutcomeNotRecorded
}

func partsOf[O any](tr *TypedResult[O]) typedParts {
	return typedParts{out: &tr.Output, src: &tr.Source, prov: &tr.Provenance, res: &tr.Result}
}

// Call validates in, calls the tool and rehydrates the result. Errors:
// *ValidationError for invalid input (nothing is sent), *ToolError when the
// tool reports isError, *OutputError when the output is missing or does not
// match the schema, *TimeoutError, and the Caller's errors (wrapped).
func (t *Tool[I, O]) Call(ctx context.Context, in I) (*TypedResult[O], error) {
	tr := new(TypedResult[O])
	if err := t.core.call(ctx, &in, partsOf(tr)); err != nil {
		return nil, err
	}
	return tr, nil
}

func (t *toolCore) call(ctx context.Context, in any, tr typedParts) error {
	if t.desc.TaskSupport == TaskRequired {
		return t.requiredTask()
	}
	if err := in.(validator).Validate(); err != nil {
		return t.inputError(err)
	}
	args, err := marshalInput(in)
	if err != nil {
		return fmt.Errorf("tool %q: encode input: %w", t.desc.Name, err)
	}
	if t.identityArg != "" { // undeclared members, as for Invoke
		args = removeArgument(args, t.identityArg, t.declared)
	}
	c, err := t.newCall(ctx, args)
	if err != nil {
		return err
	}
	return t.typed(ctx, c, tr)
}

// Resume makes the gated call the approval id holds, once: the first
// resume after Approve makes it, every later one returns the recorded
// outcome. It must run as the principal that made the call. Errors are
// Call's, plus an *ApprovalError (errors.Is ErrApprovalPending,
// ErrApprovalDenied, ErrApprovalExpired, ErrApprovalMismatch,
// ErrOutcomeUnknown, ErrApprovedCallFailed, ErrApprovedCallNotSent).
//
// When the resume made the call and the store could not record its
// outcome, the result comes with an *ApprovalError wrapping
// ErrOutcomeNotRecorded: it is the only copy.
func (t *Tool[I, O]) Resume(ctx context.Context, id string) (*TypedResult[O], error) {
	tr := new(TypedResult[O])
	parts, kept := partsOf(tr), false
	parts.kept = &kept
	if err := t.core.resume(ctx, id, parts); err != nil {
		if !kept {
			return nil, err
		}
		return tr, err
	}
	return tr, nil
}

// notRecorded reports whether err is the gate's ErrOutcomeNotRecorded
// alone, which comes with the call's result.
func notRecorded(err error) bool {
	ae, ok := err.(*ApprovalError)
	return ok && ae.Err == ErrOutcomeNotRecorded
}

func (t *toolCore) resume(ctx context.Context, id string, tr typedParts) error {
	if t.desc.TaskSupport == TaskRequired {
		return fmt.Errorf("tool %q runs only as a task (its execution.taskSupport is required): resume approval %s with ResumeStart: %w", t.desc.Name, id, ErrNotSent)
	}
	c, err := t.resumeCall(ctx, id)
	if err != nil {
		return err
	}
	return t.typed(ctx, c, tr)
}

// validator is what Validator[T] guarantees of a *T.
type validator interface{ Validate() error }

func (t *toolCore) resumeCall(ctx context.Context, id string) (*call, error) {
	if t.gate == nil {
		return nil, fmt.Errorf("tool %q: resume approval %s: the tool has no gate (WithGate)", t.desc.Name, id)
	}
	c, err := t.newCall(ctx, nil)
	if err != nil {
		return nil, err
	}
	c.approval = id
	return c, nil
}

// typed makes the call c and rehydrates its result into tr.
func (t *toolCore) typed(ctx context.Context, c *call, tr typedParts) error {
	res, err := t.handle(ctx, c)
	if err != nil && (res == nil || !notRecorded(err)) {
		return err
	}
	if rerr := t.rehydrate(res, tr); rerr != nil {
		if err != nil {
			return fmt.Errorf("%w; %w", rerr, err)
		}
		return rerr
	}
	if c.prov != nil && tr.prov != nil {
		*tr.prov = *c.prov
	}
	if err != nil && tr.kept != nil {
		*tr.kept = true
	}
	return err
}

// newCall starts a call, resolving its principal before anything is sent.
func (t *toolCore) newCall(ctx context.Context, args json.RawMessage) (*call, error) {
	c := &call{desc: t.desc, server: t.server, args: args}
	if t.tokens == nil {
		if t.identityArg != "" {
			return nil, fmt.Errorf("tool %q takes the caller's token in argument %q, but no identity is configured (WithIdentity)", t.desc.Name, t.identityArg)
		}
		return c, nil
	}
	p, err := resolvePrincipal(ctx, t.tokens, t.desc.Name)
	if err != nil {
		return nil, err
	}
	c.principal, c.token = p.ID, p.Token
	return c, nil
}

func (t *toolCore) inputError(err error) error {
	var ve *ValidationError
	if errors.As(err, &ve) {
		c := *ve
		if c.Subject == "" {
			c.Subject = t.desc.Name + " input"
		}
		return &c
	}
	return fmt.Errorf("%s input: %w", t.desc.Name, err)
}

// rehydrate decodes the typed output into tr: structuredContent is the
// source of truth; without it a text block holding JSON is used when the
// tool declares an output schema.
func (t *toolCore) rehydrate(res *Result, tr typedParts) error {
	if res.IsError {
		return &ToolError{Tool: t.desc.Name, Message: res.ModelText(), Result: res}
	}
	if tr.res != nil {
		*tr.res = *res
	}
	if !t.desc.HasOutputSchema() {
		return nil
	}
	raw, src := res.StructuredContent, FromStructuredContent
	if !res.HasStructuredContent() {
		raw, src = jsonText(res), FromTextContent
	}
	if raw == nil {
		return &OutputError{Tool: t.desc.Name, Result: res, Violations: []Violation{{
			Message: "no structured output: the tool declares an output schema but sent neither structuredContent nor a JSON text block",
		}}}
	}
	// encoding/json itself is lenient about unknown members here (servers
	// add fields over time; the raw bytes stay in Result); an Output type
	// with its own UnmarshalJSON may be stricter, as its schema says.
	if vs := decodeOutput(raw, tr.out); len(vs) > 0 {
		return &OutputError{Tool: t.desc.Name, Source: src, Raw: raw, Violations: vs, Result: res}
	}
	if err := tr.out.(validator).Validate(); err != nil {
		return &OutputError{Tool: t.desc.Name, Source: src, Raw: raw, Violations: violationsOf(err, nil), Result: res}
	}
	if tr.src != nil {
		*tr.src = src
	}
	return nil
}

// marshalInput encodes in with its generated MarshalJSON when it has one:
// json.Marshal would validate and compact what is already compact JSON.
func marshalInput(in any) ([]byte, error) {
	if m, ok := in.(json.Marshaler); ok {
		if b, err := m.MarshalJSON(); err == nil && jsonscan.Valid(b) {
			return b, nil
		}
	}
	return json.Marshal(in)
}

// decodeOutput is decodeJSON for a generated output type: its
// UnmarshalJSON is called directly on valid JSON, which spares the copy and
// the second scan a json.Decoder makes; anything else takes the general
// path and its messages.
func decodeOutput(raw []byte, dst any) []Violation {
	if u, ok := dst.(json.Unmarshaler); ok && jsonscan.Valid(raw) {
		if err := u.UnmarshalJSON(jsonscan.Trim(raw)); err != nil {
			return violationsOf(err, raw)
		}
		return nil
	}
	return decodeJSON(raw, dst, false)
}

// jsonText returns the first text block that holds a JSON object or array.
func jsonText(res *Result) json.RawMessage {
	for _, c := range res.Content {
		if c.Type != ContentText {
			continue
		}
		b := bytes.TrimSpace([]byte(c.Text))
		if len(b) > 0 && (b[0] == '{' || b[0] == '[') && jsonscan.Valid(b) {
			return b
		}
	}
	return nil
}

// ModelResult is what a language model gets back from Invoke.
type ModelResult struct {
	// Text is the model-facing text.
	Text string
	// IsError marks a failed call (bad arguments, tool error, output not
	// matching the schema, timeout); agent loops pass it on as the tool
	// result's error flag.
	IsError bool
	// Result is what the server sent; nil when no call was made.
	Result *Result
	// Provenance of Result, also in the run's ledger; nil when no call
	// was made.
	Provenance *Provenance
	// TimedOut says the call got no answer within its timeout (IsError is
	// set too); the connection manager's breakers count it as a failure.
	TimedOut bool
	// Pending is set when the call is gated: it was not made, and this
	// approval waits in the gate's store for a person's decision. Text says
	// so in words a model can read, but an agent loop should stop here,
	// ask, and continue with ResumeInvoke (runtime/agent does this) rather
	// than hand Text to the model.
	Pending *Approval
	// Task is set when the call started a task that goes on in the
	// background (WithTaskHandoff): Text tells the model how to check on
	// it with the task poller (NewTaskPoller).
	Task *TaskRef
}

// Invoke is the tool for a language model: args are the model's JSON
// arguments. They are decoded strictly into the Input type (unknown members
// rejected when the input schema has additionalProperties: false) and
// validated; every problem goes back to the model as text listing each
// violation with its JSON Pointer. Tool errors, output-schema mismatches,
// server-side JSON-RPC errors and the per-call timeout also become
// model-facing failures. A gated call is not made: the result's Pending
// holds the stored approval. The Go error is only for transport failures,
// cancellation, a failing approval store and a server lacking the tool,
// which the model cannot fix.
func (t *Tool[I, O]) Invoke(ctx context.Context, args json.RawMessage) (ModelResult, error) {
	return t.core.invoke(ctx, args)
}

func (t *toolCore) invoke(ctx context.Context, args json.RawMessage) (ModelResult, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}") // models often send nothing for no-argument tools
	}
	if t.identityArg != "" {
		// The model is not shown the identity argument; whatever it put
		// there is dropped, and the runtime sets the real token.
		args = removeArgument(args, t.identityArg, t.declared)
	}
	in := t.newIn()
	vs := decodeArgs(args, in, t.strict)
	if len(vs) == 0 || vs[0].Pointer != "" {
		// A decoding problem at a member leaves the rest decoded, so
		// validation still finds the other problems; drop what it says about
		// members that failed to decode.
		for _, v := range validationViolations(in.(validator).Validate(), nil) {
			if !coveredBy(v, vs) {
				vs = append(vs, v)
			}
		}
	}
	if len(vs) > 0 {
		return ModelResult{IsError: true, Text: argumentsText(t.desc.Name, vs)}, nil
	}
	c, err := t.newCall(ctx, args)
	if err != nil {
		return ModelResult{}, err
	}
	if t.desc.TaskSupport == TaskRequired || t.handoff && t.desc.TaskSupport == TaskOptional {
		return t.invokeTask(ctx, c)
	}
	res, err := t.handle(ctx, c)
	return t.modelResult(ctx, c, res, err)
}

// ResumeInvoke is Resume for a language model: the approved call's result
// as model text, or, for a denied approval, a failed result telling the
// model a person denied the call. Other approval problems are Go errors.
// A result whose outcome could not be recorded comes with
// ErrOutcomeNotRecorded, as from Resume.
func (t *Tool[I, O]) ResumeInvoke(ctx context.Context, id string) (ModelResult, error) {
	return t.core.resumeInvoke(ctx, id)
}

func (t *toolCore) resumeInvoke(ctx context.Context, id string) (ModelResult, error) {
	c, err := t.resumeCall(ctx, id)
	if err != nil {
		return ModelResult{}, err
	}
	if t.desc.TaskSupport == TaskRequired || t.handoff && t.desc.TaskSupport == TaskOptional {
		// Made as Invoke would have: the approved task started once,
		// then waited for or handed off.
		m, err := t.invokeTask(ctx, c)
		var ae *ApprovalError
		if errors.As(err, &ae) && errors.Is(ae.Err, ErrApprovalDenied) {
			return ModelResult{IsError: true, Text: denialText(ae)}, nil
		}
		return m, err
	}
	res, err := t.handle(ctx, c)
	var ae *ApprovalError
	if errors.As(err, &ae) && errors.Is(ae.Err, ErrApprovalDenied) {
		return ModelResult{IsError: true, Text: denialText(ae)}, nil
	}
	// The call ran (or failed) and what came of it is known, but the store
	// could not record it: the model gets it, and the caller the error
	// that says so.
	if res != nil && notRecorded(err) {
		m, _ := t.modelResult(ctx, c, res, nil) // never an error for a result
		return m, err
	}
	if res == nil && errors.Is(err, ErrOutcomeNotRecorded) {
		if m, merr := t.modelResult(ctx, c, nil, err); merr == nil {
			return m, err
		}
	}
	return t.modelResult(ctx, c, res, err)
}

func (t *toolCore) modelResult(ctx context.Context, c *call, res *Result, err error) (ModelResult, error) {
	if err != nil {
		var te *TimeoutError
		var pe *ProtocolError
		var are *ApprovalRequiredError
		switch {
		case errors.As(err, &are):
			return pendingResult(are.Approval), nil
		case errors.As(err, &te):
			return ModelResult{IsError: true, TimedOut: true, Text: fmt.Sprintf("The tool did not answer within %s. It may be slow or stuck; try again later or differently.", te.Timeout)}, nil
		case errors.As(err, &pe) && ctx.Err() == nil:
			return ModelResult{IsError: true, Text: "The server rejected the call: " + pe.Message, Provenance: c.prov}, nil
		}
		return ModelResult{}, err
	}
	err = t.rehydrate(res, typedParts{out: t.newOut()})
	var oe *OutputError
	switch {
	case err == nil:
		return ModelResult{Text: res.ModelTextAs(t.rendering, t.desc.OutputSchema), Result: res, Provenance: c.prov}, nil
	case errors.As(err, &oe):
		var b strings.Builder
		b.WriteString("The tool answered, but its output does not match its declared schema, so it was not used")
		writeViolations(&b, oe.Violations)
		return ModelResult{IsError: true, Text: b.String(), Result: res, Provenance: c.prov}, nil
	default: // *ToolError: the server's own words
		return ModelResult{IsError: true, Text: res.ModelText(), Result: res, Provenance: c.prov}, nil
	}
}

// pendingResult is Invoke's answer for a gated call.
func pendingResult(a *Approval) ModelResult {
	return ModelResult{Pending: a, Text: fmt.Sprintf("The call to %q needs a person's approval and has not been made yet (approval %s). Do not call it again; the result will follow once a person has decided.", a.Tool, a.ID)}
}

// decodeArgs decodes model arguments, which must be a JSON object.
func decodeArgs(args []byte, dst any, strict bool) []Violation {
	if json.Valid(args) && args[0] != '{' {
		return []Violation{{Message: "arguments must be a JSON object, got " + jsonKind(args[0])}}
	}
	return decodeJSON(args, dst, strict)
}

func jsonKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func coveredBy(v Violation, by []Violation) bool {
	for _, b := range by {
		if v.Pointer == b.Pointer || strings.HasPrefix(v.Pointer, b.Pointer+"/") {
			return true
		}
	}
	return false
}

// validationViolations flattens a Validate error.
func validationViolations(err error, data []byte) []Violation {
	if err == nil {
		return nil
	}
	return violationsOf(err, data)
}

func argumentsText(tool string, vs []Violation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Invalid arguments for tool %q", tool)
	if len(vs) > 1 {
		fmt.Fprintf(&b, " (%d problems)", len(vs))
	}
	b.WriteString(":")
	for _, v := range vs {
		b.WriteString("\n- ")
		b.WriteString(v.String())
	}
	b.WriteString("\nFix the arguments to match the tool's input schema and call it again.")
	return b.String()
}
