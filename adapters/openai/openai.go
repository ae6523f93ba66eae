// Package mcpopenai hands mcpgen's typed, gated MCP tools to OpenAI's APIs
// (github.com/openai/openai-go/v3). Chat Completions: function tools from an
// agent.Set (strict mode when the set is built with agent.DialectStrict),
// tool calls to tool messages, and a Loop, streaming or not, that runs
// until the model answers or a call waits for a person's approval. The
// Responses API: function tools, function_call_output items (images and
// PDFs included), and a ResponsesLoop chained by previous_response_id.
// Both loops hand a large set over a few tools at a time (Defer): the
// Responses API through its hosted tool search over a namespace per
// server, Chat Completions through agent's fallback search.
package mcpopenai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/mcpgen/mcpgen/runtime/agent"
)

// Tools returns the set's tools as function tools. A tool is marked strict
// when the set's dialect is agent.DialectStrict and its schema could be
// made strict (agent.Tool.Strict).
func Tools(s *agent.Set) ([]openai.ChatCompletionToolUnionParam, error) {
	return chatTools(s.Tools())
}

func chatTools(ts []agent.Tool) ([]openai.ChatCompletionToolUnionParam, error) {
	var out []openai.ChatCompletionToolUnionParam
	for _, t := range ts {
		var params shared.FunctionParameters
		if err := json.Unmarshal(t.InputSchema, &params); err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		f := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
		if t.Description != "" {
			f.Description = openai.String(t.Description)
		}
		if t.Strict {
			f.Strict = openai.Bool(true)
		}
		out = append(out, openai.ChatCompletionFunctionTool(f))
	}
	return out, nil
}

// Calls returns an assistant message's function calls.
func Calls(m openai.ChatCompletionMessage) []agent.Call {
	var out []agent.Call
	for _, c := range m.ToolCalls {
		if c.Type == "function" {
			out = append(out, agent.Call{ID: c.ID, Name: c.Function.Name, Arguments: json.RawMessage(c.Function.Arguments)})
		}
	}
	return out
}

// ToolMessages answers a turn's calls, one tool message per call in order.
// Tool messages take text only, so images and resource links arrive as
// their one-line descriptions; a failed call's text starts with "Error: "
// (there is no error flag).
func ToolMessages(results []agent.Result) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, len(results))
	for i, r := range results {
		out[i] = openai.ToolMessage(text(r), r.CallID)
	}
	return out
}

// DefaultMaxTurns bounds a Loop's model requests per Run or Resume.
const DefaultMaxTurns = 20

// Loop is a tool-using conversation with Chat Completions.
type Loop struct {
	Client openai.ChatCompletionService
	// Params are sent with every request (Model, ...); the loop sets
	// Messages and Tools.
	Params openai.ChatCompletionNewParams
	Tools  *agent.Set
	// Defer, when set, hands the set to the model a few tools at a time
	// (see agent.Loading): Chat Completions has no deferred loading of its
	// own, so the loop offers the tools loaded from the start and the
	// fallback search tool, and adds the definitions each search finds to
	// the tools of the next requests. What was found is read back from the
	// conversation, so a resumed loop offers the same.
	Defer *agent.Loading
	// Stream makes each request a streaming one, accumulated into the
	// message.
	Stream   bool
	MaxTurns int // default DefaultMaxTurns
}

// Outcome is where a Run or Resume stopped.
type Outcome struct {
	Messages []openai.ChatCompletionMessageParamUnion
	// Final is the model's last message when the loop ended.
	Final *openai.ChatCompletionMessage
	// Pause is set instead when calls wait for approval (see agent.Pause).
	Pause *agent.Pause
}

// ErrMaxTurns: the model kept calling tools past MaxTurns.
var ErrMaxTurns = errors.New("mcpopenai: the model kept calling tools past the loop's MaxTurns")

// Run continues the conversation msgs until the model answers without
// calling tools or a call needs approval.
func (l *Loop) Run(ctx context.Context, msgs []openai.ChatCompletionMessageParamUnion) (*Outcome, error) {
	var d *agent.Deferred
	var found []string
	if l.Defer != nil {
		var err error
		if d, err = l.Tools.Defer(*l.Defer); err != nil {
			return nil, err
		}
		found = d.Found(callsIn(msgs))
	}
	msgs = append([]openai.ChatCompletionMessageParamUnion(nil), msgs...)
	turns := l.MaxTurns
	if turns <= 0 {
		turns = DefaultMaxTurns
	}
	for range turns {
		var tools []openai.ChatCompletionToolUnionParam
		var err error
		if d != nil {
			tools, err = chatTools(d.Tools(found))
		} else {
			tools, err = Tools(l.Tools)
		}
		if err != nil {
			return nil, err
		}
		p := l.Params
		p.Messages, p.Tools = msgs, tools
		m, err := l.send(ctx, p)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m.ToParam())
		calls := Calls(*m)
		if len(calls) == 0 {
			return &Outcome{Messages: msgs, Final: m}, nil
		}
		var results []agent.Result
		var pause *agent.Pause
		if d != nil {
			var more []string
			results, pause, more, err = d.DispatchAll(ctx, calls)
			found = append(found, more...)
		} else {
			results, pause, err = l.Tools.DispatchAll(ctx, calls)
		}
		if err != nil {
			return nil, err
		}
		if pause != nil {
			if pause.Conversation, err = json.Marshal(msgs); err != nil {
				return nil, fmt.Errorf("mcpopenai: encode conversation: %w", err)
			}
			return &Outcome{Messages: msgs, Pause: pause}, nil
		}
		msgs = append(msgs, ToolMessages(results)...)
	}
	return nil, ErrMaxTurns
}

// callsIn returns the tool calls of a conversation's assistant messages.
func callsIn(msgs []openai.ChatCompletionMessageParamUnion) []agent.Call {
	var out []agent.Call
	for _, m := range msgs {
		if m.OfAssistant == nil {
			continue
		}
		for _, tc := range m.OfAssistant.ToolCalls {
			if f := tc.OfFunction; f != nil {
				out = append(out, agent.Call{ID: f.ID, Name: f.Function.Name, Arguments: json.RawMessage(f.Function.Arguments)})
			}
		}
	}
	return out
}

// Resume continues a paused loop, in this process or a fresh one (see
// agent.Set.Resume); while approvals are undecided it returns the pause
// again, with nothing sent to the model. An altered pause (an error
// wrapping agent.ErrPauseAltered) and a pause already resumed
// (agent.ErrPauseUsed) send nothing either.
//
// A resumed call that was made but whose outcome the approval store could
// not record gives the model its result all the same (it is the only
// copy): Resume returns the outcome together with an error wrapping
// mcpruntime.ErrOutcomeNotRecorded (see agent.Set.Resume).
func (l *Loop) Resume(ctx context.Context, p *agent.Pause) (*Outcome, error) {
	var msgs []openai.ChatCompletionMessageParamUnion
	if err := json.Unmarshal(p.Conversation, &msgs); err != nil {
		return nil, fmt.Errorf("mcpopenai: pause conversation: %w", err)
	}
	results, still, err := l.Tools.Resume(ctx, p)
	if still != nil {
		return &Outcome{Messages: msgs, Pause: still}, err
	}
	if results == nil {
		return nil, err
	}
	// err, if any, came with results the store does not hold
	// (mcpruntime.ErrOutcomeNotRecorded): the model gets them all the same.
	o, rerr := l.Run(ctx, append(msgs, ToolMessages(results)...))
	return o, errors.Join(err, rerr)
}

func (l *Loop) send(ctx context.Context, p openai.ChatCompletionNewParams) (*openai.ChatCompletionMessage, error) {
	var cc *openai.ChatCompletion
	if l.Stream {
		s := l.Client.NewStreaming(ctx, p)
		defer s.Close()
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		if err := s.Err(); err != nil {
			return nil, err
		}
		cc = &acc.ChatCompletion
	} else {
		var err error
		if cc, err = l.Client.New(ctx, p); err != nil {
			return nil, err
		}
	}
	if len(cc.Choices) == 0 {
		return nil, errors.New("mcpopenai: the response has no choices")
	}
	m := cc.Choices[0].Message
	return &m, nil
}
