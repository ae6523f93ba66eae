package mcpopenai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

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

// ResponseCalls returns a response's function calls.
func ResponseCalls(r *responses.Response) []agent.Call {
	var out []agent.Call
	for _, it := range r.Output {
		if it.Type == "function_call" {
			out = append(out, agent.Call{ID: it.CallID, Name: it.Name, Arguments: json.RawMessage(it.Arguments.OfString)})
		}
	}
	return out
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
	Params   responses.ResponseNewParams
	Tools    *agent.Set
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
	tools, err := ResponseTools(l.Tools)
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
		calls := ResponseCalls(r)
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
