package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// olderBank is a live server of an older release than the bindings: it
// offers balance, not move.
func olderBank(t *testing.T) *mcpgo.Conn {
	s := mcpserver.NewMCPServer("bank", "0.9", mcpserver.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("balance"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("12 EUR"), nil
	})
	c := mcpgo.InProcess(s, mcpgo.WithName("bank"))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// A bound tool the live server does not offer is a failure the model can
// read, listing what it may call instead, not an error ending the loop;
// the same for an approved call resumed after the server dropped it.
func TestToolTheServerLacks(t *testing.T) {
	conn := olderBank(t)
	g := mcpruntime.NewGate(mcpruntime.NewMemoryStore())
	ro := &mcpruntime.Descriptor{Name: "balance", Annotations: mcpruntime.Annotations{ReadOnly: true}, InputSchema: json.RawMessage(`{"type":"object"}`)}
	s := mustSet(t,
		Source{Prefix: "bank", Tools: toolset(t,
			mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](moveDesc, conn),
			mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](ro, conn))},
		Source{Prefix: "gated", Tools: toolset(t, mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](moveDesc, conn, mcpruntime.WithGate(g)))})
	res, pause, err := s.DispatchAll(alice, []Call{
		{ID: "c1", Name: "bank__move", Arguments: json.RawMessage(`{"amount":1}`)},
		{ID: "c2", Name: "bank__balance"},
	})
	if err != nil || pause != nil || len(res) != 2 {
		t.Fatalf("DispatchAll = %+v, %v, %v", res, pause, err)
	}
	if r := res[0]; !r.IsError || r.Text != `The tool "bank__move" is not available: its server does not offer it now. Available tools: bank__balance, gated__move.` {
		t.Errorf("move: %+v", r)
	}
	if r := res[1]; r.IsError || r.Text != "12 EUR" {
		t.Errorf("balance: %+v", r)
	}
	_, pause, err = s.DispatchAll(alice, []Call{{ID: "c3", Name: "gated__move", Arguments: json.RawMessage(`{"amount":2}`)}})
	if err != nil || pause == nil {
		t.Fatalf("gated: %+v, %v", pause, err)
	}
	a := pause.Results[0].Pending
	if err := g.Approve(context.Background(), a.ID, a.Digest); err != nil {
		t.Fatal(err)
	}
	res, _, err = s.Resume(alice, pause)
	if err != nil || len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Text, "was not made: its server does not offer the tool now") {
		t.Errorf("resume: %+v, %v", res, err)
	}
}
