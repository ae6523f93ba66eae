package mcpgo_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/server/servertest"

	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// A Conn hears tools/list_changed on every transport: over streamable HTTP
// that takes the server-to-client stream (subscriptions/listen on
// 2026-07-28, the standalone GET stream on older protocols), which a Conn
// opens itself.
func TestConnHearsToolListChanges(t *testing.T) {
	type setup struct {
		name string
		dial func(t *testing.T, s *server.MCPServer, opts ...mcpgo.Option) *mcpgo.Conn
	}
	for _, st := range []setup{
		{"http modern", func(t *testing.T, s *server.MCPServer, opts ...mcpgo.Option) *mcpgo.Conn {
			ts := servertest.NewTestStreamableHTTPServer(s)
			t.Cleanup(ts.Close)
			return mcpgo.StreamableHTTP(ts.URL+"/mcp", opts...)
		}},
		{"http 2025-11-25", func(t *testing.T, s *server.MCPServer, opts ...mcpgo.Option) *mcpgo.Conn {
			ts := servertest.NewTestStreamableHTTPServer(s, server.WithStreamableHTTPProtocolVersions(mcp.ProtocolVersion20251125))
			t.Cleanup(ts.Close)
			return mcpgo.StreamableHTTP(ts.URL+"/mcp", opts...)
		}},
		{"sse", func(t *testing.T, s *server.MCPServer, opts ...mcpgo.Option) *mcpgo.Conn {
			ts := servertest.NewTestServer(s)
			t.Cleanup(ts.Close)
			return mcpgo.SSE(ts.URL+"/sse", opts...)
		}},
		{"inprocess", func(t *testing.T, s *server.MCPServer, opts ...mcpgo.Option) *mcpgo.Conn {
			return mcpgo.InProcess(s, opts...)
		}},
	} {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s := server.NewMCPServer("changing", "1", server.WithToolCapabilities(true))
			add := func(name string) {
				s.AddTool(mcp.NewToolWithRawSchema(name, name, json.RawMessage(`{"type":"object"}`)),
					func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						return mcp.NewToolResultText("ok"), nil
					})
			}
			add("first")
			heard := make(chan struct{}, 8)
			c := st.dial(t, s, mcpgo.WithNotificationHandler(func(n mcp.JSONRPCNotification) {
				if n.Method == string(mcp.MethodNotificationToolsListChanged) {
					heard <- struct{}{}
				}
			}))
			t.Cleanup(func() { c.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if names, err := c.ToolNames(ctx); err != nil || !slices.Equal(names, []string{"first"}) {
				t.Fatalf("ToolNames = %v, %v", names, err)
			}
			// The listen stream may still be opening: add tools until one
			// change is heard (each addition notifies).
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			n := 0
		wait:
			for {
				select {
				case <-heard:
					break wait
				case <-tick.C:
					n++
					add("second" + string(rune('a'+n%26)))
				case <-ctx.Done():
					t.Fatal("no tools/list_changed heard")
				}
			}
			names, err := c.ToolNames(ctx)
			if err != nil || !slices.Contains(names, "first") || len(names) < 2 {
				t.Errorf("after the change: ToolNames = %v, %v (the cached list was not dropped)", names, err)
			}
		})
	}
}
