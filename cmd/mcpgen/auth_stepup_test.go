package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/internal/oauthtest"
)

// A 403 insufficient_scope that call cannot answer without a person is
// kept: the login it asks for requests the scopes the server demanded,
// and the call then goes through.
func TestCallStepUpKeptForLogin(t *testing.T) {
	as := oauthtest.New(testCA, cliCanarySecret, cliCanaryToken)
	defer as.Close()
	as.StepUp, as.StepUpMethod = "mcp:write", "tools/call"
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("HOME", home)
	t.Setenv("MCPGEN_TEST_CLIENT_SECRET", cliCanarySecret)
	cfg := writeConfig(t, t.TempDir(), `version: 1
servers:
  - id: prot
    http: {url: "`+as.MCPURL+`"}
    auth:
      clientId: `+as.ClientID+`
      clientSecret: ${MCPGEN_TEST_CLIENT_SECRET}
`)
	call := func() (int, string) {
		var out, errb bytes.Buffer
		code := run([]string{"call", "--config", cfg, "--no-validate", "prot", "ping"}, &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, _, out := authLogin(t, cfg, "prot"); code != 0 {
		t.Fatalf("login: %s", out)
	}
	code, out := call()
	if code == 0 || !strings.Contains(out, "mcpgen auth login prot") || !strings.Contains(out, "mcp:write") {
		t.Fatalf("a call needing a step-up: exit %d\n%s", code, out)
	}
	if code, _, out := authLogin(t, cfg, "prot"); code != 0 {
		t.Fatalf("second login: %s", out)
	}
	if last := as.Scopes[len(as.Scopes)-1]; !strings.Contains(last, "mcp:write") || !strings.Contains(last, "mcp:read") {
		t.Errorf("the login after the 403 asked for %q, not the scopes the server demanded", last)
	}
	if code, out := call(); code != 0 {
		t.Fatalf("the call after the login: exit %d\n%s", code, out)
	}
}
