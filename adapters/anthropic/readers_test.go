package mcpanthropic_test

import (
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
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
