package faults_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/internal/benchdata"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
	"github.com/mcpgen/mcpgen/snapshot"
)

const (
	modeEnv = "FAULTS_MODE"
	onEnv   = "FAULTS_ON" // the request a mid-session fault strikes at
)

// TestMain makes the test binary its own misbehaving stdio server.
func TestMain(m *testing.M) {
	if mode := os.Getenv(modeEnv); mode != "" {
		os.Exit(serve(mode, os.Getenv(onEnv)))
	}
	os.Exit(m.Run())
}

// serve is a hand-written JSON-RPC server, so each fault is exactly what
// the scenario says and nothing else.
func serve(mode, on string) int {
	switch mode {
	case "exit-start":
		fmt.Fprintln(os.Stderr, "fatal: cannot open database /nonexistent/crm.db")
		return 3
	case "hang":
		select {} // reads nothing, answers nothing
	case "junk":
		fmt.Println("Welcome to the CRM shell 2.1")
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	reply := func(id json.RawMessage, result string) {
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
		out.Flush()
	}
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // notifications
		}
		switch {
		case req.Method == on && mode == "exit-mid":
			fmt.Fprintf(os.Stderr, "panic: crashing while answering %s\n", on)
			return 7
		case req.Method == on && mode == "bigline":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[],"pad":"`, req.ID)
			chunk := strings.Repeat("a", 1<<20)
			for range 50 { // 50 MiB on one line
				out.WriteString(chunk)
			}
			out.WriteString("\"}}\n")
			out.Flush()
		case req.Method == "server/discover" && mode == "silent":
			// Never answers a method it does not know, as some servers
			// predating server/discover do.
		case req.Method == "server/discover":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", req.ID)
			out.Flush()
		case req.Method == "initialize":
			reply(req.ID, `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"faults","version":"1"}}`)
		case req.Method == "tools/list":
			reply(req.ID, `{"tools":[{"name":"get_report","inputSchema":{"type":"object"}}]}`)
		default:
			reply(req.ID, `{}`)
		}
	}
	return 0
}

// entry is one way into the session layer.
type entry struct {
	name string
	run  func(t *testing.T, s scenario) error
}

// scenario is one fault and what every entry point must say about it.
type scenario struct {
	name  string
	mode  string // stdio server mode; "" for the HTTP ones
	on    map[string]string
	http  http.HandlerFunc
	check func(t *testing.T, err error)
	stall bool // the server never answers the call: wait only stallTimeout
}

func (s scenario) callTimeout() time.Duration {
	if s.stall {
		return stallTimeout
	}
	return callTimeout
}

// timeout bounds connecting (the hang scenario waits it out); callTimeout
// bounds a call, long enough for a 50 MiB line under the race detector on
// a loaded machine, short for the stalled stream, which waits it out.
const (
	timeout      = time.Second
	callTimeout  = 20 * time.Second
	stallTimeout = 2 * time.Second
)

func TestEveryEntryPointMeetsEveryFaultAlike(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The registry's stdio allowlist takes bare names from the PATH.
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "faults-server")); err != nil {
		t.Skipf("cannot link the server: %v", err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	entries := []entry{
		{"snapshot", func(t *testing.T, s scenario) error {
			src := snapshot.Source{ID: "crm", Transport: snapshot.Stdio, Command: exe,
				Env: []string{modeEnv + "=" + s.mode, onEnv + "=" + s.on["snapshot"]}}
			if s.http != nil {
				src = snapshot.Source{ID: "crm", Transport: snapshot.HTTP, URL: serveHTTP(t, s.http)}
			}
			bound := timeout
			if s.mode == "exit-mid" || s.mode == "bigline" {
				bound = callTimeout // the fault comes after the handshake
			} else if s.stall {
				bound = stallTimeout
			}
			_, err := snapshot.Capture(context.Background(), src, snapshot.Options{Timeout: bound})
			return err
		}},
		{"generated client", func(t *testing.T, s scenario) error {
			var conn *mcpgo.Conn
			if s.http != nil {
				conn = mcpgo.StreamableHTTP(serveHTTP(t, s.http), mcpgo.WithName("crm"), mcpgo.WithConnectTimeout(timeout))
			} else {
				conn = mcpgo.Stdio(exe, nil, mcpgo.WithName("crm"), mcpgo.WithConnectTimeout(timeout), mcpgo.WithShutdownGrace(200*time.Millisecond),
					mcpgo.WithEnv(modeEnv+"="+s.mode, onEnv+"="+s.on["client"]))
			}
			defer conn.Close()
			_, err := benchdata.NewClient(conn, mcpruntime.WithTimeout(s.callTimeout())).GetReport(context.Background(),
				benchdata.GetReportInput{Region: benchdata.GetReportInputRegionEmea, Quarter: "2026-Q3"})
			return err
		}},
		{"manager", func(t *testing.T, s scenario) error {
			p := manager.Policy{StdioCommands: []string{"faults-server"}, AllowPrivateNetworks: true}
			reg := manager.NewRegistry(manager.NewMemoryServerStore(), p)
			cfg := manager.ServerConfig{ID: "crm", ConnectTimeout: timeout, ToolTimeout: s.callTimeout(), MaxRetries: manager.NoRetries,
				Transport: manager.Transport{Kind: manager.TransportStdio, Command: "faults-server",
					Env: map[string]string{modeEnv: s.mode, onEnv: s.on["client"]}}}
			if s.http != nil {
				cfg.Transport = manager.Transport{Kind: manager.TransportHTTP, URL: serveHTTP(t, s.http)}
			}
			if _, err := reg.Save(context.Background(), cfg); err != nil {
				t.Fatal(err)
			}
			m := manager.NewManager(reg, mcpgo.NewConnector(p))
			defer m.CloseAll()
			c, err := m.Caller(context.Background(), "agent", "crm")
			if err != nil {
				return err
			}
			_, err = benchdata.NewClient(c).GetReport(context.Background(),
				benchdata.GetReportInput{Region: benchdata.GetReportInputRegionEmea, Quarter: "2026-Q3"})
			return err
		}},
	}
	mid := map[string]string{"snapshot": "tools/list", "client": "tools/call"}
	scenarios := []scenario{
		{name: "exits at start", mode: "exit-start", check: func(t *testing.T, err error) {
			ce := as[*mcpruntime.ConnectError](t, err)
			if ce.Exit != "exit status 3" || !strings.Contains(ce.Stderr, "cannot open database") {
				t.Errorf("exit %q, stderr %q: want exit status 3 and the stderr tail", ce.Exit, ce.Stderr)
			}
		}},
		{name: "exits mid-call", mode: "exit-mid", on: mid, check: func(t *testing.T, err error) {
			le := as[*mcpruntime.ConnectionLostError](t, err)
			if le.Exit != "exit status 7" || !strings.Contains(le.Stderr, "crashing while answering") {
				t.Errorf("exit %q, stderr %q: want exit status 7 and the stderr tail", le.Exit, le.Stderr)
			}
		}},
		{name: "junk on stdout", mode: "junk", check: func(t *testing.T, err error) {
			as[*mcpruntime.ConnectError](t, err)
			ge := as[*mcpgo.StdoutGarbageError](t, err)
			if ge.Line != "Welcome to the CRM shell 2.1" {
				t.Errorf("quoted line %q", ge.Line)
			}
		}},
		{name: "hangs", mode: "hang", check: func(t *testing.T, err error) {
			as[*mcpruntime.ConnectError](t, err)
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, snapshot.ErrTimeout) {
				t.Errorf("not a timeout: %v", err)
			}
		}},
		{name: "a 50 MiB line", mode: "bigline", on: mid, check: func(t *testing.T, err error) {
			as[*mcpruntime.ConnectionLostError](t, err)
			tl := as[*mcpgo.MessageTooLargeError](t, err)
			if tl.Limit != mcpgo.DefaultMaxMessageBytes {
				t.Errorf("limit %d", tl.Limit)
			}
		}},
		{name: "HTTP 500", http: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "upstream exploded", http.StatusInternalServerError)
		}, check: func(t *testing.T, err error) {
			as[*mcpruntime.ConnectError](t, err)
			if !strings.Contains(err.Error(), "500") {
				t.Errorf("the status is not named: %v", err)
			}
		}},
		{name: "HTML instead of JSON", http: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>Sign in to continue</body></html>")
		}, check: func(t *testing.T, err error) {
			as[*mcpruntime.ConnectError](t, err)
			if !strings.Contains(err.Error(), "text/html") {
				t.Errorf("the content type is not named: %v", err)
			}
		}},
		{name: "a stalled event stream", http: stalledStream, stall: true, check: func(t *testing.T, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, snapshot.ErrTimeout) {
				t.Errorf("not a timeout: %v", err)
			}
		}},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			for _, e := range entries {
				t.Run(e.name, func(t *testing.T) {
					err := e.run(t, s)
					if err == nil {
						t.Fatal("no error")
					}
					t.Logf("%v", err)
					s.check(t, err)
					worded(t, err)
				})
			}
		})
	}
}

func as[T error](t *testing.T, err error) T {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("%v (%T) is not a %T", err, err, target)
	}
	return target
}

var serverName = regexp.MustCompile(`server "[^"]*"`)

// worded checks the one error-wording rule: each layer adds its context
// once, so no phrase repeats the one before it and the server, the
// program and the connection are named once.
func worded(t *testing.T, err error) {
	t.Helper()
	msg := strings.SplitN(err.Error(), "\n", 2)[0] // the stderr tail is the server's
	parts := strings.Split(msg, ": ")
	for i := 1; i < len(parts); i++ {
		if parts[i] == parts[i-1] {
			t.Errorf("phrase %q repeated: %s", parts[i], msg)
		}
	}
	if n := len(serverName.FindAllString(msg, -1)); n > 1 {
		t.Errorf("the server is named %d times: %s", n, msg)
	}
	for _, p := range []string{"mcpgen: mcpgen:", "transport error: transport error", "failed to send request: failed to send request"} {
		if strings.Contains(msg, p) {
			t.Errorf("%q: %s", p, msg)
		}
	}
	if strings.Count(msg, "connect to") > 1 {
		t.Errorf("the connection is named twice: %s", msg)
	}
}

func serveHTTP(t *testing.T, h http.HandlerFunc) string {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// stalledStream answers the handshake as a streamable HTTP server on an
// older protocol would, then opens an event stream for the next request
// and never writes to it.
func stalledStream(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Mcp-Session-Id", "s1")
	switch {
	case req.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case req.Method == "server/discover":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, req.ID)
	case req.Method == "initialize":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"stall","version":"1"}}}`, req.ID)
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// A stdio server that never answers server/discover still connects, on
// the protocol it speaks; BenchmarkConnectSilentServer measures what the
// probe costs it.
func TestSilentServerConnects(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := mcpgo.Stdio(exe, nil, mcpgo.WithName("silent"), mcpgo.WithEnv(modeEnv+"=silent"))
	defer c.Close()
	names, err := c.ToolNames(context.Background())
	if err != nil || len(names) != 1 || c.ProtocolVersion() != "2025-06-18" {
		t.Fatalf("ToolNames = %v, %v (protocol %q)", names, err, c.ProtocolVersion())
	}
}

// BenchmarkConnectSilentServer compares connecting to a server that never
// answers server/discover with one that says it does not know it: the
// difference is what the discover probe adds (mcp-go alone waits 5 s).
func BenchmarkConnectSilentServer(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"ok", "silent"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				c := mcpgo.Stdio(exe, nil, mcpgo.WithName(mode), mcpgo.WithEnv(modeEnv+"="+mode), mcpgo.WithShutdownGrace(100*time.Millisecond))
				if _, err := c.Client(context.Background()); err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}
