package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/internal/oauthtest"
)

const (
	cliCanarySecret = "CLI-CANARY-SECRET-3d9a"
	cliCanaryToken  = "CLI-CANARY-TOKEN-e71b"
)

// mcpgen auth login against a local authorization server, an HTTP client
// standing in for the browser; then call, list, snapshot and check use
// the cached token, status shows it, logout forgets it. No output holds
// the client secret or a token.
func TestAuthLoginFlow(t *testing.T) {
	as := oauthtest.New(testCA, cliCanarySecret, cliCanaryToken)
	defer as.Close()
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home) // os.UserConfigDir on Linux
	t.Setenv("HOME", home)            // and elsewhere
	t.Setenv("MCPGEN_TEST_CLIENT_SECRET", cliCanarySecret)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: prot
    http: {url: "`+as.MCPURL+`"}
    auth:
      clientId: `+as.ClientID+`
      clientSecret: ${MCPGEN_TEST_CLIENT_SECRET}
`)
	var all bytes.Buffer // every byte any command printed
	mcpgen := func(args ...string) (int, string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := run(append(args, "--config", cfg), &out, &errb)
		all.Write(out.Bytes())
		all.Write(errb.Bytes())
		return code, out.String() + errb.String()
	}

	// Before login the commands say what to do.
	if code, out := mcpgen("call", "prot", "ping"); code == 0 || !strings.Contains(out, "mcpgen auth login prot") {
		t.Fatalf("call before login: exit %d\n%s", code, out)
	}
	if _, out := mcpgen("auth", "status", "prot"); !strings.Contains(out, "prot: not signed in") {
		t.Errorf("status before login:\n%s", out)
	}

	// Login prints the URL; the "browser" opens it and follows the
	// authorization server's redirect to the 127.0.0.1 listener.
	code, authURL, loginOut := authLogin(t, cfg, "prot")
	all.WriteString(loginOut)
	if code != 0 {
		t.Fatalf("login: exit %d\n%s", code, loginOut)
	}
	out := bytes.NewBufferString(loginOut)
	if !strings.HasPrefix(authURL, as.AS.URL+"/authorize?") || !strings.Contains(authURL, "redirect_uri=http%3A%2F%2F127.0.0.1%3A") {
		t.Errorf("login URL %s", authURL)
	}
	if !strings.Contains(out.String(), "prot: signed in") {
		t.Errorf("login said:\n%s", out.String())
	}
	files, _ := filepath.Glob(filepath.Join(home, "mcpgen", "tokens", "*.json"))
	if len(files) != 1 {
		t.Fatalf("token cache: %v", files)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v", fi.Mode().Perm())
	}

	// The commands that connect use the cached token.
	if code, out := mcpgen("call", "prot", "ping"); code != 0 {
		t.Fatalf("call after login: exit %d\n%s", code, out)
	}
	if code, out := mcpgen("list", "prot", "--live"); code != 0 || !strings.Contains(out, "Ping") {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	if code, out := mcpgen("snapshot", "--quiet"); code != 0 {
		t.Fatalf("snapshot: exit %d\n%s", code, out)
	}
	if code, out := mcpgen("check"); code != 0 {
		t.Errorf("check: exit %d\n%s", code, out)
	}
	manifestBytes, err := os.ReadFile(filepath.Join(dir, "mcp", "prot.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code, out := mcpgen("generate"); code != 0 {
		t.Fatalf("generate: exit %d\n%s", code, out)
	}
	generated, _ := filepath.Glob(filepath.Join(dir, "prot", "*.go"))
	if len(generated) == 0 {
		t.Fatal("generate wrote no Go files")
	}
	for _, f := range generated {
		b, _ := os.ReadFile(f)
		manifestBytes = append(manifestBytes, b...) // checked with the manifest below
	}
	if _, out := mcpgen("auth", "status"); !strings.Contains(out, "prot: signed in") || !strings.Contains(out, "refreshable") {
		t.Errorf("status:\n%s", out)
	}

	// A revoked token is refreshed without the user.
	as.Expire()
	if code, out := mcpgen("call", "prot", "ping"); code != 0 {
		t.Fatalf("call after revocation: exit %d\n%s", code, out)
	}

	if code, out := mcpgen("auth", "logout", "prot"); code != 0 || !strings.Contains(out, "prot: signed out") {
		t.Errorf("logout: exit %d\n%s", code, out)
	}
	if _, out := mcpgen("auth", "status", "prot"); !strings.Contains(out, "prot: not signed in") {
		t.Errorf("status after logout:\n%s", out)
	}
	if code, _ := mcpgen("call", "prot", "ping"); code == 0 {
		t.Error("call after logout succeeded")
	}

	for _, where := range []struct {
		name string
		text []byte
	}{{"output", all.Bytes()}, {"manifest and generated code", manifestBytes}} {
		for _, canary := range []string{cliCanarySecret, cliCanaryToken} {
			if bytes.Contains(where.text, []byte(canary)) {
				t.Errorf("the %s holds %s:\n%s", where.name, canary, where.text)
			}
		}
	}
}

func TestAuthCommandErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: open
    http: {url: "http://127.0.0.1:1/mcp"}
`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"auth"}, "want login, logout or status"},
		{[]string{"auth", "login", "open"}, `server "open" has no auth block`},
		{[]string{"auth", "login", "nope"}, `no server "nope"`},
		{[]string{"auth", "frob", "open"}, `no auth block`},
	} {
		var out, errb bytes.Buffer
		if code := run(append(c.args, "--config", cfg), &out, &errb); code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %s", c.args, code, errb.String())
		}
	}
}

// A service's server (grant client_credentials) needs no login: the
// first command that connects fetches the token.
func TestAuthClientCredentials(t *testing.T) {
	as := oauthtest.New(testCA, cliCanarySecret, cliCanaryToken)
	defer as.Close()
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("HOME", home)
	t.Setenv("MCPGEN_TEST_CLIENT_SECRET", cliCanarySecret)
	cfg := writeConfig(t, t.TempDir(), `version: 1
servers:
  - id: svc
    http: {url: "`+as.MCPURL+`"}
    auth: {grant: client_credentials, clientId: `+as.ClientID+`, clientSecret: "${MCPGEN_TEST_CLIENT_SECRET}", method: client_secret_post}
`)
	var out, errb bytes.Buffer
	if code := run([]string{"call", "svc", "ping", "--config", cfg}, &out, &errb); code != 0 {
		t.Fatalf("call: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := run([]string{"auth", "status", "--config", cfg}, &out, &errb); code != 0 || !strings.Contains(out.String(), "svc: signed in") {
		t.Errorf("status: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if text := out.String() + errb.String(); strings.Contains(text, cliCanarySecret) || strings.Contains(text, cliCanaryToken) {
		t.Errorf("output holds a secret:\n%s", text)
	}
}

// authLogin runs mcpgen auth login for server id, an HTTP client standing
// in for the browser: it opens the first URL the command prints and
// follows the authorization server's redirect to the command's listener.
// It returns the exit code, the URL and everything the command printed.
func authLogin(t *testing.T, cfg, id string) (int, string, string) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var out bytes.Buffer
	go func() {
		code := run([]string{"auth", "login", id, "--config", cfg, "--timeout", "20s"}, &out, pw)
		pw.Close()
		done <- code
	}()
	sc := bufio.NewScanner(pr)
	var authURL string
	var loginErr strings.Builder
	for sc.Scan() {
		line := sc.Text()
		loginErr.WriteString(line + "\n")
		if u := strings.TrimSpace(line); authURL == "" && (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) {
			authURL = u
			go func() {
				resp, err := http.Get(authURL)
				if err != nil {
					t.Errorf("browser: %v", err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.Contains(string(body), "mcpgen is authorized") {
					t.Errorf("callback page: %s %s", resp.Status, body)
				}
			}()
		}
	}
	code := <-done
	return code, authURL, loginErr.String() + out.String()
}
