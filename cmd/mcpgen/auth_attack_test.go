package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/internal/oauthtest"
)

// The commands against hostile OAuth-protected servers, each over real TLS
// (certificates of testCA, which the process trusts through
// SSL_CERT_FILE), run as a user runs them.

// authEnv isolates the token cache and sets the client secret.
func authEnv(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home) // os.UserConfigDir on Linux
	t.Setenv("HOME", home)            // and elsewhere
	t.Setenv("MCPGEN_TEST_CLIENT_SECRET", cliCanarySecret)
	return home
}

func serviceConfig(t *testing.T, as *oauthtest.Server, extra string) string {
	t.Helper()
	return writeConfig(t, t.TempDir(), `version: 1
servers:
  - id: svc
    http: {url: "`+as.MCPURL+`"}
    auth: {grant: client_credentials, clientId: `+as.ClientID+`, clientSecret: "${MCPGEN_TEST_CLIENT_SECRET}", method: client_secret_post`+extra+`}
`)
}

// mcpgen call against a server that redirects tools/call to another host
// (another address) or to plain http on its own: the call is refused, and
// neither gets anything, the token least of all.
func TestCallRedirectKeepsToken(t *testing.T) {
	authEnv(t)
	for _, target := range []string{"other host", "plain http"} {
		t.Run(target, func(t *testing.T) {
			as := oauthtest.New(testCA, cliCanarySecret, cliCanaryToken)
			defer as.Close()
			rec := oauthtest.NewRecorder(testCA, "127.0.0.2:0")
			if target == "plain http" {
				rec = oauthtest.NewRecorder(nil, "127.0.0.1:0")
			}
			defer rec.Close()
			as.Intercept = func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				if !bytes.Contains(body, []byte(`"tools/call"`)) {
					return false
				}
				http.Redirect(w, r, rec.URL+"/mcp", http.StatusTemporaryRedirect)
				return true
			}
			cfg := serviceConfig(t, as, "")
			code, out, errOut := mcpgen(t, "call", "svc", "ping", "--config", cfg)
			if code == 0 {
				t.Errorf("the redirected call succeeded:\n%s", out)
			}
			for _, r := range rec.Requests() {
				if v := r.Header.Get("Authorization"); v != "" {
					t.Errorf("the %s got Authorization: %s", target, v)
				}
			}
			if n := len(rec.Requests()); n != 0 {
				t.Errorf("the %s got %d requests", target, n)
			}
			if want := map[string]string{"other host": "another origin (" + rec.URL + ")", "plain http": "from https to plain http"}[target]; !strings.Contains(errOut, want) {
				t.Errorf("the error does not say why (%q):\n%s", want, errOut)
			}
			if strings.Contains(out+errOut, cliCanaryToken) {
				t.Errorf("the output holds a token:\n%s%s", out, errOut)
			}
		})
	}
}

// The server refuses the cached token once; the client gets a new one
// (a refresh after a login, a new client credentials grant) and the
// server echoes it, in a tool's result and its description: mcpgen call
// prints it redacted, and mcpgen snapshot (and list, and call when it
// lists the tool to validate the arguments) refuses the listing.
func TestRenewedTokenRedacted(t *testing.T) {
	for _, grant := range []string{"authorization_code", "client_credentials"} {
		t.Run(grant, func(t *testing.T) {
			home := authEnv(t)
			as := oauthtest.New(testCA, cliCanarySecret, cliCanaryToken)
			defer as.Close()
			as.EchoBearer = true
			var cfg string
			if grant == "client_credentials" {
				cfg = serviceConfig(t, as, "")
				if code, out, errOut := mcpgen(t, "call", "svc", "whoami", "--no-validate", "--config", cfg); code != 0 || !strings.Contains(out, "you are [redacted]") {
					t.Fatalf("first call: exit %d\n%s%s", code, out, errOut)
				}
			} else {
				cfg = writeConfig(t, t.TempDir(), `version: 1
servers:
  - id: svc
    http: {url: "`+as.MCPURL+`"}
    auth: {clientId: `+as.ClientID+`, clientSecret: "${MCPGEN_TEST_CLIENT_SECRET}"}
`)
				if code, _, out := authLogin(t, cfg, "svc"); code != 0 {
					t.Fatalf("login: exit %d\n%s", code, out)
				}
			}
			for _, cmd := range [][]string{{"call", "svc", "whoami", "--no-validate"}, {"call", "svc", "whoami"}, {"snapshot", "--quiet"}, {"list", "svc", "--live"}} {
				as.Expire() // the cached token is refused once
				n := len(as.Grants)
				code, out, errOut := mcpgen(t, append(cmd, "--config", cfg)...)
				if len(as.Grants) == n {
					t.Fatalf("%s: no new token was fetched (grants %v): the test shows nothing", cmd[0], as.Grants)
				}
				if strings.Contains(out+errOut, cliCanaryToken) {
					t.Errorf("%s prints a token:\n%s%s", cmd[0], out, errOut)
				}
				switch {
				case len(cmd) == 4:
					if code != 0 || !strings.Contains(out, "you are [redacted]") {
						t.Errorf("call: exit %d\n%s%s", code, out, errOut)
					}
				default: // the listing is captured, and refused
					if code == 0 || !strings.Contains(errOut, "a token or secret of the server's OAuth client appears in tool \"whoami\"") {
						t.Errorf("%s: exit %d\n%s%s", cmd[0], code, out, errOut)
					}
				}
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(cfg), "mcp", "svc.json")); err == nil {
				t.Error("snapshot wrote a manifest")
			}
			_ = home
		})
	}
}

// mcpgen auth login never prints (or opens) an authorization URL that is
// not https: metadata naming a javascript: or file: endpoint ends the
// login before anything is shown.
func TestLoginShowsOnlyHTTPS(t *testing.T) {
	for _, ep := range []string{"javascript:alert(document.cookie)//", "file:///etc/passwd", "http://as.example/authorize"} {
		t.Run(ep, func(t *testing.T) {
			authEnv(t)
			as := oauthtest.New(testCA, cliCanarySecret, cliCanaryToken)
			defer as.Close()
			as.ServerMetadata = func(m map[string]any) { m["authorization_endpoint"] = ep }
			cfg := writeConfig(t, t.TempDir(), `version: 1
servers:
  - id: prot
    http: {url: "`+as.MCPURL+`"}
    auth: {}
`)
			code, out, errOut := mcpgen(t, "auth", "login", "prot", "--config", cfg, "--timeout", "10s")
			if code == 0 {
				t.Fatalf("login succeeded:\n%s%s", out, errOut)
			}
			if strings.Contains(out+errOut, ep) || strings.Contains(out+errOut, "Open this URL") {
				t.Errorf("login showed the endpoint:\n%s%s", out, errOut)
			}
			if !strings.Contains(errOut, "https") {
				t.Errorf("login says:\n%s", errOut)
			}
		})
	}
}

// Authorization-server metadata that names another issuer ends the login:
// nothing is cached, so auth status has no issuer to show.
func TestLoginIssuerMismatch(t *testing.T) {
	authEnv(t)
	as := oauthtest.New(testCA, cliCanarySecret, cliCanaryToken)
	defer as.Close()
	as.ServerMetadata = func(m map[string]any) { m["issuer"] = "https://issuer.example" }
	cfg := writeConfig(t, t.TempDir(), `version: 1
servers:
  - id: prot
    http: {url: "`+as.MCPURL+`"}
    auth: {clientId: `+as.ClientID+`, clientSecret: "${MCPGEN_TEST_CLIENT_SECRET}"}
`)
	code, _, out := authLogin(t, cfg, "prot")
	if code == 0 || !strings.Contains(out, "issuer") || strings.Contains(out, "Open this URL") {
		t.Errorf("login: exit %d\n%s", code, out)
	}
	if _, out, _ := mcpgen(t, "auth", "status", "--config", cfg); strings.Contains(out, "issuer.example") || !strings.Contains(out, "prot: not signed in") {
		t.Errorf("status:\n%s", out)
	}
}

// The development exception: an OAuth-protected server and authorization
// server over plain http on loopback work only with allowLoopbackHttp.
func TestLoopbackHTTPNeedsOptIn(t *testing.T) {
	authEnv(t)
	as := oauthtest.New(nil, cliCanarySecret, cliCanaryToken)
	defer as.Close()
	cfg := serviceConfig(t, as, "")
	if code, out, errOut := mcpgen(t, "call", "svc", "ping", "--config", cfg); code == 0 || !strings.Contains(errOut, "allowLoopbackHttp") {
		t.Errorf("without the opt-in: exit %d\n%s%s", code, out, errOut)
	}
	if n := len(as.Seen()); n != 0 {
		t.Errorf("the authorization server got %d requests", n)
	}
	cfg = serviceConfig(t, as, ", allowLoopbackHttp: true")
	if code, out, errOut := mcpgen(t, "call", "svc", "ping", "--config", cfg); code != 0 {
		t.Errorf("with the opt-in: exit %d\n%s%s", code, out, errOut)
	}
}

// allowedScopes caps what is requested: a service whose server demands
// more on tools/call gets its 403, and the scope is never asked for.
func TestAllowedScopesCapStepUp(t *testing.T) {
	authEnv(t)
	as := oauthtest.New(testCA, cliCanarySecret, cliCanaryToken)
	defer as.Close()
	as.StepUp, as.StepUpMethod = "admin", "tools/call"
	cfg := serviceConfig(t, as, ", allowedScopes: [mcp:read]")
	if code, out, errOut := mcpgen(t, "call", "svc", "ping", "--config", cfg); code == 0 {
		t.Errorf("the call succeeded:\n%s%s", out, errOut)
	}
	for _, s := range as.Scopes {
		if strings.Contains(s, "admin") {
			t.Errorf("requested %q", s)
		}
	}
	// Allowed, the step-up is made once and the call goes through.
	as2 := oauthtest.New(testCA, cliCanarySecret, cliCanaryToken)
	defer as2.Close()
	as2.StepUp, as2.StepUpMethod = "admin", "tools/call"
	cfg = serviceConfig(t, as2, ", allowedScopes: [mcp:read, admin]")
	if code, out, errOut := mcpgen(t, "call", "svc", "ping", "--config", cfg); code != 0 {
		t.Errorf("with admin allowed: exit %d\n%s%s", code, out, errOut)
	}
}

// The commands never open a browser: a step-up in the code flow ends with
// the login hint, after one authorization server round and no more.
func TestCodeFlowStepUpNeedsLogin(t *testing.T) {
	authEnv(t)
	as := oauthtest.New(testCA, cliCanarySecret, cliCanaryToken)
	defer as.Close()
	cfg := writeConfig(t, t.TempDir(), `version: 1
servers:
  - id: prot
    http: {url: "`+as.MCPURL+`"}
    auth: {clientId: `+as.ClientID+`, clientSecret: "${MCPGEN_TEST_CLIENT_SECRET}"}
`)
	if code, _, out := authLogin(t, cfg, "prot"); code != 0 {
		t.Fatalf("login: exit %d\n%s", code, out)
	}
	as.StepUp, as.StepUpMethod = "mcp:write", "tools/call"
	code, out, errOut := mcpgen(t, "call", "prot", "ping", "--config", cfg)
	if code == 0 || !strings.Contains(errOut, "authorization required: run `mcpgen auth login prot`") {
		t.Errorf("call: exit %d\n%s%s", code, out, errOut)
	}
	if as.Authorizations != 1 {
		t.Errorf("%d authorizations", as.Authorizations)
	}
}
