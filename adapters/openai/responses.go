package mcpopenai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/mcpgen/mcpgen/runtime/agent"
)

// ResponseTools returns the set's tools as Responses API function tools
// (strict as in Tools).
func ResponseTools(s *agent.Set) ([]responses.ToolUnionParam, error) {
	var out []responses.ToolUnionParam
	for _, t := range s.Tools() {
		var params map[string]any
		if err := json.Unmarshal(t.InputSchema, &params); err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		p := responses.ToolParamOfFunction(t.Name, params, t.Strict)
		if t.Description != "" {
			p.OfFunction.Description = openai.String(t.Description)
		}
		out = append(out, p)
	}
	return out, nil
}

// DefaultNamespace names the namespace of a source without a prefix in
// DeferredResponseTools.
const DefaultNamespace = "tools"

// DeferredResponseTools returns the set's tools for a conversation that
// loads most of them on demand: the tool_search tool, run by the API, and
// one namespace per source of the set (named by its prefix, or
// DefaultNamespace for a source without one, and described by its
// agent.Source.Description, or by the names of its tools) holding the
// source's tools d does not load from the start, with defer_loading; the
// model is shown a namespace's name and description until a search loads
// its tools. The tools loaded from the start are plain function tools, as
// ResponseTools gives them. A call of a namespace's tool names the
// namespace and the tool's name in it (agent.Tool.Local); ResponsesLoop
// maps it back to the set's name.
func DeferredResponseTools(d *agent.Deferred) ([]responses.ToolUnionParam, error) {
	s := d.Set()
	out := []responses.ToolUnionParam{{OfToolSearch: &responses.ToolSearchToolParam{}}}
	spaces := make([][]responses.NamespaceToolToolUnionParam, s.Sources())
	locals := make([][]string, s.Sources())
	for _, t := range s.Tools() {
		var params map[string]any
		if err := json.Unmarshal(t.InputSchema, &params); err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		if d.Always(t.Name) {
			p := responses.ToolParamOfFunction(t.Name, params, t.Strict)
			if t.Description != "" {
				p.OfFunction.Description = openai.String(t.Description)
			}
			out = append(out, p)
			continue
		}
		f := &responses.NamespaceToolToolFunctionParam{Name: t.Local, Parameters: params, Strict: openai.Bool(t.Strict), DeferLoading: openai.Bool(true)}
		if t.Description != "" {
			f.Description = openai.String(t.Description)
		}
		spaces[t.Source] = append(spaces[t.Source], responses.NamespaceToolToolUnionParam{OfFunction: f})
		locals[t.Source] = append(locals[t.Source], t.Local)
	}
	for i, tools := range spaces {
		if len(tools) == 0 {
			continue
		}
		prefix, desc := s.SourceInfo(i)
		if desc == "" {
			desc = fmt.Sprintf("%d tools: %s.", len(tools), strings.Join(locals[i], ", "))
		}
		out = append(out, responses.ToolParamOfNamespace(desc, namespace(prefix), tools))
	}
	return out, nil
}

func namespace(prefix string) string {
	if prefix == "" {
		return DefaultNamespace
	}
	return prefix
}

// ResponseCalls returns a response's function calls.
func ResponseCalls(r *responses.Response) []agent.Call {
	return responseCalls(r, nil)
}

// responseCalls returns a response's function calls; with s, a call of a
// namespace's tool is named as s names it.
func responseCalls(r *responses.Response, s *agent.Set) []agent.Call {
	var out []agent.Call
	for _, it := range r.Output {
		if it.Type == "function_call" {
			name := it.Name
			if it.Namespace != "" && s != nil {
				name = inNamespace(s, it.Namespace, it.Name)
			}
			out = append(out, agent.Call{ID: it.CallID, Name: name, Arguments: json.RawMessage(it.Arguments.OfString)})
		}
	}
	return out
}

// inNamespace is the set's name of the tool local in namespace ns; a
// namespace the set does not have keeps both, for Dispatch to refuse.
func inNamespace(s *agent.Set, ns, local string) string {
	for i := range s.Sources() {
		if prefix, _ := s.SourceInfo(i); namespace(prefix) == ns {
			if prefix == "" {
				return local
			}
			return prefix + "__" + local
		}
	}
	return ns + "__" + local
}

// FunctionCallOutputs answers a turn's calls with function_call_output
// items, in order. Their output takes images and files, so images arrive
// as input_image parts and embedded PDFs as input_file parts (data URLs);
// a failed call's text starts with "Error: ".
func FunctionCallOutputs(results []agent.Result) []responses.ResponseInputItemUnionParam {
	out := make([]responses.ResponseInputItemUnionParam, len(results))
	for i, r := range results {
		var items responses.ResponseFunctionCallOutputItemListParam
		for j, p := range r.Parts {
			switch {
			case p.Kind == agent.PartImage:
				items = append(items, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{
					ImageURL: openai.String("data:" + p.MIMEType + ";base64," + p.Data),
				}})
			case p.Kind == agent.PartFile && p.MIMEType == "application/pdf":
				items = append(items, responses.ResponseFunctionCallOutputItemUnionParam{OfInputFile: &responses.ResponseInputFileContentParam{
					FileData: openai.String("data:" + p.MIMEType + ";base64," + p.Data), Filename: openai.String(p.Name),
				}})
			case p.Text != "":
				t := p.Text
				if j == 0 && r.IsError {
					t = "Error: " + t
				}
				items = append(items, responses.ResponseFunctionCallOutputItemParamOfInputText(t))
			}
		}
		if len(items) == 0 {
			items = append(items, responses.ResponseFunctionCallOutputItemParamOfInputText(text(r)))
		}
		o := responses.ResponseInputItemParamOfFunctionCallOutput(items)
		// The Go type leaves call_id optional; the API needs it.
		o.OfFunctionCallOutput.CallID = openai.String(r.CallID)
		out[i] = o
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

// ResponsesLoop is a tool-using conversation with the Responses API. It
// chains turns with previous_response_id, so the API keeps the
// conversation (Store must not be false) and a pause holds only the
// response to continue.
type ResponsesLoop struct {
	Client responses.ResponseService
	// Params are sent with every request (Model, Instructions, ...); the
	// loop sets Input, Tools and PreviousResponseID.
	Params responses.ResponseNewParams
	Tools  *agent.Set
	// Defer, when set, hands the set to the model a few tools at a time
	// (see agent.Loading and DeferredResponseTools): the tools it loads
	// from the start, the tool_search tool and a namespace per source for
	// the others.
	Defer    *agent.Loading
	MaxTurns int // default DefaultMaxTurns
}

// ResponsesOutcome is where a ResponsesLoop stopped.
type ResponsesOutcome struct {
	// Final is the last response when the loop ended (OutputText has the
	// answer).
	Final *responses.Response
	Pause *agent.Pause
}

type responsesState struct {
	PreviousResponseID string `json:"previousResponseId"`
}

// Run sends input and continues until a response calls no function or a
// call needs approval.
func (l *ResponsesLoop) Run(ctx context.Context, input responses.ResponseInputParam) (*ResponsesOutcome, error) {
	return l.run(ctx, "", input)
}

func (l *ResponsesLoop) run(ctx context.Context, prev string, input responses.ResponseInputParam) (*ResponsesOutcome, error) {
	tools, err := l.tools()
	if err != nil {
		return nil, err
	}
	turns := l.MaxTurns
	if turns <= 0 {
		turns = DefaultMaxTurns
	}
	for range turns {
		p := l.Params
		p.Tools = tools
		p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
		if prev != "" {
			p.PreviousResponseID = openai.String(prev)
		}
		r, err := l.Client.New(ctx, p)
		if err != nil {
			return nil, err
		}
		calls := responseCalls(r, l.Tools)
		if len(calls) == 0 {
			return &ResponsesOutcome{Final: r}, nil
		}
		results, pause, err := l.Tools.DispatchAll(ctx, calls)
		if err != nil {
			return nil, err
		}
		if pause != nil {
			if pause.Conversation, err = json.Marshal(responsesState{PreviousResponseID: r.ID}); err != nil {
				return nil, err
			}
			return &ResponsesOutcome{Pause: pause}, nil
		}
		prev, input = r.ID, FunctionCallOutputs(results)
	}
	return nil, ErrMaxTurns
}

func (l *ResponsesLoop) tools() ([]responses.ToolUnionParam, error) {
	if l.Defer == nil {
		return ResponseTools(l.Tools)
	}
	d, err := l.Tools.Defer(*l.Defer)
	if err != nil {
		return nil, err
	}
	return DeferredResponseTools(d)
}

// Resume continues a paused ResponsesLoop, in this process or a fresh one;
// while approvals are undecided it returns the pause again, with nothing
// sent to the model. An altered pause (an error wrapping
// agent.ErrPauseAltered) and a pause already resumed (agent.ErrPauseUsed)
// send nothing either.
//
// A resumed call that was made but whose outcome the approval store could
// not record gives the model its result all the same (it is the only
// copy): Resume returns the outcome together with an error wrapping
// mcpruntime.ErrOutcomeNotRecorded (see agent.Set.Resume).
func (l *ResponsesLoop) Resume(ctx context.Context, p *agent.Pause) (*ResponsesOutcome, error) {
	var st responsesState
	if err := json.Unmarshal(p.Conversation, &st); err != nil || st.PreviousResponseID == "" {
		return nil, errors.New("mcpopenai: the pause is not from a ResponsesLoop")
	}
	results, still, err := l.Tools.Resume(ctx, p)
	if still != nil {
		return &ResponsesOutcome{Pause: still}, err
	}
	if results == nil {
		return nil, err
	}
	// err, if any, came with results the store does not hold
	// (mcpruntime.ErrOutcomeNotRecorded): the model gets them all the same.
	o, rerr := l.run(ctx, st.PreviousResponseID, FunctionCallOutputs(results))
	return o, errors.Join(err, rerr)
}
