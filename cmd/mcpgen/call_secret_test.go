package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type authHeader struct{}

// echoServer answers every tool with the Authorization header it got, in
// every place a result has room for it, as careless servers do.
func echoServer() *server.MCPServer {
	s := server.NewMCPServer("echo", "1.0.0", server.WithToolCapabilities(false))
	hdr := func(ctx context.Context) string { h, _ := ctx.Value(authHeader{}).(string); return h }
	open := []byte(`{"type":"object"}`)
	s.AddTool(mcp.NewToolWithRawSchema("echo", "echoes", open), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		h := hdr(ctx)
		return &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewTextContent("you sent " + h),
			mcp.NewImageContent(h, "image/"+h),
			mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "mem://" + h, MIMEType: h, Blob: h}),
		}}, nil
	})
	s.AddTool(mcp.NewToolWithRawSchema("echo_structured", "echoes", open), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultStructured(map[string]any{"authorization": hdr(ctx) + " <&>"}, "x"), nil
	})
	s.AddTool(mcp.NewToolWithRawSchema("echo_error", "echoes", open), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("refused " + hdr(ctx)), nil
	})
	s.AddTool(mcp.NewToolWithRawSchema("echo_rpc", "echoes", open), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("refused " + hdr(ctx))
	})
	return s
}

// mcpgen call prints what the server sent with every ${VAR} secret
// redacted, in results, failed results, errors and structured content.
func TestCallRedactsEchoedSecrets(t *testing.T) {
	const canary = "canary-7f3a<&>-SECRET" // with characters JSON escapes
	t.Setenv("MCPGEN_CALL_CANARY", canary)
	h := server.NewStreamableHTTPServer(echoServer(), server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		return context.WithValue(ctx, authHeader{}, r.Header.Get("Authorization"))
	}))
	ts := httptest.NewServer(h)
	defer ts.Close()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: echo
    http: {url: "`+ts.URL+`/mcp", headers: {Authorization: "Bearer ${MCPGEN_CALL_CANARY}"}}
`)
	for _, tool := range []string{"echo", "echo_structured", "echo_error", "echo_rpc"} {
		for _, args := range [][]string{
			{"call", "--config", cfg, "echo", tool},
			{"call", "--http", ts.URL + "/mcp", "--header", "Authorization=Bearer ${MCPGEN_CALL_CANARY}", tool},
		} {
			code, stdout, stderr := mcpgen(t, args...)
			if !strings.Contains(stdout+stderr, "[redacted]") {
				t.Errorf("%s: the server echoed nothing (exit %d), so this proves nothing:\n%s\n%s", tool, code, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, "canary-7f3a") {
				t.Errorf("%s: the secret was printed:\nstdout: %s\nstderr: %s", tool, stdout, stderr)
			}
		}
	}
}
