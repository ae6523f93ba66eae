package oauth_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/internal/oauthtest"
	"github.com/mcpgen/mcpgen/internal/testca"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
	"github.com/mcpgen/mcpgen/runtime/mcpgo/oauth"
)

const (
	canarySecret = "CANARY-SECRET-5b2e9d"
	canaryToken  = "CANARY-TOKEN-81f0c3"
)

var headless = oauth.Headless{Redirect: "http://127.0.0.1:1/callback"}

// ca signs the certificates of every authorization and MCP server of
// these tests; TestMain makes the process trust it alone.
var ca *testca.CA

func TestMain(m *testing.M) {
	var err error
	if ca, err = testca.New(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "oauth-ca-")
	if err == nil {
		err = ca.Trust(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// connect lists the protected server's tools through c.
func connect(t *testing.T, ctx context.Context, url string, c *oauth.Client) ([]string, error) {
	t.Helper()
	conn := mcpgo.StreamableHTTP(url, mcpgo.WithName("protected"), c.Option())
	defer conn.Close()
	return conn.ToolNames(ctx)
}

func TestPreRegisteredCodeFlowRefreshAndCache(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "tokens")
	store := oauth.FileStore{Dir: dir}
	cfg := oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless, Store: store}
	c, err := oauth.New(as.MCPURL, cfg)
	if err != nil {
		t.Fatal(err)
	}
	names, err := connect(t, ctx, as.MCPURL, c)
	if err != nil || !slices.Contains(names, "ping") {
		t.Fatalf("tools %v, %v", names, err)
	}
	e := c.Entry()
	if e == nil || e.Token == nil || e.Token.RefreshToken == "" {
		t.Fatalf("no refreshable token cached: %v", e)
	}
	// The challenge's scope, and offline_access for a refresh token since
	// the server offers it.
	if !slices.Equal(e.Scopes, []string{"mcp:read", "offline_access"}) || e.AuthMethod != oauth.AuthMethodBasic {
		t.Errorf("scopes %v, method %s", e.Scopes, e.AuthMethod)
	}
	if as.Resources[0] != as.MCPURL {
		t.Errorf("token request resource %q, want %q", as.Resources[0], as.MCPURL)
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 1 {
		t.Fatalf("cache holds %d files", len(files))
	}
	for _, p := range []string{dir, filepath.Join(dir, files[0].Name())} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}

	// The server revokes every token: a new client over the same cache
	// uses the cached token, is refused, and refreshes without a user.
	as.Expire()
	cfg.Agent = nil
	c2, _ := oauth.New(as.MCPURL, cfg)
	if _, err := connect(t, ctx, as.MCPURL, c2); err != nil {
		t.Fatalf("after revocation: %v", err)
	}
	if as.Grants[len(as.Grants)-1] != "refresh_token" {
		t.Errorf("grants %v: want a refresh last", as.Grants)
	}

	// Without a refresh token and without a user agent, the client says
	// a login is needed.
	if err := c2.Logout(); err != nil {
		t.Fatal(err)
	}
	_, err = connect(t, ctx, as.MCPURL, c2)
	if err == nil || !strings.Contains(err.Error(), "authorization required") {
		t.Fatalf("after logout: %v", err)
	}
}

func TestDynamicRegistrationPublicClient(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	c, _ := oauth.New(as.MCPURL, oauth.Config{Agent: headless})
	if _, err := connect(t, context.Background(), as.MCPURL, c); err != nil {
		t.Fatal(err)
	}
	e := c.Entry()
	if !e.Registered || !strings.HasPrefix(e.ClientID, "dyn-") || e.AuthMethod != oauth.AuthMethodNone {
		t.Errorf("registration %v method %s", e, e.AuthMethod)
	}
}

func TestClientCredentials(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	// Tokens that expire at once (below) are replaced before every request
	// of the connection, each a token request from the budget: room for
	// them.
	c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, ClientCredentials: true, AuthMethod: oauth.AuthMethodPost,
		MaxTokenRequests: 20})
	if _, err := connect(t, context.Background(), as.MCPURL, c); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(as.Grants, []string{"client_credentials"}) {
		t.Errorf("grants %v", as.Grants)
	}
	// An expired token is replaced before it is sent, by asking again
	// (client credentials have no refresh token).
	as.TokenTTL = 5 * time.Second             // inside x/oauth2's expiry margin: expired at once
	tok, err := c.Token(context.Background()) // the 1-hour token: still good
	if err != nil {
		t.Fatal(err)
	}
	as.Expire()
	if _, err := connect(t, context.Background(), as.MCPURL, c); err != nil { // refused, asks again
		t.Fatal(err)
	}
	n := len(as.Grants)
	tok2, err := c.Token(context.Background()) // the 5-second token: replaced before use
	if err != nil {
		t.Fatal(err)
	}
	if tok2 == tok || len(as.Grants) != n+1 || slices.Contains(as.Grants, "refresh_token") {
		t.Errorf("grants %v", as.Grants)
	}
}

// Per-run identity backed by each user's own token: two users, two
// logins, and the provider answers each run with its user's token.
func TestPrincipals(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	ctx := context.Background()
	p := &oauth.Principals{Server: as.MCPURL, Config: oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless}}
	prov := p.Provider()
	if _, err := prov(oauth.WithUser(ctx, "ann")); !errors.Is(err, oauth.ErrLoginRequired) {
		t.Fatalf("before login: %v", err)
	}
	if _, err := prov(ctx); !errors.Is(err, mcpruntime.ErrNoPrincipal) {
		t.Fatalf("without a user: %v", err)
	}
	toks := map[string]string{}
	for _, u := range []string{"ann", "bob"} {
		c, err := p.Client(u)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Login(ctx); err != nil {
			t.Fatal(err)
		}
		pr, err := prov(oauth.WithUser(ctx, u))
		if err != nil || pr.ID != u {
			t.Fatalf("%s: %v %v", u, pr.ID, err)
		}
		toks[u] = string(pr.Token)
	}
	if toks["ann"] == toks["bob"] || !strings.HasPrefix(toks["ann"], canaryToken) {
		t.Errorf("tokens not per user")
	}
}

type pingIn struct{}

func (*pingIn) Validate() error { return nil }

// Per-user tokens through a binding: the connection authenticates as the
// service (client credentials) for its handshake; each call goes with its
// run's user token, which the connection's RoundTripper leaves alone.
func TestPrincipalsThroughIdentityGuard(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	ctx := context.Background()
	svc, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, ClientCredentials: true})
	conn := mcpgo.StreamableHTTP(as.MCPURL, mcpgo.WithName("protected"), svc.Option())
	defer conn.Close()
	users := &oauth.Principals{Server: as.MCPURL, Config: oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless}}
	ann, _ := users.Client("ann")
	if err := ann.Login(ctx); err != nil {
		t.Fatal(err)
	}
	annTok, _ := ann.Token(ctx)
	ping := mcpruntime.NewTool[pingIn, mcpruntime.NoOutput](&mcpruntime.Descriptor{Name: "ping", GoName: "Ping", InputSchema: []byte(`{"type":"object"}`)},
		conn, mcpruntime.WithIdentity(users.Provider()))
	if _, err := ping.Call(oauth.WithUser(ctx, "ann"), pingIn{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(as.SeenBearers(), string(annTok)) {
		t.Errorf("the call did not carry ann's token")
	}
	// bob never signed in: his run is refused before anything is sent.
	n := len(as.SeenBearers())
	if _, err := ping.Call(oauth.WithUser(ctx, "bob"), pingIn{}); !errors.Is(err, oauth.ErrLoginRequired) {
		t.Errorf("bob: %v", err)
	}
	if len(as.SeenBearers()) != n {
		t.Errorf("bob's call reached the server")
	}
}

// A token endpoint that echoes the request (secret in the form and in the
// Basic header) and a refused login: neither the secret nor any token
// reaches an error, an entry or a config, whatever the verb.
func TestSecretsNeverPrinted(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	ctx := context.Background()
	var errs []error
	for _, method := range []string{oauth.AuthMethodBasic, oauth.AuthMethodPost} {
		// The authorization server knows the client by another secret:
		// the token request is refused with the sent one echoed.
		wrong := oauthtest.New(ca, "other-secret", canaryToken)
		wrong.EchoErrors = true
		c, _ := oauth.New(wrong.MCPURL, oauth.Config{ClientID: wrong.ClientID, ClientSecret: canarySecret, AuthMethod: method, Agent: headless})
		_, err := connect(t, ctx, wrong.MCPURL, c)
		wrong.Close()
		if err == nil {
			t.Fatalf("%s: a wrong secret was accepted", method)
		}
		errs = append(errs, err)
		c, _ = oauth.New(wrong.MCPURL, oauth.Config{ClientID: wrong.ClientID, ClientSecret: canarySecret, AuthMethod: method, ClientCredentials: true})
		if _, err := c.Token(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	cfg := oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless, PrivateKey: "-----BEGIN PRIVATE KEY-----" + canarySecret}
	c, _ := oauth.New(as.MCPURL, cfg)
	if err := c.Login(ctx); err != nil {
		t.Fatal(err)
	}
	e := c.Entry()
	values := []any{cfg, &cfg, *e, e}
	for _, err := range errs {
		values = append(values, err)
	}
	for _, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X"} {
			out := fmt.Sprintf(verb, v)
			for _, canary := range []string{canarySecret, canaryToken} {
				for _, form := range []string{canary, hex.EncodeToString([]byte(canary)), strings.ToUpper(hex.EncodeToString([]byte(canary)))} {
					if strings.Contains(out, form) {
						t.Errorf("%s of %T shows %s: %s", verb, v, canary, out)
					}
				}
			}
		}
	}
	if len(errs) == 0 {
		t.Fatal("no errors to check")
	}
	t.Logf("example error: %v", errs[0])
}

func TestTokenRefreshedBeforeExpiry(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	// Tokens that expire within x/oauth2's ten-second margin are refreshed
	// before each use.
	as.TokenTTL = 5 * time.Second
	c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless})
	ctx := context.Background()
	if err := c.Login(ctx); err != nil {
		t.Fatal(err)
	}
	tok, err := c.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(tok), canaryToken) || as.Grants[len(as.Grants)-1] != "refresh_token" {
		t.Errorf("grants %v", as.Grants)
	}
}

// A 403 insufficient_scope re-authorizes for the scopes it names; one that
// keeps coming is answered at most MaxStepUps times, then returned. The
// headless agent steps up only for scopes the configuration allows.
func TestStepUp(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	as.StepUp = "mcp:write"
	allowed := []string{"mcp:read", "mcp:write", "offline_access"}
	c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless, AllowedScopes: allowed})
	if _, err := connect(t, context.Background(), as.MCPURL, c); err != nil {
		t.Fatal(err)
	}
	if e := c.Entry(); !slices.Contains(e.Scopes, "mcp:write") || !slices.Contains(e.Scopes, "mcp:read") {
		t.Errorf("scopes after step-up: %v", e.Scopes)
	}
	if as.Authorizations != 2 {
		t.Errorf("%d authorizations, want 2", as.Authorizations)
	}

	// The authorization server never grants what the resource demands:
	// the first request authorizes once for its 401 and steps up
	// MaxStepUps times, then the 403 ends it.
	never := oauthtest.New(ca, canarySecret, canaryToken)
	defer never.Close()
	never.StepUp, never.Withhold = "mcp:write", true
	c, _ = oauth.New(never.MCPURL, oauth.Config{ClientID: never.ClientID, ClientSecret: canarySecret, Agent: headless, AllowedScopes: allowed})
	_, err := connect(t, context.Background(), never.MCPURL, c)
	if err == nil {
		t.Fatal("a refused request succeeded")
	}
	if want := 1 + oauth.DefaultMaxStepUps; never.Authorizations != want {
		t.Errorf("%d authorizations, want %d", never.Authorizations, want)
	}
}

// The loopback listener takes only the redirect that carries its
// request's state.
func TestLoopbackState(t *testing.T) {
	var lb *oauth.Loopback
	lb, err := oauth.NewLoopback(0, func(authURL string) error {
		for _, q := range []string{"?code=forged&state=other", "?code=real&state=s1"} {
			resp, err := http.Get(lb.RedirectURI() + q)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if want := map[bool]int{true: 400, false: 200}[strings.Contains(q, "forged")]; resp.StatusCode != want {
				t.Errorf("%s: %s", q, resp.Status)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	if !strings.HasPrefix(lb.RedirectURI(), "http://127.0.0.1:") {
		t.Errorf("redirect URI %s", lb.RedirectURI())
	}
	u, err := lb.Authorize(context.Background(), "https://as.example/authorize?state=s1")
	if err != nil || u.Query().Get("code") != "real" {
		t.Fatalf("%v %v", u, err)
	}
}
