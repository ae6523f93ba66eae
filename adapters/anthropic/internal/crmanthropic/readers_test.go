package crmanthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
	"github.com/mcpgen/mcpgen/runtime/filestore"
)

// TestResourceReaders: the templates the example's config makes tools (one
// line each) reach the model through the adapter like any tool, and a lean
// source renders the typed read for it.
func TestResourceReaders(t *testing.T) {
	conn := crmtest.Conn(t, crmtest.Server(t))
	ts, err := mcpruntime.NewToolset(crmapi.Readers(conn, mcpruntime.ReadIdentity(mcpruntime.ContextPrincipal))...)
	if err != nil {
		t.Fatal(err)
	}
	s := set(t, agent.Source{Tools: ts, Rendering: mcpruntime.RenderLean})
	_, svc := newModel(t,
		func(t *testing.T, req *request) []block {
			var names []string
			for _, tool := range req.Tools {
				names = append(names, tool.Name)
			}
			if got := strings.Join(names, " "); got != "deal_summary read_deal_contract read_pipeline_chart" {
				t.Errorf("tools offered: %s", got)
			}
			return []block{toolUse("tu_1", "read_deal_contract", `{"deal_id":"D-2001"}`), toolUse("tu_2", "deal_summary", `{"deal_id":"D-2002"}`),
				toolUse("tu_3", "read_pipeline_chart", `{}`), toolUse("tu_4", "read_deal_contract", `{"deal_id":"../D-2001"}`)}
		},
		func(t *testing.T, req *request) []block {
			if r := result(t, req, "tu_1"); r.IsError || !strings.HasPrefix(resultText(r), "# Contract D-2001") {
				t.Errorf("contract: %+v", r)
			}
			if r := result(t, req, "tu_2"); r.IsError || !strings.Contains(resultText(r), "id: D-2002\n") {
				t.Errorf("summary: %+v", r)
			}
			chart := result(t, req, "tu_3")
			images := 0
			for _, c := range chart.Content {
				if c.Type == "image" && c.Source.MediaType == "image/png" {
					images++
				}
			}
			if chart.IsError || images != 1 {
				t.Errorf("chart: %+v", chart)
			}
			if r := result(t, req, "tu_4"); !r.IsError || strings.Contains(resultText(r), "# Contract") {
				t.Errorf("encoded value: %+v", r)
			}
			return text("Read.")
		})
	o, err := newLoop(t, svc, s, false).Run(crmtest.Alice(), ask("Read D-2001's contract."))
	if err != nil {
		t.Fatal(err)
	}
	if finalText(o) != "Read." {
		t.Errorf("final %q", finalText(o))
	}
}

// TestGatedReaderPauses: a reader whose reads wait for a person pauses the
// loop like a gated tool; the pause goes through JSON into a fresh loop of
// another process (its own connection and gate over the same file store),
// shows the store's approval there, is refused when edited, and resumes
// once: the model gets the contract, and a second resume asks it nothing.
func TestGatedReaderPauses(t *testing.T) {
	url := crmtest.Server(t)
	dir := t.TempDir()
	m, svc := newModel(t,
		func(t *testing.T, req *request) []block {
			return []block{toolUse("tu_1", "read_deal_contract", `{"deal_id":"D-2001"}`)}
		},
		func(t *testing.T, req *request) []block {
			if r := result(t, req, "tu_1"); r.IsError || !strings.HasPrefix(resultText(r), "# Contract D-2001") {
				t.Errorf("contract: %+v", r)
			}
			return text("Read.")
		})
	newSet := func() (*agent.Set, *mcpruntime.Gate) {
		store, err := filestore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		g := mcpruntime.NewGate(store, mcpruntime.GateTool("read_deal_contract", mcpruntime.GateAlways))
		conn := crmtest.Conn(t, url)
		ts, err := mcpruntime.NewToolset(crmapi.NewDealContractReader(conn, mcpruntime.ReadIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithToolOptions(mcpruntime.WithGate(g))))
		if err != nil {
			t.Fatal(err)
		}
		return set(t, agent.Source{Tools: ts}), g
	}
	s1, _ := newSet()
	o, err := newLoop(t, svc, s1, true).Run(crmtest.Alice(), ask("Read D-2001's contract."))
	if err != nil || o.Pause == nil {
		t.Fatalf("no pause: %+v, %v", o, err)
	}
	stored, err := json.Marshal(o.Pause)
	if err != nil {
		t.Fatal(err)
	}

	s2, gate2 := newSet()
	loop2 := newLoop(t, svc, s2, false)
	parse := func(b []byte) *agent.Pause {
		p, err := agent.ParsePause(b)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if o, err := loop2.Resume(crmtest.Alice(), parse(stored)); err != nil || o.Pause == nil || m.requests() != 1 {
		t.Fatalf("undecided resume: %+v, %v (%d requests)", o, err, m.requests())
	}
	as, err := parse(stored).Approvals(crmtest.Alice(), s2)
	if err != nil || len(as) != 1 || as[0].Tool != "read_deal_contract" || string(as[0].Args) != `{"deal_id":"D-2001"}` || as[0].Principal != "alice" {
		t.Fatalf("approvals: %+v, %v", as, err)
	}
	if err := gate2.Approve(context.Background(), as[0].ID, as[0].Digest); err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(stored, []byte(`"deal_id":"D-2001"`), []byte(`"deal_id":"D-2002"`), 1)
	if bytes.Equal(edited, stored) {
		t.Fatalf("nothing edited in %s", stored)
	}
	if o, err := loop2.Resume(crmtest.Alice(), parse(edited)); !errors.Is(err, agent.ErrPauseAltered) || o != nil {
		t.Fatalf("edited resume: %+v, %v", o, err)
	}
	if o, err := loop2.Resume(crmtest.Alice(), parse(stored)); err != nil || o.Pause != nil || finalText(o) != "Read." {
		t.Fatalf("resume: %+v, %v", o, err)
	}
	if o, err := newLoop(t, svc, s1, true).Resume(crmtest.Alice(), parse(stored)); !errors.Is(err, agent.ErrPauseUsed) || o != nil {
		t.Errorf("second resume: %+v, %v", o, err)
	}
	if m.requests() != 2 {
		t.Errorf("%d model requests, want 2", m.requests())
	}
}
