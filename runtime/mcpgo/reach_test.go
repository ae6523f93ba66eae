package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// The reach server is an mcp-go server for the protocol's newer parts:
// tasks (a tool that runs only as a task, one that may, one whose task
// fails), caching hints on lists, progress, and a mode that speaks one
// older protocol version only. Over stdio it runs as this test binary
// (MCPGO_FIXTURE=reach, options as arguments); over HTTP
// in the test process, behind a real listener.

type reachOpts struct {
	version string // the one version the server speaks; "" for all
	ttl     string // ttlMs of list results ("" for mcp-go's default)
	scope   string // cacheScope of list results
}

// reachStats counts what the HTTP server saw.
type reachStats struct {
	lists                atomic.Int64 // tools/list requests
	inits, deletes, gets atomic.Int64
	mu                   sync.Mutex
	auth                 []string // Authorization of every tasks/* request and task start
}

func (s *reachStats) saw(method, auth string) {
	if strings.HasPrefix(method, "tasks/") || method == "tools/call" {
		s.mu.Lock()
		s.auth = append(s.auth, method+" "+auth)
		s.mu.Unlock()
	}
}

type reachAuthKey struct{}

func reachServer(o reachOpts, st *reachStats) *server.MCPServer {
	hooks := &server.Hooks{}
	hooks.AddBeforeListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest) {
		if st != nil {
			st.lists.Add(1)
		}
	})
	if o.version != "" {
		// An older server: no server/discover, and its own version
		// whatever the client asks for.
		hooks.AddOnRequestInitialization(func(_ context.Context, _ any, message any) error {
			if b, ok := message.(json.RawMessage); ok && strings.Contains(string(b), mcp.MetaKeyProtocolVersion) {
				return errors.New("unknown method")
			}
			return nil
		})
		hooks.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, r *mcp.InitializeResult) {
			r.ProtocolVersion = o.version
		})
	}
	opts := []server.ServerOption{server.WithToolCapabilities(true), server.WithTaskCapabilities(true, true, true), server.WithHooks(hooks)}
	if o.ttl != "" {
		ttl, _ := strconv.ParseInt(o.ttl, 10, 64)
		opts = append(opts, server.WithMethodCacheHints(mcp.MethodToolsList, ttl, mcp.CacheScope(o.scope)))
	}
	opts = append(opts, server.WithToolFilter(func(ctx context.Context, ts []mcp.Tool) []mcp.Tool {
		// A principal-dependent list: "admin" only for the admin's token.
		if a, _ := ctx.Value(reachAuthKey{}).(string); a == "Bearer tok-admin" {
			return ts
		}
		out := ts[:0:0]
		for _, t := range ts {
			if t.Name != "admin" {
				out = append(out, t)
			}
		}
		return out
	}))
	s := server.NewMCPServer("reach", "1.0.0", opts...)
	taskTool := func(name string, support mcp.TaskSupport) mcp.Tool {
		t := mcp.NewToolWithRawSchema(name, "reach tool "+name, json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"},"text":{"type":"string"}}}`))
		t.RawOutputSchema = json.RawMessage(`{"type":"object","properties":{"echo":{"type":"string"},"auth":{"type":"string"}},"required":["echo"]}`)
		t.Execution = &mcp.ToolExecution{TaskSupport: support}
		return t
	}
	work := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// mcp-go runs a task on the request's context, which ends when the
		// start is answered: the work goes on without it.
		ctx = context.WithoutCancel(ctx)
		ms := req.GetInt("ms", 300)
		if tok := req.Params.Meta; tok != nil && tok.ProgressToken != nil {
			_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
				map[string]any{"progressToken": tok.ProgressToken, "progress": 1, "total": 2, "message": "half way"})
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		auth := req.Header.Get("Authorization")
		if a, _ := ctx.Value(reachAuthKey{}).(string); a != "" {
			auth = a
		}
		out := map[string]any{"echo": req.GetString("text", ""), "auth": auth}
		b, _ := json.Marshal(out)
		return mcp.NewToolResultStructured(out, string(b)), nil
	}
	s.AddTaskTool(taskTool("slow", mcp.TaskSupportRequired), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		r, err := work(ctx, req)
		if err != nil {
			return nil, err
		}
		out := &mcp.CreateTaskResult{}
		out.Content, out.StructuredContent = r.Content, r.StructuredContent
		return out, nil
	})
	s.AddTaskTool(taskTool("doomed", mcp.TaskSupportRequired), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		time.Sleep(50 * time.Millisecond)
		return nil, errors.New("the reactor is out of fuel")
	})
	s.AddTool(taskTool("either", mcp.TaskSupportOptional), work)
	s.AddTool(mcp.NewToolWithRawSchema("admin", "only for the admin", json.RawMessage(`{"type":"object"}`)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	// tick sends n progress notifications and answers at once, for the
	// last notification's race with the answer.
	s.AddTool(mcp.NewToolWithRawSchema("tick", "progress then answer", json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := req.GetInt("n", 3)
			if m := req.Params.Meta; m != nil && m.ProgressToken != nil {
				for i := 1; i <= n; i++ {
					_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
						map[string]any{"progressToken": m.ProgressToken, "progress": i, "total": n})
				}
			}
			return mcp.NewToolResultText("ticked"), nil
		})
	// lists says how many tools/list requests the server has had.
	var lists atomic.Int64
	hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) { lists.Add(1) })
	s.AddTool(mcp.NewToolWithRawSchema("lists", "how many tools/list requests", json.RawMessage(`{"type":"object"}`)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strconv.FormatInt(lists.Load(), 10)), nil
		})
	return s
}

func reachMain() int {
	// The options come as arguments: environment values are scrubbed from
	// the client's messages, and a version is long enough to be.
	var o reachOpts
	for _, a := range os.Args[1:] {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "version":
			o.version = v
		case "ttl":
			o.ttl = v
		case "scope":
			o.scope = v
		}
	}
	if err := server.ServeStdio(reachServer(o, nil)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// reachStdio is a Conn to the reach server as a process of its own.
func reachStdio(o reachOpts, opts ...mcpgo.Option) *mcpgo.Conn {
	args := []string{"version=" + o.version, "ttl=" + o.ttl, "scope=" + o.scope}
	return mcpgo.Stdio(os.Args[0], args, append([]mcpgo.Option{mcpgo.WithEnv("MCPGO_FIXTURE=reach"), mcpgo.WithName("reach")}, opts...)...)
}

// reachHTTP serves the reach server over streamable HTTP on a real
// listener, counting what it sees.
func reachHTTP(t testing.TB, o reachOpts) (string, *reachStats) {
	st := &reachStats{}
	s := reachServer(o, st)
	var hopts []server.StreamableHTTPOption
	if o.version != "" {
		hopts = append(hopts, server.WithStreamableHTTPProtocolVersions(o.version))
	}
	hopts = append(hopts, server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		return context.WithValue(ctx, reachAuthKey{}, r.Header.Get("Authorization"))
	}))
	h := server.NewStreamableHTTPServer(s, hopts...)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			st.deletes.Add(1)
		case http.MethodGet:
			st.gets.Add(1)
		case http.MethodPost:
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(strings.NewReader(string(b)))
			var m struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(b, &m)
			if m.Method == "initialize" {
				st.inits.Add(1)
			}
			st.saw(m.Method, r.Header.Get("Authorization"))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", st
}

// reachConns are the reach server over stdio and HTTP.
func reachConns(t *testing.T, o reachOpts, opts ...mcpgo.Option) map[string]*mcpgo.Conn {
	url, _ := reachHTTP(t, o)
	out := map[string]*mcpgo.Conn{
		"stdio": reachStdio(o, opts...),
		"http":  mcpgo.StreamableHTTP(url, append([]mcpgo.Option{mcpgo.WithName("reach")}, opts...)...),
	}
	for _, c := range out {
		t.Cleanup(func() { c.Close() })
	}
	return out
}

// A pin is a pin: against a server that speaks only 2024-11-05, a
// connection pinned to a newer version fails naming both versions, over
// stdio and HTTP, and one pinned to 2024-11-05 works.
func TestPinnedVersionIsKept(t *testing.T) {
	for _, pin := range []string{"2025-06-18", "2025-11-25", "2026-07-28", "2024-11-05"} {
		for kind, c := range reachConns(t, reachOpts{version: "2024-11-05"}, mcpgo.WithProtocolVersion(pin)) {
			t.Run(kind+"/"+pin, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				_, err := c.ToolNames(ctx)
				if pin == "2024-11-05" {
					if err != nil || c.ProtocolVersion() != pin {
						t.Fatalf("pinned to the server's own version: %v (version %q)", err, c.ProtocolVersion())
					}
					return
				}
				var vm *mcpgo.VersionMismatchError
				if !errors.As(err, &vm) || vm.Pinned != pin || vm.Server != "2024-11-05" {
					t.Fatalf("want a VersionMismatchError for pin %s, got %v", pin, err)
				}
				if !strings.Contains(err.Error(), pin) || !strings.Contains(err.Error(), "2024-11-05") {
					t.Errorf("the error names only one version: %v", err)
				}
			})
		}
	}
}

// One handshake per connection to an older streamable-HTTP server,
// negotiated or pinned, and the standalone GET stream still opens.
func TestOneHandshakeToOlderHTTPServer(t *testing.T) {
	for _, pin := range []string{"", "2025-11-25"} {
		t.Run("pin="+pin, func(t *testing.T) {
			url, st := reachHTTP(t, reachOpts{version: "2025-11-25"})
			var opts []mcpgo.Option
			if pin != "" {
				opts = append(opts, mcpgo.WithProtocolVersion(pin))
			}
			c := mcpgo.StreamableHTTP(url, opts...)
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := c.CallTool(ctx, "tick", json.RawMessage(`{"n":0}`)); err != nil {
				t.Fatal(err)
			}
			if c.ProtocolVersion() != "2025-11-25" {
				t.Fatalf("version %q", c.ProtocolVersion())
			}
			if n, d := st.inits.Load(), st.deletes.Load(); n != 1 || d != 0 {
				t.Errorf("%d initialize requests and %d DELETEs before the first call, want 1 and 0", n, d)
			}
			deadline := time.Now().Add(5 * time.Second)
			for st.gets.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if st.gets.Load() == 0 {
				t.Error("the standalone GET stream was not opened")
			}
		})
	}
}

// ReachIn is the reach tools' input.
type ReachIn struct {
	MS   int    `json:"ms,omitempty"`
	Text string `json:"text,omitempty"`
}

func (*ReachIn) Validate() error { return nil }

// ReachOut is the reach tools' output.
type ReachOut struct {
	Echo string `json:"echo"`
	Auth string `json:"auth"`
}

func (*ReachOut) Validate() error { return nil }

func reachDesc(name string, ts mcpruntime.TaskSupport) *mcpruntime.Descriptor {
	return &mcpruntime.Descriptor{Name: name, GoName: name, Annotations: mcpruntime.Annotations{ReadOnly: true},
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"},"text":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"echo":{"type":"string"},"auth":{"type":"string"}},"required":["echo"]}`),
		TaskSupport:  ts}
}

var _ = mcpruntime.TaskRequired
