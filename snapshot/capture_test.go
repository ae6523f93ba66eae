package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/server/servertest"

	"github.com/mcpgen/mcpgen/internal/testserver"
	"github.com/mcpgen/mcpgen/manifest"
)

// The test binary doubles as the stdio test server: a child started with
// the mode variable set runs the server instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv(testserver.ModeEnv) != "" {
		os.Exit(testserver.Main(os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

const canary = "canary-7f3a9c1e-DO-NOT-LEAK"

func stdioSource(mode string, env ...string) Source {
	return Source{
		ID:        "crm",
		Transport: Stdio,
		Command:   os.Args[0],
		Env:       append([]string{testserver.ModeEnv + "=" + mode}, env...),
	}
}

func snap(t *testing.T, src Source, opts Options) *manifest.Manifest {
	t.Helper()
	if opts.Timeout == 0 {
		opts.Timeout = 20 * time.Second
	}
	m, err := Capture(context.Background(), src, opts)
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	return m
}

func encode(t *testing.T, m *manifest.Manifest) []byte {
	t.Helper()
	b, err := manifest.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func keys(es []manifest.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

func member(t *testing.T, m *manifest.Manifest, tool, name string) any {
	t.Helper()
	for _, e := range m.Tools {
		if e.Key == tool {
			var obj map[string]any
			if err := json.Unmarshal(e.Raw, &obj); err != nil {
				t.Fatal(err)
			}
			return obj[name]
		}
	}
	t.Fatalf("no tool %q in %v", tool, keys(m.Tools))
	return nil
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCaptureStdio(t *testing.T) {
	m := snap(t, stdioSource(testserver.ModeRich), Options{})
	checkRich(t, m)
}

// checkRich checks a capture of the rich test server on any transport.
func checkRich(t *testing.T, m *manifest.Manifest) {
	t.Helper()
	// Five tools served two per page: every page was read.
	m.Sort()
	if d := cmp.Diff(testserver.ToolNames(), keys(m.Tools)); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if m.ProtocolVersion != "2026-07-28" {
		t.Errorf("protocol = %q, want 2026-07-28", m.ProtocolVersion)
	}
	if m.Instructions != testserver.Instructions {
		t.Errorf("instructions = %q", m.Instructions)
	}
	var info map[string]any
	if err := json.Unmarshal(m.ServerInfo, &info); err != nil || info["name"] != "mcpgen-testserver" || info["version"] != "1.0.0" {
		t.Errorf("serverInfo = %s (%v)", m.ServerInfo, err)
	}
	var caps map[string]any
	if err := json.Unmarshal(m.Capabilities, &caps); err != nil || caps["tools"] == nil || caps["resources"] == nil || caps["prompts"] == nil {
		t.Errorf("capabilities = %s (%v)", m.Capabilities, err)
	}
	// Schemas are kept whole, including what mcp-go's client types drop.
	if d := cmp.Diff(decode(t, testserver.CreateDealInput), member(t, m, "create_deal", "inputSchema")); d != "" {
		t.Errorf("create_deal inputSchema (-want +got):\n%s", d)
	}
	if d := cmp.Diff(decode(t, testserver.DealOutput), member(t, m, "create_deal", "outputSchema")); d != "" {
		t.Errorf("create_deal outputSchema (-want +got):\n%s", d)
	}
	if d := cmp.Diff(decode(t, testserver.DealOutput), member(t, m, "get_deal", "outputSchema")); d != "" {
		t.Errorf("get_deal outputSchema (-want +got):\n%s", d)
	}
	for name, want := range map[string]string{
		"title":       `"Create deal"`,
		"annotations": `{"title":"Create deal","readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}`,
		"icons":       `[{"src":"https://example.com/icons/deal.svg","mimeType":"image/svg+xml","sizes":["any"]}]`,
		"_meta":       `{"example.com/category":"sales"}`,
	} {
		if d := cmp.Diff(decode(t, want), member(t, m, "create_deal", name)); d != "" {
			t.Errorf("create_deal %s (-want +got):\n%s", name, d)
		}
	}
	if d := cmp.Diff(decode(t, `{"taskSupport":"forbidden"}`), member(t, m, "delete_deal", "execution")); d != "" {
		t.Errorf("delete_deal execution (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"mem://pipeline", "mem://readme"}, keys(m.Resources)); d != "" {
		t.Errorf("resources (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"mem://deals/{id}"}, keys(m.ResourceTemplates)); d != "" {
		t.Errorf("templates (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"summarize_deal"}, keys(m.Prompts)); d != "" {
		t.Errorf("prompts (-want +got):\n%s", d)
	}
}

func TestCaptureStreamableHTTP(t *testing.T) {
	ts := servertest.NewTestStreamableHTTPServer(testserver.New(testserver.Options{PageSize: 2}))
	defer ts.Close()
	m := snap(t, Source{ID: "crm", Transport: HTTP, URL: ts.URL + "/mcp"}, Options{})
	checkRich(t, m)
	// The same server over stdio gives the same file.
	if d := cmp.Diff(string(encode(t, snap(t, stdioSource(testserver.ModeRich), Options{}))), string(encode(t, m))); d != "" {
		t.Errorf("stdio vs HTTP manifest (-stdio +http):\n%s", d)
	}
}

func TestCaptureSSE(t *testing.T) {
	ts := servertest.NewTestServer(testserver.New(testserver.Options{PageSize: 2}))
	defer ts.Close()
	m := snap(t, Source{ID: "crm", Transport: SSE, URL: ts.URL + "/sse"}, Options{})
	checkRich(t, m)
}

// TestHeadersReachServer checks that configured headers are sent, with a
// server that refuses requests without them.
func TestHeadersReachServer(t *testing.T) {
	h := server.NewStreamableHTTPServer(testserver.New(testserver.Options{}))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+canary {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	src := Source{ID: "crm", Transport: HTTP, URL: ts.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer " + canary}, Secrets: []string{canary}, SecretNames: []string{"CRM_TOKEN"}}
	m := snap(t, src, Options{})
	if len(m.Tools) != len(testserver.ToolNames()) {
		t.Errorf("got %d tools", len(m.Tools))
	}
	src.Headers = nil
	_, err := Capture(context.Background(), src, Options{Timeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "crm") {
		t.Fatalf("without the header: err = %v, want a failure naming the server", err)
	}
}

func TestDeterministic(t *testing.T) {
	a := encode(t, snap(t, stdioSource(testserver.ModeRich), Options{}))
	b := encode(t, snap(t, stdioSource(testserver.ModeRich), Options{}))
	if !bytes.Equal(a, b) {
		t.Errorf("two captures differ:\n%s", cmp.Diff(string(a), string(b)))
	}
	// A server listing its tools in another order, on one page, gives
	// the same bytes.
	r := encode(t, snap(t, stdioSource(testserver.ModeReversed), Options{}))
	if !bytes.Equal(a, r) {
		t.Errorf("reversed order changes the manifest:\n%s", cmp.Diff(string(a), string(r)))
	}
	if bytes.Contains(a, []byte(os.TempDir())) || bytes.Contains(a, []byte(os.Args[0])) {
		t.Error("manifest contains host paths")
	}
}

func TestRawLegacyServer(t *testing.T) {
	m := snap(t, stdioSource(testserver.ModeRaw), Options{})
	if m.ProtocolVersion != "2025-11-25" {
		t.Errorf("protocol = %q, want the legacy 2025-11-25", m.ProtocolVersion)
	}
	// mcp-go's client cannot decode the "maybe" tool (a type array at the
	// top of its schema); the raw capture keeps both tools verbatim.
	var want struct{ Tools []any }
	if err := json.Unmarshal([]byte(testserver.RawTools), &want); err != nil {
		t.Fatal(err)
	}
	var got []any
	for _, e := range m.Tools {
		var v any
		if err := json.Unmarshal(e.Raw, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if d := cmp.Diff(want.Tools, got); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if d := cmp.Diff(decode(t, `{"name":"raw-fake","version":"0.1.0","title":"Raw fake"}`), decode(t, string(m.ServerInfo))); d != "" {
		t.Errorf("serverInfo (-want +got):\n%s", d)
	}
	if m.Instructions != "Hand-written." {
		t.Errorf("instructions = %q", m.Instructions)
	}
	// Only tools are advertised: nothing else was listed.
	if len(m.Resources)+len(m.ResourceTemplates)+len(m.Prompts) != 0 {
		t.Errorf("listed unadvertised kinds: %+v", m)
	}
}

func TestFilters(t *testing.T) {
	m := snap(t, stdioSource(testserver.ModeRich), Options{Include: []string{"*_deal"}, Exclude: []string{"delete_*"}})
	if d := cmp.Diff([]string{"create_deal", "get_deal"}, keys(m.Tools)); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	_, err := Capture(context.Background(), stdioSource(testserver.ModeRich), Options{Include: []string{"nothing_*"}, Timeout: 20 * time.Second})
	if !errors.Is(err, ErrNoTools) || !strings.Contains(err.Error(), "filters") {
		t.Errorf("err = %v, want ErrNoTools about the filters", err)
	}
}

func TestEmptyServer(t *testing.T) {
	_, err := Capture(context.Background(), stdioSource(testserver.ModeEmpty), Options{Timeout: 20 * time.Second})
	if !errors.Is(err, ErrNoTools) || !strings.Contains(err.Error(), `server "crm"`) {
		t.Fatalf("err = %v, want ErrNoTools naming the server", err)
	}
	m := snap(t, stdioSource(testserver.ModeEmpty), Options{AllowEmpty: true})
	if len(m.Tools) != 0 || len(m.Prompts) != 1 {
		t.Errorf("got %d tools, %d prompts", len(m.Tools), len(m.Prompts))
	}
}

// failing runs a capture that must fail and returns its error after the
// common checks: typed, naming the server, never showing the canary.
func failing(t *testing.T, src Source, opts Options, kind error) *Error {
	t.Helper()
	src.Secrets = append(src.Secrets, canary)
	src.SecretNames = append(src.SecretNames, testserver.CanaryEnv)
	src.Env = append(src.Env, testserver.CanaryEnv+"="+canary)
	if opts.Timeout == 0 {
		opts.Timeout = 20 * time.Second
	}
	_, err := Capture(context.Background(), src, opts)
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
	var e *Error
	if !errors.As(err, &e) || e.ID != src.ID {
		t.Fatalf("err = %#v, want an *Error for %q", err, src.ID)
	}
	if !strings.Contains(err.Error(), `server "`+src.ID+`"`) {
		t.Errorf("error does not name the server: %v", err)
	}
	for u := error(e); u != nil; u = errors.Unwrap(u) {
		if strings.Contains(u.Error(), canary) {
			t.Errorf("error chain shows the secret: %v", u)
		}
	}
	return e
}

func TestServerExits(t *testing.T) {
	e := failing(t, stdioSource(testserver.ModeExit), Options{}, ErrExited)
	if !strings.Contains(e.Error(), "cannot open database") || !strings.Contains(e.Error(), "exit status 3") {
		t.Errorf("error lacks the stderr tail or exit status: %v", e)
	}
	if !strings.Contains(e.Stderr, "[redacted ${MCPGEN_CANARY}]") {
		t.Errorf("stderr tail not redacted as expected: %q", e.Stderr)
	}
}

func TestGarbageServer(t *testing.T) {
	e := failing(t, stdioSource(testserver.ModeGarbage), Options{Timeout: time.Minute}, ErrNotMCP)
	if !strings.Contains(e.Error(), "Welcome to the CRM shell") {
		t.Errorf("error does not show the offending line: %v", e)
	}
}

func TestHangingServer(t *testing.T) {
	// The server writes its pid as it starts. A timeout that fires before
	// it did (a slow start on a busy machine) shows nothing about the
	// process, so the test tries again with a longer one: it waits for the
	// server to have started, not for it to start within a budget.
	var pid int
	for timeout := 500 * time.Millisecond; pid == 0; timeout *= 4 {
		if timeout > 2*time.Minute {
			t.Fatal("the hanging server never wrote its pid before the capture timed out")
		}
		pidFile := filepath.Join(t.TempDir(), "pid")
		src := stdioSource(testserver.ModeHang, testserver.PIDFileEnv+"="+pidFile)
		failing(t, src, Options{Timeout: timeout}, ErrTimeout)
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(string(b))
		}
	}
	// The server ignores the end of its input; it must be killed anyway.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server process %d still exists after Capture returned (kill(0) = %v)", pid, err)
	}
}

func TestRepeatedCursor(t *testing.T) {
	e := failing(t, stdioSource(testserver.ModeRepeat), Options{}, ErrRepeatedCursor)
	if !strings.Contains(e.Error(), `"again"`) {
		t.Errorf("error does not show the cursor: %v", e)
	}
}

func TestSecretInServerOutput(t *testing.T) {
	e := failing(t, stdioSource(testserver.ModeCanary), Options{}, ErrSecretInOutput)
	if !strings.Contains(e.Error(), "${MCPGEN_CANARY}") || !strings.Contains(e.Error(), `tool "whoami"`) {
		t.Errorf("error does not name the variable and the tool: %v", e)
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, tr := range []Transport{HTTP, SSE} {
		src := Source{ID: "gone", Transport: tr, URL: "http://" + addr + "/mcp?token=" + canary}
		_, err := Capture(context.Background(), src, Options{Timeout: 20 * time.Second})
		if err == nil || errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("%s: err = %v, want connection refused", tr, err)
			continue
		}
		// This source declares no secrets, so the test declares one now.
		src.Secrets, src.SecretNames = []string{canary}, []string{"TOKEN"}
		_, err = Capture(context.Background(), src, Options{Timeout: 20 * time.Second})
		if err == nil || strings.Contains(err.Error(), canary) || !strings.Contains(err.Error(), "[redacted ${TOKEN}]") {
			t.Errorf("%s: err = %v, want the token redacted", tr, err)
		}
	}
}

func TestBadCommand(t *testing.T) {
	src := Source{ID: "nope", Transport: Stdio, Command: filepath.Join(t.TempDir(), "no-such-server")}
	_, err := Capture(context.Background(), src, Options{})
	if err == nil || !strings.Contains(err.Error(), "cannot start the server command") || !strings.Contains(err.Error(), `server "nope"`) {
		t.Errorf("err = %v", err)
	}
}

func TestInvalidSource(t *testing.T) {
	for _, src := range []Source{
		{Transport: Stdio, Command: "x"},
		{ID: "a", Transport: Stdio},
		{ID: "a", Transport: HTTP},
		{ID: "a", Transport: "carrier-pigeon"},
	} {
		if _, err := Capture(context.Background(), src, Options{}); !errors.Is(err, ErrInvalidSource) {
			t.Errorf("%+v: err = %v", src, err)
		}
	}
	_, err := Capture(context.Background(), stdioSource("rich"), Options{Include: []string{"[a-"}})
	if !errors.Is(err, ErrInvalidSource) {
		t.Errorf("bad pattern: err = %v", err)
	}
}
