package mcpgo_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// A tools/call result asking for input (2026-07-28's multi round-trip)
// still reaches mcp-go, which retries with the server's state: the
// connection hands mcp-go an empty result only for final answers, which
// it reads itself.
func TestCallToolMultiRoundTrip(t *testing.T) {
	s := server.NewMCPServer("mrtr", "1.0", server.WithToolCapabilities(false))
	var calls atomic.Int32
	s.AddTool(mcp.NewTool("slow"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		calls.Add(1)
		if req.Params.RequestState != "again" {
			r := &mcp.CallToolResult{}
			r.ResultType = mcp.ResultTypeInputRequired
			r.RequestState = "again"
			return r, nil
		}
		return mcp.NewToolResultText("done"), nil
	})
	conn := mcpgo.InProcess(s)
	defer conn.Close()
	res, err := conn.CallTool(context.Background(), "slow", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 || len(res.Content) != 1 || res.Content[0].Text != "done" {
		t.Fatalf("after %d calls: %+v", calls.Load(), res)
	}
}
