package mcpruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// TaskSupport is a tool's execution.taskSupport: whether it can run as a
// task (tools/call with task augmentation, polled with tasks/get).
type TaskSupport string

const (
	// TaskForbidden: the tool runs as a plain call only (the default, and
	// what "forbidden" or no execution member says).
	TaskForbidden TaskSupport = ""
	// TaskOptional: the tool runs either way; Call and Invoke make a plain
	// call, Start a task.
	TaskOptional TaskSupport = "optional"
	// TaskRequired: the tool runs as a task only. Call refuses it before
	// anything is sent; Start and Invoke start a task.
	TaskRequired TaskSupport = "required"
)

// TaskCaller is implemented by Callers that can run a tool call as a task
// (the mcpgo Conn does, on servers that declare tasks.requests.tools.call).
type TaskCaller interface {
	// StartTool sends a task-augmented tools/call (ttl 0: the server's
	// default retention). The Result's Raw is the server's answer: a
	// CreateTaskResult ({"task":{...}}), or a plain tool result when the
	// server ran the call at once.
	StartTool(ctx context.Context, name string, args json.RawMessage, ttl time.Duration) (*Result, error)
	TaskStatus(ctx context.Context, ref TaskRef) (TaskStatus, error)
	// TaskResult returns the finished task's tool result (tasks/result).
	TaskResult(ctx context.Context, ref TaskRef) (*Result, error)
	CancelTask(ctx context.Context, ref TaskRef) (TaskStatus, error)
}

// TaskRef is what is needed to find a task again, in this process or
// another: save it (it is JSON, and holds no secret) and give it to
// Tool.TaskOf. Polls must run as the principal that started the task: the
// server binds a task to the requestor's authorization context.
type TaskRef struct {
	ID        string `json:"taskId"`
	Tool      string `json:"tool"`
	Server    string `json:"server"`
	Principal string `json:"principal,omitempty"`
	// Session is the connection's session when the server binds tasks to
	// one (an older protocol over streamable HTTP); "" otherwise.
	Session string `json:"session,omitempty"`
}

// TaskState is a task's status.
type TaskState string

const (
	TaskWorking       TaskState = "working"
	TaskInputRequired TaskState = "input_required"
	TaskCompleted     TaskState = "completed"
	TaskFailed        TaskState = "failed"
	TaskCancelled     TaskState = "cancelled"
)

// Terminal reports whether the state is final.
func (s TaskState) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// TaskStatus is what the server says of a task. Message is the server's
// text.
type TaskStatus struct {
	ID               string
	State            TaskState // "" for a bare acknowledgement of tasks/cancel
	Message          string
	Created, Updated time.Time     // zero when the server sent none
	TTL              time.Duration // 0: kept as long as the server likes
	PollInterval     time.Duration // 0: the server suggests none
	// Result is the tool result sent with a completed task's status, and
	// Err the JSON-RPC error sent with a failed one (the tasks extension
	// of 2026-07-28); both nil where tasks/result gives the outcome
	// (2025-11-25).
	Result *Result
	Err    *ProtocolError
}

// ParseTaskStatus reads a task as the specification writes it (taskId,
// status, statusMessage, createdAt, lastUpdatedAt, ttl or ttlMs and
// pollInterval or pollIntervalMs in milliseconds, and a result or error
// sent with it), for TaskCaller implementations.
func ParseTaskStatus(raw json.RawMessage) (TaskStatus, error) {
	var w struct {
		ID      string          `json:"taskId"`
		State   TaskState       `json:"status"`
		Message string          `json:"statusMessage"`
		Created string          `json:"createdAt"`
		Updated string          `json:"lastUpdatedAt"`
		TTL     *float64        `json:"ttl"`
		TTLMs   *float64        `json:"ttlMs"`
		Poll    *float64        `json:"pollInterval"`
		PollMs  *float64        `json:"pollIntervalMs"`
		Result  json.RawMessage `json:"result"`
		Err     *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return TaskStatus{}, fmt.Errorf("task: %w", err)
	}
	if w.ID == "" || w.State == "" {
		return TaskStatus{}, errors.New("task: no taskId or status")
	}
	ms := func(f, g *float64) time.Duration {
		if f == nil {
			f = g
		}
		if f == nil || *f <= 0 || *f > float64(1<<62)/float64(time.Millisecond) {
			return 0
		}
		return time.Duration(*f * float64(time.Millisecond))
	}
	s := TaskStatus{ID: w.ID, State: w.State, Message: w.Message, TTL: ms(w.TTL, w.TTLMs), PollInterval: ms(w.Poll, w.PollMs)}
	s.Created, _ = time.Parse(time.RFC3339Nano, w.Created)
	s.Updated, _ = time.Parse(time.RFC3339Nano, w.Updated)
	if r := bytes.TrimSpace(w.Result); len(r) > 0 && !bytes.Equal(r, []byte("null")) {
		res, err := ParseResult(r)
		if err != nil {
			return TaskStatus{}, fmt.Errorf("task %s: result: %w", w.ID, err)
		}
		s.Result = res
	}
	if w.Err != nil {
		s.Err = &ProtocolError{Code: w.Err.Code, Message: w.Err.Message, Data: w.Err.Data}
	}
	return s, nil
}

// ParseCreatedTask reads the task of a CreateTaskResult: {"task":{...}},
// or the task's members beside resultType "task"; ok is false for any
// other result (a server that ran the call at once).
func ParseCreatedTask(raw json.RawMessage) (st TaskStatus, ok bool, err error) {
	var w struct {
		Task       json.RawMessage `json:"task"`
		ResultType string          `json:"resultType"`
	}
	if json.Unmarshal(raw, &w) != nil {
		return TaskStatus{}, false, nil
	}
	switch {
	case len(w.Task) > 0 && !bytes.Equal(w.Task, []byte("null")):
		raw = w.Task
	case w.ResultType != "task":
		return TaskStatus{}, false, nil
	}
	st, err = ParseTaskStatus(raw)
	return st, true, err
}

// TaskError is a task that ended without a result: cancelled, or failed
// with a JSON-RPC error (Err) rather than a tool result.
type TaskError struct {
	Tool, ID string
	State    TaskState
	Message  string // the server's statusMessage
	Err      error
}

func (e *TaskError) Error() string {
	s := fmt.Sprintf("tool %q: task %s %s", e.Tool, e.ID, e.State)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *TaskError) Unwrap() error { return e.Err }

// DefaultTaskPoll is how often Wait polls a task whose server suggests no
// interval.
const DefaultTaskPoll = 500 * time.Millisecond

// WithTaskTTL asks the server to keep the tool's tasks for d after they
// are created (default: the server's choice).
func WithTaskTTL(d time.Duration) Option { return func(o *toolOptions) { o.taskTTL = max(d, 0) } }

// WithTaskHandoff makes Invoke hand the model the task instead of waiting
// for it: a tool that runs as a task (required, or optional with this
// option) is started and its ModelResult says so at once, with Task set;
// the model checks on it with the task poller (NewTaskPoller). Without
// it, Invoke waits for a required task within the tool's timeout and
// makes a plain call of an optional one.
func WithTaskHandoff() Option { return func(o *toolOptions) { o.handoff = true } }

// Task is a running (or finished) task of a tool: its status, progress,
// its typed result, its cancellation. Ref saves it for another process.
// A Task is for one goroutine at a time; TaskOf gives another its own.
type Task[O any] struct{ h taskHandle }

// taskHandle is a Task without its type parameter.
type taskHandle struct {
	t   *toolCore
	ref TaskRef
	// done is the result of a server that ran the call at once.
	done *Result
	last TaskStatus
	// prov is the provenance of the outcome, once it came.
	prov *Provenance
}

// Ref returns what is needed to pick the task up again (Tool.TaskOf).
func (k *Task[O]) Ref() TaskRef { return k.h.ref }

// Status asks the server for the task's status (tasks/get), as the
// principal of the call's context, which must be the one that started it.
func (k *Task[O]) Status(ctx context.Context) (TaskStatus, error) { return k.h.status(ctx) }

// Cancel asks the server to cancel the task (tasks/cancel).
func (k *Task[O]) Cancel(ctx context.Context) (TaskStatus, error) { return k.h.op(ctx, opCancel) }

// Wait polls the task until it ends, at the interval the server suggests
// (DefaultTaskPoll otherwise), each poll bounded by the tool's timeout and
// the whole wait by ctx; a change of status message is reported to
// ProgressFrom(ctx). Then it takes the outcome sent with the last status
// (2026-07-28) or fetches it (tasks/result) and rehydrates it as Call
// does; the result's provenance is recorded like a call's. A task
// cancelled, or failed without a tool result, is a *TaskError.
func (k *Task[O]) Wait(ctx context.Context) (*TypedResult[O], error) {
	tr := new(TypedResult[O])
	if err := k.h.wait(ctx, partsOf(tr)); err != nil {
		return nil, err
	}
	return tr, nil
}

// Start validates in and starts the tool as a task (the tool's
// execution.taskSupport must be optional or required). The gate holds
// the start like a call: an *ApprovalRequiredError means no task was
// created; ResumeStart starts it once approved, exactly once. The
// principal's token goes with the start and with every poll.
func (t *Tool[I, O]) Start(ctx context.Context, in I) (*Task[O], error) {
	if err := any(&in).(validator).Validate(); err != nil {
		return nil, t.core.inputError(err)
	}
	args, err := marshalInput(&in)
	if err != nil {
		return nil, fmt.Errorf("tool %q: encode input: %w", t.core.desc.Name, err)
	}
	if t.core.identityArg != "" {
		args = removeArgument(args, t.core.identityArg, t.core.declared)
	}
	c, err := t.core.newCall(ctx, args)
	if err != nil {
		return nil, err
	}
	h, err := t.core.start(ctx, c)
	if err != nil {
		return nil, err
	}
	return &Task[O]{h: *h}, nil
}

// ResumeStart starts the task the approval id holds, once: the first
// resume after Approve starts it, every later one returns the same task.
func (t *Tool[I, O]) ResumeStart(ctx context.Context, id string) (*Task[O], error) {
	c, err := t.core.resumeCall(ctx, id)
	if err != nil {
		return nil, err
	}
	h, err := t.core.start(ctx, c)
	if err != nil {
		return nil, err
	}
	return &Task[O]{h: *h}, nil
}

// TaskOf picks up a task this tool started, in this process or another,
// from its saved Ref. Nothing is sent.
func (t *Tool[I, O]) TaskOf(ref TaskRef) (*Task[O], error) {
	if ref.Tool != t.core.desc.Name || ref.Server != t.core.server || ref.ID == "" {
		return nil, fmt.Errorf("tool %q of server %q: task %q is for tool %q of server %q", t.core.desc.Name, t.core.server, ref.ID, ref.Tool, ref.Server)
	}
	return &Task[O]{h: taskHandle{t: &t.core, ref: ref}}, nil
}

func (t *toolCore) tasks() (TaskCaller, error) {
	if t.desc.TaskSupport == TaskForbidden {
		return nil, fmt.Errorf("tool %q does not run as a task (its execution.taskSupport is forbidden): %w", t.desc.Name, ErrNotSent)
	}
	tc, ok := t.caller.(TaskCaller)
	if !ok {
		return nil, fmt.Errorf("tool %q: the connection cannot start tasks: %w", t.desc.Name, ErrNotSent)
	}
	return tc, nil
}

// start runs c through the guards as a task start and reads the task.
func (t *toolCore) start(ctx context.Context, c *call) (*taskHandle, error) {
	if _, err := t.tasks(); err != nil {
		return nil, err
	}
	c.op, c.ttl = opStart, t.taskTTL
	res, err := t.handle(ctx, c)
	if err != nil && (res == nil || !notRecorded(err)) {
		return nil, err
	}
	h := &taskHandle{t: t, ref: TaskRef{Tool: t.desc.Name, Server: t.server, Principal: c.principal}}
	st, ok, perr := ParseCreatedTask(res.Raw)
	if !ok {
		h.done, h.prov = res, c.prov // the server ran it as a plain call
		return h, err
	}
	if perr != nil {
		return nil, fmt.Errorf("tool %q: the server's answer to a task start: %w", t.desc.Name, perr)
	}
	h.ref.ID, h.last = st.ID, st
	if s, ok := t.caller.(interface{ TaskSession() string }); ok {
		h.ref.Session = s.TaskSession()
	}
	return h, err
}

// op runs a task request (status, cancel, result) as the task's principal,
// with the token as a bearer header, under the tool's timeout.
func (h *taskHandle) op(ctx context.Context, op callOp) (TaskStatus, error) {
	if h.done != nil {
		return TaskStatus{State: TaskCompleted}, nil
	}
	res, err := h.request(ctx, op)
	if err != nil {
		return TaskStatus{}, err
	}
	st, err := ParseTaskStatus(res.Raw)
	if err != nil {
		return TaskStatus{}, fmt.Errorf("tool %q: task %s: %w", h.t.desc.Name, h.ref.ID, err)
	}
	h.last = st
	return st, nil
}

func (h *taskHandle) status(ctx context.Context) (TaskStatus, error) { return h.op(ctx, opStatus) }

func (h *taskHandle) request(ctx context.Context, op callOp) (*Result, error) {
	res, _, err := h.requestCall(ctx, op)
	return res, err
}

// requestCall is request, with the call it made (its provenance).
func (h *taskHandle) requestCall(ctx context.Context, op callOp) (*Result, *call, error) {
	if _, err := h.t.tasks(); err != nil {
		return nil, nil, err
	}
	c := &call{desc: h.t.desc, server: h.t.server, op: op, task: h.ref}
	if h.t.tokens != nil {
		p, err := resolvePrincipal(ctx, h.t.tokens, h.t.desc.Name)
		if err != nil {
			return nil, nil, err
		}
		c.principal, c.token = p.ID, p.Token
	}
	if c.principal != h.ref.Principal {
		return nil, nil, fmt.Errorf("tool %q: task %s was started by principal %q, not %q: a task is polled only as the principal that started it", h.t.desc.Name, h.ref.ID, h.ref.Principal, c.principal)
	}
	res, err := h.t.poll(ctx, c)
	if c.prov != nil {
		h.prov = c.prov
	}
	return res, c, err
}

func (h *taskHandle) wait(ctx context.Context, tr typedParts) error {
	res, err := h.result(ctx)
	if err != nil {
		return err
	}
	if err := h.t.rehydrate(res, tr); err != nil {
		return err
	}
	if h.prov != nil && tr.prov != nil {
		*tr.prov = *h.prov
	}
	return nil
}

// result waits for the task to end and returns its tool result.
func (h *taskHandle) result(ctx context.Context) (*Result, error) {
	if h.done != nil {
		return h.done, nil
	}
	progress := ProgressFrom(ctx)
	shown := ""
	for {
		st, err := h.status(ctx)
		if err != nil {
			return nil, err
		}
		if progress != nil && st.Message != "" && st.Message != shown {
			shown = st.Message
			progress(Progress{Message: st.Message})
		}
		switch {
		case st.State == TaskCancelled:
			return nil, &TaskError{Tool: h.t.desc.Name, ID: h.ref.ID, State: st.State, Message: st.Message}
		case st.Err != nil:
			return nil, &TaskError{Tool: h.t.desc.Name, ID: h.ref.ID, State: st.State, Message: st.Message, Err: st.Err}
		case st.Result != nil && st.State == TaskCompleted:
			return st.Result, nil
		}
		if st.State.Terminal() {
			break
		}
		d := st.PollInterval
		if d <= 0 {
			d = DefaultTaskPoll
		}
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("tool %q: waiting for task %s: %w", h.t.desc.Name, h.ref.ID, context.Cause(ctx))
		case <-timer.C:
		}
	}
	res, err := h.request(ctx, opResult)
	var pe *ProtocolError
	switch {
	case errors.As(err, &pe) && h.last.State == TaskFailed:
		return nil, &TaskError{Tool: h.t.desc.Name, ID: h.ref.ID, State: TaskFailed, Message: h.last.Message, Err: pe}
	case errors.As(err, &pe) && pe.Code == -32601:
		// 2026-07-28 removed tasks/result: the outcome comes with the
		// status, and this server sent none.
		return nil, &TaskError{Tool: h.t.desc.Name, ID: h.ref.ID, State: h.last.State, Message: h.last.Message,
			Err: fmt.Errorf("the server sent the outcome neither with the task's status nor for tasks/result: %w", pe)}
	}
	return res, err
}

// invokeTask is Invoke for a tool that runs only as a task: started through
// the guards, waited for within the tool's timeout (reporting progress),
// and cancelled when the timeout passes.
func (t *toolCore) invokeTask(ctx context.Context, c *call) (ModelResult, error) {
	if t.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t.timeout, &TimeoutError{Tool: t.desc.Name, Timeout: t.timeout})
		defer cancel()
	}
	h, err := t.start(ctx, c)
	if err != nil {
		return t.modelResult(ctx, c, nil, err)
	}
	if t.handoff && h.ref.ID != "" {
		ref := h.ref
		return ModelResult{Task: &ref, Text: fmt.Sprintf("The tool started task %s, which goes on in the background. Check on it with tool %q and arguments {\"tool\":%q,\"task\":%q}; it gives the result once the task is done.",
			ref.ID, TaskPollerName, ref.Tool, ref.ID)}, nil
	}
	res, err := h.result(ctx)
	var te *TimeoutError
	if err != nil && errors.As(context.Cause(ctx), &te) && h.ref.ID != "" {
		// Not waited for means not wanted: the task is cancelled, on a
		// context of its own since the call's has ended.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.timeout)
		_, _ = h.op(cctx, opCancel)
		cancel()
		return ModelResult{IsError: true, TimedOut: true, Text: fmt.Sprintf("The tool's task did not finish within %s and was cancelled. It may be slow; try again later or differently.", te.Timeout)}, nil
	}
	var ke *TaskError
	if errors.As(err, &ke) {
		text := "The tool's task was " + string(ke.State)
		if ke.Message != "" {
			text += ": " + ke.Message
		}
		return ModelResult{IsError: true, Text: text}, nil
	}
	return t.modelResult(ctx, c, res, err)
}

// callOp is what a call through the guards asks of the connection.
type callOp int

const (
	opCall callOp = iota
	opStart
	opStatus
	opResult
	opCancel
)

// taskRequest makes the task request of c on tc.
func taskRequest(ctx context.Context, tc TaskCaller, c *call) (*Result, error) {
	var st TaskStatus
	var err error
	switch c.op {
	case opStart:
		return tc.StartTool(ctx, c.desc.Name, c.args, c.ttl)
	case opResult:
		return tc.TaskResult(ctx, c.task)
	case opStatus:
		st, err = tc.TaskStatus(ctx, c.task)
	default:
		st, err = tc.CancelTask(ctx, c.task)
	}
	if err != nil {
		return nil, err
	}
	// An outcome sent with the status is the server's content like a
	// result: the taint recorder sees it.
	c.inline, c.inlineErr = st.Result, st.Err
	b, _ := json.Marshal(taskWire(st))
	return &Result{Raw: b}, nil
}

// taskWire writes st as the specification does, for ParseTaskStatus.
func taskWire(st TaskStatus) map[string]any {
	w := map[string]any{"taskId": st.ID, "status": st.State}
	if st.Message != "" {
		w["statusMessage"] = st.Message
	}
	if !st.Created.IsZero() {
		w["createdAt"] = st.Created.Format(time.RFC3339Nano)
	}
	if !st.Updated.IsZero() {
		w["lastUpdatedAt"] = st.Updated.Format(time.RFC3339Nano)
	}
	if st.TTL > 0 {
		w["ttl"] = st.TTL.Milliseconds()
	}
	if st.PollInterval > 0 {
		w["pollInterval"] = st.PollInterval.Milliseconds()
	}
	if st.Result != nil {
		raw := st.Result.Raw
		if raw == nil {
			raw, _ = encodeResult(st.Result)
		}
		w["result"] = json.RawMessage(raw)
	}
	if e := st.Err; e != nil {
		w["error"] = map[string]any{"code": e.Code, "message": e.Message, "data": e.Data}
	}
	return w
}

// requiredTask is Call's refusal of a tool that runs only as a task.
func (t *toolCore) requiredTask() error {
	return fmt.Errorf("tool %q runs only as a task (its execution.taskSupport is required): start it with Start: %w", t.desc.Name, ErrNotSent)
}

// TaskPollerName is the wire name of the task poller NewTaskPoller builds.
const TaskPollerName = "check_task"

// PollTask checks once on task id of the tool for a model, as the
// principal of ctx: the task's result as Invoke would give it once the
// task is done, else a failed result saying it is still going (IsError
// false). The server binds the task to the principal that started it.
func (t *Tool[I, O]) PollTask(ctx context.Context, id string) (ModelResult, error) {
	core := &t.core
	ref := TaskRef{ID: id, Tool: core.desc.Name, Server: core.server}
	if core.tokens != nil {
		p, err := resolvePrincipal(ctx, core.tokens, core.desc.Name)
		if err != nil {
			return ModelResult{}, err
		}
		ref.Principal = p.ID
	}
	h := &taskHandle{t: core, ref: ref}
	st, err := h.status(ctx)
	c := &call{desc: core.desc, server: core.server}
	var pe *ProtocolError
	switch {
	case errors.As(err, &pe):
		return ModelResult{IsError: true, Text: "The server does not know that task: " + pe.Message}, nil
	case err != nil:
		return ModelResult{}, err
	case !st.State.Terminal():
		text := fmt.Sprintf("Task %s is still %s", id, st.State)
		if st.Message != "" {
			text += ": " + st.Message
		}
		return ModelResult{Text: text + ". Check again later.", Task: &ref}, nil
	}
	h.last = st
	res, err := h.result(ctx)
	var ke *TaskError
	if errors.As(err, &ke) {
		return ModelResult{IsError: true, Text: "The tool's task was " + string(ke.State) + ": " + ke.Message}, nil
	}
	return core.modelResult(ctx, c, res, err)
}

// TaskPoller is a tool whose tasks a model can check on (*Tool is).
type TaskPoller interface {
	Invoker
	PollTask(ctx context.Context, id string) (ModelResult, error)
}

// NewTaskPoller returns the tool a model checks on its tasks with, for
// tools given WithTaskHandoff: named TaskPollerName, read-only, taking the
// tool's wire name and the task's id. It reaches only the tasks of the
// tools given, as the principal of each call's context.
func NewTaskPoller(tools ...Invoker) Invoker {
	p := &taskPoller{byName: map[string]TaskPoller{}}
	var names []string
	for _, t := range tools {
		if tp, ok := t.(TaskPoller); ok && t.Descriptor() != nil && t.Descriptor().TaskSupport != TaskForbidden {
			p.byName[t.Descriptor().Name] = tp
			names = append(names, fmt.Sprintf("%q", t.Descriptor().Name))
		}
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "additionalProperties": false, "required": []string{"tool", "task"},
		"properties": map[string]any{"tool": map[string]any{"type": "string", "description": "the tool that started the task"},
			"task": map[string]any{"type": "string", "description": "the task's id"}}})
	p.desc = &Descriptor{Name: TaskPollerName, Description: "Check on a task a tool started in the background: its result once it is done (tasks of " + strings.Join(names, ", ") + ").",
		Annotations: Annotations{ReadOnly: true, Idempotent: true}, InputSchema: schema}
	return p
}

type taskPoller struct {
	desc   *Descriptor
	byName map[string]TaskPoller
}

func (p *taskPoller) Descriptor() *Descriptor { return p.desc }

func (p *taskPoller) Invoke(ctx context.Context, args json.RawMessage) (ModelResult, error) {
	var in struct{ Tool, Task string }
	if err := json.Unmarshal(args, &in); err != nil || in.Task == "" {
		return ModelResult{IsError: true, Text: `Invalid arguments: give {"tool": "<tool name>", "task": "<task id>"}.`}, nil
	}
	t, ok := p.byName[in.Tool]
	if !ok {
		return ModelResult{IsError: true, Text: fmt.Sprintf("No tool %q starts tasks here.", in.Tool)}, nil
	}
	return t.PollTask(ctx, in.Task)
}
