// Package mcpanthropic hands mcpgen's typed, gated MCP tools to the
// Anthropic Messages API (github.com/anthropics/anthropic-sdk-go/v2):
// ToolParams from an agent.Set, tool_use blocks to tool_result blocks (with
// is_error, images as image blocks and embedded PDFs as document blocks),
// and a Loop that runs until the model ends its turn or a call waits for a
// person's approval. The Loop hands a large set over a few tools at a time
// (Defer) through the API's tool search tool (DeferredTools).
package mcpanthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/mcpgen/mcpgen/runtime/agent"
)

// Tools returns the set's tools as Messages API tool definitions. Build
// the set with agent.DialectJSONSchema.
func Tools(s *agent.Set) ([]anthropic.ToolUnionParam, error) {
	var out []anthropic.ToolUnionParam
	for _, t := range s.Tools() {
		var schema anthropic.ToolInputSchemaParam
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		p := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			p.Description = anthropic.String(t.Description)
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &p})
	}
	return out, nil
}

// DeferredTools returns the set's tools for a conversation that loads
// most of them on demand: Anthropic's tool search tool (the regex one),
// then every tool of the set, those d does not load from the start with
// defer_loading, so that the model is shown them only once a search of its
// own has found them. The API runs the search; the model's calls of the
// tools it found are tool_use blocks like any other, and go through the
// set.
func DeferredTools(d *agent.Deferred) ([]anthropic.ToolUnionParam, error) {
	tools, err := Tools(d.Set())
	if err != nil {
		return nil, err
	}
	out := []anthropic.ToolUnionParam{{OfToolSearchToolRegex20251119: &anthropic.ToolSearchToolRegex20251119Param{
		Type: anthropic.ToolSearchToolRegex20251119TypeToolSearchToolRegex20251119,
	}}}
	for _, t := range tools {
		if !d.Always(t.OfTool.Name) {
			t.OfTool.DeferLoading = anthropic.Bool(true)
		}
		out = append(out, t)
	}
	return out, nil
}

// Calls returns the tool_use blocks of an assistant message as calls.
func Calls(m *anthropic.Message) []agent.Call {
	var out []agent.Call
	for _, b := range m.Content {
		if b.Type == "tool_use" {
			out = append(out, agent.Call{ID: b.ID, Name: b.Name, Arguments: b.Input})
		}
	}
	return out
}

// ResultMessage is the user message answering a turn's calls: one
// tool_result block per result, in order, before anything else (the API
// requires both).
func ResultMessage(results []agent.Result) anthropic.MessageParam {
	blocks := make([]anthropic.ContentBlockParamUnion, len(results))
	for i, r := range results {
		tr := anthropic.ToolResultBlockParam{ToolUseID: r.CallID, Content: content(r.Parts, r.Text)}
		if r.IsError {
			tr.IsError = anthropic.Bool(true)
		}
		blocks[i] = anthropic.ContentBlockParamUnion{OfToolResult: &tr}
	}
	return anthropic.NewUserMessage(blocks...)
}

func content(parts []agent.Part, fallback string) []anthropic.ToolResultBlockParamContentUnion {
	var out []anthropic.ToolResultBlockParamContentUnion
	for _, p := range parts {
		switch {
		case p.Kind == agent.PartImage:
			// agent has checked the media type against the bytes.
			out = append(out, anthropic.ToolResultBlockParamContentUnion{OfImage: &anthropic.ImageBlockParam{
				Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
					Data: p.Data, MediaType: anthropic.Base64ImageSourceMediaType(p.MIMEType),
				}},
			}})
		case p.Kind == agent.PartFile && p.MIMEType == "application/pdf":
			// agent has read the type from the bytes.
			doc := &anthropic.DocumentBlockParam{Source: anthropic.DocumentBlockParamSourceUnion{OfBase64: &anthropic.Base64PDFSourceParam{Data: p.Data}}}
			if p.Name != "" {
				doc.Title = anthropic.String(p.Name)
			}
			out = append(out, anthropic.ToolResultBlockParamContentUnion{OfDocument: doc})
		case p.Text != "": // the API refuses empty text blocks
			out = append(out, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: p.Text}})
		}
	}
	if len(out) == 0 {
		if fallback == "" {
			fallback = "(no content)"
		}
		out = append(out, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: fallback}})
	}
	return out
}

// DefaultMaxTurns bounds a Loop's model requests per Run or Resume.
const DefaultMaxTurns = 20

// Loop is a tool-using conversation with the Messages API.
type Loop struct {
	Client anthropic.MessageService
	// Params are sent with every request (Model, MaxTokens, System, ...);
	// the loop sets Messages and Tools.
	Params anthropic.MessageNewParams
	Tools  *agent.Set
	// Defer, when set, hands the set to the model a few tools at a time
	// (see agent.Loading and DeferredTools): the tools it loads from the
	// start, and the tool search tool for the others.
	Defer *agent.Loading
	// Stream makes each request a streaming one, accumulated into the
	// message.
	Stream   bool
	MaxTurns int // default DefaultMaxTurns
	// OnMessage, when set, sees every assistant message as it arrives.
	OnMessage func(*anthropic.Message)
}

// Outcome is where a Run or Resume stopped.
type Outcome struct {
	// Messages is the whole conversation so far.
	Messages []anthropic.MessageParam
	// Final is the model's last message when the loop ended (end_turn, or
	// any stop reason other than tool_use).
	Final *anthropic.Message
	// Pause is set instead when some of the last turn's calls wait for
	// approval: store it (it is JSON), decide, then Resume.
	Pause *agent.Pause
}

// ErrMaxTurns: the model kept calling tools past MaxTurns.
var ErrMaxTurns = errors.New("mcpanthropic: the model kept calling tools past the loop's MaxTurns")

// Run continues the conversation msgs until the model ends its turn or a
// call needs approval.
func (l *Loop) Run(ctx context.Context, msgs []anthropic.MessageParam) (*Outcome, error) {
	tools, err := l.tools()
	if err != nil {
		return nil, err
	}
	msgs = append([]anthropic.MessageParam(nil), msgs...)
	turns := l.MaxTurns
	if turns <= 0 {
		turns = DefaultMaxTurns
	}
	for range turns {
		p := l.Params
		p.Messages, p.Tools = msgs, tools
		m, err := l.send(ctx, p)
		if err != nil {
			return nil, err
		}
		if l.OnMessage != nil {
			l.OnMessage(m)
		}
		msgs = append(msgs, m.ToParam())
		if m.StopReason == anthropic.StopReasonPauseTurn {
			// A server tool (the tool search) paused a long turn: sent
			// back as it is, it goes on.
			continue
		}
		calls := Calls(m)
		if m.StopReason != anthropic.StopReasonToolUse || len(calls) == 0 {
			return &Outcome{Messages: msgs, Final: m}, nil
		}
		results, pause, err := l.Tools.DispatchAll(ctx, calls)
		if err != nil {
			return nil, err
		}
		if pause != nil {
			if pause.Conversation, err = json.Marshal(msgs); err != nil {
				return nil, fmt.Errorf("mcpanthropic: encode conversation: %w", err)
			}
			return &Outcome{Messages: msgs, Pause: pause}, nil
		}
		msgs = append(msgs, ResultMessage(results))
	}
	return nil, ErrMaxTurns
}

// Resume continues a paused loop, in this process or a fresh one: the
// decided calls are made (each approved one exactly once) and the
// conversation goes on. While approvals are undecided it returns the pause
// again, with nothing sent to the model. A pause is checked against the
// approval store and continues the conversation once (see
// agent.Set.Resume): an altered pause is an error wrapping
// agent.ErrPauseAltered, a second resume one wrapping agent.ErrPauseUsed,
// and the model is not asked.
//
// A resumed call that was made but whose outcome the approval store could
// not record gives the model its result all the same (it is the only
// copy): Resume returns the outcome together with an error wrapping
// mcpruntime.ErrOutcomeNotRecorded (see agent.Set.Resume).
func (l *Loop) Resume(ctx context.Context, p *agent.Pause) (*Outcome, error) {
	var msgs []anthropic.MessageParam
	if err := json.Unmarshal(p.Conversation, &msgs); err != nil {
		return nil, fmt.Errorf("mcpanthropic: pause conversation: %w", err)
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
	o, rerr := l.Run(ctx, append(msgs, ResultMessage(results)))
	return o, errors.Join(err, rerr)
}

func (l *Loop) tools() ([]anthropic.ToolUnionParam, error) {
	if l.Defer == nil {
		return Tools(l.Tools)
	}
	d, err := l.Tools.Defer(*l.Defer)
	if err != nil {
		return nil, err
	}
	return DeferredTools(d)
}

func (l *Loop) send(ctx context.Context, p anthropic.MessageNewParams) (*anthropic.Message, error) {
	if !l.Stream {
		return l.Client.New(ctx, p)
	}
	s := l.Client.NewStreaming(ctx, p)
	defer s.Close()
	var m anthropic.Message
	for s.Next() {
		if err := m.Accumulate(s.Current()); err != nil {
			return nil, err
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return &m, nil
}
