package crmeino_test

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

	einoopenai "github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/adk"
	einomodel "github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/compose"

	mcpeino "github.com/mcpgen/mcpgen/adapters/eino"
	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

// A scripted Chat Completions server: Eino's OpenAI model component talks
// to it as to the real API.

type message struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
}

type request struct {
	Stream   bool      `json:"stream"`
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
	// The model calls what it is offered; the tests of made-up names mark
	// them with a "?".
	for i, c := range rep.calls {
		offered := strings.HasPrefix(c[1], "?")
		for _, tl := range req.Tools {
			offered = offered || tl.Function.Name == c[1]
		}
		if !offered {
			m.t.Errorf("the model calls %q, which request %d does not offer", c[1], n)
		}
		rep.calls[i][1] = strings.TrimPrefix(c[1], "?")
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
	if req.Stream {
		// Data-only chunks ending at [DONE], the arguments in pieces.
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any, fin any) {
			b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		chunk(map[string]any{"role": "assistant", "content": rep.text}, nil)
		for i, c := range rep.calls {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": ""}}}}, nil)
			half := len(c[2]) / 2
			for _, part := range []string{c[2][:half], c[2][half:]} {
				chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": part}}}}, nil)
			}
		}
		chunk(map[string]any{}, finish)
		fmt.Fprint(w, "data: [DONE]\n\n")
		return
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
			return m.Content
		}
	}
	t.Fatalf("no tool message for %s", id)
	return ""
}

// memStore is an Eino CheckPointStore; its contents go through JSON to
// reach a fresh runner, as they would through a database.
type memStore struct {
	mu sync.Mutex
	M  map[string][]byte `json:"checkpoints"`
}

func (s *memStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.M[id]
	return b, ok, nil
}

func (s *memStore) Set(_ context.Context, id string, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.M[id] = b
	return nil
}

type harness struct {
	t       *testing.T
	model   *model
	url     string
	stream  bool
	opts    []mcpeino.Option
	loading *agent.Loading // hand the set over a few tools at a time
}

func newHarness(t *testing.T, steps ...step) *harness {
	m := &model{t: t, steps: steps}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return &harness{t: t, model: m, url: srv.URL + "/v1"}
}

func (h *harness) runner(set *agent.Set, store *memStore) *adk.Runner {
	t := h.t
	ctx := context.Background()
	var cm einomodel.ToolCallingChatModel
	cm, err := einoopenai.NewChatModel(ctx, &einoopenai.ChatModelConfig{APIKey: "test-key", BaseURL: h.url, Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	var tools compose.ToolsNodeConfig
	if h.loading != nil {
		d, err := set.Defer(*h.loading)
		if err != nil {
			t.Fatal(err)
		}
		if cm, err = mcpeino.DeferredModel(cm, d); err != nil {
			t.Fatal(err)
		}
		tools, err = mcpeino.DeferredToolsNodeConfig(d, h.opts...)
	} else {
		tools, err = mcpeino.ToolsNodeConfig(set, h.opts...)
	}
	if err != nil {
		t.Fatal(err)
	}
	a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "crm", Description: "A CRM agent.", Instruction: "Use the tools.", Model: cm,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: tools},
	})
	if err != nil {
		t.Fatal(err)
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: a, CheckPointStore: store, EnableStreaming: h.stream})
}

// outcome drains a run: the final text, or the interrupts it stopped at.
type outcome struct {
	final      string
	interrupts []*adk.InterruptCtx
}

func drain(t *testing.T, it *adk.AsyncIterator[*adk.AgentEvent]) outcome {
	t.Helper()
	var o outcome
	for {
		ev, ok := it.Next()
		if !ok {
			return o
		}
		if ev.Err != nil {
			t.Fatalf("run: %v", ev.Err)
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			for _, ic := range ev.Action.Interrupted.InterruptContexts {
				if ic.IsRootCause {
					o.interrupts = append(o.interrupts, ic)
				}
			}
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			m, err := ev.Output.MessageOutput.GetMessage()
			if err != nil {
				t.Fatalf("message: %v", err)
			}
			if m != nil && len(m.ToolCalls) == 0 && m.Role == "assistant" {
				o.final = m.Content
			}
		}
	}
}

// drainErr drains a run that must fail, returning its error.
func drainErr(it *adk.AsyncIterator[*adk.AgentEvent]) error {
	var err error
	for {
		ev, ok := it.Next()
		if !ok {
			return err
		}
		if ev.Err != nil {
			err = ev.Err
		}
	}
}

func newSet(t *testing.T, sources ...agent.Source) *agent.Set {
	t.Helper()
	s, err := agent.New(agent.DialectJSONSchema, sources...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFullLoopAndInvalidArguments(t *testing.T) {
	url := crmtest.Server(t)
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) { fullLoop(t, url, stream) })
	}
}

func fullLoop(t *testing.T, url string, stream bool) {
	conn := crmtest.Conn(t, url)
	h := newHarness(t,
		func(t *testing.T, req *request) reply {
			return reply{calls: [][3]string{{"call_1", "get_deal", `{"deal_id":"D-2001"}`}, {"call_2", "search_deals", `{"limit":500,"stage":"closed"}`}, {"call_3", "pipeline_chart", `{}`}, {"call_4", "export_contacts", `{}`}}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.Contains(r, `"id":"D-2001"`) || strings.HasPrefix(r, "Error") {
				t.Errorf("get_deal = %s", r)
			}
			r := toolResult(t, req, "call_2")
			for _, w := range []string{"Error: ", "/limit", "/stage", "2 problems"} {
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
			return reply{text: "D-2001 is in proposal."}
		})
	h.stream = stream
	r := h.runner(newSet(t, agent.Source{Tools: crmtest.Toolset(t, conn, nil)}), &memStore{M: map[string][]byte{}})
	o := drain(t, r.Query(crmtest.Alice(), "Where is D-2001?", adk.WithCheckPointID("run-1")))
	if o.final != "D-2001 is in proposal." || len(o.interrupts) != 0 {
		t.Errorf("outcome %+v", o)
	}
}

func TestInterruptResumedByCheckpointOnce(t *testing.T) {
	url := crmtest.Server(t)
	dir := t.TempDir()
	const note = "Checkpointed."
	h := newHarness(t,
		func(t *testing.T, req *request) reply {
			return reply{calls: [][3]string{{"call_1", "update_deal", `{"deal_id":"D-2001","note":"` + note + `"}`}, {"call_2", "get_contact", `{"contact_id":"C-1001"}`}}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.Contains(r, "alice: "+note) || strings.HasPrefix(r, "Error") {
				t.Errorf("update_deal = %s", r)
			}
			if r := toolResult(t, req, "call_2"); !strings.Contains(r, "C-1001") {
				t.Errorf("get_contact = %s", r)
			}
			return reply{text: "Noted."}
		})
	h.stream = true // the interrupt and the resume also hold when streaming
	conn1 := crmtest.Conn(t, url)
	store1 := &memStore{M: map[string][]byte{}}
	r1 := h.runner(newSet(t, agent.Source{Tools: crmtest.Toolset(t, conn1, crmtest.FileGate(t, dir))}), store1)
	o := drain(t, r1.Query(crmtest.Alice(), "Note it.", adk.WithCheckPointID("run-1")))
	if len(o.interrupts) != 1 || o.final != "" {
		t.Fatalf("want one interrupt: %+v", o)
	}
	info, ok := o.interrupts[0].Info.(*mcpeino.ApprovalInfo)
	if !ok || info.Tool != "update_deal" || info.Principal != "alice" {
		t.Fatalf("interrupt info = %#v", o.interrupts[0].Info)
	}
	if n := crmtest.Notes(t, conn1, "D-2001", note); n != 0 {
		t.Fatalf("gated call ran (%d)", n)
	}

	// A fresh runner, tools, connection and gate, with the checkpoint
	// store's contents carried over through JSON.
	store2 := crmtest.RoundTrip(t, store1)
	conn2 := crmtest.Conn(t, url)
	gate2 := crmtest.FileGate(t, dir)
	r2 := h.runner(newSet(t, agent.Source{Tools: crmtest.Toolset(t, conn2, gate2)}), store2)
	target := map[string]any{o.interrupts[0].ID: nil}
	// Before the decision: interrupted again, the model not asked.
	it, err := r2.ResumeWithParams(crmtest.Alice(), "run-1", &adk.ResumeParams{Targets: target})
	if err != nil {
		t.Fatal(err)
	}
	o2 := drain(t, it)
	if len(o2.interrupts) != 1 || h.model.requests() != 1 {
		t.Fatalf("undecided resume: %+v, %d requests", o2, h.model.requests())
	}
	// Eino names each interrupt afresh: resume the latest.
	if again, ok := o2.interrupts[0].Info.(*mcpeino.ApprovalInfo); !ok || again.ID != info.ID || again.Digest != info.Digest || again.Args != info.Args {
		t.Errorf("re-interrupt info = %#v, want %#v", o2.interrupts[0].Info, info)
	}
	target = map[string]any{o2.interrupts[0].ID: nil}
	if err := gate2.Approve(context.Background(), info.ID, info.Digest); err != nil {
		t.Fatal(err)
	}
	it, err = r2.ResumeWithParams(crmtest.Alice(), "run-1", &adk.ResumeParams{Targets: target})
	if err != nil {
		t.Fatal(err)
	}
	if o3 := drain(t, it); o3.final != "Noted." || len(o3.interrupts) != 0 {
		t.Fatalf("resumed: %+v", o3)
	}
	// The checkpoint resumed again, from the copy of another process: the
	// tool refuses, and the model is not asked a second time.
	r3 := h.runner(newSet(t, agent.Source{Tools: crmtest.Toolset(t, crmtest.Conn(t, url), crmtest.FileGate(t, dir))}), crmtest.RoundTrip(t, store2))
	it, err = r3.ResumeWithParams(crmtest.Alice(), "run-1", &adk.ResumeParams{Targets: target})
	if err != nil {
		t.Fatal(err)
	}
	if err := drainErr(it); !errors.Is(err, agent.ErrPauseUsed) || h.model.requests() != 2 {
		t.Errorf("second resume: %v, %d model requests", err, h.model.requests())
	}
	if n := crmtest.Notes(t, conn2, "D-2001", note); n != 1 {
		t.Errorf("the CRM has %d notes, want exactly 1", n)
	}
}

func TestDenialAndTwoServers(t *testing.T) {
	east, west := crmtest.Conn(t, crmtest.Server(t)), crmtest.Conn(t, crmtest.Server(t))
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore())
	set := newSet(t, agent.Source{Prefix: "east", Tools: crmtest.Toolset(t, east, gate)}, agent.Source{Prefix: "west", Tools: crmtest.Toolset(t, west, nil)})
	h := newHarness(t,
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
	r := h.runner(set, &memStore{M: map[string][]byte{}})
	o := drain(t, r.Query(crmtest.Alice(), "Close it in the east, note it in the west.", adk.WithCheckPointID("run-1")))
	if len(o.interrupts) != 1 {
		t.Fatalf("want one interrupt: %+v", o)
	}
	info := o.interrupts[0].Info.(*mcpeino.ApprovalInfo)
	if err := gate.Deny(context.Background(), info.ID, "not this quarter"); err != nil {
		t.Fatal(err)
	}
	it, err := r.ResumeWithParams(crmtest.Alice(), "run-1", &adk.ResumeParams{Targets: map[string]any{o.interrupts[0].ID: nil}})
	if err != nil {
		t.Fatal(err)
	}
	if o := drain(t, it); o.final != "OK." {
		t.Fatalf("after denial: %+v", o)
	}
	if e, w := crmtest.Notes(t, east, "D-2001", "west only"), crmtest.Notes(t, west, "D-2001", "west only"); e != 0 || w != 1 {
		t.Errorf("notes: east %d, west %d", e, w)
	}
}

// An approved call whose outcome the approval store could not record (the
// store closes while the CRM answers): the model gets the result, the
// error handler the error.
func TestUnrecordedResultReachesModel(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.Server(t))
	store := crmtest.FileStore(t, t.TempDir())
	gate := mcpruntime.NewGate(store)
	const note = "Recorded nowhere."
	h := newHarness(t,
		func(t *testing.T, req *request) reply {
			return reply{calls: [][3]string{{"call_1", "update_deal", `{"deal_id":"D-2001","note":"` + note + `"}`}}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.Contains(r, "alice: "+note) || strings.HasPrefix(r, "Error") {
				t.Errorf("update_deal = %s", r)
			}
			return reply{text: "Noted."}
		})
	var handled []error
	h.opts = []mcpeino.Option{mcpeino.WithErrorHandler(func(_ context.Context, err error) { handled = append(handled, err) })}
	r := h.runner(newSet(t, agent.Source{Tools: crmtest.Toolset(t, crmtest.ClosingStore(conn, store), gate)}), &memStore{M: map[string][]byte{}})
	o := drain(t, r.Query(crmtest.Alice(), "Note it.", adk.WithCheckPointID("run-1")))
	if len(o.interrupts) != 1 {
		t.Fatalf("want one interrupt: %+v", o)
	}
	info := o.interrupts[0].Info.(*mcpeino.ApprovalInfo)
	if err := gate.Approve(context.Background(), info.ID, info.Digest); err != nil {
		t.Fatal(err)
	}
	it, err := r.ResumeWithParams(crmtest.Alice(), "run-1", &adk.ResumeParams{Targets: map[string]any{o.interrupts[0].ID: nil}})
	if err != nil {
		t.Fatal(err)
	}
	if o := drain(t, it); o.final != "Noted." {
		t.Fatalf("resumed: %+v", o)
	}
	if len(handled) != 1 || !errors.Is(handled[0], mcpruntime.ErrOutcomeNotRecorded) {
		t.Errorf("handled %v", handled)
	}
	if n := crmtest.Notes(t, conn, "D-2001", note); n != 1 {
		t.Errorf("%d notes", n)
	}
}

// A tool name the model makes up is answered with the tools it may call,
// as on the other adapters, and the run goes on.
func TestUnknownToolAnswered(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.Server(t))
	h := newHarness(t,
		func(t *testing.T, req *request) reply {
			return reply{calls: [][3]string{{"call_1", "?no_such_tool", `{"x":1}`}, {"call_2", "get_deal", `{"deal_id":"D-2001"}`}}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.HasPrefix(r, `Error: There is no tool "no_such_tool" available to you. Available tools: `) || !strings.Contains(r, "get_deal, ") {
				t.Errorf("no_such_tool = %s", r)
			}
			if r := toolResult(t, req, "call_2"); !strings.Contains(r, `"id":"D-2001"`) {
				t.Errorf("get_deal = %s", r)
			}
			return reply{text: "Found it."}
		})
	r := h.runner(newSet(t, agent.Source{Tools: crmtest.Toolset(t, conn, nil)}), &memStore{M: map[string][]byte{}})
	if o := drain(t, r.Query(crmtest.Alice(), "Where is D-2001?", adk.WithCheckPointID("run-1"))); o.final != "Found it." {
		t.Errorf("outcome %+v", o)
	}
}

// TestDeferredLoading: Eino has no deferred loading, so the model is bound
// to get_contact and the fallback search tool; it searches, the next
// request is bound to what it found too, and a gated call of a found tool
// interrupts; a fresh runner resumes the checkpoint once approved, bound
// to the same tools (read from the checkpoint's messages), and the call is
// made once. The scripted server refuses a call of a tool the request
// does not offer.
func TestDeferredLoading(t *testing.T) {
	url := crmtest.Server(t)
	dir := t.TempDir()
	const note = "Found through Eino."
	offered := func(req *request) string {
		var out []string
		for _, tl := range req.Tools {
			out = append(out, tl.Function.Name)
		}
		return strings.Join(out, " ")
	}
	h := newHarness(t,
		func(t *testing.T, req *request) reply {
			if got := offered(req); got != "get_contact search_tools" && got != "search_tools get_contact" {
				t.Errorf("first request offers %s", got)
			}
			return reply{calls: [][3]string{{"call_1", "search_tools", `{"query":"update a deal"}`}}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.Contains(r, `"name":"update_deal"`) {
				t.Errorf("search result: %s", r)
			}
			return reply{calls: [][3]string{{"call_2", "update_deal", `{"deal_id":"D-2001","note":"` + note + `"}`}, {"call_3", "get_contact", `{"contact_id":"C-1001"}`}}}
		},
		func(t *testing.T, req *request) reply {
			if !strings.Contains(offered(req), "update_deal") {
				t.Errorf("the resumed run offers %s", offered(req))
			}
			if r := toolResult(t, req, "call_2"); !strings.Contains(r, "alice: "+note) || strings.HasPrefix(r, "Error") {
				t.Errorf("update_deal = %s", r)
			}
			return reply{text: "Noted."}
		})
	h.loading = &agent.Loading{Always: agent.AlwaysNamed("get_contact")}
	store1 := &memStore{M: map[string][]byte{}}
	r1 := h.runner(newSet(t, agent.Source{Tools: crmtest.Toolset(t, crmtest.Conn(t, url), crmtest.FileGate(t, dir))}), store1)
	o := drain(t, r1.Query(crmtest.Alice(), "Note it on D-2001.", adk.WithCheckPointID("run-1")))
	if len(o.interrupts) != 1 {
		t.Fatalf("want one interrupt: %+v", o)
	}
	info := o.interrupts[0].Info.(*mcpeino.ApprovalInfo)
	conn2 := crmtest.Conn(t, url)
	gate2 := crmtest.FileGate(t, dir)
	r2 := h.runner(newSet(t, agent.Source{Tools: crmtest.Toolset(t, conn2, gate2)}), crmtest.RoundTrip(t, store1))
	if err := gate2.Approve(context.Background(), info.ID, info.Digest); err != nil {
		t.Fatal(err)
	}
	it, err := r2.ResumeWithParams(crmtest.Alice(), "run-1", &adk.ResumeParams{Targets: map[string]any{o.interrupts[0].ID: nil}})
	if err != nil {
		t.Fatal(err)
	}
	if o := drain(t, it); o.final != "Noted." || h.model.requests() != 3 {
		t.Fatalf("resumed: %+v, %d requests", o, h.model.requests())
	}
	if n := crmtest.Notes(t, conn2, "D-2001", note); n != 1 {
		t.Errorf("%d notes, want 1", n)
	}
}
