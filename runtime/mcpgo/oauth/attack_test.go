package oauth_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/internal/oauthtest"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
	"github.com/mcpgen/mcpgen/runtime/mcpgo/oauth"
)

// Hostile servers, each over real TLS with certificates of the tests'
// private CA: what the OAuth client must refuse, and what it must never
// send where.

// redirectCalls makes the protected server answer every authenticated
// tools/call with a 307 to target (path kept).
func redirectCalls(as *oauthtest.Server, target string) {
	as.Intercept = func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if !bytes.Contains(body, []byte(`"tools/call"`)) {
			return false
		}
		http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
		return true
	}
}

// bearerSeen reports whether any request rec got carried credentials.
func bearerSeen(rec *oauthtest.Recorder) (string, bool) {
	for _, r := range rec.Requests() {
		for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
			if v := r.Header.Get(h); v != "" {
				return h + ": " + v, true
			}
		}
	}
	return "", false
}

// A server answering tools/call with a redirect to another host (another
// address, or another port of the same address) gets the call refused:
// neither the token nor the message goes there. The GET of an event
// stream, which may follow such a redirect, goes there without the token,
// and the other host's 401 does not start an authorization for it: the
// token is for the server it was issued for only.
func TestTokenNotSentAcrossRedirects(t *testing.T) {
	for _, addr := range []string{"127.0.0.2:0", "127.0.0.1:0"} {
		t.Run(addr, func(t *testing.T) {
			as := oauthtest.New(ca, canarySecret, canaryToken)
			defer as.Close()
			other := oauthtest.NewRecorder(ca, addr)
			defer other.Close()
			other.Status = http.StatusUnauthorized
			other.Header = http.Header{"Www-Authenticate": {`Bearer resource_metadata="` + other.URL + `/.well-known/oauth-protected-resource"`}}
			// tools/call, and once the connection is done any GET, answer
			// with a redirect there.
			var redirectGET atomic.Bool
			as.Intercept = func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				if !bytes.Contains(body, []byte(`"tools/call"`)) && !(r.Method == http.MethodGet && redirectGET.Load()) {
					return false
				}
				http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
				return true
			}

			c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless})
			conn := mcpgo.StreamableHTTP(as.MCPURL, mcpgo.WithName("protected"), c.Option())
			defer conn.Close()
			ctx := context.Background()
			if _, err := conn.ToolNames(ctx); err != nil {
				t.Fatal(err)
			}
			_, err := conn.CallTool(ctx, "ping", nil)
			if err == nil || !strings.Contains(err.Error(), "another origin ("+other.URL+")") {
				t.Errorf("the redirected call: %v", err)
			}
			if n := len(other.Requests()); n != 0 {
				t.Errorf("the other host got %d requests", n)
			}

			// A GET the server redirects there, through the client's
			// transport under net/http's own redirect policy.
			conn.Close()
			redirectGET.Store(true)
			hc := &http.Client{Transport: c.RoundTripper(http.DefaultTransport)}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, as.MCPURL, nil)
			req.Header.Set("Accept", "text/event-stream")
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || len(other.Requests()) == 0 {
				t.Fatalf("the GET was not redirected (%s): the test shows nothing", resp.Status)
			}
			if h, ok := bearerSeen(other); ok {
				t.Errorf("the other host got %s", h)
			}
			for _, r := range other.Requests() {
				if strings.Contains(r.URL.Path, "well-known") {
					t.Errorf("the client asked the other host for its metadata (%s)", r.URL.Path)
				}
			}
			if n := as.Authorizations; n != 1 {
				t.Errorf("%d authorizations, want 1", n)
			}
		})
	}
}

// https → http on the same host: the redirect is refused, so neither the
// token nor the request goes in clear.
func TestRedirectDowngradeRefused(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	plain := oauthtest.NewRecorder(nil, "127.0.0.1:0")
	defer plain.Close()
	redirectCalls(as, plain.URL)
	c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless})
	conn := mcpgo.StreamableHTTP(as.MCPURL, mcpgo.WithName("protected"), c.Option())
	defer conn.Close()
	ctx := context.Background()
	if _, err := conn.ToolNames(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := conn.CallTool(ctx, "ping", nil)
	if err == nil || !strings.Contains(err.Error(), "https") {
		t.Errorf("call: %v", err)
	}
	if n := len(plain.Requests()); n != 0 {
		h, _ := bearerSeen(plain)
		t.Errorf("the plain-http server got %d requests (%s)", n, h)
	}
	if strings.Contains(err.Error(), canaryToken) {
		t.Errorf("the error shows the token: %v", err)
	}
}

// sensitive says whether a request to the authorization server carries
// something it must get only over TLS.
func sensitive(seen []string) []string {
	var out []string
	for _, s := range seen {
		if strings.HasPrefix(s, "POST ") || strings.Contains(s, "/authorize") {
			out = append(out, s)
		}
	}
	return out
}

// An authorization server over plain http, or https metadata naming a
// plain-http endpoint, is refused before anything is sent there: no
// registration, no authorization request, no token request.
func TestInsecureAuthorizationServerRefused(t *testing.T) {
	t.Run("plain-http authorization server", func(t *testing.T) {
		rs := oauthtest.New(ca, canarySecret, canaryToken)
		defer rs.Close()
		plainAS := oauthtest.New(nil, canarySecret, canaryToken)
		defer plainAS.Close()
		rs.ResourceMetadata = func(m map[string]any) { m["authorization_servers"] = []string{plainAS.AS.URL} }
		c, _ := oauth.New(rs.MCPURL, oauth.Config{Agent: headless})
		err := c.Login(context.Background())
		if err == nil || !strings.Contains(err.Error(), "https") {
			t.Errorf("login: %v", err)
		}
		if s := plainAS.Seen(); len(s) != 0 {
			t.Errorf("the plain-http authorization server got %v", s)
		}
	})
	for _, ep := range []string{"authorization_endpoint", "token_endpoint", "registration_endpoint"} {
		t.Run("https metadata naming an http "+ep, func(t *testing.T) {
			as := oauthtest.New(ca, canarySecret, canaryToken)
			defer as.Close()
			plain := oauthtest.NewRecorder(nil, "127.0.0.1:0")
			defer plain.Close()
			as.ServerMetadata = func(m map[string]any) {
				u, _ := url.Parse(m[ep].(string))
				m[ep] = plain.URL + u.Path
			}
			for _, cfg := range []oauth.Config{{Agent: headless}, {ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless}} {
				c, _ := oauth.New(as.MCPURL, cfg)
				err := c.Login(context.Background())
				if err == nil || !strings.Contains(err.Error(), "https") {
					t.Errorf("login: %v", err)
				}
			}
			if n := len(plain.Requests()); n != 0 {
				t.Errorf("the plain-http endpoint got %d requests", n)
			}
			if s := sensitive(as.SeenBearers()); len(s) != 0 {
				t.Errorf("the flow went on: %v", s)
			}
		})
	}
}

// Authorization-server metadata that names another issuer, or none, is
// not used (RFC 8414 section 3.3); nothing is cached, so auth status has
// nothing to show.
func TestIssuerMismatchRefused(t *testing.T) {
	for name, issuer := range map[string]any{"other issuer": "https://issuer.example", "other path": "ISSUER/tenant", "no issuer": nil} {
		t.Run(name, func(t *testing.T) {
			as := oauthtest.New(ca, canarySecret, canaryToken)
			defer as.Close()
			as.ServerMetadata = func(m map[string]any) {
				if issuer == nil {
					delete(m, "issuer")
					return
				}
				m["issuer"] = strings.Replace(issuer.(string), "ISSUER", as.AS.URL, 1)
			}
			c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless})
			err := c.Login(context.Background())
			if err == nil || !strings.Contains(err.Error(), "issuer") {
				t.Errorf("login: %v", err)
			}
			if e := c.Entry(); e != nil {
				t.Errorf("cached %v", e)
			}
			if s := sensitive(as.SeenBearers()); len(s) != 0 {
				t.Errorf("the flow went on: %v", s)
			}
		})
	}
}

// Protected-resource metadata without resource, or for another resource,
// is not used (RFC 9728 section 3.3).
func TestResourceMetadataRefused(t *testing.T) {
	for name, resource := range map[string]any{
		"no resource": nil, "another host": "https://resource.example/mcp", "another path": "MCP/other",
		"a parent path": "ORIGIN/", "plain http": "HTTP",
	} {
		t.Run(name, func(t *testing.T) {
			as := oauthtest.New(ca, canarySecret, canaryToken)
			defer as.Close()
			as.ResourceMetadata = func(m map[string]any) {
				if resource == nil {
					delete(m, "resource")
					return
				}
				u, _ := url.Parse(as.MCPURL)
				r := strings.NewReplacer("MCP", as.MCPURL, "ORIGIN", "https://"+u.Host, "HTTP", "http://"+u.Host+u.Path).Replace(resource.(string))
				m["resource"] = r
			}
			c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless})
			err := c.Login(context.Background())
			if err == nil || !strings.Contains(err.Error(), "resource") {
				t.Errorf("login: %v", err)
			}
			if s := sensitive(as.SeenBearers()); len(s) != 0 || as.Authorizations != 0 {
				t.Errorf("the flow went on: %v", s)
			}
		})
	}
}

// agentFunc is a UserAgent with a person behind it (it does not say it is
// unattended), recording the URLs it is asked to open.
type agentFunc struct {
	opened *[]string
}

func (a agentFunc) RedirectURI() string { return headless.Redirect }
func (a agentFunc) Authorize(ctx context.Context, u string) (*url.URL, error) {
	*a.opened = append(*a.opened, u)
	return headless.Authorize(ctx, u)
}

// The user agent is only ever given an https authorization URL: metadata
// naming a javascript:, file: or data: authorization endpoint is refused
// before any URL is opened.
func TestAuthorizationEndpointScheme(t *testing.T) {
	for _, ep := range []string{"javascript:alert(document.cookie)//", "file:///etc/passwd", "data:text/html,<script>x</script>", "ftp://127.0.0.1/authorize"} {
		t.Run(ep, func(t *testing.T) {
			as := oauthtest.New(ca, canarySecret, canaryToken)
			defer as.Close()
			as.ServerMetadata = func(m map[string]any) { m["authorization_endpoint"] = ep }
			var opened []string
			c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: agentFunc{&opened}})
			err := c.Login(context.Background())
			if err == nil {
				t.Fatal("login succeeded")
			}
			if len(opened) != 0 {
				t.Errorf("the agent was asked to open %v", opened)
			}
			scheme, _, _ := strings.Cut(ep, ":")
			if strings.Contains(err.Error(), ep) || strings.Contains(err.Error(), scheme+"://") && scheme != "ftp" {
				t.Errorf("the error shows the URL: %v", err)
			}
		})
	}
	// The loopback agent refuses such a URL itself, too.
	lb, err := oauth.NewLoopback(0, func(u string) error { t.Errorf("opened %s", u); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := lb.Authorize(ctx, "javascript:alert(1)//?state=x"); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the loopback agent accepted a javascript: URL: %v", err)
	}
}

// A server that demands a scope with 403 on every tools/call, whatever the
// token, gets MaxStepUps re-authorizations in all, not per call: requests
// that get through in between (the listing) do not reset the count.
func TestStepUpBoundedAcrossRequests(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	as.StepUp, as.Withhold, as.StepUpMethod = "mcp:write", true, "tools/call"
	var opened []string
	c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: agentFunc{&opened}})
	conn := mcpgo.StreamableHTTP(as.MCPURL, mcpgo.WithName("protected"), c.Option())
	defer conn.Close()
	ctx := context.Background()
	for i := range 5 {
		if _, err := conn.ToolNames(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.CallTool(ctx, "ping", nil); err == nil {
			t.Fatalf("call %d succeeded", i)
		}
		conn.Close()
		conn = mcpgo.StreamableHTTP(as.MCPURL, mcpgo.WithName("protected"), c.Option())
	}
	if want := 1 + oauth.DefaultMaxStepUps; as.Authorizations != want {
		t.Errorf("%d authorizations over 5 calls, want %d", as.Authorizations, want)
	}
}

// With nobody to consent (the headless agent), a step-up asks for nothing
// the configuration does not allow: a server demanding "admin root:write"
// gets its 403 back and no new authorization.
func TestHeadlessStepUpNeedsAllowedScopes(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	as.StepUp, as.StepUpMethod = "admin root:write", "tools/call"
	c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless})
	conn := mcpgo.StreamableHTTP(as.MCPURL, mcpgo.WithName("protected"), c.Option())
	defer conn.Close()
	ctx := context.Background()
	if _, err := conn.ToolNames(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.CallTool(ctx, "ping", nil); err == nil {
		t.Error("the call succeeded")
	}
	if as.Authorizations != 1 {
		t.Errorf("%d authorizations, want 1", as.Authorizations)
	}
	for _, s := range as.Scopes {
		if f := strings.Fields(s); slices.Contains(f, "admin") || slices.Contains(f, "root:write") {
			t.Errorf("requested %q", s)
		}
	}
}

// Every token the client holds is in Secrets, the one it fetched after the
// server refused the first included; a connection given them as a secret
// source (client.Option does) scrubs them from errors that echo them.
func TestSecretsHoldRenewedTokens(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	as.Intercept = func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if !bytes.Contains(body, []byte(`"tools/call"`)) {
			return false
		}
		// A careless server quotes the request in its error.
		http.Error(w, "refused: "+r.Header.Get("Authorization"), http.StatusBadRequest)
		return true
	}
	c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless})
	ctx := context.Background()
	if err := c.Login(ctx); err != nil {
		t.Fatal(err)
	}
	first, _ := c.Token(ctx)
	as.Expire() // the next request is refused and the token refreshed
	// The transport alone leaves the echo; with the secret source, or
	// with the one option that gives both (the way), it is scrubbed.
	for _, way := range []string{"RoundTripper", "RoundTripper and Secrets", "Option"} {
		scrub := way != "RoundTripper"
		opts := []mcpgo.Option{mcpgo.WithName("protected")}
		switch way {
		case "Option":
			opts = append(opts, c.Option())
		case "RoundTripper and Secrets":
			opts = append(opts, mcpgo.WithRoundTripper(c.RoundTripper), mcpgo.WithSecretSource(c.Secrets))
		default:
			opts = append(opts, mcpgo.WithRoundTripper(c.RoundTripper))
		}
		conn := mcpgo.StreamableHTTP(as.MCPURL, opts...)
		_, err := conn.CallTool(ctx, "ping", nil)
		conn.Close()
		now, _ := c.Token(ctx)
		if now == first {
			t.Fatal("the token was not renewed: the test shows nothing")
		}
		if !slices.Contains(c.Secrets(), string(now)) || !slices.Contains(c.Secrets(), string(first)) || !slices.Contains(c.Secrets(), canarySecret) {
			t.Errorf("Secrets lacks a token or the secret")
		}
		if err == nil {
			t.Fatal("the call succeeded")
		}
		if shows := strings.Contains(err.Error(), canaryToken); shows == scrub {
			t.Errorf("%s: %v", way, err)
		}
		as.Expire()
	}
}

// The development exception: a plain-http server and authorization server
// on loopback work with AllowLoopbackHTTP only.
func TestLoopbackHTTPException(t *testing.T) {
	as := oauthtest.New(nil, canarySecret, canaryToken)
	defer as.Close()
	if _, err := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless}); err == nil || !strings.Contains(err.Error(), "AllowLoopbackHTTP") {
		t.Errorf("without the exception: %v", err)
	}
	c, err := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless, AllowLoopbackHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connect(t, context.Background(), as.MCPURL, c); err != nil {
		t.Errorf("with the exception: %v", err)
	}
	// Not for another host: http://localhost.example is no loopback.
	if _, err := oauth.New("http://mcp.example.com/mcp", oauth.Config{AllowLoopbackHTTP: true}); err == nil {
		t.Error("plain http to a non-loopback host was accepted")
	}
}

// The OAuth client's own requests follow no redirect: an authorization
// server endpoint answering 307 to another origin does not get the code
// verifier, the client secret, the refresh token or the registration
// request re-posted there, nor the metadata request sent there. Each ends
// with an error that says a redirect was not followed.
func TestOAuthRequestsNotRedirected(t *testing.T) {
	other := oauthtest.NewRecorder(ca, "127.0.0.2:0")
	defer other.Close()
	redirector := ca.Server("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	check := func(t *testing.T, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "redirect") {
			t.Errorf("got %v, want an error saying a redirect was not followed", err)
		}
		if n := len(other.Requests()); n != 0 {
			t.Errorf("the other origin got %d requests", n)
		}
		if err != nil && (strings.Contains(err.Error(), canarySecret) || strings.Contains(err.Error(), canaryToken)) {
			t.Errorf("the error shows a secret: %v", err)
		}
	}
	for name, cfg := range map[string]func(as *oauthtest.Server) oauth.Config{
		"code exchange": func(as *oauthtest.Server) oauth.Config {
			return oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless}
		},
		"client credentials": func(as *oauthtest.Server) oauth.Config {
			return oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, ClientCredentials: true}
		},
	} {
		t.Run(name, func(t *testing.T) {
			as := oauthtest.New(ca, canarySecret, canaryToken)
			defer as.Close()
			as.ServerMetadata = func(m map[string]any) { m["token_endpoint"] = redirector.URL + "/token" }
			c, _ := oauth.New(as.MCPURL, cfg(as))
			check(t, c.Login(context.Background()))
		})
	}
	t.Run("registration", func(t *testing.T) {
		as := oauthtest.New(ca, canarySecret, canaryToken)
		defer as.Close()
		as.ServerMetadata = func(m map[string]any) { m["registration_endpoint"] = redirector.URL + "/register" }
		c, _ := oauth.New(as.MCPURL, oauth.Config{Agent: headless})
		check(t, c.Login(context.Background()))
	})
	t.Run("refresh", func(t *testing.T) {
		as := oauthtest.New(ca, canarySecret, canaryToken)
		defer as.Close()
		store := oauth.NewMemoryStore()
		c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless, Store: store})
		ctx := context.Background()
		if err := c.Login(ctx); err != nil {
			t.Fatal(err)
		}
		e, _ := store.Load(as.MCPURL)
		if e.Token.RefreshToken == "" {
			t.Fatal("no refresh token: the test shows nothing")
		}
		e.TokenURL = redirector.URL + "/token"
		e.Token.Expiry = time.Now().Add(-time.Minute)
		_ = store.Save(as.MCPURL, e)
		c, _ = oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Store: store})
		_, err := c.Token(ctx)
		if n := len(other.Requests()); n != 0 || err == nil {
			t.Errorf("the other origin got %d requests; token: %v", n, err)
		}
	})
	t.Run("metadata", func(t *testing.T) {
		as := oauthtest.New(ca, canarySecret, canaryToken)
		defer as.Close()
		as.ResourceMetadata = func(m map[string]any) { m["authorization_servers"] = []string{redirector.URL} }
		c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless})
		check(t, c.Login(context.Background()))
	})
}

// refuseCalls makes the protected server answer every authenticated
// tools/call with status and a challenge naming scope (scope(n) for the
// n-th refusal).
func refuseCalls(as *oauthtest.Server, status int, scope func(n int) string) *atomic.Int32 {
	var n atomic.Int32
	as.Intercept = func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if !bytes.Contains(body, []byte(`"tools/call"`)) {
			return false
		}
		ch := fmt.Sprintf(`Bearer scope=%q, resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, scope(int(n.Add(1))), as.RS.URL)
		if status == http.StatusForbidden {
			ch += `, error="insufficient_scope"`
		} else {
			ch += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", ch)
		w.WriteHeader(status)
		return true
	}
	return &n
}

// A server that answers every tools/call with 401 naming scopes the
// client does not hold gets no token for them from a client with nobody
// to consent (the client credentials grant, no AllowedScopes): the 401's
// scopes are held to a 403's rules. And however many calls it refuses, it
// gets at most MaxTokenRequests token requests, then a clear error, not
// one per call.
func TestUnauthorizedScopesAndTokenRequestsBounded(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	refuseCalls(as, http.StatusUnauthorized, func(int) string { return "admin root:write" })
	c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, ClientCredentials: true})
	conn := mcpgo.StreamableHTTP(as.MCPURL, mcpgo.WithName("protected"), c.Option())
	defer conn.Close()
	ctx := context.Background()
	if _, err := conn.ToolNames(ctx); err != nil {
		t.Fatal(err)
	}
	var last error
	for i := range 10 {
		if _, last = conn.CallTool(ctx, "ping", nil); last == nil {
			t.Fatalf("call %d succeeded", i)
		}
	}
	if n := len(as.Grants); n > oauth.DefaultMaxTokenRequests {
		t.Errorf("%d token requests over 10 refused calls (%v), want at most %d", n, as.Grants, oauth.DefaultMaxTokenRequests)
	}
	for _, s := range as.Scopes {
		if f := strings.Fields(s); slices.Contains(f, "admin") || slices.Contains(f, "root:write") {
			t.Errorf("requested %q", s)
		}
	}
	if !strings.Contains(last.Error(), "too many token requests") || !strings.Contains(last.Error(), "at the earliest") {
		t.Errorf("the last call: %v", last)
	}
	if _, err := c.Token(ctx); err != nil {
		t.Errorf("the token the client holds is still given: %v", err)
	}
}

// The code flow with a person behind it: a 401 naming a new scope is a
// step-up (counted with the 403's, so at most MaxStepUps sign-ins), and
// the refreshes that follow each refused call come from the budget: a
// server refusing every call gets neither a sign-in nor a refresh per
// call.
func TestUnauthorizedCodeFlowBounded(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	refuseCalls(as, http.StatusUnauthorized, func(int) string { return "mcp:read admin" })
	var opened []string
	c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: agentFunc{&opened}})
	conn := mcpgo.StreamableHTTP(as.MCPURL, mcpgo.WithName("protected"), c.Option())
	defer conn.Close()
	ctx := context.Background()
	if _, err := conn.ToolNames(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := conn.CallTool(ctx, "ping", nil); err == nil {
			t.Fatalf("call %d succeeded", i)
		}
	}
	if n := len(opened); n > 1+oauth.DefaultMaxStepUps {
		t.Errorf("%d sign-ins over 10 refused calls, want at most %d", n, 1+oauth.DefaultMaxStepUps)
	}
	if n := len(as.Grants); n > oauth.DefaultMaxTokenRequests {
		t.Errorf("%d token requests over 10 refused calls (%v), want at most %d", n, as.Grants, oauth.DefaultMaxTokenRequests)
	}
}

// A server that names a new scope in each 403 gets MaxStepUps step-ups
// over the client's life in all, not MaxStepUps per scope name: with a
// person behind the agent and no AllowedScopes, at most 1+MaxStepUps
// sign-ins over 10 calls.
func TestStepUpBoundedWhateverTheScope(t *testing.T) {
	as := oauthtest.New(ca, canarySecret, canaryToken)
	defer as.Close()
	refuseCalls(as, http.StatusForbidden, func(n int) string { return fmt.Sprintf("mcp:read s%d", n) })
	var opened []string
	c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: agentFunc{&opened}})
	conn := mcpgo.StreamableHTTP(as.MCPURL, mcpgo.WithName("protected"), c.Option())
	defer conn.Close()
	ctx := context.Background()
	if _, err := conn.ToolNames(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := conn.CallTool(ctx, "ping", nil); err == nil {
			t.Fatalf("call %d succeeded", i)
		}
	}
	if want := 1 + oauth.DefaultMaxStepUps; len(opened) != want {
		t.Errorf("%d sign-ins over 10 calls, want %d", len(opened), want)
	}
}

// A server refusing every call makes the client renew its token each
// time (here with room in the budget for 40 renewals): Secrets keeps the
// most recent MaxHeldSecrets of the tokens, the current one always among
// them, instead of growing by two a call; with MaxHeldSecrets negative (as
// mcpgen's commands set it) it keeps every one the server ever saw.
func TestSecretsBounded(t *testing.T) {
	for _, keep := range []int{0, 10, -1} {
		t.Run(fmt.Sprint(keep), func(t *testing.T) {
			as := oauthtest.New(ca, canarySecret, canaryToken)
			defer as.Close()
			refuseCalls(as, http.StatusUnauthorized, func(int) string { return "mcp:read" })
			c, _ := oauth.New(as.MCPURL, oauth.Config{ClientID: as.ClientID, ClientSecret: canarySecret, Agent: headless,
				MaxTokenRequests: 50, MaxHeldSecrets: keep})
			conn := mcpgo.StreamableHTTP(as.MCPURL, mcpgo.WithName("protected"), c.Option())
			defer conn.Close()
			ctx := context.Background()
			if _, err := conn.ToolNames(ctx); err != nil {
				t.Fatal(err)
			}
			for i := range 40 {
				if _, err := conn.CallTool(ctx, "ping", nil); err == nil || strings.Contains(err.Error(), "too many token requests") {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			if n := len(as.Grants); n < 40 {
				t.Fatalf("%d token requests: the test shows nothing", n)
			}
			secrets := c.Secrets()
			bound := map[int]int{0: oauth.DefaultMaxHeldSecrets, 10: 10}[keep]
			if keep >= 0 && len(secrets) > bound+1 { // and the configured secret
				t.Errorf("%d secrets held, want at most %d and the client secret", len(secrets), bound)
			}
			tok, err := c.Token(ctx)
			if err != nil {
				t.Fatal(err)
			}
			e := c.Entry()
			for _, v := range []string{string(tok), e.Token.RefreshToken, canarySecret} {
				if !slices.Contains(secrets, v) {
					t.Errorf("Secrets lacks a current secret")
				}
			}
			// The most recent tokens the server saw are there; with a
			// negative bound, every one.
			seen := slices.Compact(as.SeenBearers())
			recent := seen
			if keep >= 0 {
				recent = seen[max(0, len(seen)-bound/2):]
			}
			for _, b := range recent {
				if !slices.Contains(secrets, b) {
					t.Errorf("Secrets lacks a token the server saw recently")
					break
				}
			}
			if keep < 0 && len(secrets) < 2*40 {
				t.Errorf("%d secrets held, want every token", len(secrets))
			}
		})
	}
}
