package mcpgo_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/server/servertest"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// metaEcho is a server whose tool, resource and prompt answer with the
// params._meta they received.
func metaEcho() *server.MCPServer {
	s := server.NewMCPServer("meta", "1.0.0", server.WithResourceCapabilities(false, false), server.WithPromptCapabilities(false))
	echo := func(m *mcp.Meta) string {
		b, _ := json.Marshal(m)
		return string(b)
	}
	s.AddTool(mcp.NewToolWithRawSchema("meta", "echoes _meta", json.RawMessage(emptyIn)), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(echo(req.Params.Meta)), nil
	})
	s.AddResource(mcp.NewResource("mem://meta", "meta"), func(_ context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, Text: echo(r.Params.Meta)}}, nil
	})
	s.AddPrompt(mcp.NewPrompt("meta"), func(_ context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("meta", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(echo(r.Params.Meta)))}), nil
	})
	return s
}

type traceKey struct{}

// TestMetaInjector: what the injector sets from the request's context
// reaches the server in params._meta of tools/call, resources/read and
// prompts/get, over streamable HTTP; the progress token the Conn sets is
// kept, and keys the runtime or the protocol owns cannot be overwritten.
func TestMetaInjector(t *testing.T) {
	ts := servertest.NewTestStreamableHTTPServer(metaEcho())
	t.Cleanup(ts.Close)
	inject := func(ctx context.Context, set func(k, v string)) {
		tp, _ := ctx.Value(traceKey{}).(string)
		set("traceparent", tp)
		set("progressToken", "forged")
		set("io.modelcontextprotocol/protocolVersion", "forged")
		set("dev.mcp/x", "forged")
	}
	c := mcpgo.StreamableHTTP(ts.URL+"/mcp", mcpgo.WithMetaInjector(inject))
	closeConn(t, c)
	ctx := context.WithValue(context.Background(), traceKey{}, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	check := func(what, got string, progress bool) {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal([]byte(got), &m); err != nil {
			t.Fatalf("%s: _meta %q: %v", what, got, err)
		}
		if m["traceparent"] != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" {
			t.Errorf("%s: traceparent %v", what, m["traceparent"])
		}
		for k, v := range m {
			if v == "forged" {
				t.Errorf("%s: the injector set reserved key %q", what, k)
			}
		}
		if tok, ok := m["progressToken"]; progress && (!ok || tok == "forged") {
			t.Errorf("%s: progress token %v", what, tok)
		}
	}

	progressed := mcpruntime.WithProgress(ctx, func(mcpruntime.Progress) {})
	res, err := c.CallTool(progressed, "meta", nil)
	if err != nil {
		t.Fatal(err)
	}
	check("tools/call", res.ModelText(), true)
	rr, err := c.ReadResource(ctx, "mem://meta")
	if err != nil {
		t.Fatal(err)
	}
	check("resources/read", rr.Contents[0].Text, false)
	pr, err := c.GetPrompt(ctx, "meta", nil)
	if err != nil {
		t.Fatal(err)
	}
	check("prompts/get", pr.Messages[0].Content.Text, false)

	u, _ := url.Parse(ts.URL)
	port, _ := strconv.Atoi(u.Port())
	want := mcpruntime.Endpoint{Transport: mcpruntime.TransportStreamableHTTP, Address: u.Hostname(), Port: port, ProtocolVersion: c.ProtocolVersion()}
	if got := c.Endpoint(); got != want || got.ProtocolVersion == "" {
		t.Errorf("endpoint %+v, want %+v", got, want)
	}
}
