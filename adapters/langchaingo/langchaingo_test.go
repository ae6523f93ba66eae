package mcplangchain_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	mcplangchain "github.com/mcpgen/mcpgen/adapters/langchaingo"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

// A scripted Chat Completions server: langchaingo's OpenAI client talks
// to it as to the real API.

type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
}

type request struct {
	Messages []message `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

type reply struct {
	text  string
	calls [][3]string // id, name, arguments
}

type step func(t *testing.T, req *request) reply

type model struct {
	t     *testing.T
	mu    sync.Mutex
	steps []step
	n     int
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req request
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, 400)
		return
	}
	for _, tl := range req.Tools {
		if !toolName.MatchString(tl.Function.Name) {
			m.t.Errorf("tool name %q", tl.Function.Name)
		}
	}
	for i, msg := range req.Messages {
		for j, c := range msg.ToolCalls {
			if k := i + 1 + j; k >= len(req.Messages) || req.Messages[k].Role != "tool" {
				m.t.Errorf("tool call %s not answered", c.ID)
			}
		}
	}
	m.mu.Lock()
	if m.n >= len(m.steps) {
		m.mu.Unlock()
		m.t.Errorf("unscripted request %d", m.n)
		http.Error(w, "unscripted", 500)
		return
	}
	s := m.steps[m.n]
	m.n++
	n := m.n
	m.mu.Unlock()
	rep := s(m.t, &req)
	msg := map[string]any{"role": "assistant", "content": rep.text}
	finish := "stop"
	var calls []any
	for i, c := range rep.calls {
		calls = append(calls, map[string]any{"index": i, "id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": c[2]}})
	}
	if calls != nil {
		msg["tool_calls"], finish = calls, "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1, "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	})
}

func (m *model) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

func toolResult(t *testing.T, req *request, id string) string {
	t.Helper()
	for _, m := range req.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			var s string
			if err := json.Unmarshal(m.Content, &s); err != nil {
				t.Fatalf("tool message content %s: %v", m.Content, err)
			}
			return s
		}
	}
	t.Fatalf("no tool message for %s", id)
	return ""
}

func newLoop(t *testing.T, set *agent.Set, steps ...step) (*mcplangchain.Loop, *model) {
	m := &model{t: t, steps: steps}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	llm, err := openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithToken("test-key"), openai.WithModel("gpt-test"))
	if err != nil {
		t.Fatal(err)
	}
	return &mcplangchain.Loop{Model: llm, Tools: set}, m
}

func newSet(t *testing.T, d agent.Dialect, sources ...agent.Source) *agent.Set {
	t.Helper()
	s, err := agent.New(d, sources...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ask(q string) []llms.MessageContent {
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, q)}
}

func final(o *mcplangchain.Outcome) string {
	if o == nil || o.Final == nil {
		return ""
	}
	return o.Final.Content
}

func TestFullLoopAndInvalidArguments(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.Server(t))
	loop, _ := newLoop(t, newSet(t, agent.DialectStrict, agent.Source{Tools: crmtest.Toolset(t, conn, nil)}),
		func(t *testing.T, req *request) reply {
			return reply{calls: [][3]string{
				{"call_1", "search_deals", `{"query":null,"stage":"proposal","min_amount":null,"limit":null}`},
				{"call_2", "get_deal", `{"deal_id":7,"verbose":true}`},
				{"call_3", "pipeline_chart", `{}`},
			}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.Contains(r, `"D-2001"`) || strings.HasPrefix(r, "Error") {
				t.Errorf("search_deals = %s", r)
			}
			r := toolResult(t, req, "call_2")
			for _, w := range []string{"Error: ", "/deal_id", "/verbose", "2 problems"} {
				if !strings.Contains(r, w) {
					t.Errorf("invalid arguments: result lacks %q: %s", w, r)
				}
			}
			if r := toolResult(t, req, "call_3"); !strings.Contains(r, "[image: image/png") {
				t.Errorf("pipeline_chart = %s", r)
			}
			return reply{text: "One deal in proposal."}
		})
	o, err := loop.Run(crmtest.Alice(), ask("Deals in proposal?"))
	if err != nil || final(o) != "One deal in proposal." {
		t.Fatalf("outcome %+v, %v", o, err)
	}
}

func TestPauseResumeInFreshLoop(t *testing.T) {
	url := crmtest.Server(t)
	dir := t.TempDir()
	const note = "Via langchaingo."
	steps := []step{
		func(t *testing.T, req *request) reply {
			return reply{calls: [][3]string{{"call_1", "update_deal", `{"deal_id":"D-2001","note":"` + note + `"}`}}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.Contains(r, "alice: "+note) || strings.HasPrefix(r, "Error") {
				t.Errorf("update_deal = %s", r)
			}
			return reply{text: "Noted."}
		},
	}
	conn1 := crmtest.Conn(t, url)
	loop1, m := newLoop(t, newSet(t, agent.DialectJSONSchema, agent.Source{Tools: crmtest.Toolset(t, conn1, crmtest.FileGate(t, dir))}), steps...)
	o, err := loop1.Run(crmtest.Alice(), ask("Note it."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	stored, _ := json.Marshal(o.Pause)

	conn2 := crmtest.Conn(t, url)
	gate2 := crmtest.FileGate(t, dir)
	s2 := newSet(t, agent.DialectJSONSchema, agent.Source{Tools: crmtest.Toolset(t, conn2, gate2)})
	loop2 := &mcplangchain.Loop{Model: loop1.Model, Tools: s2}
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
	if o, err = loop2.Resume(crmtest.Alice(), p); err != nil || final(o) != "Noted." {
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

func TestDenialAndTwoServers(t *testing.T) {
	east, west := crmtest.Conn(t, crmtest.Server(t)), crmtest.Conn(t, crmtest.Server(t))
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore())
	set := newSet(t, agent.DialectJSONSchema, agent.Source{Prefix: "east", Tools: crmtest.Toolset(t, east, gate)}, agent.Source{Prefix: "west", Tools: crmtest.Toolset(t, west, nil)})
	loop, _ := newLoop(t, set,
		func(t *testing.T, req *request) reply {
			return reply{calls: [][3]string{{"call_1", "east__update_deal", `{"deal_id":"D-2001","stage":"won"}`}, {"call_2", "west__update_deal", `{"deal_id":"D-2001","note":"west only"}`}}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.HasPrefix(r, "Error: ") || !strings.Contains(r, "not this quarter") {
				t.Errorf("denial = %s", r)
			}
			if r := toolResult(t, req, "call_2"); strings.HasPrefix(r, "Error") {
				t.Errorf("west__update_deal = %s", r)
			}
			return reply{text: "OK."}
		})
	o, err := loop.Run(crmtest.Alice(), ask("Close it in the east, note it in the west."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	as, err := o.Pause.Approvals(crmtest.Alice(), set)
	if err != nil {
		t.Fatal(err)
	}
	if err := gate.Deny(context.Background(), as[0].ID, "not this quarter"); err != nil {
		t.Fatal(err)
	}
	if o, err = loop.Resume(crmtest.Alice(), crmtest.RoundTrip(t, o.Pause)); err != nil || final(o) != "OK." {
		t.Fatalf("after denial: %+v, %v", o, err)
	}
	if e, w := crmtest.Notes(t, east, "D-2001", "west only"), crmtest.Notes(t, west, "D-2001", "west only"); e != 0 || w != 1 {
		t.Errorf("notes: east %d, west %d", e, w)
	}
}

// The tools.Tool view, for langchaingo's agents: JSON input, text out, a
// gated call stops the agent with a PendingError.
func TestAgentTools(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.Server(t))
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore())
	byName := map[string]interface {
		Call(context.Context, string) (string, error)
	}{}
	for _, tl := range mcplangchain.AgentTools(newSet(t, agent.DialectJSONSchema, agent.Source{Tools: crmtest.Toolset(t, conn, gate)})) {
		if !strings.Contains(tl.Description(), "JSON object") {
			t.Errorf("%s: description %q", tl.Name(), tl.Description())
		}
		byName[tl.Name()] = tl
	}
	if r, err := byName["get_deal"].Call(crmtest.Alice(), `{"deal_id":"D-2001"}`); err != nil || !strings.Contains(r, `"id":"D-2001"`) {
		t.Errorf("get_deal = %q, %v", r, err)
	}
	_, err := byName["update_deal"].Call(crmtest.Alice(), `{"deal_id":"D-2001","note":"agent"}`)
	var pe *mcplangchain.PendingError
	if !errors.As(err, &pe) || pe.Approval.Tool != "update_deal" {
		t.Errorf("gated call: %v", err)
	}
	if n := crmtest.Notes(t, conn, "D-2001", "agent"); n != 0 {
		t.Errorf("gated call ran (%d)", n)
	}
}

// An approved call whose outcome the approval store could not record (the
// store closes while the CRM answers): the model gets the result, the
// caller the error.
func TestUnrecordedResultReachesModel(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.Server(t))
	store := crmtest.FileStore(t, t.TempDir())
	gate := mcpruntime.NewGate(store)
	const note = "Recorded nowhere."
	loop, _ := newLoop(t, newSet(t, agent.DialectJSONSchema, agent.Source{Tools: crmtest.Toolset(t, crmtest.ClosingStore(conn, store), gate)}),
		func(t *testing.T, req *request) reply {
			return reply{calls: [][3]string{{"call_1", "update_deal", `{"deal_id":"D-2001","note":"` + note + `"}`}}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.Contains(r, "alice: "+note) || strings.HasPrefix(r, "Error") {
				t.Errorf("update_deal = %s", r)
			}
			return reply{text: "Noted."}
		})
	o, err := loop.Run(crmtest.Alice(), ask("Note it."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	a := o.Pause.Results[0].Pending
	if err := gate.Approve(context.Background(), a.ID, a.Digest); err != nil {
		t.Fatal(err)
	}
	if o, err = loop.Resume(crmtest.Alice(), o.Pause); !errors.Is(err, mcpruntime.ErrOutcomeNotRecorded) || final(o) != "Noted." {
		t.Fatalf("resume = %+v, %v", o, err)
	}
	if n := crmtest.Notes(t, conn, "D-2001", note); n != 1 {
		t.Errorf("%d notes", n)
	}
}
