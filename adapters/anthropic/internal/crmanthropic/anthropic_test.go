package crmanthropic_test

import (
	"bytes"
	"context"
	"encoding/base64"
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

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	mcpanthropic "github.com/mcpgen/mcpgen/adapters/anthropic"
	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	"github.com/mcpgen/mcpgen/adapters/internal/crmtest/githubtest"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// block is a content block as the Messages API carries it.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Title     string          `json:"title,omitempty"`
	// Content is a tool_result's blocks; Search a tool_search_tool_result's
	// content (both are "content" on the wire).
	Content []block        `json:"-"`
	Search  *searchContent `json:"-"`
	Source  *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source,omitempty"`
}

// searchContent is the content of a tool_search_tool_result.
type searchContent struct {
	Type           string `json:"type"`
	ToolReferences []struct {
		Type     string `json:"type"`
		ToolName string `json:"tool_name"`
	} `json:"tool_references"`
}

func (b *block) UnmarshalJSON(data []byte) error {
	type alias block
	aux := struct {
		*alias
		Content json.RawMessage `json:"content"`
	}{alias: (*alias)(b)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	switch c := bytes.TrimSpace(aux.Content); {
	case len(c) == 0 || c[0] == 'n':
	case c[0] == '[':
		return json.Unmarshal(c, &b.Content)
	case c[0] == '{':
		b.Search = new(searchContent)
		return json.Unmarshal(c, b.Search)
	case c[0] == '"':
		var text string
		if err := json.Unmarshal(c, &text); err != nil {
			return err
		}
		b.Content = []block{{Type: "text", Text: text}}
	}
	return nil
}

func (b block) MarshalJSON() ([]byte, error) {
	type alias block
	aux := struct {
		alias
		Content any `json:"content,omitempty"`
	}{alias: alias(b)}
	if b.Search != nil {
		aux.Content = b.Search
	} else if len(b.Content) > 0 {
		aux.Content = b.Content
	}
	return json.Marshal(aux)
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type request struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []message `json:"messages"`
	Tools    []struct {
		Type         string         `json:"type"`
		Name         string         `json:"name"`
		Description  string         `json:"description"`
		InputSchema  map[string]any `json:"input_schema"`
		DeferLoading bool           `json:"defer_loading"`
	} `json:"tools"`
	raw []byte
}

// step is one scripted model turn: it sees the request and answers with
// content blocks (tool_use blocks make it a tool_use turn).
type step func(t *testing.T, req *request) []block

// model is a Messages API server that plays a script and checks every
// request against the API's rules, so what passes here passes there.
type model struct {
	t     *testing.T
	mu    sync.Mutex
	steps []step
	n     int
	// shown is, per request, the estimated tokens of what the model is
	// shown (see shownOf).
	shown []int
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := m.t
	var req request
	body, _ := io.ReadAll(r.Body)
	req.raw = body
	if r.URL.Path != "/v1/messages" || json.Unmarshal(body, &req) != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`, 400)
		return
	}
	if err := checkRequest(&req); err != nil {
		t.Errorf("request %d breaks the Messages API's rules: %v", m.n, err)
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"`+err.Error()+`"}}`, 400)
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
	id := m.n
	m.shown = append(m.shown, githubtest.EstimateTokens(shownOf(&req)))
	m.mu.Unlock()
	blocks := s(t, &req)
	if err := checkResponse(&req, blocks); err != nil {
		t.Errorf("response %d: the model could not answer so: %v", id, err)
	}
	stop := "end_turn"
	for _, b := range blocks {
		if b.Type == "tool_use" {
			stop = "tool_use"
		}
	}
	if req.Stream {
		streamMessage(w, id, blocks, stop)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("msg_%d", id), "type": "message", "role": "assistant", "model": req.Model,
		"content": blocks, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 10},
	})
}

// streamMessage sends a message as the API streams it: every event has its
// event: line (the SDK drops events without one).
func streamMessage(w http.ResponseWriter, id int, blocks []block, stop string) {
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(name string, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_%d", id), "type": "message", "role": "assistant", "model": "scripted",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 10, "output_tokens": 0},
	}})
	for i, b := range blocks {
		switch b.Type {
		case "server_tool_use", "tool_search_tool_result":
			// Sent whole at their start, as the API does for server tools'
			// results; the use's input is streamed like a tool_use's.
			start := b
			if b.Type == "server_tool_use" {
				start.Input = json.RawMessage(`{}`)
			}
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
			if b.Type == "server_tool_use" {
				ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(b.Input)}})
			}
		case "tool_use":
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}})
			// The arguments arrive in two pieces, as they do.
			in := string(b.Input)
			for _, part := range []string{in[:len(in)/2], in[len(in)/2:]} {
				ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		default:
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b.Text}})
		}
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})
	ev("message_stop", map[string]any{"type": "message_stop"})
}

func checkRequest(req *request) error {
	search := ""
	deferred := map[string]bool{}
	for _, tl := range req.Tools {
		switch tl.Type {
		case "", "custom":
		case "tool_search_tool_regex_20251119", "tool_search_tool_bm25_20251119":
			// The tool search tool: named by its type, never deferred.
			if tl.Name != strings.TrimSuffix(tl.Type, "_20251119") || tl.DeferLoading || search != "" {
				return fmt.Errorf("tool search tool %+v", tl)
			}
			search = tl.Name
			continue
		default:
			return fmt.Errorf("tool %q of type %q", tl.Name, tl.Type)
		}
		if !toolName.MatchString(tl.Name) {
			return fmt.Errorf("tool name %q", tl.Name)
		}
		if tl.InputSchema["type"] != "object" {
			return fmt.Errorf("tool %q: input_schema.type is %v", tl.Name, tl.InputSchema["type"])
		}
		if _, ok := tl.InputSchema["$schema"]; ok {
			return fmt.Errorf("tool %q: input_schema has $schema", tl.Name)
		}
		if tl.DeferLoading {
			deferred[tl.Name] = true
		}
	}
	if len(deferred) > 0 && search == "" {
		return fmt.Errorf("%d tools have defer_loading and there is no tool search tool", len(deferred))
	}
	if len(deferred) == len(req.Tools) && len(deferred) > 0 {
		return fmt.Errorf("every tool is deferred")
	}
	loaded := map[string]bool{}
	for i, m := range req.Messages {
		if m.Role == "assistant" {
			if err := checkLoading(m.Content, search, deferred, loaded); err != nil {
				return fmt.Errorf("message %d: %v", i, err)
			}
		}
	}
	for i, m := range req.Messages {
		var uses []string
		if m.Role == "assistant" {
			for _, b := range m.Content {
				if b.Type == "tool_use" {
					uses = append(uses, b.ID)
				}
			}
			if len(uses) > 0 && i+1 >= len(req.Messages) {
				return fmt.Errorf("message %d: tool_use blocks without tool_result", i)
			}
			if len(uses) == 0 {
				continue
			}
			next := req.Messages[i+1]
			if next.Role != "user" || len(next.Content) < len(uses) {
				return fmt.Errorf("message %d: not answered by the next message", i)
			}
			for j, id := range uses {
				b := next.Content[j]
				if b.Type != "tool_result" || b.ToolUseID != id {
					return fmt.Errorf("message %d: block %d is not the tool_result for %s (tool_result blocks come first, in order)", i+1, j, id)
				}
				for _, c := range b.Content {
					if err := checkResultBlock(c); err != nil {
						return fmt.Errorf("message %d: tool_result %s: %v", i+1, id, err)
					}
				}
			}
		}
		if m.Role == "user" {
			for j, b := range m.Content {
				if b.Type == "tool_result" && (i == 0 || !hasToolUse(req.Messages[i-1], b.ToolUseID)) {
					return fmt.Errorf("message %d: block %d answers no tool_use of the previous message", i, j)
				}
			}
		}
	}
	return nil
}

// checkLoading applies the tool search's rules to an assistant message's
// blocks: a tool_search_tool_result follows its server_tool_use and names
// deferred tools of the request, which are loaded from then on; a tool_use
// names a tool that is not deferred, or one a search loaded.
func checkLoading(blocks []block, search string, deferred, loaded map[string]bool) error {
	searches := map[string]bool{}
	for j, b := range blocks {
		switch b.Type {
		case "server_tool_use":
			if b.Name != search || search == "" {
				return fmt.Errorf("block %d: server_tool_use of %q without that tool", j, b.Name)
			}
			searches[b.ID] = true
		case "tool_search_tool_result":
			if !searches[b.ToolUseID] || b.Search == nil {
				return fmt.Errorf("block %d: tool_search_tool_result for %q, which no server_tool_use before it started", j, b.ToolUseID)
			}
			for _, r := range b.Search.ToolReferences {
				if !deferred[r.ToolName] {
					return fmt.Errorf("block %d: tool reference %q is not a deferred tool of the request", j, r.ToolName)
				}
				loaded[r.ToolName] = true
			}
		case "tool_use":
			if deferred[b.Name] && !loaded[b.Name] {
				return fmt.Errorf("block %d: tool_use of %q, deferred and not loaded by a search", j, b.Name)
			}
		}
	}
	return nil
}

func hasToolUse(m message, id string) bool {
	for _, b := range m.Content {
		if b.Type == "tool_use" && b.ID == id {
			return true
		}
	}
	return false
}

func checkResultBlock(c block) error {
	switch c.Type {
	case "text":
		if c.Text == "" {
			return fmt.Errorf("empty text block")
		}
	case "image":
		if c.Source == nil || c.Source.Type != "base64" {
			return fmt.Errorf("image without a base64 source")
		}
		data, err := base64.StdEncoding.DecodeString(c.Source.Data)
		if err != nil {
			return fmt.Errorf("image data: %v", err)
		}
		if got := http.DetectContentType(data); got != c.Source.MediaType || !strings.Contains("image/png image/jpeg image/gif image/webp", got) {
			return fmt.Errorf("image media_type %q, bytes are %q", c.Source.MediaType, got)
		}
	case "document":
		// A PDF: base64 data whose bytes are a PDF.
		if c.Source == nil || c.Source.Type != "base64" || c.Source.MediaType != "application/pdf" {
			return fmt.Errorf("document without a base64 PDF source")
		}
		data, err := base64.StdEncoding.DecodeString(c.Source.Data)
		if err != nil || !bytes.HasPrefix(data, []byte("%PDF-")) {
			return fmt.Errorf("document data is not a PDF (%v)", err)
		}
	default:
		return fmt.Errorf("block type %q in a tool_result", c.Type)
	}
	return nil
}

func newModel(t *testing.T, steps ...step) (*model, anthropic.MessageService) {
	m := &model{t: t, steps: steps}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	c := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	return m, c.Messages
}

func (m *model) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

func toolUse(id, name, input string) block {
	return block{Type: "tool_use", ID: id, Name: name, Input: json.RawMessage(input)}
}

func text(s string) []block { return []block{{Type: "text", Text: s}} }

// result returns the tool_result for id in the request's last message.
func result(t *testing.T, req *request, id string) block {
	t.Helper()
	last := req.Messages[len(req.Messages)-1]
	for _, b := range last.Content {
		if b.Type == "tool_result" && b.ToolUseID == id {
			return b
		}
	}
	t.Fatalf("no tool_result for %s in %+v", id, last)
	return block{}
}

func resultText(b block) string {
	var s []string
	for _, c := range b.Content {
		if c.Type == "text" {
			s = append(s, c.Text)
		}
	}
	return strings.Join(s, "\n")
}

func newLoop(t *testing.T, svc anthropic.MessageService, set *agent.Set, stream bool) *mcpanthropic.Loop {
	return &mcpanthropic.Loop{
		Client: svc, Tools: set, Stream: stream,
		Params: anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024},
	}
}

func set(t *testing.T, sources ...agent.Source) *agent.Set {
	t.Helper()
	s, err := agent.New(agent.DialectJSONSchema, sources...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ask(q string) []anthropic.MessageParam {
	return []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(q))}
}

func finalText(o *mcpanthropic.Outcome) string {
	if o.Final == nil {
		return ""
	}
	var s []string
	for _, b := range o.Final.Content {
		if b.Type == "text" {
			s = append(s, b.Text)
		}
	}
	return strings.Join(s, "")
}

func TestFullLoop(t *testing.T) {
	url := crmtest.Server(t)
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			conn := crmtest.Conn(t, url)
			s := set(t, agent.Source{Tools: crmtest.Toolset(t, conn, nil)})
			_, svc := newModel(t,
				func(t *testing.T, req *request) []block {
					if len(req.Tools) != len(s.Names()) {
						t.Errorf("%d tools offered, want %d", len(req.Tools), len(s.Names()))
					}
					// Two calls in one turn: a typed lookup and a chart.
					return []block{{Type: "text", Text: "Looking."}, toolUse("tu_1", "get_deal", `{"deal_id":"D-2001"}`), toolUse("tu_2", "pipeline_chart", `{}`)}
				},
				func(t *testing.T, req *request) []block {
					deal := result(t, req, "tu_1")
					if deal.IsError || !strings.Contains(resultText(deal), `"id":"D-2001"`) || !strings.Contains(resultText(deal), "crm://deals/D-2001/contract") {
						t.Errorf("get_deal result = %+v", deal)
					}
					chart := result(t, req, "tu_2")
					var images int
					for _, c := range chart.Content {
						if c.Type == "image" && c.Source.MediaType == "image/png" {
							images++
						}
					}
					if chart.IsError || images != 1 || !strings.Contains(resultText(chart), "Pipeline by stage") {
						t.Errorf("pipeline_chart result: %d images, %+v", images, chart)
					}
					return text("D-2001 is in proposal.")
				})
			o, err := newLoop(t, svc, s, stream).Run(crmtest.Alice(), ask("Where is D-2001?"))
			if err != nil {
				t.Fatal(err)
			}
			if o.Pause != nil || finalText(o) != "D-2001 is in proposal." || len(o.Messages) != 4 {
				t.Errorf("outcome: pause %v, final %q, %d messages", o.Pause, finalText(o), len(o.Messages))
			}
		})
	}
}

func TestPauseResumeInFreshLoop(t *testing.T) {
	url := crmtest.Server(t)
	dir := t.TempDir()
	const note = "Pilot agreed."
	m, svc := newModel(t,
		func(t *testing.T, req *request) []block {
			return []block{toolUse("tu_1", "update_deal", `{"deal_id":"D-2001","note":"`+note+`"}`), toolUse("tu_2", "get_contact", `{"contact_id":"C-1001"}`)}
		},
		func(t *testing.T, req *request) []block {
			up := result(t, req, "tu_1")
			if up.IsError || !strings.Contains(resultText(up), "alice: "+note) {
				t.Errorf("update_deal result = %+v", up)
			}
			if c := result(t, req, "tu_2"); c.IsError || !strings.Contains(resultText(c), "C-1001") {
				t.Errorf("get_contact result = %+v", c)
			}
			return text("Noted.")
		})

	// The first process: the loop stops at the gated call.
	conn1 := crmtest.Conn(t, url)
	loop1 := newLoop(t, svc, set(t, agent.Source{Tools: crmtest.Toolset(t, conn1, crmtest.FileGate(t, dir))}), true)
	o, err := loop1.Run(crmtest.Alice(), ask("Add a note to D-2001."))
	if err != nil {
		t.Fatal(err)
	}
	if o.Pause == nil {
		t.Fatalf("no pause: %+v", o)
	}
	if as, err := o.Pause.Approvals(crmtest.Alice(), loop1.Tools); err != nil || len(as) != 1 || as[0].Tool != "update_deal" {
		t.Fatalf("approvals: %+v, %v", as, err)
	}
	if n := crmtest.Notes(t, conn1, "D-2001", note); n != 0 {
		t.Fatalf("the gated call ran before approval (%d notes)", n)
	}
	stored, err := json.Marshal(o.Pause)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored, []byte("tok-alice")) {
		t.Error("the pause holds the token")
	}

	// Another process: fresh connection, gate, set and loop.
	conn2 := crmtest.Conn(t, url)
	gate2 := crmtest.FileGate(t, dir)
	s2 := set(t, agent.Source{Tools: crmtest.Toolset(t, conn2, gate2)})
	loop2 := newLoop(t, svc, s2, false)
	p, err := agent.ParsePause(stored)
	if err != nil {
		t.Fatal(err)
	}
	// Undecided: still paused, the model not asked.
	o2, err := loop2.Resume(crmtest.Alice(), p)
	if err != nil || o2.Pause == nil || m.requests() != 1 {
		t.Fatalf("resume before the decision: %+v, %v (%d requests)", o2, err, m.requests())
	}
	as, err := p.Approvals(crmtest.Alice(), s2)
	if err != nil {
		t.Fatal(err)
	}
	if err := gate2.Approve(context.Background(), as[0].ID, as[0].Digest); err != nil {
		t.Fatal(err)
	}
	o3, err := loop2.Resume(crmtest.Alice(), p)
	if err != nil {
		t.Fatal(err)
	}
	if o3.Pause != nil || finalText(o3) != "Noted." {
		t.Errorf("resumed outcome: pause %v, final %q", o3.Pause, finalText(o3))
	}
	// The same pause resumed again, in this loop or the first process's,
	// makes no second call and asks the model nothing.
	for _, l := range []*mcpanthropic.Loop{loop2, loop1} {
		if o4, err := l.Resume(crmtest.Alice(), p); !errors.Is(err, agent.ErrPauseUsed) || o4 != nil {
			t.Errorf("second resume: %+v, %v", o4, err)
		}
	}
	if m.requests() != 2 {
		t.Errorf("%d model requests, want 2", m.requests())
	}
	if n := crmtest.Notes(t, conn2, "D-2001", note); n != 1 {
		t.Errorf("the CRM has %d notes %q, want exactly 1", n, note)
	}
}

func TestDenialReachesModel(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.Server(t))
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore())
	s := set(t, agent.Source{Tools: crmtest.Toolset(t, conn, gate)})
	_, svc := newModel(t,
		func(t *testing.T, req *request) []block {
			return []block{toolUse("tu_1", "update_deal", `{"deal_id":"D-2001","stage":"won"}`)}
		},
		func(t *testing.T, req *request) []block {
			r := result(t, req, "tu_1")
			if !r.IsError || !strings.Contains(resultText(r), "denied") || !strings.Contains(resultText(r), "not before the audit") {
				t.Errorf("denial = %+v", r)
			}
			return text("Understood.")
		})
	loop := newLoop(t, svc, s, false)
	o, err := loop.Run(crmtest.Alice(), ask("Close D-2001."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	as, err := o.Pause.Approvals(crmtest.Alice(), s)
	if err != nil {
		t.Fatal(err)
	}
	if err := gate.Deny(context.Background(), as[0].ID, "not before the audit"); err != nil {
		t.Fatal(err)
	}
	o, err = loop.Resume(crmtest.Alice(), crmtest.RoundTrip(t, o.Pause))
	if err != nil || finalText(o) != "Understood." {
		t.Fatalf("after denial: %+v, %v", o, err)
	}
}

func TestInvalidArgumentsReachModel(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.Server(t))
	s := set(t, agent.Source{Tools: crmtest.Toolset(t, conn, nil)})
	_, svc := newModel(t,
		func(t *testing.T, req *request) []block {
			return []block{toolUse("tu_1", "get_deal", `{"deal_id":7,"verbose":true}`), toolUse("tu_2", "search_deals", `{"limit":500,"stage":"closed"}`)}
		},
		func(t *testing.T, req *request) []block {
			for id, want := range map[string][]string{"tu_1": {"/deal_id", "/verbose", "2 problems"}, "tu_2": {"/limit", "/stage", "2 problems"}} {
				r := result(t, req, id)
				for _, w := range want {
					if !r.IsError || !strings.Contains(resultText(r), w) {
						t.Errorf("%s: result lacks %q: %+v", id, w, r)
					}
				}
			}
			return text("Let me fix that.")
		})
	if _, err := newLoop(t, svc, s, true).Run(crmtest.Alice(), ask("Find the deal.")); err != nil {
		t.Fatal(err)
	}
}

func TestTwoServersNamespaced(t *testing.T) {
	east, west := crmtest.Conn(t, crmtest.Server(t)), crmtest.Conn(t, crmtest.Server(t))
	s := set(t, agent.Source{Prefix: "east", Tools: crmtest.Toolset(t, east, nil)}, agent.Source{Prefix: "west", Tools: crmtest.Toolset(t, west, nil)})
	_, svc := newModel(t,
		func(t *testing.T, req *request) []block {
			names := map[string]bool{}
			for _, tl := range req.Tools {
				names[tl.Name] = true
			}
			if !names["east__update_deal"] || !names["west__update_deal"] || names["update_deal"] {
				t.Errorf("tools offered: %v", names)
			}
			return []block{toolUse("tu_1", "west__update_deal", `{"deal_id":"D-2001","note":"west only"}`), toolUse("tu_2", "update_deal", `{}`)}
		},
		func(t *testing.T, req *request) []block {
			if r := result(t, req, "tu_1"); r.IsError {
				t.Errorf("west__update_deal: %+v", r)
			}
			if r := result(t, req, "tu_2"); !r.IsError || !strings.Contains(resultText(r), "east__update_deal") {
				t.Errorf("a name outside the set: %+v", r)
			}
			return text("Done.")
		})
	if _, err := newLoop(t, svc, s, false).Run(crmtest.Alice(), ask("Note it in the west.")); err != nil {
		t.Fatal(err)
	}
	if e, w := crmtest.Notes(t, east, "D-2001", "west only"), crmtest.Notes(t, west, "D-2001", "west only"); e != 0 || w != 1 {
		t.Errorf("notes: east %d, west %d; want 0 and 1", e, w)
	}
}

// A stored pause is edited by whoever holds it: sent to the other CRM,
// shown with another note. The loop refuses both without asking the model,
// runs the stored one once, and refuses to resume it a second time, so the
// model never gives a second answer to one pause.
func TestAlteredOrRepeatedPauseRefused(t *testing.T) {
	eastURL, westURL := crmtest.Server(t), crmtest.Server(t)
	dir := t.TempDir()
	const note = "East, once."
	m, svc := newModel(t,
		func(t *testing.T, req *request) []block {
			return []block{toolUse("tu_1", "east__update_deal", `{"deal_id":"D-2001","note":"`+note+`"}`)}
		},
		func(t *testing.T, req *request) []block { return text("Moved.") },
		func(t *testing.T, req *request) []block { return text("Moved (again).") })
	newSet := func() (*agent.Set, *mcpruntime.Gate, *mcpgo.Conn, *mcpgo.Conn) {
		g := crmtest.FileGate(t, dir)
		east, west := crmtest.NamedConn(t, eastURL, "crm-east"), crmtest.NamedConn(t, westURL, "crm-west")
		return set(t, agent.Source{Prefix: "east", Tools: crmtest.Toolset(t, east, g)}, agent.Source{Prefix: "west", Tools: crmtest.Toolset(t, west, g)}), g, east, west
	}
	s1, gate, east, west := newSet()
	loop := newLoop(t, svc, s1, false)
	o, err := loop.Run(crmtest.Alice(), ask("Note it in the east."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	stored, _ := json.Marshal(o.Pause)
	as, err := o.Pause.Approvals(crmtest.Alice(), s1)
	if err != nil {
		t.Fatal(err)
	}
	if err := gate.Approve(context.Background(), as[0].ID, as[0].Digest); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string][2]string{
		"to the west":  {`"name":"east__update_deal"`, `"name":"west__update_deal"`},
		"another note": {`"note":"` + note + `"`, `"note":"typo fix"`},
	} {
		b := bytes.Replace(stored, []byte(edit[0]), []byte(edit[1]), 1)
		if bytes.Equal(b, stored) {
			t.Fatalf("%s: nothing edited in %s", name, stored)
		}
		p, err := agent.ParsePause(b)
		if err != nil {
			t.Fatal(err)
		}
		if o, err := loop.Resume(crmtest.Alice(), p); !errors.Is(err, agent.ErrPauseAltered) || o != nil {
			t.Errorf("%s: resume = %+v, %v", name, o, err)
		}
	}
	if e, w := crmtest.Notes(t, east, "D-2001", note), crmtest.Notes(t, west, "D-2001", note); e != 0 || w != 0 || m.requests() != 1 {
		t.Fatalf("after the altered resumes: notes east %d, west %d, %d model requests", e, w, m.requests())
	}
	p, _ := agent.ParsePause(stored)
	if o, err := loop.Resume(crmtest.Alice(), p); err != nil || finalText(o) != "Moved." {
		t.Fatalf("resume = %+v, %v", o, err)
	}
	// Retried, here or in another process: an error, not a second answer.
	s2, _, _, _ := newSet()
	for _, l := range []*mcpanthropic.Loop{loop, newLoop(t, svc, s2, true)} {
		p, _ := agent.ParsePause(stored)
		if o, err := l.Resume(crmtest.Alice(), p); !errors.Is(err, agent.ErrPauseUsed) || o != nil {
			t.Errorf("retried resume = %+v, %v", o, err)
		}
	}
	if e, w := crmtest.Notes(t, east, "D-2001", note), crmtest.Notes(t, west, "D-2001", note); e != 1 || w != 0 || m.requests() != 2 {
		t.Errorf("notes east %d, west %d, %d model requests; want 1, 0, 2", e, w, m.requests())
	}
}

// An approved call whose outcome the approval store could not record (the
// store closes while the CRM answers): the model gets the result, the
// caller the error.
func TestUnrecordedResultReachesModel(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.Server(t))
	store := crmtest.FileStore(t, t.TempDir())
	gate := mcpruntime.NewGate(store)
	s := set(t, agent.Source{Tools: crmtest.Toolset(t, crmtest.ClosingStore(conn, store), gate)})
	const note = "Recorded nowhere."
	_, svc := newModel(t,
		func(t *testing.T, req *request) []block {
			return []block{toolUse("tu_1", "update_deal", `{"deal_id":"D-2001","note":"`+note+`"}`)}
		},
		func(t *testing.T, req *request) []block {
			if r := result(t, req, "tu_1"); r.IsError || !strings.Contains(resultText(r), "alice: "+note) {
				t.Errorf("update_deal result = %+v", r)
			}
			return text("Noted.")
		})
	loop := newLoop(t, svc, s, false)
	o, err := loop.Run(crmtest.Alice(), ask("Note it."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	a := o.Pause.Results[0].Pending
	if err := gate.Approve(context.Background(), a.ID, a.Digest); err != nil {
		t.Fatal(err)
	}
	o, err = loop.Resume(crmtest.Alice(), o.Pause)
	if !errors.Is(err, mcpruntime.ErrOutcomeNotRecorded) || o == nil || finalText(o) != "Noted." {
		t.Fatalf("resume = %+v, %v", o, err)
	}
	if n := crmtest.Notes(t, conn, "D-2001", note); n != 1 {
		t.Errorf("%d notes", n)
	}
}

// Embedded resources reach the model: the CRM's CSV export as text, a PDF
// as a document block, a long text cut within agent.MaxResourceText with
// the cut said, what is past the budget or has no block described.
func TestEmbeddedResourcesReachModel(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.Server(t))
	s := set(t, agent.Source{Prefix: "crm", Tools: crmtest.Toolset(t, conn, nil)}, agent.Source{Prefix: "rich", Tools: crmtest.RichToolset(t, crmtest.Rich(t))})
	_, svc := newModel(t,
		func(t *testing.T, req *request) []block {
			return []block{toolUse("tu_1", "crm__export_contacts", `{}`), toolUse("tu_2", "rich__export_report", `{}`)}
		},
		func(t *testing.T, req *request) []block {
			csv := result(t, req, "tu_1")
			if text := resultText(csv); csv.IsError || !strings.Contains(text, "[embedded resource: crm://exports/contacts.csv (text/csv)]\nid,name,email,company,owner\nC-1001,") {
				t.Errorf("export_contacts: %s", text)
			}
			report := result(t, req, "tu_2")
			var docs []block
			for _, c := range report.Content {
				if c.Type == "document" {
					docs = append(docs, c)
				}
			}
			if len(docs) != 1 || docs[0].Title != "q3.pdf" {
				t.Errorf("documents: %+v", docs)
			} else if data, _ := base64.StdEncoding.DecodeString(docs[0].Source.Data); !bytes.Equal(data, crmtest.PDF) {
				t.Errorf("the PDF's bytes changed")
			}
			got := resultText(report)
			for _, want := range []string{"Report ready.", "[embedded resource: crm://reports/q3.log (text/plain)]\n" + crmtest.LogLine,
				fmt.Sprintf("[cut: the first %d of 100000 bytes are shown]", agent.MaxResourceText),
				"[embedded resource: crm://reports/q3-notes.txt (text/plain)] not shown", "[embedded resource: crm://reports/q3.bin (application/octet-stream, blob, 4 bytes)]"} {
				if !strings.Contains(got, want) {
					t.Errorf("export_report lacks %q", want)
				}
			}
			if n := strings.Count(got, crmtest.LogLine); n > agent.MaxResourceText/len(crmtest.LogLine) || n < agent.MaxResourceText/len(crmtest.LogLine)-1 {
				t.Errorf("%d log lines shown", n)
			}
			return text("Exported.")
		})
	if o, err := newLoop(t, svc, s, false).Run(crmtest.Alice(), ask("Export everything.")); err != nil || finalText(o) != "Exported." {
		t.Fatalf("outcome %+v, %v", o, err)
	}
}

// The bindings offer a tool the live server does not (an older release
// without export_contacts): the model's call of it is a failure it reads,
// listing what it may call, and the loop goes on.
func TestToolTheServerLacks(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.ServerWith(t, "-fault", "without=export_contacts"))
	s := set(t, agent.Source{Tools: crmtest.Toolset(t, conn, nil)})
	_, svc := newModel(t,
		func(t *testing.T, req *request) []block {
			return []block{toolUse("tu_1", "export_contacts", `{}`), toolUse("tu_2", "get_contact", `{"contact_id":"C-1001"}`)}
		},
		func(t *testing.T, req *request) []block {
			r := result(t, req, "tu_1")
			if got := resultText(r); !r.IsError || !strings.HasPrefix(got, `The tool "export_contacts" is not available: its server does not offer it now. Available tools: export_pipeline, get_contact,`) || strings.Contains(got, "export_contacts,") {
				t.Errorf("export_contacts: %+v", r)
			}
			if r := result(t, req, "tu_2"); r.IsError {
				t.Errorf("get_contact: %+v", r)
			}
			return text("It cannot export.")
		})
	if o, err := newLoop(t, svc, s, false).Run(crmtest.Alice(), ask("Export the contacts.")); err != nil || finalText(o) != "It cannot export." {
		t.Fatalf("outcome %+v, %v", o, err)
	}
}
