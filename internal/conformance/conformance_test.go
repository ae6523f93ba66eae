package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The official suite in client mode, against this package's client and
// against mcpgen's own commands with their defaults. The harness binds
// every interface, so it only ever runs inside a network namespace of its
// own with nothing but loopback (unshare -n). The whole client suite runs
// in one harness process (--suite all), its scenarios in parallel: about
// 2 s on two cores.

// scenarios are the suite's 26 client scenarios, every one of which this
// client must pass with at least one check.
var scenarios = []string{
	"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry",
	// The 14 core authorization scenarios: the auth/* ones of the
	// 2025-11-25 and 2025-06-18 specifications.
	"auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
	"auth/basic-cimd", "auth/pre-registration",
	"auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
	"auth/scope-step-up", "auth/scope-retry-limit",
	"auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
	// The 2025-03-26 fallbacks, two drafts (resource validation,
	// offline_access) and the extensions: client credentials and cross-app
	// access (token exchange with an identity provider, then a jwt-bearer
	// grant).
	"auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
	"auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
	"auth/client-credentials-jwt", "auth/client-credentials-basic", "auth/cross-app-access-complete-flow",
}

func TestConformanceClient(t *testing.T) {
	h := harness(t)
	client := buildTo(t, ".", "conformance")
	got := h.runSuite(t, client)
	for _, sc := range scenarios {
		r, ok := got[sc]
		switch {
		case !ok:
			t.Errorf("scenario %s: not run by the suite", sc)
		case r.failed > 0 || r.passed == 0:
			t.Errorf("scenario %s: %d passed, %d failed", sc, r.passed, r.failed)
		}
	}
	for sc := range got {
		if !slices.Contains(scenarios, sc) {
			t.Errorf("the suite ran scenario %s, which this test does not know: add it to scenarios", sc)
		}
	}
}

// mcpgen's commands, as a user runs them: snapshot (which makes no tool
// call) passes the handshake scenario; call passes calling a tool and
// resuming its event stream.
func TestConformanceCommands(t *testing.T) {
	h := harness(t)
	mcpgen := buildTo(t, "../../cmd/mcpgen", "mcpgen")
	for _, c := range []struct{ scenario, command string }{
		{"initialize", mcpgen + " snapshot --id conformance -o - --allow-empty --quiet --http"},
		{"tools_call", mcpgen + ` call add_numbers '{"a":5,"b":3}' --http`},
		{"sse-retry", mcpgen + " call test_reconnection --http"},
	} {
		t.Run(c.scenario, func(t *testing.T) { h.run(t, c.scenario, c.command) })
	}
}

type harnessEnv struct {
	node, suite string
}

// harness finds Node 22 and the suite in tools/npm and checks the test can
// make a network namespace. Missing parts skip the test with the reason,
// and fail it under CI=true.
func harness(t *testing.T) harnessEnv {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if runtime.GOOS != "linux" {
		missing("the conformance harness runs inside a Linux network namespace (unshare -n); this is %s", runtime.GOOS)
	}
	if os.Geteuid() != 0 {
		missing("unshare -n needs root; run as root (CI does) to run the conformance suite")
	}
	npm, err := filepath.Abs("../../tools/npm/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	h := harnessEnv{node: filepath.Join(npm, "node", "bin", "node"), suite: filepath.Join(npm, "@modelcontextprotocol", "conformance", "dist", "index.js")}
	for _, f := range []string{h.node, h.suite} {
		if _, err := os.Stat(f); err != nil {
			missing("%s is missing: run npm ci --prefix tools/npm", f)
		}
	}
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing("%s is not installed (util-linux, iproute2)", tool)
		}
	}
	if out, err := exec.Command("unshare", "-n", "true").CombinedOutput(); err != nil {
		missing("cannot make a network namespace: %v %s", err, out)
	}
	return h
}

// run runs one scenario against command (the URL is appended by the
// harness) and fails unless the suite reports every check passed, and at
// least one: the harness passes a client that does nothing with 0 of 0.
func (h harnessEnv) run(t *testing.T, scenario, command string) {
	t.Helper()
	text, err := h.harness(t, "--command", command, "--scenario", scenario)
	m := regexp.MustCompile(`(?m)^Passed: (\d+)/(\d+), (\d+) failed`).FindStringSubmatch(text)
	if err != nil || !strings.Contains(text, "OVERALL: PASSED") || m == nil || m[1] == "0" || m[1] != m[2] || m[3] != "0" {
		t.Fatalf("scenario %s with %q: %v\n%s", scenario, command, err, text)
	}
	t.Log(strings.TrimSpace(m[0]))
}

type suiteResult struct{ passed, failed int }

// runSuite runs the whole client suite against command and returns what it
// reported of each scenario.
func (h harnessEnv) runSuite(t *testing.T, command string) map[string]suiteResult {
	t.Helper()
	start := time.Now()
	text, err := h.harness(t, "--command", command, "--suite", "all")
	t.Logf("--suite all: %s", time.Since(start).Round(time.Millisecond))
	out := map[string]suiteResult{}
	for _, m := range regexp.MustCompile(`(?m)^[^\s:]+ (\S+): (\d+) passed, (\d+) failed`).FindAllStringSubmatch(text, -1) {
		p, _ := strconv.Atoi(m[2])
		f, _ := strconv.Atoi(m[3])
		out[m[1]] = suiteResult{p, f}
	}
	if len(out) == 0 {
		t.Fatalf("the suite reported no scenario: %v\n%s", err, text)
	}
	if t.Failed() || err != nil {
		t.Logf("%v\n%s", err, text)
	}
	return out
}

// harness runs the suite's client mode with args in a network namespace
// with only loopback, and returns all it printed. Each scenario has the
// harness's default time (30 s).
func (h harnessEnv) harness(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Loopback comes up inside the namespace; nothing else exists there.
	cmd := exec.CommandContext(ctx, "unshare", append([]string{"-n", "sh", "-c", `ip link set lo up && exec "$@"`, "sh",
		h.node, h.suite, "client"}, args...)...)
	cmd.Dir = t.TempDir()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func buildTo(t *testing.T, pkg, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}
