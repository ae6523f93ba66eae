// Package mcpeino hands mcpgen's typed, gated MCP tools to Eino
// (github.com/cloudwego/eino): one InvokableTool per tool of an agent.Set,
// its ToolInfo built from the tool's schema. A gated call becomes an Eino
// interrupt, so Eino's own checkpoint-and-resume (a Runner or a graph
// with a CheckPointStore) carries the pause: resuming the interrupt after
// a person's decision makes the approved call exactly once (the gate's
// guarantee), or tells the model of the denial.
package mcpeino

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

// ApprovalInfo is the interrupt's info for a gated call: what a person is
// shown (InterruptCtx.Info). Approve with Gate.Approve(ID, Digest).
type ApprovalInfo struct {
	ID        string
	Tool      string
	Args      string
	Digest    string
	Principal string
	Why       string
	Expires   time.Time
}

func init() {
	// Eino's checkpoints serialize interrupt info and state by name; the
	// info is the state too.
	schema.RegisterName[*ApprovalInfo]("mcpgen_approval_info")
}

// Tools returns the set's tools as Eino tools (each an InvokableTool).
func Tools(s *agent.Set) ([]tool.BaseTool, error) {
	var out []tool.BaseTool
	for _, t := range s.Tools() {
		var js jsonschema.Schema
		if err := json.Unmarshal(t.InputSchema, &js); err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
		}
		info := &schema.ToolInfo{Name: t.Name, Desc: t.Description, ParamsOneOf: schema.NewParamsOneOfByJSONSchema(&js)}
		out = append(out, &invokable{set: s, name: t.Name, info: info})
	}
	return out, nil
}

type invokable struct {
	set  *agent.Set
	name string
	info *schema.ToolInfo
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
	again := func() error {
		return tool.StatefulInterrupt(ctx, st, st)
	}
	if target, _, _ := tool.GetResumeContext[any](ctx); !target {
		return "", again()
	}
	p := &agent.Pause{Version: agent.PauseVersion, Results: []agent.Result{{
		CallID: id, Name: x.name, Pending: &mcpruntime.Approval{ID: st.ID, Tool: st.Tool},
	}}}
	res, still, err := x.set.Resume(ctx, p)
	if err != nil {
		return "", err
	}
	if still != nil {
		return "", again()
	}
	return text(res[0]), nil
}

func infoOf(a *mcpruntime.Approval) *ApprovalInfo {
	return &ApprovalInfo{ID: a.ID, Tool: a.Tool, Args: string(a.Args), Digest: a.Digest, Principal: a.Principal, Why: a.Why, Expires: a.Expires}
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
