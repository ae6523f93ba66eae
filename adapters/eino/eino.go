// Package mcpeino hands mcpgen's typed, gated MCP tools to Eino
// (github.com/cloudwego/eino): one InvokableTool per tool of an agent.Set,
// its ToolInfo built from the tool's schema, in a tools node
// (ToolsNodeConfig) that answers a made-up tool name with the tools the
// model may call instead of ending the run. A gated call becomes an Eino
// interrupt, so Eino's own checkpoint-and-resume (a Runner or a graph
// with a CheckPointStore) carries the pause: resuming the interrupt after
// a person's decision makes the approved call exactly once (the gate's
// guarantee), or tells the model of the denial. The interrupt's state is
// checked against the approval store like an agent.Pause, and continues the
// run once: resuming the same checkpoint again fails with an error
// wrapping agent.ErrPauseUsed.
package mcpeino

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

// ApprovalInfo is the interrupt's info for a gated call: what a person is
// shown (InterruptCtx.Info). Approve with Gate.Approve(ID, Digest). It is
// also the interrupt's state, so it travels in Eino's checkpoints; like an
// agent.Pause it is checked against the approval store when the call is
// resumed (an altered copy is an error wrapping agent.ErrPauseAltered),
// and the info of a repeated interrupt is read from the store.
type ApprovalInfo struct {
	ID             string
	Tool           string
	Server         string
	ServerIdentity string
	SchemaHash     string
	Args           string
	Digest         string
	Principal      string
	Why            string
	Created        time.Time
	Expires        time.Time
}

func init() {
	// Eino's checkpoints serialize interrupt info and state by name; the
	// info is the state too.
	schema.RegisterName[*ApprovalInfo]("mcpgen_approval_info")
}

// Option configures the tools of Tools.
type Option func(*options)

type options struct {
	onError func(context.Context, error)
}

// WithErrorHandler sets what receives an error that comes with a result
// the model is given all the same: a resumed call that was made but whose
// outcome the approval store could not record (an error wrapping
// mcpruntime.ErrOutcomeNotRecorded). An Eino tool that returns an error
// ends the run and the model never sees the result, which is the only
// copy, so the tool returns the result and hands the error to h. By
// default it is logged with slog.Default at level Error.
func WithErrorHandler(h func(context.Context, error)) Option {
	return func(o *options) { o.onError = h }
}

func newOptions(opts []Option) options {
	o := options{onError: func(ctx context.Context, err error) {
		slog.Default().ErrorContext(ctx, "mcpeino: a result reached the model, but not the approval store", "err", err)
	}}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// ToolsNodeConfig is the Eino tools node for the set: its tools (Tools)
// and an UnknownToolsHandler that answers a call of a name the set does
// not have as the other adapters do, with a failed result listing the
// tools the model may call, so a made-up name does not end the run. Use it
// as adk.ToolsConfig's ToolsNodeConfig, or in a graph's tools node.
func ToolsNodeConfig(s *agent.Set, opts ...Option) (compose.ToolsNodeConfig, error) {
	tools, err := Tools(s, opts...)
	if err != nil {
		return compose.ToolsNodeConfig{}, err
	}
	return compose.ToolsNodeConfig{Tools: tools, UnknownToolsHandler: UnknownToolsHandler(s)}, nil
}

// UnknownToolsHandler answers a call of a tool the set does not have
// through the set: a failed result ("Error: There is no tool ...
// Available tools: ...") for the model, never an error ending the run.
func UnknownToolsHandler(s *agent.Set) func(ctx context.Context, name, input string) (string, error) {
	return func(ctx context.Context, name, input string) (string, error) {
		r, err := s.Dispatch(ctx, agent.Call{ID: compose.GetToolCallID(ctx), Name: name, Arguments: json.RawMessage(input)})
		if err != nil {
			return "", err
		}
		return text(r), nil
	}
}

// Tools returns the set's tools as Eino tools (each an InvokableTool).
// ToolsNodeConfig adds the handler for names outside the set.
func Tools(s *agent.Set, opts ...Option) ([]tool.BaseTool, error) {
	o := newOptions(opts)
	var out []tool.BaseTool
	for _, t := range s.Tools() {
		info, err := toolInfo(t)
		if err != nil {
			return nil, err
		}
		out = append(out, &invokable{set: s, name: t.Name, info: info, opts: &o})
	}
	return out, nil
}

func toolInfo(t agent.Tool) (*schema.ToolInfo, error) {
	var js jsonschema.Schema
	if err := json.Unmarshal(t.InputSchema, &js); err != nil {
		return nil, fmt.Errorf("mcpeino: tool %q: input schema: %w", t.Name, err)
	}
	return &schema.ToolInfo{Name: t.Name, Desc: t.Description, ParamsOneOf: schema.NewParamsOneOfByJSONSchema(&js)}, nil
}

type invokable struct {
	set  *agent.Set
	name string
	info *schema.ToolInfo
	opts *options
}

func (x *invokable) Info(context.Context) (*schema.ToolInfo, error) { return x.info, nil }

// InvokableRun runs the call, or, when Eino resumes it after an interrupt,
// the gated call the checkpoint holds. A resume that is not aimed at this
// call, or comes before the decision, interrupts again with the same state.
func (x *invokable) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	id := compose.GetToolCallID(ctx)
	was, has, st := tool.GetInterruptState[*ApprovalInfo](ctx)
	if !was || !has || st == nil {
		r, err := x.set.Dispatch(ctx, agent.Call{ID: id, Name: x.name, Arguments: json.RawMessage(args)})
		if err != nil {
			return "", err
		}
		if a := r.Pending; a != nil {
			info := infoOf(a)
			return "", tool.StatefulInterrupt(ctx, info, info)
		}
		return text(r), nil
	}
	// The checkpoint is as trusted as a pause: the one-call pause it makes
	// is checked against the store, and interrupts again with the store's
	// copy.
	p := &agent.Pause{Version: agent.PauseVersion, Results: []agent.Result{{CallID: id, Name: x.name, Pending: st.approval()}}}
	again := func(a *mcpruntime.Approval) error {
		info := infoOf(a)
		return tool.StatefulInterrupt(ctx, info, info)
	}
	if target, _, _ := tool.GetResumeContext[any](ctx); !target {
		as, err := p.Approvals(ctx, x.set)
		if err != nil {
			return "", err
		}
		return "", again(as[0])
	}
	res, still, err := x.set.Resume(ctx, p)
	if (still != nil || res != nil) && err != nil {
		// A result the store does not hold (ErrOutcomeNotRecorded): it
		// goes to the model, the error to the handler.
		x.opts.onError(ctx, err)
	}
	if still != nil {
		return "", again(still.Results[0].Pending)
	}
	if res == nil {
		return "", err
	}
	return text(res[0]), nil
}

func infoOf(a *mcpruntime.Approval) *ApprovalInfo {
	return &ApprovalInfo{ID: a.ID, Tool: a.Tool, Server: a.Server, ServerIdentity: a.ServerIdentity, SchemaHash: a.SchemaHash, Args: string(a.Args), Digest: a.Digest,
		Principal: a.Principal, Why: a.Why, Created: a.Created, Expires: a.Expires}
}

// approval is the info as the approval it copies, for agent.Set to check.
func (i *ApprovalInfo) approval() *mcpruntime.Approval {
	return &mcpruntime.Approval{ID: i.ID, Tool: i.Tool, Server: i.Server, ServerIdentity: i.ServerIdentity, SchemaHash: i.SchemaHash, Args: json.RawMessage(i.Args), Digest: i.Digest,
		Principal: i.Principal, Why: i.Why, Created: i.Created, Expires: i.Expires}
}

// text is a result for a model that reads tool results as text: Eino's
// tool messages have no error flag, so a failure says so.
func text(r agent.Result) string {
	s := agent.TextOf(r.Parts)
	if s == "" {
		s = r.Text
	}
	if r.IsError {
		return "Error: " + s
	}
	return s
}
