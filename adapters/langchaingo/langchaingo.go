// Package mcplangchain hands mcpgen's typed, gated MCP tools to langchaingo
// (github.com/tmc/langchaingo): llms.Tool definitions and a Loop for
// function calling over any llms.Model (a response's choices read as one
// turn), with a gated call pausing the loop and a large set handed over a
// few tools at a time (Defer, through agent's fallback search), and
// tools.Tool values for langchaingo's agents.
package mcplangchain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

// Definitions returns the set's tools as llms.Tool function definitions
// (strict when the set's dialect is agent.DialectStrict and the schema
// allows it).
func Definitions(s *agent.Set) ([]llms.Tool, error) {
	return definitions(s.Tools())
}

func definitions(ts []agent.Tool) ([]llms.Tool, error) {
	var out []llms.Tool
	for _, t := range ts {
		var params map[string]any
		if err := json.Unmarshal(t.InputSchema, &params); err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		out = append(out, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params, Strict: t.Strict,
		}})
	}
	return out, nil
}

// Turn returns the choices of a response that make the model's turn. A
// provider may return one turn as several choices: langchaingo's Anthropic
// client returns one per content block, so Claude's "text, then tool_use"
// is two choices and parallel calls are one each. So with one candidate
// requested (the default; opts are the request's options) every choice is
// a part of the turn; with llms.WithN above 1 the choices are alternatives
// and the first is the turn.
func Turn(resp *llms.ContentResponse, opts ...llms.CallOption) []*llms.ContentChoice {
	if resp == nil || len(resp.Choices) == 0 {
		return nil
	}
	var co llms.CallOptions
	for _, o := range opts {
		o(&co)
	}
	if co.N > 1 {
		return resp.Choices[:1]
	}
	return resp.Choices
}

// Calls returns the tool calls of a turn's choices, in order.
func Calls(choices ...*llms.ContentChoice) []agent.Call {
	var out []agent.Call
	for _, c := range choices {
		if c == nil {
			continue
		}
		for _, tc := range c.ToolCalls {
			if tc.FunctionCall != nil {
				out = append(out, agent.Call{ID: tc.ID, Name: tc.FunctionCall.Name, Arguments: json.RawMessage(tc.FunctionCall.Arguments)})
			}
		}
	}
	return out
}

// AssistantMessage is a choice as an assistant message: its text, then
// its tool calls.
func AssistantMessage(c *llms.ContentChoice) llms.MessageContent {
	m := llms.MessageContent{Role: llms.ChatMessageTypeAI}
	if c.Content != "" {
		m.Parts = append(m.Parts, llms.TextPart(c.Content))
	}
	for _, tc := range c.ToolCalls {
		m.Parts = append(m.Parts, tc)
	}
	return m
}

// AssistantMessages is a turn as the conversation's assistant messages:
// one per choice that holds anything, as the provider returned them, so
// that its client reads them back as it wrote them (the Anthropic client
// reads one part per message, and the API joins consecutive messages of
// one role; an OpenAI turn is one choice, so one message with every call).
func AssistantMessages(choices []*llms.ContentChoice) []llms.MessageContent {
	var out []llms.MessageContent
	for _, c := range choices {
		if m := AssistantMessage(c); len(m.Parts) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// final is a turn as one choice: the text of all its choices.
func final(choices []*llms.ContentChoice) *llms.ContentChoice {
	if len(choices) == 1 {
		return choices[0]
	}
	f := &llms.ContentChoice{}
	var text strings.Builder
	for _, c := range choices {
		text.WriteString(c.Content)
		if c.StopReason != "" {
			f.StopReason = c.StopReason
		}
		if f.GenerationInfo == nil {
			f.GenerationInfo = c.GenerationInfo
		}
	}
	f.Content = text.String()
	return f
}

// ToolMessages answers a turn's calls, one tool message per call in order.
// langchaingo's tool responses are text: images and resource links arrive
// as their one-line descriptions, and a failed call's text starts with
// "Error: ".
func ToolMessages(results []agent.Result) []llms.MessageContent {
	out := make([]llms.MessageContent, len(results))
	for i, r := range results {
		out[i] = llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
			llms.ToolCallResponse{ToolCallID: r.CallID, Name: r.Name, Content: text(r)},
		}}
	}
	return out
}

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

// DefaultMaxTurns bounds a Loop's model requests per Run or Resume.
const DefaultMaxTurns = 20

// Loop is a function-calling conversation with any llms.Model. Each
// response is read as one turn (see Turn): every tool call of every
// choice is made.
type Loop struct {
	Model llms.Model
	Tools *agent.Set
	// Defer, when set, hands the set to the model a few tools at a time
	// (see agent.Loading): langchaingo has no deferred loading, so the loop
	// offers the tools loaded from the start and the fallback search
	// tool, and adds the definitions each search finds to the tools of the
	// next requests. What was found is read back from the conversation, so
	// a resumed loop offers the same.
	Defer *agent.Loading
	// Options are passed on every request; the loop adds the tools.
	Options  []llms.CallOption
	MaxTurns int // default DefaultMaxTurns
}

// Outcome is where a Run or Resume stopped.
type Outcome struct {
	Messages []llms.MessageContent
	// Final is the model's last turn when the loop ended, as one choice
	// (the text of all the turn's choices; see Turn).
	Final *llms.ContentChoice
	// Pause is set instead when calls wait for approval (see agent.Pause).
	Pause *agent.Pause
}

// ErrMaxTurns: the model kept calling tools past MaxTurns.
var ErrMaxTurns = errors.New("mcplangchain: the model kept calling tools past the loop's MaxTurns")

// Run continues the conversation until the model answers without calling
// tools or a call needs approval.
func (l *Loop) Run(ctx context.Context, msgs []llms.MessageContent) (*Outcome, error) {
	var d *agent.Deferred
	var found []string
	if l.Defer != nil {
		var err error
		if d, err = l.Tools.Defer(*l.Defer); err != nil {
			return nil, err
		}
		found = d.Found(callsIn(msgs))
	}
	msgs = append([]llms.MessageContent(nil), msgs...)
	turns := l.MaxTurns
	if turns <= 0 {
		turns = DefaultMaxTurns
	}
	for range turns {
		var defs []llms.Tool
		var err error
		if d != nil {
			defs, err = definitions(d.Tools(found))
		} else {
			defs, err = Definitions(l.Tools)
		}
		if err != nil {
			return nil, err
		}
		opts := append(append([]llms.CallOption(nil), l.Options...), llms.WithTools(defs))
		resp, err := l.Model.GenerateContent(ctx, msgs, opts...)
		if err != nil {
			return nil, err
		}
		turn := Turn(resp, opts...)
		if len(turn) == 0 {
			return nil, errors.New("mcplangchain: the response has no choices")
		}
		msgs = append(msgs, AssistantMessages(turn)...)
		calls := Calls(turn...)
		if len(calls) == 0 {
			return &Outcome{Messages: msgs, Final: final(turn)}, nil
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
				return nil, fmt.Errorf("mcplangchain: encode conversation: %w", err)
			}
			return &Outcome{Messages: msgs, Pause: pause}, nil
		}
		msgs = append(msgs, ToolMessages(results)...)
	}
	return nil, ErrMaxTurns
}

// callsIn returns the tool calls of a conversation's assistant messages.
func callsIn(msgs []llms.MessageContent) []agent.Call {
	var out []agent.Call
	for _, m := range msgs {
		if m.Role != llms.ChatMessageTypeAI {
			continue
		}
		for _, p := range m.Parts {
			if tc, ok := p.(llms.ToolCall); ok && tc.FunctionCall != nil {
				out = append(out, agent.Call{ID: tc.ID, Name: tc.FunctionCall.Name, Arguments: json.RawMessage(tc.FunctionCall.Arguments)})
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
	var msgs []llms.MessageContent
	if err := json.Unmarshal(p.Conversation, &msgs); err != nil {
		return nil, fmt.Errorf("mcplangchain: pause conversation: %w", err)
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

// PendingError is what a tools.Tool returns for a gated call: langchaingo's
// agents have no way to pause a step, so the executor stops with this
// error. Approve or deny Approval, then Resume the call (or use Loop,
// which pauses and resumes the conversation).
type PendingError struct {
	Approval *mcpruntime.Approval
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("mcplangchain: the call to %q waits for approval %s", e.Approval.Tool, e.Approval.ID)
}

// AgentTools returns the set's tools as tools.Tool for langchaingo's agents,
// which pass the tool's input as one string: it must be the JSON arguments.
func AgentTools(s *agent.Set) []tools.Tool {
	var out []tools.Tool
	for _, t := range s.Tools() {
		desc := t.Description + " Input: a JSON object matching this schema: " + string(t.InputSchema)
		out = append(out, &agentTool{set: s, name: t.Name, desc: desc})
	}
	return out
}

type agentTool struct {
	set        *agent.Set
	name, desc string
}

func (a *agentTool) Name() string        { return a.name }
func (a *agentTool) Description() string { return a.desc }

func (a *agentTool) Call(ctx context.Context, input string) (string, error) {
	r, err := a.set.Dispatch(ctx, agent.Call{Name: a.name, Arguments: json.RawMessage(input)})
	if err != nil {
		return "", err
	}
	if r.Pending != nil {
		return "", &PendingError{Approval: r.Pending}
	}
	return text(r), nil
}
