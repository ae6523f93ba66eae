package crmlangchain_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	mcplangchain "github.com/mcpgen/mcpgen/adapters/langchaingo"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

// Scripted model servers, one per provider wire format langchaingo has a
// client for that a test can point at a local server: Chat Completions
// (langchaingo's OpenAI client) and the Messages API (its Anthropic
// client). Each checks every request against its API's rules and plays
// the same script, so the loop is tested over both.

// request is what a step sees of a request, whatever the wire format.
type request struct {
	tools   []string          // the names offered
	results map[string]string // tool call id -> the text answering it
	errors  map[string]bool   // tool call id -> flagged as an error (Anthropic)
}

// reply is a scripted assistant turn: text, then tool calls.
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

func (m *model) next(req *request) (reply, int, bool) {
	m.mu.Lock()
	if m.n >= len(m.steps) {
		m.mu.Unlock()
		m.t.Errorf("unscripted request %d", m.n)
		return reply{}, 0, false
	}
	s := m.steps[m.n]
	m.n++
	n := m.n
	m.mu.Unlock()
	rep := s(m.t, req)
	// The model calls what it is offered (a made-up name is a name it was
	// not offered either: those tests say so with a "?" prefix).
	for _, c := range rep.calls {
		if !slices.Contains(req.tools, c[1]) && !strings.HasPrefix(c[1], "?") {
			m.t.Errorf("the model calls %q, which request %d does not offer", c[1], n)
		}
	}
	for i := range rep.calls {
		rep.calls[i][1] = strings.TrimPrefix(rep.calls[i][1], "?")
	}
	return rep, n, true
}

func (m *model) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// openaiModel speaks Chat Completions.
type openaiModel struct{ *model }

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
}

func (m openaiModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Messages []chatMessage `json:"messages"`
		Tools    []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&body) != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, 400)
		return
	}
	req := &request{results: map[string]string{}}
	for _, tl := range body.Tools {
		if !toolName.MatchString(tl.Function.Name) {
			m.t.Errorf("tool name %q", tl.Function.Name)
		}
		req.tools = append(req.tools, tl.Function.Name)
	}
	for i, msg := range body.Messages {
		for j, c := range msg.ToolCalls {
			if k := i + 1 + j; k >= len(body.Messages) || body.Messages[k].Role != "tool" || body.Messages[k].ToolCallID != c.ID {
				m.t.Errorf("tool call %s not answered in order", c.ID)
			}
		}
		if msg.Role == "tool" {
			var s string
			if err := json.Unmarshal(msg.Content, &s); err != nil {
				m.t.Errorf("tool message content %s: %v", msg.Content, err)
			}
			req.results[msg.ToolCallID] = s
		}
	}
	rep, n, ok := m.next(req)
	if !ok {
		http.Error(w, "unscripted", 500)
		return
	}
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

// anthropicModel speaks the Messages API.
type anthropicModel struct{ *model }

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
}

type turn struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

func (m anthropicModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		Messages  []turn `json:"messages"`
		Tools     []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
	}
	if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") == "" || r.Header.Get("anthropic-version") == "" || json.NewDecoder(r.Body).Decode(&body) != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`, 400)
		return
	}
	req := &request{results: map[string]string{}, errors: map[string]bool{}}
	if err := checkMessages(body.MaxTokens, body.Messages, req); err != nil {
		m.t.Errorf("request %d breaks the Messages API's rules: %v", m.requests(), err)
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"invalid"}}`, 400)
		return
	}
	for _, tl := range body.Tools {
		if !toolName.MatchString(tl.Name) || tl.InputSchema["type"] != "object" {
			m.t.Errorf("tool %q: input_schema type %v", tl.Name, tl.InputSchema["type"])
		}
		req.tools = append(req.tools, tl.Name)
	}
	rep, n, ok := m.next(req)
	if !ok {
		http.Error(w, "unscripted", 500)
		return
	}
	var content []any
	if rep.text != "" {
		content = append(content, map[string]any{"type": "text", "text": rep.text})
	}
	stop := "end_turn"
	for _, c := range rep.calls {
		content = append(content, map[string]any{"type": "tool_use", "id": c[0], "name": c[1], "input": json.RawMessage(c[2])})
		stop = "tool_use"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": body.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 10},
	})
}

// checkMessages applies the Messages API's rules to a conversation, after
// joining consecutive messages of one role as the API does: it starts
// with the user, no block is an empty text, and every tool_use of an
// assistant turn is answered by a tool_result at the start of the next
// user turn, in order, and every tool_result answers one.
func checkMessages(maxTokens int, msgs []turn, req *request) error {
	if maxTokens < 1 {
		return fmt.Errorf("max_tokens %d", maxTokens)
	}
	var joined []turn
	for _, m := range msgs {
		if len(m.Content) == 0 {
			return fmt.Errorf("a %s message without content", m.Role)
		}
		if n := len(joined); n > 0 && joined[n-1].Role == m.Role {
			joined[n-1].Content = append(joined[n-1].Content, m.Content...)
			continue
		}
		joined = append(joined, turn{Role: m.Role, Content: append([]block(nil), m.Content...)})
	}
	if len(joined) == 0 || joined[0].Role != "user" {
		return fmt.Errorf("the conversation does not start with the user")
	}
	for i, m := range joined {
		var uses []string
		for _, b := range m.Content {
			switch {
			case b.Type == "text" && b.Text == "":
				return fmt.Errorf("turn %d: an empty text block", i)
			case b.Type == "tool_use" && m.Role == "assistant":
				uses = append(uses, b.ID)
			case b.Type == "tool_result" && m.Role == "user":
				var text string
				if err := json.Unmarshal(b.Content, &text); err != nil {
					var parts []block
					if err := json.Unmarshal(b.Content, &parts); err != nil {
						return fmt.Errorf("turn %d: tool_result content %s", i, b.Content)
					}
					for _, p := range parts {
						text += p.Text
					}
				}
				req.results[b.ToolUseID], req.errors[b.ToolUseID] = text, b.IsError
			case b.Type != "text":
				return fmt.Errorf("turn %d: a %s block in a %s turn", i, b.Type, m.Role)
			}
		}
		if m.Role == "user" {
			prev := map[string]bool{}
			if i > 0 {
				for _, b := range joined[i-1].Content {
					if b.Type == "tool_use" {
						prev[b.ID] = true
					}
				}
			}
			for _, b := range m.Content {
				if b.Type == "tool_result" && !prev[b.ToolUseID] {
					return fmt.Errorf("turn %d: tool_result %s answers no tool_use of the previous turn", i, b.ToolUseID)
				}
			}
		}
		if len(uses) == 0 {
			continue
		}
		if i+1 >= len(joined) {
			return fmt.Errorf("turn %d: tool_use blocks without tool_result", i)
		}
		next := joined[i+1].Content
		for j, id := range uses {
			if j >= len(next) || next[j].Type != "tool_result" || next[j].ToolUseID != id {
				return fmt.Errorf("turn %d: block %d is not the tool_result for %s (tool_result blocks come first, in order)", i+1, j, id)
			}
		}
	}
	return nil
}

func toolResult(t *testing.T, req *request, id string) string {
	t.Helper()
	r, ok := req.results[id]
	if !ok {
		t.Fatalf("no tool result for %s", id)
	}
	return r
}

// provider is a langchaingo client over a scripted server.
type provider struct {
	name  string
	model func(t *testing.T, m *model) llms.Model
}

var providers = []provider{
	{"openai", func(t *testing.T, m *model) llms.Model {
		srv := httptest.NewServer(openaiModel{m})
		t.Cleanup(srv.Close)
		llm, err := openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithToken("test-key"), openai.WithModel("gpt-test"))
		if err != nil {
			t.Fatal(err)
		}
		return llm
	}},
	{"anthropic", func(t *testing.T, m *model) llms.Model {
		srv := httptest.NewServer(anthropicModel{m})
		t.Cleanup(srv.Close)
		llm, err := anthropic.New(anthropic.WithBaseURL(srv.URL+"/v1"), anthropic.WithToken("test-key"), anthropic.WithModel("claude-test"))
		if err != nil {
			t.Fatal(err)
		}
		return llm
	}},
}

// eachProvider runs f once per provider.
func eachProvider(t *testing.T, f func(t *testing.T, p provider)) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) { f(t, p) })
	}
}

func (p provider) loop(t *testing.T, set *agent.Set, steps ...step) (*mcplangchain.Loop, *model) {
	m := &model{t: t, steps: steps}
	return &mcplangchain.Loop{Model: p.model(t, m), Tools: set}, m
}

// newLoop is a loop over langchaingo's OpenAI client.
func newLoop(t *testing.T, set *agent.Set, steps ...step) (*mcplangchain.Loop, *model) {
	return providers[0].loop(t, set, steps...)
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

// Claude's usual turn, text and then parallel calls, is one turn on every
// provider: all the calls run and are answered.
func TestFullLoopAndInvalidArguments(t *testing.T) {
	url := crmtest.Server(t)
	eachProvider(t, func(t *testing.T, p provider) { fullLoop(t, p, url) })
}

func fullLoop(t *testing.T, p provider, url string) {
	conn := crmtest.Conn(t, url)
	loop, _ := p.loop(t, newSet(t, agent.DialectStrict, agent.Source{Tools: crmtest.Toolset(t, conn, nil)}),
		func(t *testing.T, req *request) reply {
			return reply{text: "Let me look.", calls: [][3]string{
				{"call_1", "search_deals", `{"query":null,"stage":"proposal","min_amount":null,"limit":null}`},
				{"call_2", "get_deal", `{"deal_id":7,"verbose":true}`},
				{"call_3", "pipeline_chart", `{}`},
				{"call_4", "export_contacts", `{"owner":null}`},
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
			// The embedded CSV reaches the model as text.
			if r := toolResult(t, req, "call_4"); !strings.Contains(r, "[embedded resource: crm://exports/contacts.csv (text/csv)]\nid,name,email,company,owner\nC-1001,") {
				t.Errorf("export_contacts = %s", r)
			}
			return reply{text: "One deal in proposal."}
		})
	o, err := loop.Run(crmtest.Alice(), ask("Deals in proposal?"))
	if err != nil || final(o) != "One deal in proposal." {
		t.Fatalf("outcome %+v, %v", o, err)
	}
}

// A gated call after text, beside another call, pauses the loop on every
// provider.
func TestPauseResumeInFreshLoop(t *testing.T) {
	url := crmtest.Server(t)
	eachProvider(t, func(t *testing.T, p provider) { pauseResume(t, p, url) })
}

func pauseResume(t *testing.T, p provider, url string) {
	dir := t.TempDir()
	note := "Via langchaingo and " + p.name + "."
	steps := []step{
		func(t *testing.T, req *request) reply {
			return reply{text: "I will note it.", calls: [][3]string{{"call_1", "get_contact", `{"contact_id":"C-1001"}`}, {"call_2", "update_deal", `{"deal_id":"D-2001","note":"` + note + `"}`}}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.Contains(r, "C-1001") || strings.HasPrefix(r, "Error") {
				t.Errorf("get_contact = %s", r)
			}
			if r := toolResult(t, req, "call_2"); !strings.Contains(r, "alice: "+note) || strings.HasPrefix(r, "Error") {
				t.Errorf("update_deal = %s", r)
			}
			return reply{text: "Noted."}
		},
	}
	conn1 := crmtest.Conn(t, url)
	loop1, m := p.loop(t, newSet(t, agent.DialectJSONSchema, agent.Source{Tools: crmtest.Toolset(t, conn1, crmtest.FileGate(t, dir))}), steps...)
	o, err := loop1.Run(crmtest.Alice(), ask("Note it."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	stored, _ := json.Marshal(o.Pause)

	conn2 := crmtest.Conn(t, url)
	gate2 := crmtest.FileGate(t, dir)
	s2 := newSet(t, agent.DialectJSONSchema, agent.Source{Tools: crmtest.Toolset(t, conn2, gate2)})
	loop2 := &mcplangchain.Loop{Model: loop1.Model, Tools: s2}
	pause, err := agent.ParsePause(stored)
	if err != nil {
		t.Fatal(err)
	}
	if o, err := loop2.Resume(crmtest.Alice(), pause); err != nil || o.Pause == nil || m.requests() != 1 {
		t.Fatalf("undecided resume: %+v, %v", o, err)
	}
	as, err := pause.Approvals(crmtest.Alice(), s2)
	if err != nil || len(as) != 1 || as[0].Tool != "update_deal" {
		t.Fatalf("approvals %+v, %v", as, err)
	}
	a := as[0]
	if err := gate2.Approve(context.Background(), a.ID, a.Digest); err != nil {
		t.Fatal(err)
	}
	if o, err = loop2.Resume(crmtest.Alice(), pause); err != nil || final(o) != "Noted." {
		t.Fatalf("resumed: %+v, %v", o, err)
	}
	// A pause is resumed once: again, it is an error and the model is not
	// asked.
	before := m.requests()
	if o, err := loop2.Resume(crmtest.Alice(), pause); !errors.Is(err, agent.ErrPauseUsed) || o != nil || m.requests() != before {
		t.Errorf("second resume: %+v, %v", o, err)
	}
	if n := crmtest.Notes(t, conn2, "D-2001", note); n != 1 {
		t.Errorf("the CRM has %d notes, want exactly 1", n)
	}
}

func TestDenialAndTwoServers(t *testing.T) {
	eastURL, westURL := crmtest.Server(t), crmtest.Server(t)
	eachProvider(t, func(t *testing.T, p provider) { denialTwoServers(t, p, eastURL, westURL) })
}

func denialTwoServers(t *testing.T, p provider, eastURL, westURL string) {
	east, west := crmtest.Conn(t, eastURL), crmtest.Conn(t, westURL)
	westNote := "west only, " + p.name
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore())
	set := newSet(t, agent.DialectJSONSchema, agent.Source{Prefix: "east", Tools: crmtest.Toolset(t, east, gate)}, agent.Source{Prefix: "west", Tools: crmtest.Toolset(t, west, nil)})
	loop, _ := p.loop(t, set,
		func(t *testing.T, req *request) reply {
			return reply{calls: [][3]string{{"call_1", "east__update_deal", `{"deal_id":"D-2001","stage":"won"}`}, {"call_2", "west__update_deal", `{"deal_id":"D-2001","note":"` + westNote + `"}`}}}
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
	if e, w := crmtest.Notes(t, east, "D-2001", westNote), crmtest.Notes(t, west, "D-2001", westNote); e != 0 || w != 1 {
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

// TestDeferredLoading: langchaingo has no deferred loading, so the loop
// offers get_contact and the fallback search tool; the model searches, the
// next request offers what it found, and a gated call of a found tool
// pauses; a fresh loop, resumed from the pause's conversation, offers the
// same, and the call is made once. On both providers; the scripted
// servers refuse a call of a tool the request does not offer.
func TestDeferredLoading(t *testing.T) {
	url := crmtest.Server(t)
	eachProvider(t, func(t *testing.T, p provider) { deferredLoading(t, p, url) })
}

func deferredLoading(t *testing.T, p provider, url string) {
	dir := t.TempDir()
	note := "Found by the fallback on " + p.name + "."
	loading := &agent.Loading{Always: agent.AlwaysNamed("get_contact")}
	steps := []step{
		func(t *testing.T, req *request) reply {
			if got := strings.Join(req.tools, " "); got != "search_tools get_contact" {
				t.Errorf("first turn offers %s", got)
			}
			return reply{text: "Let me find the tool.", calls: [][3]string{{"call_1", "search_tools", `{"query":"update a deal"}`}}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.Contains(r, `"name":"update_deal"`) {
				t.Errorf("search result: %s", r)
			}
			return reply{calls: [][3]string{{"call_2", "update_deal", `{"deal_id":"D-2001","note":"` + note + `"}`}, {"call_3", "get_contact", `{"contact_id":"C-1001"}`}}}
		},
		func(t *testing.T, req *request) reply {
			if !slices.Contains(req.tools, "update_deal") {
				t.Errorf("the resumed loop offers %v", req.tools)
			}
			if r := toolResult(t, req, "call_2"); !strings.Contains(r, "alice: "+note) {
				t.Errorf("update_deal: %s", r)
			}
			return reply{text: "Noted."}
		},
	}
	conn1 := crmtest.Conn(t, url)
	loop1, m := p.loop(t, newSet(t, agent.DialectJSONSchema, agent.Source{Tools: crmtest.Toolset(t, conn1, crmtest.FileGate(t, dir))}), steps...)
	loop1.Defer = loading
	o, err := loop1.Run(crmtest.Alice(), ask("Note it on D-2001."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	stored, _ := json.Marshal(o.Pause)

	conn2 := crmtest.Conn(t, url)
	gate2 := crmtest.FileGate(t, dir)
	s2 := newSet(t, agent.DialectJSONSchema, agent.Source{Tools: crmtest.Toolset(t, conn2, gate2)})
	loop2 := &mcplangchain.Loop{Model: loop1.Model, Tools: s2, Defer: loading}
	pause, _ := agent.ParsePause(stored)
	as, err := pause.Approvals(crmtest.Alice(), s2)
	if err != nil || len(as) != 1 || as[0].Tool != "update_deal" {
		t.Fatalf("approvals %+v, %v", as, err)
	}
	if err := gate2.Approve(context.Background(), as[0].ID, as[0].Digest); err != nil {
		t.Fatal(err)
	}
	if o, err = loop2.Resume(crmtest.Alice(), pause); err != nil || final(o) != "Noted." || m.requests() != 3 {
		t.Fatalf("resume: %+v, %v", o, err)
	}
	if n := crmtest.Notes(t, conn2, "D-2001", note); n != 1 {
		t.Errorf("%d notes, want 1", n)
	}
}
