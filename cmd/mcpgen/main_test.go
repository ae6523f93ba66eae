package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpgen/mcpgen/internal/testca"
	"github.com/mcpgen/mcpgen/internal/testserver"
	"github.com/mcpgen/mcpgen/manifest"
)

// The test binary doubles as the test MCP server when the mode is set.
func TestMain(m *testing.M) {
	if os.Getenv(testserver.ModeEnv) != "" {
		os.Exit(testserver.Main(os.Stdin, os.Stdout, os.Stderr))
	}
	// The commands trust the system roots: every TLS server of these tests
	// has a certificate of testCA, which SSL_CERT_FILE makes the only root.
	dir, err := os.MkdirTemp("", "mcpgen-ca-")
	if err == nil {
		if testCA, err = testca.New(); err == nil {
			err = testCA.Trust(dir)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var testCA *testca.CA

func mcpgen(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string // substring of stdout
		err  string // substring of stderr
	}{
		{nil, 2, "", "usage: mcpgen <command>"},
		{[]string{"version"}, 0, "mcpgen ", ""},
		{[]string{"--version"}, 0, "mcpgen ", ""},
		{[]string{"help"}, 0, "snapshot", ""},
		{[]string{"help", "snapshot"}, 0, "--allow-empty", ""},
		{[]string{"snapshot", "--help"}, 0, "--timeout", ""},
		{[]string{"help", "nope"}, 2, "", `mcpgen: help: unknown command "nope"`},
		{[]string{"nope"}, 2, "", `mcpgen: unknown command "nope"`},
		{[]string{"version", "extra"}, 2, "", "mcpgen: version: unexpected arguments"},
		{[]string{"snapshot", "--bogus"}, 2, "", "mcpgen: snapshot: unknown flag: --bogus"},
		{[]string{"snapshot", "--timeout", "soon"}, 2, "", "mcpgen: snapshot: invalid argument"},
		{[]string{"snapshot", "--stdio", "x"}, 2, "", "--id is required"},
		{[]string{"snapshot", "--stdio", "x", "--http", "http://h", "--id", "a"}, 2, "", "--http and --stdio are exclusive"},
		{[]string{"snapshot", "--stdio", "'x", "--id", "a"}, 2, "", "unterminated single quote"},
		{[]string{"snapshot", "--stdio", "x", "--id", "a", "--header", "A=b"}, 2, "", "--header needs --http or --sse"},
		{[]string{"snapshot", "--http", "http://h", "--id", "a", "--env", "A=b"}, 2, "", "--env needs --stdio"},
		{[]string{"snapshot", "--id", "a"}, 2, "", "--id needs --stdio, --http or --sse"},
		{[]string{"snapshot", "--stdio", "x", "--id", "Bad"}, 2, "", `id "Bad" must match`},
		{[]string{"snapshot", "--config", "/nonexistent/mcpgen.yaml"}, 1, "", "mcpgen: open /nonexistent/mcpgen.yaml"},
	} {
		code, out, errOut := mcpgen(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.err) {
			t.Errorf("mcpgen %q = %d\nstdout: %s\nstderr: %s\nwant %d, stdout ~ %q, stderr ~ %q", tc.args, code, out, errOut, tc.code, tc.out, tc.err)
		}
		for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
			if code != 0 && line != "" && !strings.HasPrefix(line, "mcpgen: ") && !strings.HasPrefix(line, "usage: ") && !strings.HasPrefix(line, " ") &&
				!strings.HasPrefix(line, "mcpgen turns") && !strings.HasPrefix(line, "commands:") && !strings.HasPrefix(line, "Run `mcpgen") {
				t.Errorf("mcpgen %q: stderr line without the mcpgen: prefix: %q", tc.args, line)
			}
		}
	}
}

// writeConfig writes a config whose stdio servers are this test binary in
// the given modes, and returns its path.
func writeConfig(t *testing.T, dir, body string) string {
	t.Helper()
	body = strings.ReplaceAll(body, "BIN", os.Args[0])
	p := filepath.Join(dir, "mcpgen.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSnapshotConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: crm
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: rich}}
  - id: raw
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: raw}}
    manifest: other/raw.json
`)
	code, out, errOut := mcpgen(t, "snapshot", "--config", cfg)
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"crm: protocol 2026-07-28, 5 tools", "raw: protocol 2025-11-25, 2 tools", "(wrote " + filepath.ToSlash(filepath.Join(dir, "mcp/crm.json")) + ")"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("progress lacks %q:\n%s", want, errOut)
		}
	}
	crm := read(t, filepath.Join(dir, "mcp", "crm.json"))
	raw := read(t, filepath.Join(dir, "other", "raw.json"))
	if f, err := manifest.Parse("crm.json", crm); err != nil || f.Manifest.ID != "crm" || len(f.Manifest.Tools) != 5 {
		t.Errorf("crm manifest: %v", err)
	}
	before, _ := os.Stat(filepath.Join(dir, "mcp", "crm.json"))

	// A second run finds nothing to change and writes nothing.
	code, _, errOut = mcpgen(t, "snapshot", "--config", cfg)
	if code != 0 || strings.Count(errOut, "(unchanged)") != 2 {
		t.Fatalf("second run: exit %d:\n%s", code, errOut)
	}
	after, _ := os.Stat(filepath.Join(dir, "mcp", "crm.json"))
	if !after.ModTime().Equal(before.ModTime()) || !bytes.Equal(crm, read(t, filepath.Join(dir, "mcp", "crm.json"))) {
		t.Error("an unchanged manifest was rewritten")
	}

	// --server selects, --quiet silences.
	code, _, errOut = mcpgen(t, "snapshot", "--config", cfg, "--server", "raw", "--quiet")
	if code != 0 || errOut != "" {
		t.Errorf("--server raw --quiet: exit %d, stderr %q", code, errOut)
	}
	if !bytes.Equal(raw, read(t, filepath.Join(dir, "other", "raw.json"))) {
		t.Error("raw manifest changed between runs")
	}
	code, _, errOut = mcpgen(t, "snapshot", "--config", cfg, "--server", "nope")
	if code != 2 || !strings.Contains(errOut, `no server "nope"`) {
		t.Errorf("--server nope: exit %d, stderr %q", code, errOut)
	}
	// No temp files are left behind.
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if strings.Contains(filepath.Base(p), ".tmp-") {
			t.Errorf("temp file left: %s", p)
		}
		return nil
	})
}

func TestFailingServerLeavesOthersAlone(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: good
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: rich}}
  - id: dead
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: exit}}
  - id: slow
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: hang}}
`)
	old := []byte("previous manifest, must survive\n")
	for _, id := range []string{"dead", "slow"} {
		if _, err := writeFile(filepath.Join(dir, "mcp", id+".json"), old); err != nil {
			t.Fatal(err)
		}
	}
	// The timeout bounds every server, the good one too. Only the hanging
	// one may hit it: when another did (a slow start on a busy machine),
	// the run says nothing about them, and it is repeated with a longer
	// timeout. The test waits for the servers, not for a budget.
	var code int
	var errOut, timeout string
	for d := time.Second; ; d *= 4 {
		if d > 5*time.Minute {
			t.Fatalf("the good and the dead server kept hitting the timeout:\n%s", errOut)
		}
		timeout = d.String()
		code, _, errOut = mcpgen(t, "snapshot", "--config", cfg, "--timeout", timeout)
		if !timedOut(errOut, "good") && !timedOut(errOut, "dead") {
			break
		}
		t.Logf("--timeout %s: another server than the hanging one hit it; trying a longer one", timeout)
	}
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, errOut)
	}
	for _, want := range []string{
		`mcpgen: connect to server "dead": the server process exited (exit status 3)`,
		"cannot open database",
		`mcpgen: connect to server "slow": no reply within the timeout (` + timeout + ")",
		"mcpgen: 2 of 3 servers failed; their manifests were not changed",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	for _, id := range []string{"dead", "slow"} {
		if got := read(t, filepath.Join(dir, "mcp", id+".json")); !bytes.Equal(got, old) {
			t.Errorf("%s manifest changed: %q", id, got)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "mcp", "good.json")); err != nil {
		t.Error("good manifest not written")
	}
}

// timedOut says whether mcpgen's stderr reports that server id hit the
// timeout.
func timedOut(stderr, id string) bool {
	for line := range strings.Lines(stderr) {
		if strings.HasPrefix(line, `mcpgen: server "`+id+`": `) && strings.Contains(line, "no reply within the timeout") {
			return true
		}
	}
	return false
}

func TestConfigErrorIsPositioned(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "version: 1\nservers:\n  - id: crm\n    stdio: {args: [x]}\n")
	code, _, errOut := mcpgen(t, "snapshot", "--config", cfg)
	want := "mcpgen: " + cfg + `:4:12: servers[0].stdio: missing required key "command" (server "crm")`
	if code != 1 || strings.TrimSpace(errOut) != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", code, errOut, want)
	}
}

func TestAdHoc(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "adhoc.json")
	// Quotes in the command line survive the split.
	code, _, errOut := mcpgen(t, "snapshot", "--stdio", "'"+os.Args[0]+"' -test.run=None", "--env", "MCPGEN_TESTSERVER_MODE=raw", "--id", "adhoc", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	f, err := manifest.Parse(out, read(t, out))
	if err != nil || f.Manifest.ID != "adhoc" || len(f.Manifest.Tools) != 2 {
		t.Errorf("manifest: %v", err)
	}
	code, stdout, _ := mcpgen(t, "snapshot", "--stdio", os.Args[0], "--env", "MCPGEN_TESTSERVER_MODE=raw", "--id", "adhoc", "-o", "-", "-q")
	if code != 0 || stdout != string(read(t, out)) {
		t.Errorf("-o -: exit %d, stdout differs from the file", code)
	}
	code, _, errOut = mcpgen(t, "snapshot", "--stdio", os.Args[0], "--env", "MCPGEN_TESTSERVER_MODE=empty", "--id", "e", "-o", filepath.Join(dir, "e.json"))
	if code != 1 || !strings.Contains(errOut, "--allow-empty") {
		t.Errorf("empty server: exit %d:\n%s", code, errOut)
	}
	code, _, errOut = mcpgen(t, "snapshot", "--stdio", os.Args[0], "--env", "MCPGEN_TESTSERVER_MODE=empty", "--id", "e", "-o", filepath.Join(dir, "e.json"), "--allow-empty")
	if code != 0 {
		t.Errorf("--allow-empty: exit %d:\n%s", code, errOut)
	}
}

func TestSplitCommand(t *testing.T) {
	for in, want := range map[string][]string{
		"":                          nil,
		"  go run ./x  ":            {"go", "run", "./x"},
		`node 'my dir/s.js' "a b"`:  {"node", "my dir/s.js", "a b"},
		`a "q\"uote" b\ c '' x""y`:  {"a", `q"uote`, "b c", "", "xy"},
		`npx -y "@scope/pkg@1.2.3"`: {"npx", "-y", "@scope/pkg@1.2.3"},
	} {
		got, err := splitCommand(in)
		if err != nil || !cmp.Equal(want, got) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`'x`, `"x`, `x\`} {
		if _, err := splitCommand(bad); err == nil {
			t.Errorf("splitCommand(%q): no error", bad)
		}
	}
}

// TestCanaryNeverWritten puts a canary secret in every place a reference
// may stand (stdio env, HTTP header, URL), provokes each way it could leak
// (a server echoing it on stderr, into a tool description, a failing
// connection printing the URL), and scans every file written, stdout and
// stderr.
func TestCanaryNeverWritten(t *testing.T) {
	const canary = "canary-91c2e4-SECRET"
	t.Setenv(testserver.CanaryEnv, canary)
	h := server.NewStreamableHTTPServer(testserver.New(testserver.Options{}))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+canary || r.URL.Query().Get("k") != canary {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: ok_stdio
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: rich, TOKEN: "${MCPGEN_CANARY}"}}
  - id: ok_http
    http: {url: "`+ts.URL+`/mcp?k=${MCPGEN_CANARY}", headers: {Authorization: "Bearer ${MCPGEN_CANARY}"}}
  - id: stderr_echo
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: exit, MCPGEN_CANARY: "${MCPGEN_CANARY}"}}
  - id: description_echo
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: canary, MCPGEN_CANARY: "${MCPGEN_CANARY}"}}
  - id: refused
    http: {url: "http://127.0.0.1:1/mcp?k=${MCPGEN_CANARY}"}
  - id: rejected
    http: {url: "`+ts.URL+`/mcp?k=${MCPGEN_CANARY}"}
`)
	code, stdout, stderr := mcpgen(t, "snapshot", "--config", cfg)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (four servers fail):\n%s", code, stderr)
	}
	for _, want := range []string{
		"ok_stdio: protocol", "ok_http: protocol",
		`connect to server "stderr_echo": the server process exited (exit status 3)`, "[redacted ${MCPGEN_CANARY}]",
		`server "description_echo": secret value in server output: the value of ${MCPGEN_CANARY} appears in tool "whoami"`,
		`connect to server "refused": `, "connection refused", `connect to server "rejected": `,
		"4 of 6 servers failed",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stdout+stderr, canary) {
		t.Errorf("canary in output:\n%s\n%s", stdout, stderr)
	}
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		if bytes.Contains(read(t, p), []byte(canary)) {
			t.Errorf("canary in %s", p)
		}
		return nil
	})
	if n != 3 { // the config and the two good manifests
		t.Errorf("found %d files, want 3", n)
	}
}

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
