package crmopenai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	"github.com/mcpgen/mcpgen/adapters/internal/crmtest/githubtest"
	mcpopenai "github.com/mcpgen/mcpgen/adapters/openai"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []toolCall      `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

func (m message) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct{ Text string }
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

type request struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []message `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string         `json:"name"`
			Strict     bool           `json:"strict"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// reply is a scripted assistant turn: text, or tool calls.
type reply struct {
	text  string
	calls [][3]string // id, name ("namespace.name" for a namespace's tool), arguments
	// search, for the Responses API, makes the turn start with a hosted
	// tool search of these words.
	search string
}

type step func(t *testing.T, req *request) reply

// model is a Chat Completions server that plays a script and checks each
// request against the API's rules.
type model struct {
	t     *testing.T
	mu    sync.Mutex
	steps []step
	n     int
	// shown is, per request, the estimated tokens of the request, all of
	// which the model is shown.
	shown []int
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := m.t
	var req request
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, 400)
		return
	}
	if err := checkRequest(&req); err != nil {
		t.Errorf("request %d breaks the API's rules: %v", m.n, err)
		http.Error(w, `{"error":{"message":"invalid"}}`, 400)
		return
	}
	m.mu.Lock()
	if m.n >= len(m.steps) {
		m.mu.Unlock()
		t.Errorf("unscripted request %d", m.n)
		http.Error(w, "unscripted", 500)
		return
	}
	s := m.steps[m.n]
	m.n++
	id := fmt.Sprintf("chatcmpl-%d", m.n)
	m.shown = append(m.shown, githubtest.EstimateTokens(string(body)))
	m.mu.Unlock()
	rep := s(t, &req)
	// The model calls what it is offered.
	for _, c := range rep.calls {
		offered := false
		for _, tl := range req.Tools {
			offered = offered || tl.Function.Name == c[1]
		}
		if !offered {
			t.Errorf("the model calls %q, which the request does not offer", c[1])
		}
	}
	finish := "stop"
	var calls []map[string]any
	for i, c := range rep.calls {
		finish = "tool_calls"
		calls = append(calls, map[string]any{"index": i, "id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": c[2]}})
	}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": rep.text, "refusal": nil}
		if calls != nil {
			msg["tool_calls"] = calls
			msg["content"] = nil
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": id, "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
			"usage":   map[string]int{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
		})
		return
	}
	// Data-only events ending at [DONE]; with include_usage a last chunk
	// has no choices.
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, fin any, usage any) {
		ch := []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}}
		if delta == nil {
			ch = []any{}
		}
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1, "model": req.Model, "choices": ch, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	if rep.text != "" {
		chunk(map[string]any{"content": rep.text}, nil, nil)
	}
	for i, c := range rep.calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": ""}}}}, nil, nil)
		half := len(c[2]) / 2
		for _, part := range []string{c[2][:half], c[2][half:]} {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": part}}}}, nil, nil)
		}
	}
	chunk(map[string]any{}, finish, nil)
	chunk(nil, nil, map[string]int{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func checkRequest(req *request) error {
	for _, tl := range req.Tools {
		f := tl.Function
		if tl.Type != "function" || !toolName.MatchString(f.Name) {
			return fmt.Errorf("tool %q", f.Name)
		}
		if f.Strict {
			if err := checkStrict("#", f.Parameters); err != nil {
				return fmt.Errorf("strict tool %q: %v", f.Name, err)
			}
		}
	}
	for i, m := range req.Messages {
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			if m.Role == "tool" && (i == 0 || req.Messages[i-1].Role != "tool" && req.Messages[i-1].Role != "assistant") {
				return fmt.Errorf("message %d: a tool message not after an assistant's tool calls", i)
			}
			continue
		}
		for j, c := range m.ToolCalls {
			k := i + 1 + j
			if k >= len(req.Messages) || req.Messages[k].Role != "tool" || req.Messages[k].ToolCallID != c.ID {
				return fmt.Errorf("message %d: tool call %s is not answered in order", i, c.ID)
			}
		}
	}
	return nil
}

// strictFormats are the formats strict mode takes.
var strictFormats = map[string]bool{"date-time": true, "time": true, "date": true, "duration": true, "email": true, "hostname": true, "ipv4": true, "ipv6": true, "uuid": true}

// checkStrict applies strict mode's rules: every object closed and
// requiring every property; of the constraints, only those it enforces
// (pattern, some formats, numeric bounds and multipleOf, minItems and
// maxItems), with values of the right kind.
func checkStrict(at string, s map[string]any) error {
	if f, ok := s["format"]; ok && !strictFormats[fmt.Sprint(f)] {
		return fmt.Errorf("%s: format %v", at, f)
	}
	if p, ok := s["pattern"].(string); ok && (strings.Contains(p, "(?=") || strings.Contains(p, "(?!") || strings.Contains(p, "(?<")) {
		return fmt.Errorf("%s: pattern with lookaround", at)
	}
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems"} {
		if v, ok := s[k]; ok {
			if _, num := v.(float64); !num {
				return fmt.Errorf("%s: %s is %v", at, k, v)
			}
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		if s["additionalProperties"] != false {
			return fmt.Errorf("%s: additionalProperties is not false", at)
		}
		req, _ := s["required"].([]any)
		if len(req) != len(props) {
			return fmt.Errorf("%s: required lists %d of %d properties", at, len(req), len(props))
		}
		for n, p := range props {
			if err := checkStrict(at+"/"+n, p.(map[string]any)); err != nil {
				return err
			}
		}
	}
	for _, k := range []string{"$schema", "minLength", "maxLength", "uniqueItems", "default", "oneOf", "allOf", "$ref"} {
		if _, ok := s[k]; ok {
			return fmt.Errorf("%s: keyword %s", at, k)
		}
	}
	if it, ok := s["items"].(map[string]any); ok {
		return checkStrict(at+"/items", it)
	}
	if bs, ok := s["anyOf"].([]any); ok {
		for i, b := range bs {
			if err := checkStrict(fmt.Sprintf("%s/anyOf/%d", at, i), b.(map[string]any)); err != nil {
				return err
			}
		}
	}
	return nil
}

func newModel(t *testing.T, steps ...step) (*model, openai.ChatCompletionService) {
	m := &model{t: t, steps: steps}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	return m, c.Chat.Completions
}

func (m *model) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// toolResult is the tool message answering id.
func toolResult(t *testing.T, req *request, id string) string {
	t.Helper()
	for _, m := range req.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			return m.text()
		}
	}
	t.Fatalf("no tool message for %s", id)
	return ""
}

func newSet(t *testing.T, d agent.Dialect, sources ...agent.Source) *agent.Set {
	t.Helper()
	s, err := agent.New(d, sources...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newLoop(svc openai.ChatCompletionService, s *agent.Set, stream bool) *mcpopenai.Loop {
	p := openai.ChatCompletionNewParams{Model: "gpt-test"}
	if stream {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	return &mcpopenai.Loop{Client: svc, Tools: s, Stream: stream, Params: p}
}

func ask(q string) []openai.ChatCompletionMessageParamUnion {
	return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(q)}
}

func final(o *mcpopenai.Outcome) string {
	if o == nil || o.Final == nil {
		return ""
	}
	return o.Final.Content
}

func TestFullLoop(t *testing.T) {
	url := crmtest.Server(t)
	for _, tc := range []struct {
		stream  bool
		dialect agent.Dialect
	}{{false, agent.DialectJSONSchema}, {true, agent.DialectStrict}} {
		t.Run(fmt.Sprintf("stream=%v,%s", tc.stream, tc.dialect), func(t *testing.T) {
			s := newSet(t, tc.dialect, agent.Source{Tools: crmtest.Toolset(t, crmtest.Conn(t, url), nil)})
			// In strict mode the model must send every member; null is
			// how it says "absent".
			search := `{"stage":"proposal"}`
			if tc.dialect == agent.DialectStrict {
				search = `{"query":null,"stage":"proposal","min_amount":null,"limit":null}`
			}
			_, svc := newModel(t,
				func(t *testing.T, req *request) reply {
					strict := 0
					for _, tl := range req.Tools {
						if tl.Function.Strict {
							strict++
						}
					}
					if (strict > 0) != (tc.dialect == agent.DialectStrict) {
						t.Errorf("%d strict tools in dialect %s", strict, tc.dialect)
					}
					// The constraints strict mode enforces reach it.
					for _, tl := range req.Tools {
						if tl.Function.Name != "search_deals" {
							continue
						}
						b, _ := json.Marshal(tl.Function.Parameters["properties"])
						for _, want := range []string{`"maximum":50`, `"minimum":1`, `"minimum":0`} {
							if !strings.Contains(string(b), want) {
								t.Errorf("search_deals lacks %s: %s", want, b)
							}
						}
					}
					return reply{calls: [][3]string{{"call_1", "search_deals", search}, {"call_2", "pipeline_chart", `{}`}}}
				},
				func(t *testing.T, req *request) reply {
					if r := toolResult(t, req, "call_1"); !strings.Contains(r, `"D-2001"`) || strings.HasPrefix(r, "Error") {
						t.Errorf("search_deals result = %s", r)
					}
					// Tool messages take text only: the chart is described.
					if r := toolResult(t, req, "call_2"); !strings.Contains(r, "Pipeline by stage") || !strings.Contains(r, "[image: image/png") {
						t.Errorf("pipeline_chart result = %s", r)
					}
					return reply{text: "One deal in proposal."}
				})
			o, err := newLoop(svc, s, tc.stream).Run(crmtest.Alice(), ask("Deals in proposal?"))
			if err != nil {
				t.Fatal(err)
			}
			if final(o) != "One deal in proposal." || o.Pause != nil {
				t.Errorf("outcome %+v", o)
			}
		})
	}
}

func TestPauseResumeInFreshLoop(t *testing.T) {
	url := crmtest.Server(t)
	dir := t.TempDir()
	const note = "Terms sent."
	m, svc := newModel(t,
		func(t *testing.T, req *request) reply {
			return reply{calls: [][3]string{{"call_1", "update_deal", `{"deal_id":"D-2001","note":"` + note + `","stage":null,"amount":null}`}}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.Contains(r, "alice: "+note) || strings.HasPrefix(r, "Error") {
				t.Errorf("update_deal result = %s", r)
			}
			return reply{text: "Noted."}
		})
	conn1 := crmtest.Conn(t, url)
	loop1 := newLoop(svc, newSet(t, agent.DialectStrict, agent.Source{Tools: crmtest.Toolset(t, conn1, crmtest.FileGate(t, dir))}), true)
	o, err := loop1.Run(crmtest.Alice(), ask("Note it."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	stored, _ := json.Marshal(o.Pause)

	conn2 := crmtest.Conn(t, url)
	gate2 := crmtest.FileGate(t, dir)
	s2 := newSet(t, agent.DialectStrict, agent.Source{Tools: crmtest.Toolset(t, conn2, gate2)})
	loop2 := newLoop(svc, s2, false)
	p, err := agent.ParsePause(stored)
	if err != nil {
		t.Fatal(err)
	}
	if o, err := loop2.Resume(crmtest.Alice(), p); err != nil || o.Pause == nil || m.requests() != 1 {
		t.Fatalf("undecided resume: %+v, %v", o, err)
	}
	as, err := p.Approvals(crmtest.Alice(), s2)
	if err != nil {
		t.Fatal(err)
	}
	a := as[0]
	if err := gate2.Approve(context.Background(), a.ID, a.Digest); err != nil {
		t.Fatal(err)
	}
	o, err = loop2.Resume(crmtest.Alice(), p)
	if err != nil || final(o) != "Noted." {
		t.Fatalf("resumed: %+v, %v", o, err)
	}
	// A pause is resumed once: again, it is an error and the model is not
	// asked.
	before := m.requests()
	if o, err := loop2.Resume(crmtest.Alice(), p); !errors.Is(err, agent.ErrPauseUsed) || o != nil || m.requests() != before {
		t.Errorf("second resume: %+v, %v", o, err)
	}
	if n := crmtest.Notes(t, conn2, "D-2001", note); n != 1 {
		t.Errorf("the CRM has %d notes, want exactly 1", n)
	}
}

func TestDenialAndInvalidArguments(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.Server(t))
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore())
	s := newSet(t, agent.DialectJSONSchema, agent.Source{Tools: crmtest.Toolset(t, conn, gate)})
	_, svc := newModel(t,
		func(t *testing.T, req *request) reply {
			return reply{calls: [][3]string{{"call_1", "get_deal", `{"deal_id":7,"verbose":true}`}, {"call_2", "update_deal", `{"deal_id":"D-2001","stage":"won"}`}}}
		},
		func(t *testing.T, req *request) reply {
			r := toolResult(t, req, "call_1")
			for _, w := range []string{"Error: ", "/deal_id", "/verbose", "2 problems"} {
				if !strings.Contains(r, w) {
					t.Errorf("invalid arguments: result lacks %q: %s", w, r)
				}
			}
			if r := toolResult(t, req, "call_2"); !strings.HasPrefix(r, "Error: ") || !strings.Contains(r, "denied") || !strings.Contains(r, "ask finance") {
				t.Errorf("denial = %s", r)
			}
			return reply{text: "OK."}
		})
	loop := newLoop(svc, s, true)
	o, err := loop.Run(crmtest.Alice(), ask("Close D-2001."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	as, err := o.Pause.Approvals(crmtest.Alice(), s)
	if err != nil {
		t.Fatal(err)
	}
	if err := gate.Deny(context.Background(), as[0].ID, "ask finance"); err != nil {
		t.Fatal(err)
	}
	if o, err = loop.Resume(crmtest.Alice(), crmtest.RoundTrip(t, o.Pause)); err != nil || final(o) != "OK." {
		t.Fatalf("after denial: %+v, %v", o, err)
	}
}

func TestTwoServersNamespaced(t *testing.T) {
	east, west := crmtest.Conn(t, crmtest.Server(t)), crmtest.Conn(t, crmtest.Server(t))
	s := newSet(t, agent.DialectStrict, agent.Source{Prefix: "east", Tools: crmtest.Toolset(t, east, nil)}, agent.Source{Prefix: "west", Tools: crmtest.Toolset(t, west, nil)})
	_, svc := newModel(t,
		func(t *testing.T, req *request) reply {
			return reply{calls: [][3]string{{"call_1", "east__update_deal", `{"deal_id":"D-2001","note":"east only","stage":null,"amount":null}`}}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); strings.HasPrefix(r, "Error") {
				t.Errorf("east__update_deal: %s", r)
			}
			return reply{text: "Done."}
		})
	if _, err := newLoop(svc, s, false).Run(crmtest.Alice(), ask("Note it in the east.")); err != nil {
		t.Fatal(err)
	}
	if e, w := crmtest.Notes(t, east, "D-2001", "east only"), crmtest.Notes(t, west, "D-2001", "east only"); e != 1 || w != 0 {
		t.Errorf("notes: east %d, west %d; want 1 and 0", e, w)
	}
}
