package crmanthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	mcpanthropic "github.com/mcpgen/mcpgen/adapters/anthropic"
	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

// The tool search tool as the API runs it: the scripted model "searches"
// by returning search(...), a server_tool_use and its
// tool_search_tool_result, computed here over the request's deferred tools
// as the regex variant does (the pattern against each tool's name,
// description and argument names and descriptions, at most five found).

// deferredOf returns the request's deferred tools and those the
// conversation's searches loaded, and the search tool's name.
func deferredOf(req *request) (search string, deferred, loaded map[string]bool) {
	deferred, loaded = map[string]bool{}, map[string]bool{}
	for _, tl := range req.Tools {
		if strings.HasPrefix(tl.Type, "tool_search_tool_") {
			search = tl.Name
		}
		if tl.DeferLoading {
			deferred[tl.Name] = true
		}
	}
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			_ = checkLoading(m.Content, search, deferred, loaded)
		}
	}
	return search, deferred, loaded
}

// checkResponse refuses a scripted answer the model could not give: a call
// of a deferred tool no search has loaded.
func checkResponse(req *request, blocks []block) error {
	search, deferred, loaded := deferredOf(req)
	return checkLoading(blocks, search, deferred, loaded)
}

// search is a tool search of the pattern, id its server_tool_use's id.
func search(t *testing.T, req *request, id, pattern string) []block {
	t.Helper()
	re, err := regexp.Compile(pattern)
	if err != nil {
		t.Fatal(err)
	}
	name, _, _ := deferredOf(req)
	content := &searchContent{Type: "tool_search_tool_search_result"}
	for _, tl := range req.Tools {
		if !tl.DeferLoading || len(content.ToolReferences) == 5 {
			continue
		}
		text := []string{tl.Name, tl.Description}
		props, _ := tl.InputSchema["properties"].(map[string]any)
		for n, p := range props {
			d, _ := p.(map[string]any)["description"].(string)
			text = append(text, n, d)
		}
		if re.MatchString(strings.Join(text, "\n")) {
			content.ToolReferences = append(content.ToolReferences, struct {
				Type     string `json:"type"`
				ToolName string `json:"tool_name"`
			}{"tool_reference", tl.Name})
		}
	}
	input, _ := json.Marshal(map[string]string{"query": pattern})
	return []block{{Type: "server_tool_use", ID: id, Name: name, Input: input}, {Type: "tool_search_tool_result", ToolUseID: id, Search: content}}
}

// TestDeferredLoading: over the CRM's tools with only get_contact loaded
// from the start, the model is offered the tool search tool and the tools
// marked defer_loading; it searches, finds update_deal, calls it, and the
// gated call pauses; the pause goes through JSON into a fresh loop whose
// resume, once approved, makes the call once. The searches' blocks stay in
// the conversation, so the scripted server (which refuses a call of a
// deferred tool no search loaded, as the API does) accepts every request.
func TestDeferredLoading(t *testing.T) {
	url := crmtest.Server(t)
	dir := t.TempDir()
	const note = "Found by search."
	loading := &agent.Loading{Always: agent.AlwaysNamed("get_contact")}
	m, svc := newModel(t,
		func(t *testing.T, req *request) []block {
			deferred := 0
			for _, tl := range req.Tools {
				if tl.DeferLoading {
					deferred++
				}
				if tl.Name == "get_contact" && tl.DeferLoading {
					t.Errorf("get_contact is deferred")
				}
			}
			if deferred != 7 || len(req.Tools) != 9 || req.Tools[0].Type != "tool_search_tool_regex_20251119" {
				t.Errorf("%d tools, %d deferred: %+v", len(req.Tools), deferred, req.Tools)
			}
			found := search(t, req, "srvtoolu_1", "(?i)deal")
			if len(found[1].Search.ToolReferences) != 4 {
				t.Errorf("the search found %+v", found[1].Search.ToolReferences)
			}
			return append(append([]block{{Type: "text", Text: "Searching."}}, found...),
				toolUse("tu_1", "update_deal", `{"deal_id":"D-2001","note":"`+note+`"}`), toolUse("tu_2", "get_contact", `{"contact_id":"C-1001"}`))
		},
		func(t *testing.T, req *request) []block {
			if r := result(t, req, "tu_1"); r.IsError || !strings.Contains(resultText(r), "alice: "+note) {
				t.Errorf("update_deal: %+v", r)
			}
			if r := result(t, req, "tu_2"); r.IsError {
				t.Errorf("get_contact: %+v", r)
			}
			// Loaded by the first turn's search: callable now.
			return []block{toolUse("tu_3", "get_deal", `{"deal_id":"D-2001"}`)}
		},
		func(t *testing.T, req *request) []block {
			if r := result(t, req, "tu_3"); r.IsError || !strings.Contains(resultText(r), "alice: "+note) {
				t.Errorf("get_deal: %+v", r)
			}
			return text("Noted.")
		})
	conn1 := crmtest.Conn(t, url)
	loop1 := newLoop(t, svc, set(t, agent.Source{Tools: crmtest.Toolset(t, conn1, crmtest.FileGate(t, dir))}), true)
	loop1.Defer = loading
	o, err := loop1.Run(crmtest.Alice(), ask("Note it on D-2001."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	if n := crmtest.Notes(t, conn1, "D-2001", note); n != 0 {
		t.Fatalf("the gated call ran (%d)", n)
	}
	stored, _ := json.Marshal(o.Pause)

	conn2 := crmtest.Conn(t, url)
	gate2 := crmtest.FileGate(t, dir)
	s2 := set(t, agent.Source{Tools: crmtest.Toolset(t, conn2, gate2)})
	loop2 := newLoop(t, svc, s2, false)
	loop2.Defer = loading
	p, _ := agent.ParsePause(stored)
	as, err := p.Approvals(crmtest.Alice(), s2)
	if err != nil || len(as) != 1 || as[0].Tool != "update_deal" {
		t.Fatalf("approvals %+v, %v", as, err)
	}
	if err := gate2.Approve(context.Background(), as[0].ID, as[0].Digest); err != nil {
		t.Fatal(err)
	}
	if o, err = loop2.Resume(crmtest.Alice(), p); err != nil || finalText(o) != "Noted." {
		t.Fatalf("resume: %+v, %v", o, err)
	}
	if o, err := loop2.Resume(crmtest.Alice(), p); !errors.Is(err, agent.ErrPauseUsed) || o != nil || m.requests() != 3 {
		t.Errorf("second resume: %+v, %v (%d requests)", o, err, m.requests())
	}
	if n := crmtest.Notes(t, conn2, "D-2001", note); n != 1 {
		t.Errorf("%d notes, want 1", n)
	}
}

// The scripted server refuses what the API refuses: a deferred tool
// without a tool search tool, and a call of a deferred tool no search
// loaded.
func TestDeferredRequestRules(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.Server(t))
	s := set(t, agent.Source{Tools: crmtest.Toolset(t, conn, nil)})
	d, err := s.Defer(agent.Loading{})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := mcpanthropic.DeferredTools(d)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(anthropic.MessageNewParams{Model: "m", MaxTokens: 1, Tools: tools[1:], Messages: ask("x")})
	var req request
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	if err := checkRequest(&req); err == nil || !strings.Contains(err.Error(), "no tool search tool") {
		t.Errorf("deferred tools without the search tool: %v", err)
	}
	b, _ = json.Marshal(anthropic.MessageNewParams{Model: "m", MaxTokens: 1, Tools: tools, Messages: ask("x")})
	req = request{}
	if err := json.Unmarshal(b, &req); err != nil || checkRequest(&req) != nil {
		t.Fatalf("deferred tools with the search tool: %v, %v", err, checkRequest(&req))
	}
	if err := checkResponse(&req, []block{toolUse("tu_1", "get_deal", `{}`)}); err == nil {
		t.Error("a call of a deferred tool no search loaded was accepted")
	}
	if err := checkResponse(&req, append(search(t, &req, "s1", "get_deal"), toolUse("tu_1", "get_deal", `{}`))); err != nil {
		t.Errorf("a call of a loaded tool: %v", err)
	}
}
