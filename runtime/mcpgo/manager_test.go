package mcpgo_test

import (
	"github.com/mcpgen/mcpgen/runtime/manager"

	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server/servertest"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

func TestManagerSharesOneConnection(t *testing.T) {
	e := newEnv(t)
	e.stdio("fix", "serve", nil, "FIX_SLOW", "200ms") // slow start: callers pile up on one attempt
	m := e.manager()
	ts, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "fix", Tools: []string{"echo"}}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			r, err := invoke(t, ts, "echo", `{"text":"`+strconv.Itoa(i)+`"}`)
			if err == nil && r.Text != "echo: "+strconv.Itoa(i) {
				err = errors.New("wrong answer " + r.Text)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := countLines(t, e.file("fix.pids")); n != 1 {
		t.Errorf("%d server processes started, want 1", n)
	}
}

func TestManagerCrashMidCallIsNotRetried(t *testing.T) {
	e := newEnv(t)
	e.stdio("fix", "serve", nil)
	m := e.manager()
	ts, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "fix"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = invoke(t, ts, "crash", `{}`)
	if err == nil {
		t.Fatal("a crash mid-call returned no error")
	}
	for _, want := range []string{`"fix"`, "exit status 7", "may have run", "not retried"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if n := countLines(t, e.file("fix.count")); n != 1 {
		t.Errorf("the crashing mutation ran %d times, want 1 (at most once)", n)
	}
	// The next call gets a new process.
	if r, err := invoke(t, ts, "echo", `{"text":"again"}`); err != nil || r.Text != "echo: again" {
		t.Fatalf("after the crash: %+v, %v", r, err)
	}
	if n := countLines(t, e.file("fix.pids")); n != 2 {
		t.Errorf("%d processes, want 2", n)
	}
}

func TestManagerRetriesIdempotentCrash(t *testing.T) {
	e := newEnv(t)
	e.stdio("fix", "serve", nil)
	m := e.manager()
	ts, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "fix", Tools: []string{"idem_crash_once"}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := invoke(t, ts, "idem_crash_once", `{}`)
	if err != nil || r.Text != "done" {
		t.Fatalf("idempotent tool after a crash: %+v, %v", r, err)
	}
	if n := countLines(t, e.file("fix.count")); n != 2 {
		t.Errorf("the idempotent tool ran %d times, want 2 (crash, retry)", n)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestManagerHangingAndGarbageServers(t *testing.T) {
	// The garbage server is only found out when the connect times out, and
	// the error must say what it wrote: a timeout that fired before the
	// process started writing (a slow start under a loaded race detector)
	// shows nothing, so the run is repeated with a longer one. The test
	// waits for the server to write, not for it to write within a budget.
	var e *env
	var pe *manager.PreflightError
	var err error
	for d := time.Second; ; d *= 4 {
		e = newEnv(t)
		short := func(c *manager.ServerConfig) { c.ConnectTimeout = 300 * time.Millisecond; c.MaxRetries = 1 }
		e.stdio("hang", "hang", short)
		e.stdio("garbage", "garbage", func(c *manager.ServerConfig) {
			c.ConnectTimeout = d
			c.MaxRetries = manager.NoRetries
		})
		_, err = e.manager().Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "hang"}, {Server: "garbage"}})
		if !errors.As(err, &pe) || len(pe.Problems) != 2 {
			t.Fatalf("Toolset = %v", err)
		}
		if strings.Contains(pe.Problems[1].Error(), "not JSON-RPC") || !errors.Is(pe.Problems[1], context.DeadlineExceeded) || d > time.Minute {
			break
		}
		t.Logf("connect timeout %s: the garbage server wrote nothing in time; trying a longer one", d)
	}
	var ce *manager.ConnectError
	if !errors.As(pe.Problems[0], &ce) || ce.Attempts != 2 || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hanging server: %v", pe.Problems[0])
	}
	if !strings.Contains(pe.Problems[1].Error(), "not JSON-RPC") {
		t.Errorf("garbage server: error does not say what the server wrote: %v", pe.Problems[1])
	}
	if n := countLines(t, e.file("hang.pids")); n > 2 {
		t.Errorf("hanging server started %d times, want at most 2 (one retry)", n)
	}
	if e.sleeps.Load() != 1 {
		t.Errorf("no backoff between attempts (%d sleeps): %v", e.sleeps.Load(), pe)
	}
}

func TestManagerToolTimeoutAndBreaker(t *testing.T) {
	e := newEnv(t)
	e.stdio("fix", "serve", func(c *manager.ServerConfig) { c.ToolTimeout = 100 * time.Millisecond })
	clk := &clock{t: time.Unix(0, 0)}
	m := e.manager(manager.WithClock(clk.now), manager.WithBreaker(manager.BreakerConfig{FailureThreshold: 2, CoolDown: time.Minute, SuccessThreshold: 1}))
	ts, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "fix", Tools: []string{"sleep", "fail", "count"}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := invoke(t, ts, "sleep", `{}`)
	if err != nil || !r.IsError || !strings.Contains(r.Text, "did not answer within 100ms") {
		t.Fatalf("hung tool: %+v, %v", r, err)
	}
	// Internal errors count; two open the circuit and the third call never
	// reaches the server.
	for range 2 {
		if r, err := invoke(t, ts, "fail", `{}`); err != nil || !r.IsError {
			t.Fatalf("fail: %+v, %v", r, err)
		}
	}
	_, err = invoke(t, ts, "fail", `{}`)
	if !errors.Is(err, manager.ErrCircuitOpen) {
		t.Fatalf("third call: %v", err)
	}
	if n := countLines(t, e.file("fix.count")); n != 2 {
		t.Errorf("fail ran %d times, want 2", n)
	}
	// Circuits are per tool.
	if _, err := invoke(t, ts, "count", `{}`); err != nil {
		t.Errorf("another tool of the server: %v", err)
	}
	clk.advance(time.Minute)
	if m.CircuitState("fix", "fail") != manager.BreakerHalfOpen {
		t.Errorf("state after the cool-down: %v", m.CircuitState("fix", "fail"))
	}
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestManagerOversizedReply(t *testing.T) {
	e := newEnv(t)
	e.stdio("fix", "serve", nil)
	m := e.managerWith([]mcpgo.ConnectorOption{mcpgo.WithConnOptions(mcpgo.WithMaxMessageBytes(64 << 10))})
	ts, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "fix", Tools: []string{"big", "echo"}}})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := invoke(t, ts, "big", `{"n":1000}`); err != nil || len(r.Text) != 1000 {
		t.Fatalf("small reply: %v", err)
	}
	_, err = invoke(t, ts, "big", `{"n":200000}`)
	var tl *mcpgo.MessageTooLargeError
	if !errors.As(err, &tl) || tl.Limit != 64<<10 || !strings.Contains(err.Error(), `server "fix": the connection ended during the call to tool "big", which may have run: the server sent a message larger than 65536 bytes`) {
		t.Fatalf("oversized reply: %v", err)
	}
	if r, err := invoke(t, ts, "echo", `{"text":"fine"}`); err != nil || r.Text != "echo: fine" {
		t.Fatalf("after the oversized reply: %+v, %v", r, err)
	}

	h := startHTTP(t)
	if _, err := e.reg.Save(context.Background(), httpCfg("web", h.url())); err != nil {
		t.Fatal(err)
	}
	ts, err = m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "web", Tools: []string{"big"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = invoke(t, ts, "big", `{"n":200000}`); !errors.As(err, &tl) {
		t.Fatalf("oversized HTTP reply: %v", err)
	}
}

func httpCfg(id, url string) manager.ServerConfig {
	return manager.ServerConfig{ID: id, Transport: manager.Transport{Kind: manager.TransportHTTP, URL: url}}
}

func TestManagerListChanged(t *testing.T) {
	e := newEnv(t)
	e.stdio("fix", "serve", nil)
	h := startHTTP(t)
	if _, err := e.reg.Save(context.Background(), httpCfg("web", h.url())); err != nil {
		t.Fatal(err)
	}
	sse := servertest.NewTestServer(managerFixture())
	t.Cleanup(sse.Close)
	if _, err := e.reg.Save(context.Background(), manager.ServerConfig{ID: "sse", Transport: manager.Transport{Kind: manager.TransportSSE, URL: sse.URL + "/sse"}}); err != nil {
		t.Fatal(err)
	}
	m := e.manager(manager.WithToolCacheTTL(time.Hour))
	for _, id := range []string{"fix", "web", "sse"} {
		t.Run(id, func(t *testing.T) {
			ctx := context.Background()
			ts, err := m.Toolset(ctx, "agent", []manager.ToolSource{{Server: id, Tools: []string{"grow"}}})
			if err != nil {
				t.Fatal(err)
			}
			name := "grown_" + id
			if r, err := invoke(t, ts, "grow", `{"text":"`+name+`"}`); err != nil || r.IsError {
				t.Fatalf("grow: %+v, %v", r, err)
			}
			// The cache lives an hour; only the notification can refresh it.
			waitFor(t, "list_changed to bring "+name+" into the cached tool list", func() bool {
				tools, err := m.Tools(ctx, "agent", id)
				if err != nil {
					t.Fatal(err)
				}
				return hasTool(tools, name)
			})
		})
	}
}

// waitFor polls cond until it holds, for state that changes on an
// asynchronous event (a notification, a process exit) with nothing to
// wait on. The deadline is no timed assertion: it is far beyond any wait
// the event needs, and turns a regression into a failure that says what
// never happened instead of a hang until the global test timeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func hasTool(ts []manager.ToolInfo, name string) bool {
	for _, t := range ts {
		if t.Name == name {
			return true
		}
	}
	return false
}

func TestManagerHTTPRefusedAndRestarted(t *testing.T) {
	e := newEnv(t)
	t.Setenv("FIX_COUNT", e.file("web.count"))
	h := startHTTP(t)
	if _, err := e.reg.Save(context.Background(), httpCfg("web", h.url())); err != nil {
		t.Fatal(err)
	}
	m := e.manager()
	ts, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "web", Tools: []string{"count"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := invoke(t, ts, "count", `{}`); err != nil {
		t.Fatal(err)
	}
	h.stop()
	before := e.sleeps.Load()
	_, err = invoke(t, ts, "count", `{}`)
	if err == nil || !errors.Is(err, manager.ErrNotSent) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("call to a stopped server: %v", err)
	}
	if n := e.sleeps.Load() - before; n < 1 {
		t.Errorf("a request that was never sent was not retried")
	}
	h.start(h.addr)
	if r, err := invoke(t, ts, "count", `{}`); err != nil || r.Text != "counted" {
		t.Fatalf("after the restart: %+v, %v", r, err)
	}
	if n := countLines(t, e.file("web.count")); n != 2 {
		t.Errorf("count ran %d times, want 2", n)
	}

	// A server that never listened: every connection attempt is refused.
	// The URL's token and the header's secret stay out of the error.
	h.stop()
	down := httpCfg("down", h.url()+"?token=url-secret-0123456789")
	down.Transport.Headers = map[string]string{"Authorization": "Bearer header-secret-0123456789"}
	if _, err := e.reg.Save(context.Background(), down); err != nil {
		t.Fatal(err)
	}
	_, err = m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "down"}})
	var ce *manager.ConnectError
	if !errors.As(err, &ce) || ce.Attempts != 3 || !errors.Is(err, manager.ErrNotSent) {
		t.Fatalf("refused connections: %v", err)
	}
	if strings.Contains(err.Error(), "secret-0123456789") {
		t.Errorf("error leaks a secret: %v", err)
	}
}

// rebinding answers with a public address first and a private one after,
// as a DNS rebinding attacker's name server does.
type rebinding struct {
	mu    sync.Mutex
	calls int
	to    netip.Addr
}

func (r *rebinding) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls == 1 {
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	return []netip.Addr{r.to}, nil
}

func TestManagerSSRFCheckedAtDialTime(t *testing.T) {
	h := startHTTP(t)
	_, port, _ := strings.Cut(h.addr, ":")
	res := &rebinding{to: netip.MustParseAddr("127.0.0.1")}
	p := manager.Policy{Resolver: res} // private networks not allowed
	store := manager.NewMemoryServerStore()
	reg := manager.NewRegistry(store, p)
	// On save the name resolves to a public address and passes.
	if _, err := reg.Save(context.Background(), httpCfg("evil", "http://mcp.rebind.test:"+port+"/mcp")); err != nil {
		t.Fatal(err)
	}
	// Loading resolves again (now private) and refuses: use a registry that
	// does not resolve, so the dial-time check is what is tested.
	m := manager.NewManager(manager.NewRegistry(store, manager.Policy{}), mcpgo.NewConnector(manager.Policy{}, mcpgo.WithDialResolver(res)),
		manager.WithSleep(func(ctx context.Context, _ time.Duration) error { return ctx.Err() }))
	defer m.CloseAll()
	_, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "evil"}})
	var be *manager.BlockedAddressError
	if !errors.As(err, &be) || be.Reason != "loopback" || !strings.Contains(err.Error(), "mcp.rebind.test") {
		t.Fatalf("rebinding to loopback: %v", err)
	}
	var ce *manager.ConnectError
	if errors.As(err, &ce) && ce.Attempts != 1 {
		t.Errorf("a refused address was retried %d times", ce.Attempts-1)
	}
	if n := h.accepts.Load(); n != 0 {
		t.Errorf("the server accepted %d connections", n)
	}
	// The same name and resolver with private networks allowed connects,
	// so it was the guard that refused.
	dev := manager.Policy{AllowPrivateNetworks: true}
	m2 := manager.NewManager(manager.NewRegistry(store, dev), mcpgo.NewConnector(dev, mcpgo.WithDialResolver(res)))
	defer m2.CloseAll()
	if _, err := m2.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "evil", Tools: []string{"echo"}}}); err != nil {
		t.Fatal(err)
	}
	// The metadata address stays blocked even then.
	res.mu.Lock()
	res.to = netip.MustParseAddr("169.254.169.254")
	res.mu.Unlock()
	if err := m2.Reconnect(context.Background(), "evil"); !errors.As(err, &be) || be.Reason != "cloud metadata" {
		t.Fatalf("metadata address with private networks allowed: %v", err)
	}
}

func TestManagerPreflightAndAccess(t *testing.T) {
	e := newEnv(t)
	e.stdio("fix", "serve", nil)
	e.stdio("private", "serve", func(c *manager.ServerConfig) { c.AllowedAgents = []string{"billing"} })
	m := e.manager()
	ctx := context.Background()
	_, err := m.Toolset(ctx, "support", []manager.ToolSource{{Server: "nowhere"}, {Server: "private"}, {Server: "fix"}})
	var pe *manager.PreflightError
	if !errors.As(err, &pe) || len(pe.Problems) != 2 || !errors.Is(err, manager.ErrServerNotFound) || !errors.Is(err, manager.ErrAgentNotAllowed) {
		t.Fatalf("offline preflight: %v", err)
	}
	if n := countLines(t, e.file("private.pids")) + countLines(t, e.file("fix.pids")); n != 0 {
		t.Errorf("%d servers started for a toolset that cannot be built", n)
	}
	_, err = m.Toolset(ctx, "support", []manager.ToolSource{{Server: "fix", Tools: []string{"echo", "nope", "gone"}}})
	var me *mcpruntime.MissingToolError
	if !errors.As(err, &me) || strings.Join(me.Tools, ",") != "nope,gone" || !strings.Contains(err.Error(), `"echo"`) {
		t.Fatalf("missing tools: %v", err)
	}
	if _, err := m.Toolset(ctx, "billing", []manager.ToolSource{{Server: "private", Tools: []string{"echo"}}}); err != nil {
		t.Errorf("allowed agent: %v", err)
	}
	if _, err := m.Caller(ctx, "support", "private"); !errors.Is(err, manager.ErrAgentNotAllowed) {
		t.Errorf("Caller for a denied agent: %v", err)
	}
}

func TestManagerDriftPolicy(t *testing.T) {
	e := newEnv(t)
	e.stdio("fix", "serve", nil)
	ctx := context.Background()
	// Bindings generated from an older echo whose schema had no "n".
	old := &mcpruntime.Descriptor{Name: "echo", Annotations: mcpruntime.DefaultAnnotations(),
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}
	old.SchemaHash = manager.SchemaHash(old.InputSchema, nil)
	current := &mcpruntime.Descriptor{Name: "echo", Annotations: mcpruntime.DefaultAnnotations(), InputSchema: json.RawMessage(objectIn)}
	current.SchemaHash = manager.SchemaHash(json.RawMessage(" "+objectIn+" "), nil)
	bind := func(d *mcpruntime.Descriptor) func(mcpruntime.Caller, ...mcpruntime.Option) []mcpruntime.Invoker {
		return func(c mcpruntime.Caller, opts ...mcpruntime.Option) []mcpruntime.Invoker {
			return []mcpruntime.Invoker{mcpruntime.NewTool[EmptyInput, mcpruntime.NoOutput](d, c, opts...)}
		}
	}
	strict := e.manager(manager.WithDriftPolicy(manager.DriftFail))
	// Drift known when the toolset is built fails at start.
	_, err := strict.Toolset(ctx, "agent", []manager.ToolSource{{Server: "fix", Bind: bind(old)}})
	var de *manager.DriftError
	var pe *manager.PreflightError
	if !errors.As(err, &pe) || !errors.As(err, &de) || de.Want != old.SchemaHash || de.Tool != "echo" || !strings.Contains(err.Error(), "regenerate") {
		t.Fatalf("drift under DriftFail at start: %v", err)
	}
	ts, err := strict.Toolset(ctx, "agent", []manager.ToolSource{{Server: "fix", Bind: bind(current)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := invoke(t, ts, "echo", `{}`); err != nil {
		t.Fatalf("current bindings: %v", err)
	}
	// The server changes echo under a running toolset: list_changed drops
	// the cached list, and the next call finds the drift.
	admin, err := strict.Toolset(ctx, "agent", []manager.ToolSource{{Server: "fix", Tools: []string{"reshape"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := invoke(t, admin, "reshape", `{}`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "list_changed to make the reshaped echo fail", func() bool {
		_, err = invoke(t, ts, "echo", `{}`)
		return err != nil
	})
	if !errors.As(err, &de) || de.Want != current.SchemaHash {
		t.Fatalf("drift under DriftFail at call time: %v", err)
	}

	var mu sync.Mutex
	var warned []*manager.DriftError
	lenient := e.manager(manager.WithDriftHandler(func(d *manager.DriftError) { mu.Lock(); warned = append(warned, d); mu.Unlock() }))
	e.stdio("fix2", "serve", nil)
	ts, err = lenient.Toolset(ctx, "agent", []manager.ToolSource{{Server: "fix2", Bind: bind(old)}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := invoke(t, ts, "echo", `{}`); err != nil {
			t.Fatalf("drift under DriftWarn: %v", err)
		}
	}
	if len(warned) != 1 {
		t.Errorf("%d drift warnings, want 1", len(warned))
	}
	// Bindings lacking a tool the source names.
	_, err = lenient.Toolset(ctx, "agent", []manager.ToolSource{{Server: "fix2", Tools: []string{"echo", "count"}, Bind: bind(old)}})
	if err == nil || !strings.Contains(err.Error(), `bindings have no "count"`) {
		t.Errorf("unbound tool: %v", err)
	}
}

func TestManagerConcurrencyCap(t *testing.T) {
	e := newEnv(t)
	e.stdio("fix", "serve", func(c *manager.ServerConfig) { c.MaxConcurrentCalls = 2 })
	m := e.manager()
	ts, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "fix", Tools: []string{"inflight"}}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	most := 0
	for range 8 {
		wg.Go(func() {
			r, err := invoke(t, ts, "inflight", `{}`)
			if err != nil {
				t.Error(err)
				return
			}
			n, _ := strconv.Atoi(r.Text)
			mu.Lock()
			most = max(most, n)
			mu.Unlock()
		})
	}
	wg.Wait()
	if most > 2 || most < 1 {
		t.Errorf("the server saw %d calls in flight at once, cap 2", most)
	}
}

func TestManagerGoToolsJoinToolset(t *testing.T) {
	e := newEnv(t)
	e.stdio("fix", "serve", nil)
	m := e.manager()
	clockTool := mcpruntime.NewGoTool[EmptyInput](&mcpruntime.Descriptor{Name: "now", InputSchema: json.RawMessage(emptyIn)},
		mcpruntime.GoToolOptions{}, func(context.Context, EmptyInput) (mcpruntime.ModelResult, error) {
			return mcpruntime.ModelResult{Text: "noon"}, nil
		})
	ts, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "fix", Tools: []string{"echo"}}}, clockTool)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ts.Names(), ","); got != "echo,now" {
		t.Errorf("toolset = %s", got)
	}
	run := mcpruntime.NewRun("")
	ctx := mcpruntime.WithRun(context.Background(), run)
	if r, err := ts.Invoke(ctx, "now", nil); err != nil || r.Text != "noon" {
		t.Fatalf("Go tool: %+v, %v", r, err)
	}
	if r, err := ts.Invoke(ctx, "echo", json.RawMessage(`{"text":"x"}`)); err != nil || r.Text != "echo: x" {
		t.Fatalf("MCP tool: %+v, %v", r, err)
	}
	if l := run.Ledger(); len(l) != 2 || l[0].External || !l[1].External || l[1].Server != "fix" {
		t.Errorf("ledger = %+v", l)
	}
	if err := m.CloseAll(); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Invoke(ctx, "echo", json.RawMessage(`{"text":"x"}`)); !errors.Is(err, manager.ErrManagerClosed) {
		t.Errorf("call after CloseAll: %v", err)
	}
}

// The npm reference server registers some tools only after the handshake
// and announces them with list_changed; over streamable HTTP it speaks an
// older protocol, where the notification comes on the standalone GET
// stream the connector opens for it.
func TestManagerEverythingServer(t *testing.T) {
	node, args := everythingServer(t)
	_ = node // the registry takes the bare name "node", from the default allowlist
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.reg.Save(ctx, manager.ServerConfig{ID: "everything", Transport: manager.Transport{Kind: manager.TransportStdio, Command: "node", Args: args}}); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	srv := exec.Command(node, args[0], "streamableHttp")
	srv.Env = append(os.Environ(), "PORT="+port)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	t.Cleanup(func() { _ = srv.Process.Kill(); <-exited })
	waitFor(t, "server-everything to listen on port "+port, func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
			return true
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the HTTP server exited before listening: %v", err)
		default:
		}
		return false
	})
	if _, err := e.reg.Save(ctx, httpCfg("everything-http", "http://127.0.0.1:"+port+"/mcp")); err != nil {
		t.Fatal(err)
	}
	m := e.manager(manager.WithToolCacheTTL(time.Hour))
	for _, id := range []string{"everything", "everything-http"} {
		t.Run(id, func(t *testing.T) {
			ts, err := m.Toolset(ctx, "agent", []manager.ToolSource{{Server: id, Tools: []string{"echo", "get-sum"}}})
			if err != nil {
				t.Fatal(err)
			}
			if r, err := invoke(t, ts, "echo", `{"message":"hi"}`); err != nil || !strings.Contains(r.Text, "hi") {
				t.Fatalf("echo: %+v, %v", r, err)
			}
			if r, err := invoke(t, ts, "get-sum", `{"a":2,"b":3}`); err != nil || !strings.Contains(r.Text, "5") {
				t.Fatalf("get-sum: %+v, %v", r, err)
			}
			waitFor(t, "list_changed to refresh the hour-long cache with simulate-research-query", func() bool {
				tools, err := m.Tools(ctx, "agent", id)
				if err != nil {
					t.Fatal(err)
				}
				return hasTool(tools, "simulate-research-query")
			})
		})
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

func TestManagerToolCacheTTL(t *testing.T) {
	e := newEnv(t)
	h := startHTTP(t)
	if _, err := e.reg.Save(context.Background(), httpCfg("web", h.url())); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	clk := &clock{t: time.Unix(0, 0)}
	// On 2025-11-25 a list carries no caching hints, so the manager's own
	// TTL applies (reach_test.go has the hints of 2026-07-28).
	legacy := []mcpgo.ConnectorOption{mcpgo.WithConnOptions(mcpgo.WithProtocolVersion("2025-11-25"))}
	m := e.managerWith(legacy, manager.WithClock(clk.now), manager.WithToolCacheTTL(time.Minute))
	for range 3 {
		if _, err := m.Tools(ctx, "agent", "web"); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.lists.Load(); n != 1 {
		t.Errorf("%d tools/list requests within the TTL, want 1", n)
	}
	clk.advance(time.Minute)
	if _, err := m.Tools(ctx, "agent", "web"); err != nil {
		t.Fatal(err)
	}
	if n := h.lists.Load(); n != 2 {
		t.Errorf("%d tools/list requests after the TTL, want 2", n)
	}

	uncached := e.managerWith(legacy, manager.WithToolCacheTTL(0))
	before := h.lists.Load()
	for range 3 {
		if _, err := uncached.Tools(ctx, "agent", "web"); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.lists.Load() - before; n != 3 {
		t.Errorf("%d tools/list requests with the cache disabled, want 3", n)
	}
}

func TestManagerConcurrentCallsAcrossReconnects(t *testing.T) {
	e := newEnv(t)
	// Each of the three reconnects can cut a call off once.
	e.stdio("fix", "serve", func(c *manager.ServerConfig) { c.MaxRetries = 5 })
	m := e.manager()
	ts, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "fix", Tools: []string{"echo"}}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 10 {
				want := "echo: " + strconv.Itoa(i*100+j)
				// echo is idempotent: a call cut off by a reconnect is
				// retried on the new connection.
				r, err := invoke(t, ts, "echo", `{"text":"`+strconv.Itoa(i*100+j)+`"}`)
				if err != nil || r.Text != want {
					t.Errorf("call %d/%d: %+v, %v", i, j, r, err)
				}
			}
		})
	}
	wg.Go(func() {
		for range 3 {
			if err := m.Reconnect(context.Background(), "fix"); err != nil {
				t.Errorf("Reconnect: %v", err)
			}
		}
	})
	wg.Wait()
}
