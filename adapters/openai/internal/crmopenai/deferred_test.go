package crmopenai_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	mcpopenai "github.com/mcpgen/mcpgen/adapters/openai"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

// TestResponsesDeferredLoading: over the CRM's tools with only get_contact
// loaded from the start, the Responses API is offered tool_search, the
// plain get_contact and one namespace holding the rest with
// defer_loading; the model searches, finds update_deal, calls it in its
// namespace, and the gated call pauses; a fresh loop resumes it once
// approved, and a later call of a tool the search loaded is mapped back
// to the set's name. The scripted server refuses a call of a deferred
// function no search loaded, as the API does.
func TestResponsesDeferredLoading(t *testing.T) {
	url := crmtest.Server(t)
	dir := t.TempDir()
	const note = "Found in a namespace."
	loading := &agent.Loading{Always: agent.AlwaysNamed("get_contact")}
	m, svc := newResponses(t,
		func(t *testing.T, req *respRequest) reply {
			callable, deferred, _ := req.checkTools()
			if len(callable) != 1 || callable["get_contact"] == nil || len(deferred) != 7 || deferred["tools.update_deal"] == nil {
				t.Errorf("callable %v, deferred %v", callable, deferred)
			}
			return reply{search: "deal", calls: [][3]string{
				{"call_1", "tools.update_deal", `{"deal_id":"D-2001","note":"` + note + `","stage":null,"amount":null}`},
				{"call_2", "get_contact", `{"contact_id":"C-1001"}`},
			}}
		},
		func(t *testing.T, req *respRequest) reply {
			if text, _ := req.output(t, "call_1"); !strings.Contains(text, "alice: "+note) {
				t.Errorf("update_deal: %s", text)
			}
			if text, _ := req.output(t, "call_2"); strings.HasPrefix(text, "Error") {
				t.Errorf("get_contact: %s", text)
			}
			return reply{calls: [][3]string{{"call_3", "tools.get_deal", `{"deal_id":"D-2001"}`}}}
		},
		func(t *testing.T, req *respRequest) reply {
			if text, _ := req.output(t, "call_3"); !strings.Contains(text, "alice: "+note) {
				t.Errorf("get_deal: %s", text)
			}
			return reply{text: "Noted."}
		})
	conn1 := crmtest.Conn(t, url)
	loop1 := &mcpopenai.ResponsesLoop{Client: svc, Params: responses.ResponseNewParams{Model: "gpt-test"}, Defer: loading,
		Tools: newSet(t, agent.DialectStrict, agent.Source{Tools: crmtest.Toolset(t, conn1, crmtest.FileGate(t, dir))})}
	o, err := loop1.Run(crmtest.Alice(), userInput("Note it on D-2001."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	if r := o.Pause.Results[0]; r.Name != "update_deal" || r.Pending == nil {
		t.Fatalf("the namespaced call: %+v", r)
	}
	stored, _ := json.Marshal(o.Pause)

	conn2 := crmtest.Conn(t, url)
	gate2 := crmtest.FileGate(t, dir)
	s2 := newSet(t, agent.DialectStrict, agent.Source{Tools: crmtest.Toolset(t, conn2, gate2)})
	loop2 := &mcpopenai.ResponsesLoop{Client: svc, Params: responses.ResponseNewParams{Model: "gpt-test"}, Tools: s2, Defer: loading}
	p, _ := agent.ParsePause(stored)
	as, err := p.Approvals(crmtest.Alice(), s2)
	if err != nil || len(as) != 1 {
		t.Fatalf("approvals %+v, %v", as, err)
	}
	if err := gate2.Approve(context.Background(), as[0].ID, as[0].Digest); err != nil {
		t.Fatal(err)
	}
	if o, err = loop2.Resume(crmtest.Alice(), p); err != nil || o.Final == nil || o.Final.OutputText() != "Noted." {
		t.Fatalf("resume: %+v, %v", o, err)
	}
	if o, err := loop2.Resume(crmtest.Alice(), p); !errors.Is(err, agent.ErrPauseUsed) || o != nil || m.requests() != 3 {
		t.Errorf("second resume: %+v, %v", o, err)
	}
	if n := crmtest.Notes(t, conn2, "D-2001", note); n != 1 {
		t.Errorf("%d notes, want 1", n)
	}
}

// One namespace per server, named by its prefix and described by its
// source's description (or its tools' names); a call in an unknown
// namespace is answered as a name outside the set.
func TestResponsesNamespacePerServer(t *testing.T) {
	east, west := crmtest.Conn(t, crmtest.Server(t)), crmtest.Conn(t, crmtest.Server(t))
	s := newSet(t, agent.DialectStrict,
		agent.Source{Prefix: "east", Tools: crmtest.Toolset(t, east, nil), Description: "The eastern CRM: contacts, deals, email."},
		agent.Source{Prefix: "west", Tools: crmtest.Toolset(t, west, nil)})
	_, svc := newResponses(t,
		func(t *testing.T, req *respRequest) reply {
			spaces := map[string]string{}
			for _, tl := range req.Tools {
				if tl.Type == "namespace" {
					spaces[tl.Name] = tl.Description
				}
			}
			if len(spaces) != 2 || spaces["east"] != "The eastern CRM: contacts, deals, email." || !strings.HasPrefix(spaces["west"], "8 tools: export_contacts, ") {
				t.Errorf("namespaces %v", spaces)
			}
			return reply{search: "note", calls: [][3]string{{"call_1", "west.update_deal", `{"deal_id":"D-2001","note":"west only","stage":null,"amount":null}`}}}
		},
		func(t *testing.T, req *respRequest) reply {
			if text, _ := req.output(t, "call_1"); strings.HasPrefix(text, "Error") {
				t.Errorf("west update_deal: %s", text)
			}
			return reply{text: "Done."}
		})
	loop := &mcpopenai.ResponsesLoop{Client: svc, Params: responses.ResponseNewParams{Model: "gpt-test"}, Tools: s, Defer: &agent.Loading{}}
	if o, err := loop.Run(crmtest.Alice(), userInput("Note it in the west.")); err != nil || o.Final == nil {
		t.Fatalf("%+v, %v", o, err)
	}
	if e, w := crmtest.Notes(t, east, "D-2001", "west only"), crmtest.Notes(t, west, "D-2001", "west only"); e != 0 || w != 1 {
		t.Errorf("notes: east %d, west %d", e, w)
	}
}

// TestChatDeferredLoading: Chat Completions has no deferred loading, so
// the loop offers get_contact and the fallback search tool; the model
// searches, the next request offers what it found, and a gated call of a
// found tool pauses; a fresh loop, resumed from the pause's conversation,
// offers the same found tools, and the call is made once. The scripted
// server refuses a call of a tool the request does not offer.
func TestChatDeferredLoading(t *testing.T) {
	url := crmtest.Server(t)
	dir := t.TempDir()
	const note = "Found by the fallback."
	loading := &agent.Loading{Always: agent.AlwaysNamed("get_contact")}
	offered := func(req *request) []string {
		var out []string
		for _, tl := range req.Tools {
			out = append(out, tl.Function.Name)
		}
		return out
	}
	m, svc := newModel(t,
		func(t *testing.T, req *request) reply {
			if got := strings.Join(offered(req), " "); got != "search_tools get_contact" {
				t.Errorf("first turn offers %s", got)
			}
			return reply{calls: [][3]string{{"call_1", "search_tools", `{"query":"update a deal"}`}}}
		},
		func(t *testing.T, req *request) reply {
			r := toolResult(t, req, "call_1")
			if !strings.Contains(r, `"name":"update_deal"`) || !strings.Contains(r, `"additionalProperties":false`) {
				t.Errorf("search result: %s", r)
			}
			if got := strings.Join(offered(req), " "); !strings.Contains(got, "update_deal") || strings.Contains(got, "send_email") {
				t.Errorf("second turn offers %s", got)
			}
			return reply{calls: [][3]string{{"call_2", "update_deal", `{"deal_id":"D-2001","note":"` + note + `","stage":null,"amount":null}`}}}
		},
		func(t *testing.T, req *request) reply {
			if got := strings.Join(offered(req), " "); !strings.Contains(got, "update_deal") {
				t.Errorf("the resumed loop offers %s", got)
			}
			if r := toolResult(t, req, "call_2"); !strings.Contains(r, "alice: "+note) {
				t.Errorf("update_deal: %s", r)
			}
			return reply{text: "Noted."}
		})
	conn1 := crmtest.Conn(t, url)
	loop1 := newLoop(svc, newSet(t, agent.DialectStrict, agent.Source{Tools: crmtest.Toolset(t, conn1, crmtest.FileGate(t, dir))}), true)
	loop1.Defer = loading
	o, err := loop1.Run(crmtest.Alice(), ask("Note it on D-2001."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	stored, _ := json.Marshal(o.Pause)

	conn2 := crmtest.Conn(t, url)
	gate2 := crmtest.FileGate(t, dir)
	s2 := newSet(t, agent.DialectStrict, agent.Source{Tools: crmtest.Toolset(t, conn2, gate2)})
	loop2 := newLoop(svc, s2, false)
	loop2.Defer = loading
	p, _ := agent.ParsePause(stored)
	as, err := p.Approvals(crmtest.Alice(), s2)
	if err != nil || len(as) != 1 || as[0].Tool != "update_deal" {
		t.Fatalf("approvals %+v, %v", as, err)
	}
	if err := gate2.Approve(context.Background(), as[0].ID, as[0].Digest); err != nil {
		t.Fatal(err)
	}
	if o, err = loop2.Resume(crmtest.Alice(), p); err != nil || final(o) != "Noted." || m.requests() != 3 {
		t.Fatalf("resume: %+v, %v", o, err)
	}
	if n := crmtest.Notes(t, conn2, "D-2001", note); n != 1 {
		t.Errorf("%d notes, want 1", n)
	}
}
