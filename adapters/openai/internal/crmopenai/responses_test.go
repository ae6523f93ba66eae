package crmopenai_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	"github.com/mcpgen/mcpgen/adapters/internal/crmtest/githubtest"
	mcpopenai "github.com/mcpgen/mcpgen/adapters/openai"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

type respItem struct {
	Type   string          `json:"type"`
	CallID string          `json:"call_id"`
	Output json.RawMessage `json:"output"`
}

// respFunction is a function tool, at the top level or in a namespace.
type respFunction struct {
	Type         string         `json:"type"`
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	Strict       bool           `json:"strict"`
	DeferLoading bool           `json:"defer_loading"`
	Parameters   map[string]any `json:"parameters"`
}

type respRequest struct {
	Input              json.RawMessage `json:"input"`
	PreviousResponseID string          `json:"previous_response_id"`
	Tools              []struct {
		respFunction
		Execution string         `json:"execution"`
		Tools     []respFunction `json:"tools"` // a namespace's
	} `json:"tools"`
	items []respItem
	raw   []byte
}

// checkTools applies the API's rules to a request's tools and returns the
// functions it may call at once (by "name", or "namespace.name") and the
// deferred ones, which a tool search loads: function names valid and
// distinct; a namespace named, described and holding function tools;
// defer_loading only with a tool_search tool, of which there is one at
// most.
func (r *respRequest) checkTools() (callable, deferred map[string]*respFunction, err error) {
	callable, deferred = map[string]*respFunction{}, map[string]*respFunction{}
	search := 0
	add := func(key string, f *respFunction) error {
		if f.Type != "function" || !toolName.MatchString(f.Name) {
			return fmt.Errorf("tool %q of type %q", f.Name, f.Type)
		}
		if callable[key] != nil || deferred[key] != nil {
			return fmt.Errorf("tool %q given twice", key)
		}
		if f.DeferLoading {
			deferred[key] = f
		} else {
			callable[key] = f
		}
		return nil
	}
	for i := range r.Tools {
		tl := &r.Tools[i]
		switch tl.Type {
		case "tool_search":
			if search++; search > 1 || (tl.Execution != "" && tl.Execution != "server") {
				return nil, nil, fmt.Errorf("tool_search %+v", tl)
			}
		case "namespace":
			if !toolName.MatchString(tl.Name) || tl.Description == "" || len(tl.Tools) == 0 {
				return nil, nil, fmt.Errorf("namespace %q needs a name, a description and tools", tl.Name)
			}
			for j := range tl.Tools {
				if err := add(tl.Name+"."+tl.Tools[j].Name, &tl.Tools[j]); err != nil {
					return nil, nil, err
				}
			}
		default:
			if err := add(tl.Name, &tl.respFunction); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(deferred) > 0 && search == 0 {
		return nil, nil, fmt.Errorf("%d functions have defer_loading and there is no tool_search tool", len(deferred))
	}
	return callable, deferred, nil
}

// shownRequest is a Responses request as the model is shown it: without
// the deferred functions of its namespaces.
func shownRequest(raw []byte) string {
	var body map[string]any
	if json.Unmarshal(raw, &body) != nil {
		return string(raw)
	}
	tools, _ := body["tools"].([]any)
	for _, tl := range tools {
		ns := tl.(map[string]any)
		if ns["type"] != "namespace" {
			continue
		}
		fs, _ := ns["tools"].([]any)
		var kept []any
		for _, f := range fs {
			if d, _ := f.(map[string]any)["defer_loading"].(bool); !d {
				kept = append(kept, f)
			}
		}
		ns["tools"] = kept
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(body)
	return b.String()
}

// checkOutput applies the API's rules to a function_call_output's output:
// a string, or a list of input_text (non-empty), input_image (a data URL
// of an image whose bytes match its type) and input_file (a data URL with
// a file name) parts.
func checkOutput(raw json.RawMessage) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return nil
	}
	var parts []struct {
		Type     string  `json:"type"`
		Text     *string `json:"text"`
		ImageURL string  `json:"image_url"`
		FileData string  `json:"file_data"`
		Filename string  `json:"filename"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return err
	}
	for i, p := range parts {
		switch p.Type {
		case "input_text":
			if p.Text == nil || *p.Text == "" {
				return fmt.Errorf("part %d: empty input_text", i)
			}
		case "input_image":
			mt, data, ok := dataURL(p.ImageURL)
			if !ok || http.DetectContentType(data) != mt {
				return fmt.Errorf("part %d: image_url is not a data URL of its type", i)
			}
		case "input_file":
			mt, data, ok := dataURL(p.FileData)
			if !ok || p.Filename == "" || http.DetectContentType(data) != mt {
				return fmt.Errorf("part %d: input_file needs file_data as a data URL of its type and a filename", i)
			}
		default:
			return fmt.Errorf("part %d: type %q", i, p.Type)
		}
	}
	return nil
}

// dataURL decodes a base64 data URL.
func dataURL(u string) (string, []byte, bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	mt, b64, ok2 := strings.Cut(rest, ";base64,")
	if !ok || !ok2 {
		return "", nil, false
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	return mt, data, err == nil
}

// output is a function_call_output's content as text and image media types.
func (r *respRequest) output(t *testing.T, callID string) (string, []string) {
	t.Helper()
	for _, it := range r.items {
		if it.Type != "function_call_output" || it.CallID != callID {
			continue
		}
		var parts []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL string `json:"image_url"`
			FileData string `json:"file_data"`
			Filename string `json:"filename"`
		}
		if err := json.Unmarshal(it.Output, &parts); err != nil {
			t.Fatalf("output %s: %v", it.Output, err)
		}
		var text []string
		var images []string
		for _, p := range parts {
			switch p.Type {
			case "input_image":
				images = append(images, p.ImageURL)
			case "input_file":
				images = append(images, p.Filename+" "+p.FileData)
			default:
				text = append(text, p.Text)
			}
		}
		return strings.Join(text, "\n"), images
	}
	t.Fatalf("no function_call_output for %s", callID)
	return "", nil
}

type respStep func(t *testing.T, req *respRequest) reply

// respModel is a Responses API server: it remembers each response's calls
// so the next request (by previous_response_id) must answer every one.
type respModel struct {
	t      *testing.T
	mu     sync.Mutex
	steps  []respStep
	n      int
	calls  map[string][]string
	loaded map[string]map[string]bool // by response id: the deferred functions loaded so far
	// context is, by response id, the conversation the API keeps for it
	// (every input and output item so far, as JSON), and shown, per
	// request, the estimated tokens the model reads: that context and the
	// request, less the deferred functions (a namespace is shown by its
	// name and description until a search loads them, and then they are
	// in the context, in the search's output).
	context map[string]string
	shown   []int
}

func (m *respModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := m.t
	var req respRequest
	req.raw, _ = io.ReadAll(r.Body)
	if r.URL.Path != "/v1/responses" || json.Unmarshal(req.raw, &req) != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, 400)
		return
	}
	_ = json.Unmarshal(req.Input, &req.items)
	for _, it := range req.items {
		if it.Type == "function_call_output" {
			if err := checkOutput(it.Output); err != nil {
				t.Errorf("function_call_output %s: %v", it.CallID, err)
				http.Error(w, `{"error":{"message":"invalid"}}`, 400)
				return
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if want := m.calls[req.PreviousResponseID]; len(want) > 0 {
		var got []string
		for _, it := range req.items {
			if it.Type == "function_call_output" {
				got = append(got, it.CallID)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("function_call_output call_ids %v, want %v", got, want)
		}
	}
	callable, deferred, err := req.checkTools()
	if err != nil {
		t.Errorf("request %d breaks the API's rules: %v", m.n, err)
		http.Error(w, `{"error":{"message":"invalid"}}`, 400)
		return
	}
	// What the conversation's searches loaded, by response.
	loaded := map[string]bool{}
	for k := range m.loaded[req.PreviousResponseID] {
		loaded[k] = true
	}
	if m.n >= len(m.steps) {
		t.Errorf("unscripted request %d", m.n)
		http.Error(w, "unscripted", 500)
		return
	}
	s := m.steps[m.n]
	m.n++
	id := fmt.Sprintf("resp_%d", m.n)
	rep := s(t, &req)
	var out []any
	var ids []string
	if rep.search != "" {
		// The hosted search: the deferred functions whose namespace, name
		// or description hold a word of the query, loaded as their
		// namespaces with them.
		found := map[string][]any{}
		n := 0
		for _, key := range slices.Sorted(maps.Keys(deferred)) {
			f := deferred[key]
			if n == 5 { // at most five, as a search loads a few
				break
			}
			ns, _, _ := strings.Cut(key, ".")
			for _, w := range strings.Fields(strings.ToLower(rep.search)) {
				if strings.Contains(strings.ToLower(key+" "+f.Description), w) {
					loaded[key] = true
					found[ns] = append(found[ns], f)
					n++
					break
				}
			}
		}
		var tools []any
		for _, ns := range slices.Sorted(maps.Keys(found)) {
			tools = append(tools, map[string]any{"type": "namespace", "name": ns, "description": "loaded", "tools": found[ns]})
		}
		out = append(out,
			map[string]any{"type": "tool_search_call", "id": "tsc_" + id, "call_id": "ts_" + id, "execution": "server", "status": "completed", "arguments": map[string]any{"query": rep.search}},
			map[string]any{"type": "tool_search_output", "id": "tso_" + id, "call_id": "ts_" + id, "execution": "server", "status": "completed", "tools": tools})
	}
	for _, c := range rep.calls {
		call := map[string]any{"type": "function_call", "id": "fc_" + c[0], "call_id": c[0], "name": c[1], "arguments": c[2], "status": "completed"}
		if ns, name, ok := strings.Cut(c[1], "."); ok {
			call["namespace"], call["name"] = ns, name
		}
		// The model calls what it is shown: a function not deferred, or
		// one a search loaded.
		if callable[c[1]] == nil && (deferred[c[1]] == nil || !loaded[c[1]]) {
			t.Errorf("response %s calls %q, which it was not shown", id, c[1])
		}
		out = append(out, call)
		ids = append(ids, c[0])
	}
	m.loaded[id] = loaded
	if rep.text != "" {
		out = append(out, map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": rep.text, "annotations": []any{}}}})
	}
	m.calls[id] = ids
	output, _ := json.Marshal(out)
	m.context[id] = m.context[req.PreviousResponseID] + string(req.Input) + string(output)
	m.shown = append(m.shown, githubtest.EstimateTokens(m.context[req.PreviousResponseID]+shownRequest(req.raw)))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": id, "object": "response", "created_at": 1, "status": "completed", "model": "gpt-test",
		"output": out, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
	})
}

func (m *respModel) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

func newResponses(t *testing.T, steps ...respStep) (*respModel, responses.ResponseService) {
	m := &respModel{t: t, steps: steps, calls: map[string][]string{}, loaded: map[string]map[string]bool{}, context: map[string]string{}}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	return m, c.Responses
}

func userInput(q string) responses.ResponseInputParam {
	return responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(q, responses.EasyInputMessageRoleUser)}
}

func TestResponsesLoop(t *testing.T) {
	url := crmtest.Server(t)
	dir := t.TempDir()
	const note = "Via Responses."
	m, svc := newResponses(t,
		func(t *testing.T, req *respRequest) reply {
			return reply{calls: [][3]string{{"call_1", "pipeline_chart", `{}`}, {"call_2", "update_deal", `{"deal_id":"D-2001","note":"` + note + `","stage":null,"amount":null}`}, {"call_3", "get_deal", `{"deal_id":"x"}`}}}
		},
		func(t *testing.T, req *respRequest) reply {
			text, images := req.output(t, "call_1")
			if !strings.Contains(text, "Pipeline by stage") || len(images) != 1 || !strings.HasPrefix(images[0], "data:image/png;base64,") {
				t.Errorf("pipeline_chart output: %q, images %d", text, len(images))
			} else if b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(images[0], "data:image/png;base64,")); err != nil || http.DetectContentType(b) != "image/png" {
				t.Errorf("image bytes: %v", err)
			}
			if text, _ := req.output(t, "call_2"); !strings.Contains(text, "alice: "+note) {
				t.Errorf("update_deal output: %s", text)
			}
			if text, _ := req.output(t, "call_3"); !strings.HasPrefix(text, "Error: ") || !strings.Contains(text, "/deal_id") {
				t.Errorf("invalid arguments output: %s", text)
			}
			return reply{text: "Charted and noted."}
		})
	conn1 := crmtest.Conn(t, url)
	loop1 := &mcpopenai.ResponsesLoop{Client: svc, Params: responses.ResponseNewParams{Model: "gpt-test"},
		Tools: newSet(t, agent.DialectStrict, agent.Source{Tools: crmtest.Toolset(t, conn1, crmtest.FileGate(t, dir))})}
	o, err := loop1.Run(crmtest.Alice(), userInput("Chart it and note D-2001."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	stored, _ := json.Marshal(o.Pause)

	conn2 := crmtest.Conn(t, url)
	gate2 := crmtest.FileGate(t, dir)
	s2 := newSet(t, agent.DialectStrict, agent.Source{Tools: crmtest.Toolset(t, conn2, gate2)})
	loop2 := &mcpopenai.ResponsesLoop{Client: svc, Params: responses.ResponseNewParams{Model: "gpt-test"}, Tools: s2}
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
	if err != nil || o.Final == nil || o.Final.OutputText() != "Charted and noted." {
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

// An approved call whose outcome the approval store could not record (the
// store closes while the CRM answers): the model gets the result, the
// caller the error, in both loops.
func TestUnrecordedResultReachesModel(t *testing.T) {
	url := crmtest.Server(t)
	const note = "Recorded nowhere."
	newTools := func() (*agent.Set, *mcpruntime.Gate, *mcpgo.Conn) {
		conn := crmtest.Conn(t, url)
		store := crmtest.FileStore(t, t.TempDir())
		gate := mcpruntime.NewGate(store)
		return newSet(t, agent.DialectStrict, agent.Source{Tools: crmtest.Toolset(t, crmtest.ClosingStore(conn, store), gate)}), gate, conn
	}
	approve := func(g *mcpruntime.Gate, p *agent.Pause) {
		a := p.Results[0].Pending
		if err := g.Approve(context.Background(), a.ID, a.Digest); err != nil {
			t.Fatal(err)
		}
	}
	call := `{"deal_id":"D-2001","note":"` + note + `","stage":null,"amount":null}`

	s, gate, conn := newTools()
	_, svc := newResponses(t,
		func(t *testing.T, req *respRequest) reply {
			return reply{calls: [][3]string{{"call_1", "update_deal", call}}}
		},
		func(t *testing.T, req *respRequest) reply {
			if text, _ := req.output(t, "call_1"); !strings.Contains(text, "alice: "+note) {
				t.Errorf("update_deal output: %s", text)
			}
			return reply{text: "Noted."}
		})
	rl := &mcpopenai.ResponsesLoop{Client: svc, Params: responses.ResponseNewParams{Model: "gpt-test"}, Tools: s}
	o, err := rl.Run(crmtest.Alice(), userInput("Note it."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	approve(gate, o.Pause)
	if o, err = rl.Resume(crmtest.Alice(), o.Pause); !errors.Is(err, mcpruntime.ErrOutcomeNotRecorded) || o == nil || o.Final.OutputText() != "Noted." {
		t.Fatalf("Responses resume = %+v, %v", o, err)
	}

	s, gate, _ = newTools()
	_, chat := newModel(t,
		func(t *testing.T, req *request) reply {
			return reply{calls: [][3]string{{"call_1", "update_deal", call}}}
		},
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.Contains(r, "alice: "+note) || strings.HasPrefix(r, "Error") {
				t.Errorf("update_deal result = %s", r)
			}
			return reply{text: "Noted."}
		})
	loop := newLoop(chat, s, false)
	co, err := loop.Run(crmtest.Alice(), ask("Note it."))
	if err != nil || co.Pause == nil {
		t.Fatalf("no pause: %+v, %v", co, err)
	}
	approve(gate, co.Pause)
	if co, err = loop.Resume(crmtest.Alice(), co.Pause); !errors.Is(err, mcpruntime.ErrOutcomeNotRecorded) || final(co) != "Noted." {
		t.Fatalf("Chat Completions resume = %+v, %v", co, err)
	}
	if n := crmtest.Notes(t, conn, "D-2001", note); n != 2 {
		t.Errorf("%d notes, want one per loop", n)
	}
}

// Embedded resources reach the model: the CRM's CSV export as text, a PDF
// as an input_file part of the Responses API's output (described in Chat
// Completions' text-only tool messages), a long text cut within
// agent.MaxResourceText with the cut said.
func TestEmbeddedResourcesReachModel(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.Server(t))
	rich := crmtest.Rich(t)
	s := newSet(t, agent.DialectStrict, agent.Source{Prefix: "crm", Tools: crmtest.Toolset(t, conn, nil)}, agent.Source{Prefix: "rich", Tools: crmtest.RichToolset(t, rich)})
	calls := [][3]string{{"call_1", "crm__export_contacts", `{"owner":null}`}, {"call_2", "rich__export_report", `{}`}}
	const csv = "[embedded resource: crm://exports/contacts.csv (text/csv)]\nid,name,email,company,owner\nC-1001,"
	cut := fmt.Sprintf("[cut: the first %d of 100000 bytes are shown]", agent.MaxResourceText)
	_, svc := newResponses(t,
		func(t *testing.T, req *respRequest) reply { return reply{calls: calls} },
		func(t *testing.T, req *respRequest) reply {
			if text, _ := req.output(t, "call_1"); !strings.Contains(text, csv) {
				t.Errorf("export_contacts: %s", text)
			}
			text, files := req.output(t, "call_2")
			if len(files) != 1 || files[0] != "q3.pdf data:application/pdf;base64,"+base64.StdEncoding.EncodeToString(crmtest.PDF) {
				t.Errorf("files: %q", files)
			}
			if !strings.Contains(text, cut) || !strings.Contains(text, "q3-notes.txt (text/plain)] not shown") {
				t.Errorf("export_report: %.300s", text)
			}
			return reply{text: "Exported."}
		})
	rl := &mcpopenai.ResponsesLoop{Client: svc, Params: responses.ResponseNewParams{Model: "gpt-test"}, Tools: s}
	if o, err := rl.Run(crmtest.Alice(), userInput("Export everything.")); err != nil || o.Final == nil || o.Final.OutputText() != "Exported." {
		t.Fatalf("Responses: %+v, %v", o, err)
	}
	_, chat := newModel(t,
		func(t *testing.T, req *request) reply { return reply{calls: calls} },
		func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_1"); !strings.Contains(r, csv) {
				t.Errorf("export_contacts: %s", r)
			}
			if r := toolResult(t, req, "call_2"); !strings.Contains(r, cut) || !strings.Contains(r, "[embedded resource: crm://reports/q3.pdf (application/pdf, blob, ") {
				t.Errorf("export_report: %.300s", r)
			}
			return reply{text: "Exported."}
		})
	if o, err := newLoop(chat, s, true).Run(crmtest.Alice(), ask("Export everything.")); err != nil || final(o) != "Exported." {
		t.Fatalf("Chat Completions: %+v, %v", o, err)
	}
}
