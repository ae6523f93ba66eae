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
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgen/mcpgen/internal/testserver"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
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

// reachPickup is another process picking up a saved task: it waits for
// the task in $REACH_REF on $REACH_URL as alice and prints the echo.
func reachPickup() int {
	var ref mcpruntime.TaskRef
	if err := json.Unmarshal([]byte(os.Getenv("REACH_REF")), &ref); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c := mcpgo.StreamableHTTP(os.Getenv("REACH_URL"), mcpgo.WithName("reach"))
	defer c.Close()
	task, err := mcpruntime.NewTool[ReachIn, ReachOut](reachDesc("slow", mcpruntime.TaskRequired), c,
		mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)).TaskOf(ref)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(asAlice(context.Background()), 20*time.Second)
	defer cancel()
	res, err := task.Wait(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Print(res.Output.Echo)
	return 0
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
	s := reachServer(o, nil)
	// The tasks/get answers of 2026-07-28 get their outcome (see
	// testserver.ServeStdioInlining).
	if err := testserver.ServeStdioInlining(s, os.Stdin, os.Stdout); err != nil {
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
	inlining := testserver.InliningHandler(s, h)
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
		inlining.ServeHTTP(w, r)
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
	t.Parallel() // waits on processes and tasks, on servers of its own
	for _, pin := range []string{"2025-06-18", "2025-11-25", "2026-07-28", "2024-11-05"} {
		for kind, c := range reachConns(t, reachOpts{version: "2024-11-05"}, mcpgo.WithProtocolVersion(pin)) {
			if kind == "stdio" && pin == "2025-06-18" {
				continue // a process each costs; both generations are pinned on stdio
			}
			t.Run(kind+"/"+pin, func(t *testing.T) {
				t.Parallel()
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

// A pin to a version the session layer does not speak fails the
// connection before anything is sent, permanently, naming the versions it
// speaks: the HTTP server sees no request.
func TestUnknownPinRefused(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1); http.NotFound(w, r) }))
	defer srv.Close()
	for _, pin := range []string{"2025-13-45", "latest", " 2025-11-25"} {
		c := mcpgo.StreamableHTTP(srv.URL, mcpgo.WithProtocolVersion(pin))
		_, err := c.ToolNames(context.Background())
		c.Close()
		var uv *mcpgo.UnknownVersionError
		var perm *manager.PermanentError
		if !errors.As(err, &uv) || uv.Pinned != pin || !errors.As(err, &perm) {
			t.Fatalf("pin %q: want a permanent UnknownVersionError, got %v", pin, err)
		}
		if !strings.Contains(err.Error(), "2025-11-25, 2025-06-18") {
			t.Errorf("pin %q: the error does not list the versions spoken: %v", pin, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server saw %d requests", n)
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

// taskCases are the transports and protocol generations with tasks: both
// transports, pinned to 2025-11-25 and negotiated (2026-07-28).
func taskCases(t *testing.T) []struct {
	name string
	conn func(opts ...mcpgo.Option) *mcpgo.Conn
	st   *reachStats
	http bool
} {
	var out []struct {
		name string
		conn func(opts ...mcpgo.Option) *mcpgo.Conn
		st   *reachStats
		http bool
	}
	for _, pin := range []string{"2025-11-25", ""} {
		url, st := reachHTTP(t, reachOpts{})
		pinned := func(opts []mcpgo.Option) []mcpgo.Option {
			if pin != "" {
				opts = append(opts, mcpgo.WithProtocolVersion(pin))
			}
			return opts
		}
		label := pin
		if label == "" {
			label = "2026-07-28"
		}
		out = append(out, struct {
			name string
			conn func(opts ...mcpgo.Option) *mcpgo.Conn
			st   *reachStats
			http bool
		}{"stdio/" + label, func(opts ...mcpgo.Option) *mcpgo.Conn {
			c := reachStdio(reachOpts{}, pinned(opts)...)
			t.Cleanup(func() { c.Close() })
			return c
		}, nil, false}, struct {
			name string
			conn func(opts ...mcpgo.Option) *mcpgo.Conn
			st   *reachStats
			http bool
		}{"http/" + label, func(opts ...mcpgo.Option) *mcpgo.Conn {
			c := mcpgo.StreamableHTTP(url, pinned(append([]mcpgo.Option{mcpgo.WithName("reach")}, opts...))...)
			t.Cleanup(func() { c.Close() })
			return c
		}, st, true})
	}
	return out
}

func asAlice(ctx context.Context) context.Context {
	return mcpruntime.WithPrincipal(ctx, "alice", "tok-alice")
}

// A tool that runs only as a task: Call refuses it before anything is
// sent; Start starts it as the principal, whose token goes with the start
// and every poll; Wait returns the typed result; progress arrives; a
// failed task and a cancelled one say so; a saved handle is picked up by
// another connection where the protocol allows it.
func TestTaskLifecycle(t *testing.T) {
	t.Parallel() // waits on processes and tasks, on servers of its own
	for _, tc := range taskCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // mostly waiting on tasks, on servers of its own
			ctx, cancel := context.WithTimeout(asAlice(context.Background()), 30*time.Second)
			defer cancel()
			c := tc.conn()
			slow := mcpruntime.NewTool[ReachIn, ReachOut](reachDesc("slow", mcpruntime.TaskRequired), c, mcpruntime.WithIdentity(mcpruntime.ContextPrincipal))
			if _, err := slow.Call(ctx, ReachIn{Text: "no"}); !errors.Is(err, mcpruntime.ErrNotSent) || !strings.Contains(err.Error(), "only as a task") {
				t.Fatalf("Call of a required-task tool: %v", err)
			}
			var progress []string
			var pmu sync.Mutex
			pctx := mcpruntime.WithProgress(ctx, func(p mcpruntime.Progress) {
				pmu.Lock()
				progress = append(progress, p.Message)
				pmu.Unlock()
			})
			task, err := slow.Start(pctx, ReachIn{Text: "hi", MS: 150})
			if err != nil {
				t.Fatal(err)
			}
			ref := task.Ref()
			if ref.ID == "" || ref.Principal != "alice" || ref.Tool != "slow" || ref.Server != "reach" {
				t.Fatalf("ref %+v", ref)
			}
			st, err := task.Status(ctx)
			if err != nil || st.State != mcpruntime.TaskWorking && st.State != mcpruntime.TaskCompleted || st.ID != ref.ID {
				t.Fatalf("status %+v, %v", st, err)
			}
			if _, err := task.Status(mcpruntime.WithPrincipal(ctx, "bob", "tok-bob")); err == nil || !strings.Contains(err.Error(), `principal "alice"`) {
				t.Fatalf("another principal polled the task: %v", err)
			}
			run := mcpruntime.NewRun("task-run")
			res, err := task.Wait(mcpruntime.WithRun(pctx, run))
			if err != nil {
				t.Fatal(err)
			}
			if p, tainted := run.Tainted(); !tainted || p.Tool != "slow" || p.Digest != res.Provenance.Digest || res.Provenance.Digest == "" {
				t.Errorf("the task's result was not recorded as the run's external content: %+v, result provenance %+v", p, res.Provenance)
			}
			if res.Output.Echo != "hi" {
				t.Errorf("output %+v", res.Output)
			}
			if tc.http && res.Output.Auth != "Bearer [redacted]" {
				// The server echoes the token it got; the Conn scrubs it.
				t.Errorf("the task ran with authorization %q", res.Output.Auth)
			}
			if !tc.http {
				pmu.Lock()
				if !containsStr(progress, "half way") {
					t.Errorf("progress %q: the task's notification did not arrive", progress)
				}
				pmu.Unlock()
			}
			if tc.st != nil {
				tc.st.mu.Lock()
				for _, a := range tc.st.auth {
					if strings.HasPrefix(a, "tasks/") && !strings.HasSuffix(a, "Bearer tok-alice") {
						t.Errorf("a task request went without the principal's token: %q", a)
					}
				}
				tc.st.mu.Unlock()
			}

			// Saved and picked up on another connection.
			b, _ := json.Marshal(ref)
			var back mcpruntime.TaskRef
			if err := json.Unmarshal(b, &back); err != nil || back != ref {
				t.Fatalf("ref does not round-trip: %s", b)
			}
			if tc.http {
				other := tc.conn()
				again, err := mcpruntime.NewTool[ReachIn, ReachOut](reachDesc("slow", mcpruntime.TaskRequired), other,
					mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithServerName("reach")).TaskOf(back)
				if err != nil {
					t.Fatal(err)
				}
				r2, err := again.Wait(ctx)
				if strings.HasPrefix(tc.name, "http/2026") {
					if err != nil || r2.Output.Echo != "hi" {
						t.Errorf("picked up on another connection: %v", err)
					}
				} else if err == nil || !strings.Contains(err.Error(), "session that started it") {
					t.Errorf("a task of another session: %v", err)
				}
			}

			doomed := mcpruntime.NewTool[ReachIn, ReachOut](reachDesc("doomed", mcpruntime.TaskRequired), c, mcpruntime.WithIdentity(mcpruntime.ContextPrincipal))
			dt, err := doomed.Start(ctx, ReachIn{})
			if err != nil {
				t.Fatal(err)
			}
			var te *mcpruntime.TaskError
			if _, err := dt.Wait(ctx); !errors.As(err, &te) || te.State != mcpruntime.TaskFailed || !strings.Contains(err.Error(), "out of fuel") {
				t.Errorf("failed task: %v", err)
			}

			long, err := slow.Start(ctx, ReachIn{MS: 5000})
			if err != nil {
				t.Fatal(err)
			}
			if st, err := long.Cancel(ctx); err != nil || st.State != mcpruntime.TaskCancelled {
				t.Fatalf("cancel: %+v %v", st, err)
			}
			if _, err := long.Wait(ctx); !errors.As(err, &te) || te.State != mcpruntime.TaskCancelled {
				t.Errorf("cancelled task: %v", err)
			}

			// A model's call waits for the task within the tool's timeout.
			m, err := slow.Invoke(ctx, json.RawMessage(`{"text":"for the model","ms":100}`))
			if err != nil || m.IsError || !strings.Contains(m.Text, "for the model") {
				t.Errorf("Invoke: %+v %v", m, err)
			}
			short := mcpruntime.NewTool[ReachIn, ReachOut](reachDesc("slow", mcpruntime.TaskRequired), c,
				mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithTimeout(300*time.Millisecond))
			m, err = short.Invoke(ctx, json.RawMessage(`{"ms":3000}`))
			if err != nil || !m.TimedOut || !strings.Contains(m.Text, "cancelled") {
				t.Errorf("Invoke past the timeout: %+v %v", m, err)
			}
		})
	}
}

// The gate holds a task start before the task is created, and an approved
// start is made exactly once however often it is resumed.
func TestTaskStartGatedOnce(t *testing.T) {
	t.Parallel() // waits on processes and tasks, on servers of its own
	url, st := reachHTTP(t, reachOpts{})
	c := mcpgo.StreamableHTTP(url, mcpgo.WithName("reach"))
	defer c.Close()
	ctx, cancel := context.WithTimeout(asAlice(context.Background()), 30*time.Second)
	defer cancel()
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), mcpruntime.GateDefault(mcpruntime.GateAlways))
	slow := mcpruntime.NewTool[ReachIn, ReachOut](reachDesc("slow", mcpruntime.TaskRequired), c,
		mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithGate(gate))
	starts := func() int {
		st.mu.Lock()
		defer st.mu.Unlock()
		n := 0
		for _, a := range st.auth {
			if strings.HasPrefix(a, "tools/call ") {
				n++
			}
		}
		return n
	}
	_, err := slow.Start(ctx, ReachIn{Text: "gated", MS: 50})
	var are *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &are) {
		t.Fatalf("want the start held for approval, got %v", err)
	}
	if n := starts(); n != 0 {
		t.Fatalf("%d task starts reached the server before approval", n)
	}
	if err := gate.Approve(ctx, are.Approval.ID, are.Approval.Digest); err != nil {
		t.Fatal(err)
	}
	first, err := slow.ResumeStart(ctx, are.Approval.ID)
	if err != nil {
		t.Fatal(err)
	}
	second, err := slow.ResumeStart(ctx, are.Approval.ID)
	if err != nil {
		t.Fatal(err)
	}
	if first.Ref().ID == "" || first.Ref().ID != second.Ref().ID {
		t.Fatalf("two resumes gave tasks %q and %q", first.Ref().ID, second.Ref().ID)
	}
	if n := starts(); n != 1 {
		t.Errorf("%d task starts reached the server, want 1", n)
	}
	res, err := second.Wait(ctx)
	if err != nil || res.Output.Echo != "gated" {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := slow.Resume(ctx, are.Approval.ID); !errors.Is(err, mcpruntime.ErrNotSent) || !strings.Contains(err.Error(), "ResumeStart") {
		t.Errorf("Resume of a tool that runs only as a task: %v", err)
	}

	// A model's gated call: pending, then made once as a task, waited for.
	m, err := slow.Invoke(ctx, json.RawMessage(`{"text":"for the model","ms":50}`))
	if err != nil || m.Pending == nil {
		t.Fatalf("a model's gated call: %+v %v", m, err)
	}
	if err := gate.Approve(ctx, m.Pending.ID, m.Pending.Digest); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r, err := slow.ResumeInvoke(ctx, m.Pending.ID)
		if err != nil || r.IsError || !strings.Contains(r.Text, "for the model") {
			t.Fatalf("the approved call resumed for the model: %+v %v", r, err)
		}
	}
	if n := starts(); n != 2 {
		t.Errorf("%d task starts reached the server, want 2 (one per approval)", n)
	}
}

// A required-task tool called plainly over 2026-07-28 HTTP, where the
// server answers -32601 with a 404, is reported as the server's refusal,
// saying the tool runs only as a task, and the connection stays.
func TestRequiredTaskCalledPlainly(t *testing.T) {
	t.Parallel() // waits on processes and tasks, on servers of its own
	for _, tc := range taskCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c := tc.conn()
			if _, err := c.ToolNames(ctx); err != nil {
				t.Fatal(err)
			}
			_, err := c.CallTool(ctx, "slow", json.RawMessage(`{}`))
			var pe *mcpruntime.ProtocolError
			if !errors.As(err, &pe) || pe.Code != mcp.METHOD_NOT_FOUND || !strings.Contains(err.Error(), "runs only as a task") {
				t.Fatalf("plain call of a required-task tool: %v", err)
			}
			if _, err := c.CallTool(ctx, "tick", json.RawMessage(`{"n":0}`)); err != nil {
				t.Fatalf("the connection did not survive the refusal: %v", err)
			}
		})
	}
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// A replica that restarts does not lose its task: the handle saved by one
// process is waited for by another (2026-07-28 over HTTP, where the server
// binds tasks to no session).
func TestTaskPickedUpByAnotherProcess(t *testing.T) {
	t.Parallel() // waits on processes and tasks, on servers of its own
	url, _ := reachHTTP(t, reachOpts{})
	c := mcpgo.StreamableHTTP(url, mcpgo.WithName("reach"))
	ctx, cancel := context.WithTimeout(asAlice(context.Background()), 30*time.Second)
	defer cancel()
	task, err := mcpruntime.NewTool[ReachIn, ReachOut](reachDesc("slow", mcpruntime.TaskRequired), c,
		mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)).Start(ctx, ReachIn{Text: "survived", MS: 600})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := json.Marshal(task.Ref())
	c.Close() // the replica goes away
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MCPGO_FIXTURE=reach-pickup", "REACH_URL="+url, "REACH_REF="+string(ref))
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "survived" {
		t.Fatalf("the other process: %v: %s", err, out)
	}
}

// Every progress notification reaches WithProgress's callback, the last
// one of a quick call too, which mcp-go's stdio server may write after
// the answer.
func TestProgressLastNotificationKept(t *testing.T) {
	c := reachStdio(reachOpts{})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const calls = 120
	var mu sync.Mutex
	last := map[int]float64{}
	for i := range calls {
		pctx := mcpruntime.WithProgress(ctx, func(p mcpruntime.Progress) {
			mu.Lock()
			last[i] = max(last[i], p.Progress)
			mu.Unlock()
		})
		if _, err := c.CallTool(pctx, "tick", json.RawMessage(`{"n":3}`)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		mu.Lock()
		missing := 0
		for i := range calls {
			if last[i] != 3 {
				missing++
			}
		}
		mu.Unlock()
		if missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d calls lost their last progress notification", missing, calls)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The caching hints of a list (ttlMs, cacheScope) decide how long the
// manager and a Conn keep it: ttlMs 100 and 0 both list again after 150
// ms, a list without hints (2025-11-25) is kept; a private list is kept
// per principal and never shown to another, a public one is shared.
func TestListCachingHints(t *testing.T) {
	t.Parallel() // waits on processes and tasks, on servers of its own
	for _, tc := range []struct {
		name     string
		o        reachOpts
		pin      string
		want     int64 // tools/list requests for five lists 150 ms apart
		perAgent bool  // private: each principal lists for itself
	}{
		{"ttl100", reachOpts{ttl: "100", scope: "public"}, "", 5, false},
		{"ttl0", reachOpts{ttl: "0", scope: "public"}, "", 5, false},
		{"ttl-long-public", reachOpts{ttl: "60000", scope: "public"}, "", 1, false},
		{"ttl-long-private", reachOpts{ttl: "60000", scope: "private"}, "", 2, true},
		{"no-hints", reachOpts{ttl: "0"}, "2025-11-25", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each waits 0.6 s, on a server of its own
			for _, via := range []string{"manager", "conn", "conn-stdio"} {
				if via == "conn-stdio" && tc.name != "ttl0" && tc.name != "ttl-long-private" {
					continue // a process each costs; these two show the hints on stdio
				}
				t.Run(via, func(t *testing.T) {
					t.Parallel()
					url, st := reachHTTP(t, tc.o)
					lists := st.lists.Load
					var opts []mcpgo.Option
					if tc.pin != "" {
						opts = append(opts, mcpgo.WithProtocolVersion(tc.pin))
					}
					admin := mcpruntime.WithPrincipal(context.Background(), "admin", "tok-admin")
					alice := mcpruntime.WithPrincipal(context.Background(), "alice", "tok-alice")
					var list func(ctx context.Context) ([]string, error)
					if via == "manager" {
						p := manager.Policy{AllowPrivateNetworks: true}
						reg := manager.NewRegistry(manager.NewMemoryServerStore(), p)
						if _, err := reg.Save(context.Background(), httpCfg("reach", url)); err != nil {
							t.Fatal(err)
						}
						m := manager.NewManager(reg, mcpgo.NewConnector(p, mcpgo.WithConnOptions(opts...)))
						t.Cleanup(func() { m.CloseAll() })
						list = func(ctx context.Context) ([]string, error) {
							ts, err := m.Tools(ctx, "agent", "reach")
							var names []string
							for _, t := range ts {
								names = append(names, t.Name)
							}
							return names, err
						}
					} else {
						c := mcpgo.StreamableHTTP(url, opts...)
						if via == "conn-stdio" {
							// The server counts its own lists; asking costs
							// no list (a tool check takes a stale one).
							c = reachStdio(tc.o, opts...)
							lists = func() int64 {
								r, err := c.CallTool(mcpruntime.WithBearerToken(context.Background(), "tok-admin"), "lists", nil)
								if err != nil {
									t.Fatal(err)
								}
								n, _ := strconv.ParseInt(r.Text(), 10, 64)
								return n
							}
						}
						t.Cleanup(func() { c.Close() })
						list = func(ctx context.Context) ([]string, error) {
							p, _ := mcpruntime.PrincipalFrom(ctx)
							return c.ToolNames(mcpruntime.WithBearerToken(ctx, p.Token))
						}
					}
					for i := range 5 {
						if i > 0 {
							time.Sleep(150 * time.Millisecond)
						}
						who := admin
						if i%2 == 1 {
							who = alice
						}
						names, err := list(who)
						if err != nil {
							t.Fatal(err)
						}
						if tc.perAgent && who == alice && slices.Contains(names, "admin") {
							t.Fatalf("alice was shown the admin's list: %v", names)
						}
					}
					if n := lists(); n != tc.want {
						t.Errorf("%d tools/list requests, want %d", n, tc.want)
					}
				})
			}
		})
	}
}

// The manager runs task-backed tools: a live tool that runs only as a
// task is waited for when a model calls it through a toolset, and a
// managed caller starts, polls and finishes a task with the principal's
// token, on both protocol generations.
func TestManagerTasks(t *testing.T) {
	t.Parallel() // waits on processes and tasks, on servers of its own
	for _, pin := range []string{"2025-11-25", ""} {
		t.Run("pin="+pin, func(t *testing.T) {
			url, st := reachHTTP(t, reachOpts{})
			p := manager.Policy{AllowPrivateNetworks: true}
			reg := manager.NewRegistry(manager.NewMemoryServerStore(), p)
			if _, err := reg.Save(context.Background(), httpCfg("reach", url)); err != nil {
				t.Fatal(err)
			}
			var opts []mcpgo.Option
			if pin != "" {
				opts = append(opts, mcpgo.WithProtocolVersion(pin))
			}
			m := manager.NewManager(reg, mcpgo.NewConnector(p, mcpgo.WithConnOptions(opts...)))
			defer m.CloseAll()
			ctx, cancel := context.WithTimeout(asAlice(context.Background()), 30*time.Second)
			defer cancel()
			ts, err := m.Toolset(ctx, "agent", []manager.ToolSource{{Server: "reach", Tools: []string{"slow"},
				Options: []mcpruntime.Option{mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)}}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := ts.Invoke(ctx, "slow", json.RawMessage(`{"text":"managed","ms":100}`))
			if err != nil || r.IsError || !strings.Contains(r.Text, "managed") {
				t.Fatalf("a model's call of a task tool: %+v %v", r, err)
			}
			c, err := m.Caller(ctx, "agent", "reach")
			if err != nil {
				t.Fatal(err)
			}
			task, err := mcpruntime.NewTool[ReachIn, ReachOut](reachDesc("slow", mcpruntime.TaskRequired), c,
				mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)).Start(ctx, ReachIn{Text: "typed", MS: 100})
			if err != nil {
				t.Fatal(err)
			}
			res, err := task.Wait(ctx)
			if err != nil || res.Output.Echo != "typed" {
				t.Fatalf("%+v %v", res, err)
			}
			st.mu.Lock()
			defer st.mu.Unlock()
			for _, a := range st.auth {
				if !strings.HasSuffix(a, "Bearer tok-alice") {
					t.Errorf("a task request went without the principal's token: %q", a)
				}
			}
		})
	}
}

// An error says each part of its context once: a binding's call over a
// connection that names the tool already is not prefixed with it again.
func TestCallErrorContextOnce(t *testing.T) {
	url, _ := reachHTTP(t, reachOpts{})
	// tools/call requests are cut off: the connection ends under the call.
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, url, r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	defer cut.Close()
	c := mcpgo.StreamableHTTP(cut.URL+"/mcp", mcpgo.WithName("reach"))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := mcpruntime.NewTool[ReachIn, ReachOut](reachDesc("either", ""), c).Call(ctx, ReachIn{})
	if err == nil {
		t.Fatal("the call went through")
	}
	if n := strings.Count(err.Error(), `tool "either"`); n != 1 {
		t.Errorf("the tool is named %d times: %v", n, err)
	}
	if n := strings.Count(err.Error(), `server "reach"`); n != 1 {
		t.Errorf("the server is named %d times: %v", n, err)
	}
	t.Log(err)
}

// With WithTaskHandoff a model is handed the task and checks on it with
// the task poller, which gives the result once the task is done.
func TestTaskHandoffToModel(t *testing.T) {
	t.Parallel() // waits on processes and tasks, on servers of its own
	for _, tc := range taskCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(asAlice(context.Background()), 30*time.Second)
			defer cancel()
			c := tc.conn()
			slow := mcpruntime.NewTool[ReachIn, ReachOut](reachDesc("slow", mcpruntime.TaskRequired), c,
				mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithTaskHandoff())
			either := mcpruntime.NewTool[ReachIn, ReachOut](reachDesc("either", mcpruntime.TaskOptional), c,
				mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithTaskHandoff())
			poller := mcpruntime.NewTaskPoller(slow, either)
			for _, tool := range []*mcpruntime.Tool[ReachIn, ReachOut]{slow, either} {
				name := tool.Descriptor().Name
				m, err := tool.Invoke(ctx, json.RawMessage(`{"text":"later","ms":300}`))
				if err != nil || m.Task == nil || m.IsError || !strings.Contains(m.Text, mcpruntime.TaskPollerName) {
					t.Fatalf("%s: handed a task: %+v %v", name, m, err)
				}
				args, _ := json.Marshal(map[string]string{"tool": name, "task": m.Task.ID})
				r, err := poller.Invoke(ctx, args)
				if err != nil || r.IsError || !strings.Contains(r.Text, "still working") {
					t.Fatalf("%s: the first check: %+v %v", name, r, err)
				}
				for strings.Contains(r.Text, "still working") && ctx.Err() == nil {
					time.Sleep(20 * time.Millisecond)
					r, err = poller.Invoke(ctx, args)
				}
				if err != nil || r.IsError || !strings.Contains(r.Text, "later") {
					t.Fatalf("%s: the check after the task ended: %+v %v", name, r, err)
				}
			}
			r, err := poller.Invoke(ctx, json.RawMessage(`{"tool":"tick","task":"x"}`))
			if err != nil || !r.IsError {
				t.Errorf("a tool outside the poller's set: %+v %v", r, err)
			}
		})
	}
}

// A task start on a server that does not take tasks is refused before
// anything is sent, saying why.
func TestTaskStartWithoutCapability(t *testing.T) {
	t.Parallel() // waits on processes and tasks, on servers of its own
	ts := httptest.NewServer(server.NewStreamableHTTPServer(fixture()))
	defer ts.Close()
	c := mcpgo.StreamableHTTP(ts.URL+"/mcp", mcpgo.WithName("fixture"))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	d := reachDesc("weather", mcpruntime.TaskOptional)
	_, err := mcpruntime.NewTool[ReachIn, ReachOut](d, c).Start(ctx, ReachIn{})
	if !errors.Is(err, mcpgo.ErrTasksUnsupported) || !errors.Is(err, mcpruntime.ErrNotSent) {
		t.Fatalf("a task start on a server without tasks: %v", err)
	}
}
