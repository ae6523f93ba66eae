package snapshot

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgen/mcpgen/internal/testserver"
)

// BenchmarkSnapshotEverything compares a full capture of
// server-everything over stdio (raw tap, every list, every page) with the
// floor: a bare mcp-go initialize + tools/list against the same server.
// Both start the node process each time, which dominates.
func BenchmarkSnapshotEverything(b *testing.B) {
	node, script, _, err := testserver.Everything()
	if err != nil {
		b.Skip(err)
	}
	b.Run("capture", func(b *testing.B) {
		src := Source{ID: "everything", Transport: Stdio, Command: node, Args: []string{script, "stdio"}}
		for b.Loop() {
			if _, err := Capture(context.Background(), src, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare-list", func(b *testing.B) {
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
			c := client.NewClient(transport.NewStdio(node, nil, script, "stdio"))
			if err := c.Start(ctx); err != nil {
				b.Fatal(err)
			}
			if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
				b.Fatal(err)
			}
			if _, err := c.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
				b.Fatal(err)
			}
			c.Close()
			cancel()
		}
	})
}
