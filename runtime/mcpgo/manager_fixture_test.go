package mcpgo_test

import (
	"github.com/mcpgen/mcpgen/runtime/manager"

	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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

// The manager's fault tests run real servers: this test binary re-executed
// as a stdio server (selected by managerModeEnv, before TestMain), and the
// same tools over streamable HTTP in this process. Each server appends a
// line per start to $FIX_PIDS and per execution of a mutating tool to
// $FIX_COUNT, so tests can count what actually ran.

const managerModeEnv = "MCPGEN_MANAGER_FIXTURE"

func init() {
	switch os.Getenv(managerModeEnv) {
	case "":
		return
	case "serve":
		appendLine(os.Getenv("FIX_PIDS"), fmt.Sprint(os.Getpid()))
		if d, err := time.ParseDuration(os.Getenv("FIX_SLOW")); err == nil {
			time.Sleep(d) // a server that starts slowly
		}
		if err := server.NewStdioServer(managerFixture()).Listen(context.Background(), os.Stdin, os.Stdout); err != nil && !errors.Is(err, io.EOF) {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "spawner":
		// Starts a helper that outlives its stdin, as npx starts node,
		// then serves.
		exe, _ := os.Executable()
		child := exec.Command(exe)
		child.Env = append(os.Environ(), managerModeEnv+"=hang", "FIX_PIDS=")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		appendLine(os.Getenv("FIX_CHILD"), fmt.Sprint(child.Process.Pid))
		if err := server.NewStdioServer(managerFixture()).Listen(context.Background(), os.Stdin, os.Stdout); err != nil && !errors.Is(err, io.EOF) {
			os.Exit(1)
		}
		os.Exit(0)
	case "garbage":
		appendLine(os.Getenv("FIX_PIDS"), fmt.Sprint(os.Getpid()))
		fmt.Println("CRM shell 2.1 starting...")
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			fmt.Println("Welcome! Type 'help' for commands.")
		}
		os.Exit(0)
	case "hang":
		appendLine(os.Getenv("FIX_PIDS"), fmt.Sprint(os.Getpid()))
		_, _ = io.Copy(io.Discard, os.Stdin)
		select {}
	}
	fmt.Fprintln(os.Stderr, "unknown fixture mode")
	os.Exit(2)
}

func appendLine(file, line string) {
	if file == "" {
		return
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		panic(err)
	}
	_, _ = f.WriteString(line + "\n")
	_ = f.Close()
}

func countLines(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

const objectIn = `{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"}}}`

var inflight, inflightMax atomic.Int64

// managerFixture is the server's tool set. Mutating tools record each
// execution in $FIX_COUNT.
func managerFixture() *server.MCPServer {
	s := server.NewMCPServer("manager-fixture", "1.0.0", server.WithToolCapabilities(true))
	add := func(name string, ann mcp.ToolAnnotation, h server.ToolHandlerFunc) {
		t := mcp.NewToolWithRawSchema(name, "fixture tool "+name, json.RawMessage(objectIn))
		t.Annotations = ann
		s.AddTool(t, h)
	}
	yes, no := true, false
	readOnly := mcp.ToolAnnotation{ReadOnlyHint: &yes, IdempotentHint: &yes}
	mutation := mcp.ToolAnnotation{ReadOnlyHint: &no, IdempotentHint: &no}
	idempotent := mcp.ToolAnnotation{ReadOnlyHint: &no, IdempotentHint: &yes}
	count := func(name string) { appendLine(os.Getenv("FIX_COUNT"), name) }
	add("echo", readOnly, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
	})
	add("count", mutation, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		count("count")
		return mcp.NewToolResultText("counted"), nil
	})
	// Dies while handling the call: the call may have had effects.
	add("crash", mutation, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		count("crash")
		os.Exit(7)
		return nil, nil
	})
	// Idempotent, and dies the first time it runs.
	add("idem_crash_once", idempotent, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		count("idem")
		mark := os.Getenv("FIX_COUNT") + ".mark"
		if _, err := os.Stat(mark); err != nil {
			appendLine(mark, "x")
			os.Exit(7)
		}
		return mcp.NewToolResultText("done"), nil
	})
	add("sleep", readOnly, func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return mcp.NewToolResultText("woke"), nil
		}
	})
	add("big", readOnly, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(strings.Repeat("x", req.GetInt("n", 0))), nil
	})
	add("fail", mutation, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		count("fail")
		return nil, errors.New("database unavailable")
	})
	// Adds a tool, which makes the server announce list_changed.
	add("grow", mutation, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name := req.GetString("text", "grown")
		s.AddTool(mcp.NewToolWithRawSchema(name, "added at run time", json.RawMessage(objectIn)),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("new"), nil
			})
		return mcp.NewToolResultText("grew " + name), nil
	})
	// Changes echo's input schema, as a server upgrade would.
	add("reshape", mutation, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		t := mcp.NewToolWithRawSchema("echo", "fixture tool echo, reshaped", json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"loud":{"type":"boolean"}}}`))
		t.Annotations = readOnly
		s.AddTool(t, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ECHO: " + req.GetString("text", "")), nil
		})
		return mcp.NewToolResultText("reshaped"), nil
	})
	// Reports the most calls it has seen in flight at once.
	add("inflight", readOnly, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			m := inflightMax.Load()
			if n <= m || inflightMax.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond) // widens the overlap; not asserted on
		return mcp.NewToolResultText(fmt.Sprint(inflightMax.Load())), nil
	})
	return s
}

// env is one test's world: a registry allowing the fixture command, the
// files the servers write, and a manager whose retries do not wait.
type env struct {
	t      *testing.T
	dir    string
	reg    *manager.Registry
	policy manager.Policy
	sleeps atomic.Int64 // backoff waits taken
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The allowlist takes bare names looked up in the PATH, so the fixture
	// gets one, linked into a directory put first in the PATH.
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(bin, "mcpgen-fixture")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot link the fixture: %v", err)
		}
		t.Skipf("cannot link the fixture: %v", err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	p := manager.Policy{StdioCommands: []string{"mcpgen-fixture"}, AllowPrivateNetworks: true}
	return &env{t: t, dir: dir, reg: manager.NewRegistry(manager.NewMemoryServerStore(), p), policy: p}
}

func (e *env) file(name string) string { return filepath.Join(e.dir, name) }

// stdio registers the fixture as a stdio server.
func (e *env) stdio(id, mode string, edit func(*manager.ServerConfig), extraEnv ...string) {
	e.t.Helper()
	cfg := manager.ServerConfig{ID: id, Transport: manager.Transport{Kind: manager.TransportStdio, Command: "mcpgen-fixture",
		Env: map[string]string{managerModeEnv: mode, "FIX_PIDS": e.file(id + ".pids"), "FIX_COUNT": e.file(id + ".count")}}}
	for i := 0; i+1 < len(extraEnv); i += 2 {
		cfg.Transport.Env[extraEnv[i]] = extraEnv[i+1]
	}
	if edit != nil {
		edit(&cfg)
	}
	if _, err := e.reg.Save(context.Background(), cfg); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) manager(opts ...manager.ManagerOption) *manager.Manager {
	return e.managerWith(nil, opts...)
}

func (e *env) managerWith(copts []mcpgo.ConnectorOption, opts ...manager.ManagerOption) *manager.Manager {
	e.t.Helper()
	copts = append([]mcpgo.ConnectorOption{mcpgo.WithConnOptions(mcpgo.WithShutdownGrace(200 * time.Millisecond))}, copts...)
	base := []manager.ManagerOption{
		manager.WithSleep(func(ctx context.Context, _ time.Duration) error { e.sleeps.Add(1); return ctx.Err() }),
		manager.WithJitter(func() float64 { return 0.5 }),
	}
	m := manager.NewManager(e.reg, mcpgo.NewConnector(e.policy, copts...), append(base, opts...)...)
	e.t.Cleanup(func() { _ = m.CloseAll() })
	return m
}

// httpFixture serves the fixture tools over streamable HTTP on a fixed
// address, so it can be stopped and started again on the same port.
type httpFixture struct {
	t       *testing.T
	addr    string
	mu      sync.Mutex
	srv     *http.Server
	mcp     *server.MCPServer
	accepts atomic.Int64
	lists   atomic.Int64 // tools/list requests (modern clients name the method in a header)
}

func startHTTP(t *testing.T) *httpFixture {
	t.Helper()
	h := &httpFixture{t: t, mcp: managerFixture()}
	h.start("127.0.0.1:0")
	t.Cleanup(h.stop)
	return h
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func (h *httpFixture) start(addr string) {
	h.t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		h.t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	mux := http.NewServeMux()
	mcpHandler := server.NewStreamableHTTPServer(h.mcp, server.WithDisableLocalhostProtection(true))
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/list" {
			h.lists.Add(1)
		} else if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "" {
			// Older clients name the method in the body only.
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			if bytes.Contains(b, []byte(`"method":"tools/list"`)) {
				h.lists.Add(1)
			}
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	// One connection per request, so a stopped server refuses the next
	// request instead of failing it on a connection already open (which
	// would leave the client unable to tell whether it was received).
	srv.SetKeepAlivesEnabled(false)
	h.mu.Lock()
	h.srv = srv
	h.mu.Unlock()
	go func() { _ = srv.Serve(countingListener{ln, &h.accepts}) }()
}

func (h *httpFixture) stop() {
	h.mu.Lock()
	srv := h.srv
	h.srv = nil
	h.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

func (h *httpFixture) url() string { return "http://" + h.addr + "/mcp" }

func invoke(t *testing.T, ts *mcpruntime.Toolset, tool, args string) (mcpruntime.ModelResult, error) {
	t.Helper()
	return ts.Invoke(context.Background(), tool, json.RawMessage(args))
}
