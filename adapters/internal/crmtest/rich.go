package crmtest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// PDF is the PDF the rich server embeds in export_report's result.
var PDF = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

// LogLine is one line of the long text resource export_report embeds
// (crm://reports/q3.log, 2,000 lines of it: 50,000 bytes).
const LogLine = "2026-09-30 deal D-2001 stage proposal amount 1200\n"

// Rich starts an MCP server over streamable HTTP, on a real listener,
// whose one tool, export_report, answers with embedded resources of every
// kind: a PDF blob, a text resource longer than agent.MaxResourceText, a
// short text resource after it, and a blob of no type a provider shows.
// It returns a connection to it.
func Rich(t testing.TB) *mcpgo.Conn {
	t.Helper()
	s := server.NewMCPServer("rich", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewToolWithRawSchema("export_report", "Export the quarter's report.", json.RawMessage(`{"type":"object","properties":{}}`)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewTextContent("Report ready."),
				mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "crm://reports/q3.pdf", MIMEType: "application/pdf", Blob: base64.StdEncoding.EncodeToString(PDF)}),
				mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "crm://reports/q3.log", MIMEType: "text/plain", Text: strings.Repeat(LogLine, 2000)}),
				mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "crm://reports/q3-notes.txt", MIMEType: "text/plain", Text: "Notes."}),
				mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "crm://reports/q3.bin", MIMEType: "application/octet-stream", Blob: base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 3})}),
			}}, nil
		})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	c := mcpgo.StreamableHTTP(srv.URL+"/mcp", mcpgo.WithName("rich"))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

type reportInput struct{}

func (*reportInput) Validate() error { return nil }

var reportDesc = &mcpruntime.Descriptor{Name: "export_report", Description: "Export the quarter's report.",
	Annotations: mcpruntime.Annotations{ReadOnly: true, Idempotent: true}, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}

// RichToolset is export_report over c.
func RichToolset(t testing.TB, c mcpruntime.Caller) *mcpruntime.Toolset {
	t.Helper()
	ts, err := mcpruntime.NewToolset(mcpruntime.NewTool[reportInput, mcpruntime.NoOutput](reportDesc, c))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
