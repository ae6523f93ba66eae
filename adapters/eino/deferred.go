package mcpeino

import (
	"context"
	"encoding/json"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/mcpgen/mcpgen/runtime/agent"
)

// Eino has no deferred loading of tools, so a set handed to the model a
// few tools at a time (agent.Loading, agent.Deferred) takes two pieces:
// DeferredToolsNodeConfig, the tools node holding every tool of the set
// and the fallback search tool, and DeferredModel, the chat model that
// binds, for each request, only the search tool, the tools loaded from
// the start and those the conversation's searches found. What was found
// is read from the messages, so a run resumed from a checkpoint offers the
// same.

// DeferredToolsNodeConfig is ToolsNodeConfig for d's set plus the
// fallback search tool, which answers with the definitions it finds.
func DeferredToolsNodeConfig(d *agent.Deferred, opts ...Option) (compose.ToolsNodeConfig, error) {
	c, err := ToolsNodeConfig(d.Set(), opts...)
	if err != nil {
		return compose.ToolsNodeConfig{}, err
	}
	info, err := toolInfo(d.SearchTool())
	if err != nil {
		return compose.ToolsNodeConfig{}, err
	}
	c.Tools = append(c.Tools, &searchTool{d: d, info: info})
	return c, nil
}

type searchTool struct {
	d    *agent.Deferred
	info *schema.ToolInfo
}

func (s *searchTool) Info(context.Context) (*schema.ToolInfo, error) { return s.info, nil }

func (s *searchTool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	r, _, err := s.d.Dispatch(ctx, agent.Call{ID: compose.GetToolCallID(ctx), Name: s.d.SearchName(), Arguments: json.RawMessage(args)})
	if err != nil {
		return "", err
	}
	return text(r), nil
}

// DeferredModel wraps m so that each request binds the tools d offers the
// conversation so far (agent.Deferred.Tools of what its searches found),
// whatever tools it is given with WithTools: give it to the agent with
// DeferredToolsNodeConfig's tools.
func DeferredModel(m model.ToolCallingChatModel, d *agent.Deferred) (model.ToolCallingChatModel, error) {
	infos := map[string]*schema.ToolInfo{}
	for _, t := range append(d.Set().Tools(), d.SearchTool()) {
		info, err := toolInfo(t)
		if err != nil {
			return nil, err
		}
		infos[t.Name] = info
	}
	return &deferredModel{m: m, d: d, infos: infos}, nil
}

type deferredModel struct {
	m     model.ToolCallingChatModel
	d     *agent.Deferred
	infos map[string]*schema.ToolInfo
}

// bound is m with the tools the conversation input is offered.
func (x *deferredModel) bound(input []*schema.Message) (model.ToolCallingChatModel, error) {
	var calls []agent.Call
	for _, msg := range input {
		if msg == nil || msg.Role != schema.Assistant {
			continue
		}
		for _, tc := range msg.ToolCalls {
			calls = append(calls, agent.Call{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)})
		}
	}
	var tools []*schema.ToolInfo
	for _, t := range x.d.Tools(x.d.Found(calls)) {
		tools = append(tools, x.infos[t.Name])
	}
	return x.m.WithTools(tools)
}

func (x *deferredModel) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	m, err := x.bound(input)
	if err != nil {
		return nil, err
	}
	return m.Generate(ctx, input, opts...)
}

func (x *deferredModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	m, err := x.bound(input)
	if err != nil {
		return nil, err
	}
	return m.Stream(ctx, input, opts...)
}

// WithTools keeps the wrapper: the tools bound are d's for each request.
func (x *deferredModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return x, nil
}
