package mcpgo_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// The connection lists tools for their names and shows mcp-go only the
// ones with x-mcp-header annotations, so a call of another tool does not
// pay for header mirroring: an annotated parameter must still reach the
// server as its Mcp-Param-* header (SEP-2243), and every tool must still
// be listed and callable.
func TestParamHeadersAfterListing(t *testing.T) {
	s := server.NewMCPServer("headers", "1.0", server.WithToolCapabilities(false))
	echo := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	s.AddTool(mcp.NewToolWithRawSchema("routed", "", json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)), echo)
	s.AddTool(mcp.NewToolWithRawSchema("plain", "", json.RawMessage(`{"type":"object","properties":{"region":{"type":"string"}}}`)), echo)
	var mu sync.Mutex
	seen := map[string]string{} // Mcp-Name → Mcp-Param-Region
	h := server.NewStreamableHTTPServer(s)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			mu.Lock()
			seen[r.Header.Get("Mcp-Name")] = r.Header.Get("Mcp-Param-Region")
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	conn := mcpgo.StreamableHTTP(ts.URL)
	defer conn.Close()
	ctx := context.Background()
	names, err := conn.ToolNames(ctx)
	if err != nil || !slices.Equal(names, []string{"plain", "routed"}) {
		t.Fatalf("ToolNames = %v, %v", names, err)
	}
	for _, tool := range names {
		if _, err := conn.CallTool(ctx, tool, json.RawMessage(`{"region":"emea"}`)); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("tools/call requests seen: %v (the connection does not speak 2026-07-28 here)", seen)
	}
	if seen["routed"] != "emea" {
		t.Errorf("the annotated parameter's header: %q, want emea", seen["routed"])
	}
	if seen["plain"] != "" {
		t.Errorf("a header for a tool without annotations: %q", seen["plain"])
	}
}
