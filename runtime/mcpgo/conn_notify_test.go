package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
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

// Cancelling a call's context tells the server (notifications/cancelled),
// which stops the handler: over stdio (mcp-go sends it) and over
// streamable HTTP on older protocols (where closing the request does not
// cancel it and mcp-go sends nothing).
func TestCancelReachesTheServer(t *testing.T) {
	for _, st := range []struct {
		name string
		dial func(t *testing.T, s *server.MCPServer) *mcpgo.Conn
	}{
		{"http 2025-11-25", func(t *testing.T, s *server.MCPServer) *mcpgo.Conn {
			ts := servertest.NewTestStreamableHTTPServer(s, server.WithStreamableHTTPProtocolVersions(mcp.ProtocolVersion20251125))
			t.Cleanup(ts.Close)
			return mcpgo.StreamableHTTP(ts.URL + "/mcp")
		}},
	} {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			started, stopped := make(chan struct{}), make(chan struct{})
			s := server.NewMCPServer("slow", "1", server.WithToolCapabilities(false))
			s.AddTool(mcp.NewToolWithRawSchema("wait", "waits until cancelled", json.RawMessage(`{"type":"object"}`)),
				func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					close(started)
					<-ctx.Done()
					close(stopped)
					return nil, ctx.Err()
				})
			c := st.dial(t, s)
			t.Cleanup(func() { c.Close() })
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() { _, err := c.CallTool(ctx, "wait", json.RawMessage(`{}`)); errc <- err }()
			bound, stop := context.WithTimeout(context.Background(), 30*time.Second)
			defer stop()
			select {
			case <-started:
			case <-bound.Done():
				t.Fatal("the call never reached the server")
			}
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call: %v", err)
			}
			select {
			case <-stopped:
			case <-bound.Done():
				t.Fatal("the server's handler was never cancelled: no notifications/cancelled arrived")
			}
		})
	}
}

// Over SSE mcp-go's client sends notifications/cancelled itself; the test
// server's SSE handler does not stop the handler on it, so what is checked
// is that the notification is sent.
func TestCancelOverSSE(t *testing.T) {
	started := make(chan struct{})
	s := server.NewMCPServer("slow", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewToolWithRawSchema("wait", "waits", json.RawMessage(`{"type":"object"}`)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			select {
			case <-ctx.Done():
			case <-time.After(30 * time.Second):
			}
			return mcp.NewToolResultText("late"), nil
		})
	sse := server.NewSSEServer(s)
	cancelled := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			if bytes.Contains(b, []byte(`"notifications/cancelled"`)) {
				once.Do(func() { close(cancelled) })
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		sse.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	server.WithBaseURL(ts.URL)(sse)
	c := mcpgo.SSE(ts.URL + "/sse")
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.CallTool(ctx, "wait", json.RawMessage(`{}`)); errc <- err }()
	bound, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	select {
	case <-started:
	case <-bound.Done():
		t.Fatal("the call never reached the server")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	select {
	case <-cancelled:
	case <-bound.Done():
		t.Fatal("no notifications/cancelled was sent")
	}
}

// Listing follows every page.
func TestConnListsEveryPage(t *testing.T) {
	s := server.NewMCPServer("paged", "1", server.WithToolCapabilities(false), server.WithPaginationLimit(2))
	var want []string
	for i := range 7 {
		name := "tool" + string(rune('a'+i))
		want = append(want, name)
		s.AddTool(mcp.NewToolWithRawSchema(name, name, json.RawMessage(`{"type":"object"}`)),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			})
	}
	ts := servertest.NewTestStreamableHTTPServer(s)
	t.Cleanup(ts.Close)
	c := mcpgo.StreamableHTTP(ts.URL + "/mcp")
	t.Cleanup(func() { c.Close() })
	names, err := c.ToolNames(context.Background())
	if err != nil || !slices.Equal(names, want) {
		t.Errorf("ToolNames = %v, %v; want %v", names, err, want)
	}
}

// hiddenRT wraps a RoundTripper and, like most wrappers, does not pass
// CloseIdleConnections on.
type hiddenRT struct{ rt http.RoundTripper }

func (h hiddenRT) RoundTrip(r *http.Request) (*http.Response, error) { return h.rt.RoundTrip(r) }

// Closing a Conn closes its HTTP connections even when WithRoundTripper
// wrapped the transport in something that hides CloseIdleConnections.
func TestCloseClosesWrappedConnections(t *testing.T) {
	s := server.NewMCPServer("plain", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewToolWithRawSchema("noop", "noop", json.RawMessage(`{"type":"object"}`)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	var mu sync.Mutex
	open := 0
	allClosed := make(chan struct{}, 64)
	ts := httptest.NewUnstartedServer(server.NewStreamableHTTPServer(s, server.WithStreamableHTTPProtocolVersions(mcp.ProtocolVersion20251125)))
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch st {
		case http.StateNew:
			open++
		case http.StateClosed, http.StateHijacked:
			open--
			if open == 0 {
				allClosed <- struct{}{}
			}
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	c := mcpgo.StreamableHTTP(ts.URL+"/mcp", mcpgo.WithRoundTripper(func(rt http.RoundTripper) http.RoundTripper { return hiddenRT{rt} }))
	if _, err := c.ToolNames(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// Every connection closes, idle ones included, not just the stream.
	for {
		select {
		case <-allClosed:
			mu.Lock()
			n := open
			mu.Unlock()
			if n == 0 {
				return
			}
		case <-time.After(10 * time.Second):
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("%d of the Conn's connections stayed open after Close", open)
		}
	}
}
