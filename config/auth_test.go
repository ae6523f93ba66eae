package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseAuth(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "key.pem"), []byte("PEM KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse(filepath.Join(dir, "mcpgen.yaml"), []byte(`version: 1
servers:
  - id: app
    http: {url: "https://app.example.com/mcp"}
    auth:
      clientId: my-app
      clientSecret: ${APP_SECRET}
      method: client_secret_post
      scopes: [read, write]
      allowedScopes: [read, write, offline_access]
      redirectPort: 8976
  - id: svc
    http: {url: "https://svc.example.com/mcp"}
    auth: {clientId: svc, grant: client_credentials, method: private_key_jwt, privateKeyFile: key.pem, signingAlg: ES256}
  - id: open
    sse: {url: "https://open.example.com/sse"}
    auth: {clientMetadataUrl: "https://mcpgen.example.com/client.json"}
`))
	if err != nil {
		t.Fatal(err)
	}
	app, svc, open := cfg.Servers[0].Auth, cfg.Servers[1].Auth, cfg.Servers[2].Auth
	if app.ClientID != "my-app" || app.ClientSecret != "${APP_SECRET}" || app.Method != "client_secret_post" ||
		!slices.Equal(app.Scopes, []string{"read", "write"}) || !slices.Equal(app.AllowedScopes, []string{"read", "write", "offline_access"}) ||
		app.RedirectPort != 8976 || app.Grant != GrantAuthorizationCode || app.AllowLoopbackHTTP {
		t.Errorf("app auth = %+v", app)
	}
	if svc.Grant != GrantClientCredentials || svc.PrivateKeyFile != "key.pem" || svc.Scopes != nil || svc.AllowedScopes != nil {
		t.Errorf("svc auth = %+v", svc)
	}
	if open.ClientMetadataURL != "https://mcpgen.example.com/client.json" {
		t.Errorf("open auth = %+v", open)
	}
	sec, err := cfg.Servers[0].ResolveAuth(func(string) (string, bool) { return "s3cret", true })
	if err != nil || sec.ClientSecret != "s3cret" {
		t.Errorf("resolve: %+v %v", sec, err)
	}
	sec, err = cfg.Servers[1].ResolveAuth(func(string) (string, bool) { return "", false })
	if err != nil || sec.PrivateKey != "PEM KEY" {
		t.Errorf("resolve key file: %v", err)
	}
	_, err = cfg.Servers[0].ResolveAuth(func(string) (string, bool) { return "", false })
	if err == nil || !strings.Contains(err.Error(), "auth.clientSecret: environment variable APP_SECRET is not set") {
		t.Errorf("unset secret: %v", err)
	}
}

func TestParseAuthErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"auth: {clientSecret: plain-secret}", `servers[0].auth.clientSecret: clientSecret must be a ${VAR} reference`},
		{"auth: {privateKey: \"-----BEGIN\"}", `privateKey must be a ${VAR} reference`},
		{"auth: {method: magic}", `unknown token endpoint authentication method "magic"`},
		{"auth: {grant: implicit}", `unknown grant "implicit"`},
		{"auth: {grant: client_credentials}", `the client_credentials grant needs a pre-registered clientId`},
		{"auth: {clientId: x, method: private_key_jwt}", `method private_key_jwt needs privateKey or privateKeyFile`},
		{"auth: {clientMetadataUrl: \"http://x/c.json\"}", `must be an https URL`},
		{"auth: {redirectPort: 70000}", `redirectPort 70000 is not a port`},
		{"auth: {signingAlg: HS256}", `unknown signing algorithm "HS256"`},
		{"auth: {clientID: x}", `unknown key "clientID"`},
		{"auth: {clientId: \"${ID}\"}", `${...} references are expanded only`},
		{"auth: {scopes: [read, admin], allowedScopes: [read]}", `c.yaml:5:27: servers[0].auth.scopes[1]: scope "admin" is not in allowedScopes`},
		{"auth: {allowedScopes: [read, \"a b\"]}", `c.yaml:5:34: servers[0].auth.allowedScopes[1]: "a b" is not a scope`},
		{"auth: {allowedScopes: [read, read]}", `servers[0].auth.allowedScopes[1]: scope "read" listed twice`},
		{"auth: {scopes: [\"x\\\\y\"]}", `servers[0].auth.scopes[0]: "x\\y" is not a scope`},
		{"auth: {allowedScopes: read}", `servers[0].auth.allowedScopes: expected a list of strings`},
		{"auth: {allowLoopbackHttp: yes}", `servers[0].auth.allowLoopbackHttp: expected true or false`},
	} {
		in := "version: 1\nservers:\n  - id: a\n    http: {url: \"https://h/mcp\"}\n    " + tc.in + "\n"
		_, err := Parse("c.yaml", []byte(in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.in, err, tc.want)
		}
	}
	// The token goes where the URL says: never over plain http but to a
	// loopback host, and there only when asked for.
	for _, tc := range []struct{ url, auth, want string }{
		{"http://mcp.example.com/mcp", "{}", `c.yaml:4:17: servers[0].http.url: a server with an auth block needs an https url`},
		{"http://10.0.0.5/mcp", "{allowLoopbackHttp: true}", `servers[0].http.url: a server with an auth block needs an https url`},
		{"http://127.0.0.1:8080/mcp", "{}", `c.yaml:4:17: servers[0].http.url: a plain-http url with an auth block needs auth.allowLoopbackHttp: true`},
		{"http://localhost:8080/mcp", "{}", `needs auth.allowLoopbackHttp: true`},
		{"http://127.0.0.1:8080/mcp", "{allowLoopbackHttp: true}", ""},
		{"http://[::1]:8080/mcp", "{allowLoopbackHttp: true}", ""},
		{"https://mcp.example.com/mcp", "{}", ""},
		{"http://${HOST}/mcp", "{}", ""}, // checked once expanded, by the OAuth client
	} {
		_, err := Parse("c.yaml", []byte("version: 1\nservers:\n  - id: a\n    http: {url: \""+tc.url+"\"}\n    auth: "+tc.auth+"\n"))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s with auth %s: got %v, want %q", tc.url, tc.auth, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), tc.url) {
			t.Errorf("the error quotes the URL: %v", err)
		}
	}
	_, err := Parse("c.yaml", []byte("version: 1\nservers:\n  - id: a\n    stdio: {command: x}\n    auth: {}\n"))
	if err == nil || !strings.Contains(err.Error(), "auth applies to http and sse servers only") {
		t.Errorf("stdio with auth: %v", err)
	}
}
