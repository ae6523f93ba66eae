// Package oauth is the OAuth 2.1 client of MCP's authorization
// specification for HTTP and SSE connections: a RoundTripper that answers
// a server's 401 by discovering its authorization server, identifying the
// client, getting a token and sending the request again, and a 403
// insufficient_scope by asking for the scopes the server named (a bounded
// number of times). Connect with Client.Option (mcpgo.WithOAuth), which
// also scrubs the client's tokens from the connection's errors.
//
// golang.org/x/oauth2 does the flows (PKCE, the code exchange, client
// credentials, refresh, the token endpoint's client authentication). What
// it has no part for is done here: discovery with the specification's
// fallbacks, client ID metadata documents, dynamic registration, scope
// selection and step-up, and private_key_jwt assertions. mcp-go has an
// OAuth transport too, but it lacks the root metadata fallback, client ID
// metadata documents, scope selection from the challenge and step-up, and
// it surfaces the 401 to the caller instead of retrying.
//
// The rules the client keeps:
//
//   - A token goes to the MCP server it was issued for (RFC 8707) and
//     nowhere else: only requests to the server URL's origin (scheme, host
//     and port) get it. A request to another origin (a redirected GET, an
//     SSE endpoint elsewhere) goes without it, and its 401 starts no
//     authorization. A cached entry made for another server is not used.
//     (The connection itself never redirects a request with a body to
//     another origin.)
//   - The client's own requests (metadata, registration, token) follow no
//     redirect: a 307 would re-send a code verifier, a client secret or a
//     refresh token wherever it points. The error says the redirect was
//     not followed.
//   - Everything goes over https: the MCP server's URL (New refuses
//     another), the protected-resource metadata URLs, the issuer, the
//     authorization server's metadata and its authorization, token and
//     registration endpoints (metadata naming a plain-http one is refused
//     before anything is sent), and a cached token endpoint before a
//     refresh. The one exception, for development servers, is plain http
//     to a loopback host (localhost, 127.0.0.0/8, ::1) when
//     Config.AllowLoopbackHTTP is set. Errors name such a URL's scheme and
//     host, never the whole URL.
//   - Protected-resource metadata must name the server as its resource
//     (RFC 9728 section 3.3): the server's URL, or the server's origin for
//     the metadata at that origin's root well-known URL; metadata without
//     a resource is refused. Authorization-server metadata must name the
//     issuer its URL was made from (RFC 8414 section 3.3; a trailing slash,
//     the letter case of scheme and host and a default port aside); for a
//     server without resource metadata, which is its own authorization
//     server, an issuer on the server's origin.
//   - The UserAgent is only given an https authorization URL (plain http
//     for a loopback host with AllowLoopbackHTTP); Loopback and Headless
//     also refuse any other URL themselves.
//   - The first authorization asks for what scope selection gives (the
//     configured Scopes, else the challenge's, else the resource's
//     scopes_supported). After that a scope the client does not hold is a
//     step-up, whether a 403 insufficient_scope or a 401 names it, under
//     the same rules: at most MaxStepUps per request and MaxStepUps in all
//     over the client's life, whatever the scopes (a request that gets
//     through does not reset the count, and a new scope name gets no new
//     count); with Config.AllowedScopes set, no scope outside it is ever
//     requested and a step-up for one is not made; without it the headless
//     agent and the client credentials grant, which have nobody to
//     consent, do not step up at all. A 401 whose step-up is not made
//     renews the token with the scopes held.
//   - A request re-authorizes once for a 401. Every token request the
//     client makes on its own (after a 401, for a step-up, to replace an
//     expired token, Token's client credentials request; Login aside)
//     comes from a budget: MaxTokenRequests at once (default 4), then one
//     earned back per TokenRequestInterval (a minute); past it the request
//     fails with ErrTokenRequests, saying when the next may be made. So a
//     server that refuses every token it is given, or an authorization
//     server whose tokens expire at once, gets no stream of token requests
//     or sign-ins.
//
// Tokens and client secrets are held as mcpruntime.Secret or inside
// *oauth2.Token, are sent only to the token endpoint and the server, and
// are scrubbed from every error this package returns. Client.Secrets
// lists the configured secrets, the current token and registration, and
// the most recent MaxHeldSecrets (default 64) others the client got,
// replaced ones included, for output that may echo them: Option gives
// them to the connection (mcpgo.WithSecretSource). A program that must
// redact every token of its life (mcpgen's commands) sets MaxHeldSecrets
// negative.
package oauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// Token endpoint authentication methods (RFC 7591 section 2).
const (
	AuthMethodBasic         = "client_secret_basic"
	AuthMethodPost          = "client_secret_post"
	AuthMethodNone          = "none"
	AuthMethodPrivateKeyJWT = "private_key_jwt"
)

// DefaultMaxStepUps is how many times the client steps up (re-authorizes
// for scopes it does not hold, on a 403 insufficient_scope or a 401 naming
// them) per request and in all over its life.
const DefaultMaxStepUps = 2

// DefaultMaxTokenRequests is how many token requests the client makes on
// its own at once (Config.MaxTokenRequests); it earns one back each
// TokenRequestInterval.
const DefaultMaxTokenRequests = 4

// TokenRequestInterval is how long the client takes to earn back one
// spent token request.
const TokenRequestInterval = time.Minute

// DefaultMaxHeldSecrets is how many of the secrets the client got while
// running (tokens, a registration's secret) Secrets keeps besides the
// configured ones and the current ones (Config.MaxHeldSecrets).
const DefaultMaxHeldSecrets = 64

// ErrTokenRequests: the client has made as many token requests on its own
// as its budget allows (Config.MaxTokenRequests), and makes no more until
// it earns one back. A server that refuses every token it is given gets
// this instead of an endless stream of token requests and sign-ins.
var ErrTokenRequests = errors.New("too many token requests")

// ErrLoginRequired: the server needs an authorization the user must give
// in a browser, and the client has no UserAgent to ask for it.
var ErrLoginRequired = errors.New("authorization required")

// Config is how a client identifies itself and gets tokens. The zero
// value registers dynamically and needs a UserAgent for the code flow.
type Config struct {
	// ClientID and ClientSecret are a pre-registered client's. Empty: a
	// client ID metadata document (ClientMetadataURL) where the server
	// supports one, else dynamic registration.
	ClientID     string
	ClientSecret mcpruntime.Secret
	// ClientMetadataURL is an https URL serving this client's metadata
	// document, used as its client_id where the authorization server
	// advertises client_id_metadata_document_supported.
	ClientMetadataURL string
	// AuthMethod forces the token endpoint authentication method; empty
	// chooses from what the server supports and the client has.
	AuthMethod string
	// PrivateKey (PEM, PKCS#8, SEC 1 or PKCS#1) signs private_key_jwt
	// assertions with SigningAlg (ES256 or RS256; empty: from the key).
	PrivateKey mcpruntime.Secret
	SigningAlg string
	// ClientCredentials uses the client credentials grant (a service
	// acting as itself) instead of the authorization code flow.
	ClientCredentials bool
	// CrossApp, when set, gets tokens by cross-app access (see CrossApp)
	// instead of the authorization code flow.
	CrossApp *CrossApp
	// Scopes, when set, are requested instead of the challenge's or the
	// metadata's.
	Scopes []string
	// AllowedScopes, when set, are the only scopes ever requested: the
	// challenge's, the metadata's and offline_access are cut down to them,
	// Scopes must be among them, and a step-up for any other scope is not
	// made (a 403 is returned; a 401 renews the token with the scopes
	// held). Without it the headless agent and the client credentials
	// grant, which have nobody to consent, never step up.
	AllowedScopes []string
	// AllowLoopbackHTTP accepts plain http for a loopback host (localhost,
	// 127.0.0.0/8, ::1): the MCP server's URL and every authorization-server
	// URL, for development servers. Anything else must be https.
	AllowLoopbackHTTP bool
	// ClientName is sent in dynamic registration (default "mcpgen").
	ClientName string
	// Agent sends the user to the authorization endpoint and brings back
	// the redirect. Nil: authorization that needs a user fails with
	// ErrLoginRequired (a cached or refreshed token still works).
	Agent UserAgent
	// Store caches the token and the client's registration (default: in
	// memory). Key is the entry's name in it (default: the server URL).
	Store Store
	Key   string
	// LoginHint ends the ErrLoginRequired message (default: "sign in
	// first").
	LoginHint string
	// MaxStepUps bounds step-ups (re-authorizations for scopes the client
	// does not hold, asked for by a 403 insufficient_scope or a 401): per
	// request, and in all over the client's life, whatever the scopes (0:
	// DefaultMaxStepUps; negative: none).
	MaxStepUps int
	// MaxTokenRequests bounds the token requests the client makes on its
	// own (an authorization or refresh after a 401, a step-up, the refresh
	// of an expired token, Token's client credentials request; not Login):
	// at most this many at once, then one per TokenRequestInterval earned
	// back; past it a request fails with ErrTokenRequests (0:
	// DefaultMaxTokenRequests; negative: none at all).
	MaxTokenRequests int
	// MaxHeldSecrets bounds what Secrets keeps of the secrets the client
	// got while running (each access and refresh token, a registration's
	// secret): the most recent ones, the current token always among them
	// (0: DefaultMaxHeldSecrets; negative: every one, for a short-lived
	// program that must redact every token of its run, like mcpgen's
	// commands). The configured secret and key are always kept.
	MaxHeldSecrets int
}

// UserAgent is the browser of the authorization code flow. It is given
// only https authorization URLs (plain http only for a loopback host, with
// AllowLoopbackHTTP). An agent with a method Unattended() bool that
// returns true (Headless) has no person behind it to consent: it steps up
// only within AllowedScopes.
type UserAgent interface {
	// RedirectURI is the redirect_uri to register and send.
	RedirectURI() string
	// Authorize sends the user to authURL and returns the URL the
	// authorization server redirected back to (carrying code and state).
	Authorize(ctx context.Context, authURL string) (*url.URL, error)
}

// Client holds one server's authorization state across the connections
// to it. It is safe for concurrent use.
type Client struct {
	server *url.URL
	cfg    Config

	mu    sync.Mutex
	entry *Entry
	gen   int // counts authorizations, so a request that raced one retries with its token
	// stepUps counts step-ups over the client's life, whatever scopes
	// they were for: a server that never lets a request through, or names
	// a new scope each time, gets no more, however many requests succeed
	// in between.
	stepUps int
	// budget is what is left of MaxTokenRequests as of budgetAt.
	budget   float64
	budgetAt time.Time
	now      func() time.Time
	base     http.RoundTripper

	heldMu sync.Mutex
	fixed  []string // the configured secrets, always kept
	held   []string // secrets got while running, oldest first (Secrets)
	cur    []string // the current entry's, always kept
}

// New returns the client for the MCP server at serverURL. The URL must be
// https (http only for a loopback host, with AllowLoopbackHTTP): the token
// is sent there.
func New(serverURL string, cfg Config) (*Client, error) {
	// The URL is never quoted in errors: it may carry a secret.
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("oauth: the server URL is not an http(s) URL")
	}
	u.Fragment, u.RawQuery = "", ""
	c := &Client{server: u, cfg: cfg, base: http.DefaultTransport, now: time.Now}
	if _, err := c.secure("MCP server's URL", u.String()); err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	if cfg.AllowedScopes != nil {
		for _, s := range cfg.Scopes {
			if !slices.Contains(cfg.AllowedScopes, s) {
				return nil, fmt.Errorf("oauth: scope %q is not among the allowed scopes", s)
			}
		}
	}
	if cfg.Store == nil {
		cfg.Store = NewMemoryStore()
	}
	if cfg.Key == "" {
		cfg.Key = u.String()
	}
	if cfg.ClientName == "" {
		cfg.ClientName = "mcpgen"
	}
	if cfg.LoginHint == "" {
		cfg.LoginHint = "sign in first"
	}
	if cfg.MaxStepUps == 0 {
		cfg.MaxStepUps = DefaultMaxStepUps
	}
	if cfg.MaxTokenRequests == 0 {
		cfg.MaxTokenRequests = DefaultMaxTokenRequests
	}
	if cfg.MaxHeldSecrets == 0 {
		cfg.MaxHeldSecrets = DefaultMaxHeldSecrets
	}
	c.cfg = cfg
	c.budget = float64(max(cfg.MaxTokenRequests, 0))
	for _, v := range []string{string(cfg.ClientSecret), string(cfg.PrivateKey)} {
		if v != "" {
			c.fixed = append(c.fixed, v)
		}
	}
	return c, nil
}

// Secrets returns the secrets output that may echo what the server was
// sent must redact: the configured client secret and key, and of what the
// client got since it was made (a registered client's secret, every access
// and refresh token, whether loaded from the store, fetched, refreshed or
// stepped up, including those replaced since) the most recent
// MaxHeldSecrets, the current token and registration always among them
// (every one with a negative MaxHeldSecrets). A token renewed halfway
// through a run is as secret as the first; the bound keeps a server that
// makes the client renew over and over from growing the list, and every
// scrub with it, without end (MaxTokenRequests bounds how fast it can).
func (c *Client) Secrets() []string {
	c.heldMu.Lock()
	defer c.heldMu.Unlock()
	out := append(slices.Clone(c.fixed), c.held...)
	for _, v := range c.cur {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// hold records values as the most recently held secrets (moving those
// already held to the end), then forgets the oldest past MaxHeldSecrets.
func (c *Client) hold(values ...string) {
	c.heldMu.Lock()
	defer c.heldMu.Unlock()
	for _, v := range values {
		if v == "" || slices.Contains(c.fixed, v) {
			continue
		}
		if i := slices.Index(c.held, v); i >= 0 {
			if i == len(c.held)-1 {
				continue
			}
			c.held = slices.Delete(c.held, i, i+1)
		}
		c.held = append(c.held, v)
	}
	if n := c.cfg.MaxHeldSecrets; n > 0 && len(c.held) > n {
		c.held = slices.Delete(c.held, 0, len(c.held)-n)
	}
}

// holdToken and holdEntry hold what a token or an entry carries.
func (c *Client) holdToken(t *oauth2.Token) {
	if t != nil {
		c.hold(t.AccessToken, t.RefreshToken)
	}
}

func (c *Client) holdEntry(e *Entry) {
	if e != nil {
		c.hold(string(e.ClientSecret))
		c.holdToken(e.Token)
	}
}

// setCurrent records c.entry's secrets as the current ones, which Secrets
// always returns, and holds them, so they stay among the recent ones once
// replaced (c.mu held; called whenever c.entry or its token changes).
func (c *Client) setCurrent() {
	var cur []string
	if e := c.entry; e != nil {
		c.holdEntry(e)
		cur = append(cur, string(e.ClientSecret))
		if e.Token != nil {
			cur = append(cur, e.Token.AccessToken, e.Token.RefreshToken)
		}
		cur = slices.DeleteFunc(cur, func(v string) bool { return v == "" })
	}
	c.heldMu.Lock()
	c.cur = cur
	c.heldMu.Unlock()
}

// loadLocked reads the cached entry once (c.mu held). An entry cached for
// another server (a Key shared by mistake) is not used: its token is not
// this server's.
func (c *Client) loadLocked() {
	if c.entry != nil {
		return
	}
	e, err := c.cfg.Store.Load(c.cfg.Key)
	if err != nil || e == nil {
		return
	}
	c.holdEntry(e)
	if e.Server != "" && e.Server != c.server.String() {
		return
	}
	c.entry = e
	c.setCurrent()
}

// Option is the connection option that authorizes a connection with c:
// mcpgo.WithOAuth(c), which is mcpgo.WithRoundTripper(c.RoundTripper) and
// mcpgo.WithSecretSource(c.Secrets) in one, so the tokens go only to the
// server and are scrubbed from the connection's errors and from what the
// server sends. It is the way to connect through c.
func (c *Client) Option() mcpgo.Option { return mcpgo.WithOAuth(c) }

// RoundTripper wraps base (the connection's transport, under its SSRF
// guard and message cap) so requests to the server's origin carry this
// client's token; the authorization server is reached through base too.
// It is the function mcpgo.WithRoundTripper takes; on its own it leaves
// the tokens in the connection's errors: connect with Option (or give
// mcpgo.WithSecretSource(c.Secrets) as well).
func (c *Client) RoundTripper(base http.RoundTripper) http.RoundTripper {
	c.mu.Lock()
	c.base = base
	c.mu.Unlock()
	return &transport{c: c, base: base}
}

type transport struct {
	c    *Client
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	// A request that already carries credentials (a per-principal bearer
	// token from the identity guard) is that principal's, not ours. One to
	// another origin (a redirect, an SSE endpoint elsewhere) is not the
	// server's the token was issued for (RFC 8707): it goes without the
	// token, and its 401 starts no authorization.
	if req.Header.Get("Authorization") != "" || !sameOrigin(req.URL, t.c.server) {
		return t.base.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	ctx := req.Context()
	reauthorized, stepUps := false, 0
	for {
		tok, gen, err := t.c.current(ctx)
		if err != nil {
			return nil, err
		}
		r := req.Clone(ctx)
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
			r.ContentLength = int64(len(body))
		}
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		switch {
		case resp.StatusCode == http.StatusUnauthorized && !reauthorized:
			reauthorized = true
			ch := ParseChallenge(resp.Header)
			drain(resp)
			if err := t.c.reauthorize(ctx, ch, gen, &stepUps); err != nil {
				return nil, err
			}
			continue
		case resp.StatusCode == http.StatusForbidden:
			ch := ParseChallenge(resp.Header)
			if ch.Error != "insufficient_scope" || stepUps >= t.c.cfg.MaxStepUps || !t.c.mayStepUp(ch) {
				return resp, nil
			}
			stepUps++
			drain(resp)
			if err := t.c.authorize(ctx, ch, gen, modeStepUp, true); err != nil {
				return nil, err
			}
			continue
		}
		return resp, nil
	}
}

// mode is what an authorization asks for.
type mode int

const (
	// modeFirst: what scope selection gives (the client holds nothing
	// yet, or Login asks).
	modeFirst mode = iota
	// modeRenew: the scopes held (a token the server refused).
	modeRenew
	// modeStepUp: the scopes held and those the challenge names.
	modeStepUp
)

// reauthorize answers a 401 (or, for Token, the lack of a token). The
// first authorization asks for what scope selection gives, the
// challenge's scopes included. After that, scopes the challenge names
// beyond those held are a step-up, made only where a 403's would be
// (mayStepUp) and counted with them, this request's included; otherwise
// the token is renewed with the scopes held. Either way it is a token
// request the client makes on its own, from its budget.
func (c *Client) reauthorize(ctx context.Context, ch Challenge, gen int, stepUps *int) error {
	m := c.modeFor(ch)
	if m == modeStepUp {
		if *stepUps < c.cfg.MaxStepUps && c.mayStepUp(ch) {
			*stepUps++
		} else {
			m = modeRenew
		}
	}
	return c.authorize(ctx, ch, gen, m, true)
}

// modeFor is what a 401 with challenge ch leads to before the step-up
// rules: modeFirst without an entry, modeStepUp when ch names a scope the
// entry lacks, else modeRenew.
func (c *Client) modeFor(ch Challenge) mode {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loadLocked()
	if c.entry == nil {
		return modeFirst
	}
	for _, s := range ch.Scope {
		if !slices.Contains(c.entry.Scopes, s) {
			return modeStepUp
		}
	}
	return modeRenew
}

// mayStepUp decides whether the client re-authorizes for the scopes ch
// demands, and counts it. Refused: a scope outside AllowedScopes; any
// scope with nobody to consent (the client credentials grant, an
// unattended agent) unless AllowedScopes lists it; MaxStepUps step-ups
// made already over the client's life. The count is one per step-up,
// whatever the scopes, and never reset, so a server that keeps refusing,
// with requests let through in between or with the demand reworded each
// time, gets a bounded number of authorizations.
func (c *Client) mayStepUp(ch Challenge) bool {
	if allowed := c.cfg.AllowedScopes; allowed != nil {
		for _, s := range ch.Scope {
			if !slices.Contains(allowed, s) {
				return false
			}
		}
	} else if c.unattended() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stepUps >= c.cfg.MaxStepUps {
		return false
	}
	c.stepUps++
	return true
}

// spend takes one token request the client makes on its own from its
// budget (c.mu held), or says when it may make the next: MaxTokenRequests
// at once, one earned back each TokenRequestInterval.
func (c *Client) spend() error {
	n := c.cfg.MaxTokenRequests
	if n < 0 {
		return fmt.Errorf("oauth: %s: %w: the client makes none on its own (MaxTokenRequests is negative)", c.server.Host, ErrTokenRequests)
	}
	now := c.now()
	if !c.budgetAt.IsZero() {
		c.budget = min(float64(n), c.budget+float64(now.Sub(c.budgetAt))/float64(TokenRequestInterval))
	}
	c.budgetAt = now
	if c.budget >= 1 {
		c.budget--
		return nil
	}
	wait := time.Duration((1 - c.budget) * float64(TokenRequestInterval)).Round(time.Second)
	return fmt.Errorf("oauth: %s: %w: the client made %d on its own in short order and makes the next in %s at the earliest (a server that refuses every token it is given gets no more)",
		c.server.Host, ErrTokenRequests, n, wait)
}

// unattended reports whether nobody is there to consent to what the
// client asks for.
func (c *Client) unattended() bool {
	if c.cfg.ClientCredentials || c.cfg.CrossApp != nil {
		return true
	}
	u, ok := c.cfg.Agent.(interface{ Unattended() bool })
	return ok && u.Unattended()
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// base transport.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// current returns the access token to send ("" for none), loading the
// cache and refreshing an expired token first (a token request from the
// budget: an authorization server issuing tokens that expire at once gets
// no more than a server refusing them).
func (c *Client) current(ctx context.Context) (string, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loadLocked()
	e := c.entry
	if e == nil || e.Token == nil {
		return "", c.gen, nil
	}
	if !e.Token.Valid() {
		if err := c.spend(); err != nil {
			return "", c.gen, err
		}
		tok, err := c.refresh(ctx, e)
		if err != nil {
			e.Token = nil
			c.setCurrent()
			return "", c.gen, nil
		}
		if tok.RefreshToken == "" {
			tok.RefreshToken = e.Token.RefreshToken
		}
		e.Token = tok
		c.setCurrent()
		_ = c.cfg.Store.Save(c.cfg.Key, e)
	}
	return e.Token.AccessToken, c.gen, nil
}

// httpClient is the client of discovery, registration and the token
// endpoint. It follows no redirect: a 307 would re-send a code verifier,
// a client secret or a refresh token to wherever it points.
func (c *Client) httpClient() *http.Client {
	return &http.Client{Transport: c.base, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (c *Client) refresh(ctx context.Context, e *Entry) (*oauth2.Token, error) {
	// A cached token endpoint is checked as a discovered one is: the
	// refresh token and the client's secret go there.
	if _, err := c.secure("token endpoint", e.TokenURL); err != nil && e.TokenURL != "" {
		return nil, err
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, c.httpClient())
	if e.ClientCredentials && e.TokenURL != "" {
		// A service just asks again: it needs no refresh token.
		return c.clientCredentials(ctx, e)
	}
	if e.CrossApp && c.cfg.CrossApp != nil && e.TokenURL != "" {
		return c.crossApp(ctx, c.httpClient(), e) // the same ID token again
	}
	if e.Token.RefreshToken == "" || e.TokenURL == "" {
		return nil, errors.New("no refresh token")
	}
	oc := c.oauth2Config(e, nil)
	tok, err := oc.TokenSource(ctx, &oauth2.Token{RefreshToken: e.Token.RefreshToken}).Token()
	c.holdToken(tok)
	if err != nil {
		return nil, c.scrub(err, e)
	}
	return tok, nil
}

// Login authorizes now, without waiting for a 401: mcpgen auth login.
func (c *Client) Login(ctx context.Context) error {
	c.mu.Lock()
	c.loadLocked()
	gen := c.gen
	c.mu.Unlock()
	ch := Challenge{}
	if c.cfg.Scopes == nil {
		// The server's challenge names the resource metadata and scopes;
		// ask for one with an unauthenticated request.
		ch = c.probe(ctx)
	}
	return c.authorize(ctx, ch, gen, modeFirst, false)
}

// probe sends an unauthenticated initialize and reads the challenge.
func (c *Client) probe(ctx context.Context) Challenge {
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpgen","version":"0"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.server.String(), strings.NewReader(body))
	if err != nil {
		return Challenge{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return Challenge{}
	}
	defer drain(resp)
	return ParseChallenge(resp.Header)
}

// Logout forgets the cached token and registration.
func (c *Client) Logout() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entry = nil
	c.gen++
	c.setCurrent()
	return c.cfg.Store.Delete(c.cfg.Key)
}

// Entry returns a copy of the cached state (nil when there is none).
func (c *Client) Entry() *Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loadLocked()
	if c.entry == nil {
		return nil
	}
	e := *c.entry
	return &e
}

// authorize gets a new token, asking for what m says. gen is the
// generation the failed request was sent with: if another request
// authorized since, its token is used. spend: the client asks on its own
// (not Login), from its budget of token requests.
func (c *Client) authorize(ctx context.Context, ch Challenge, gen int, m mode, spend bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return nil
	}
	if spend {
		if err := c.spend(); err != nil {
			return err
		}
	}
	// A token the server refused (revoked, or expired early) is renewed
	// with the refresh token first: no user is needed for that. A step-up
	// needs new consent, so it always authorizes again, and so does a
	// login after a step-up that waited for one (Wanted).
	if old := c.entry; m != modeStepUp && old != nil && len(old.Wanted) == 0 && old.Token != nil && old.Token.RefreshToken != "" {
		if tok, err := c.refresh(ctx, old); err == nil && tok.AccessToken != old.Token.AccessToken {
			if tok.RefreshToken == "" {
				tok.RefreshToken = old.Token.RefreshToken
			}
			old.Token = tok
			c.gen++
			c.setCurrent()
			return c.cfg.Store.Save(c.cfg.Key, old)
		}
	}
	e, err := c.newToken(ctx, ch, m)
	if err != nil && m == modeStepUp && errors.Is(err, ErrLoginRequired) && c.entry != nil && len(ch.Scope) > 0 {
		// Nobody here to consent: what the server demanded is kept, so
		// that the login the error asks for asks for it too.
		for _, x := range ch.Scope {
			if !slices.Contains(c.entry.Wanted, x) && !slices.Contains(c.entry.Scopes, x) {
				c.entry.Wanted = append(c.entry.Wanted, x)
			}
		}
		if c.cfg.Store.Save(c.cfg.Key, c.entry) == nil {
			err = fmt.Errorf("%w (the server asks for scope %q, which the next login asks for)", err, strings.Join(ch.Scope, " "))
		}
	}
	if err != nil {
		return fmt.Errorf("oauth: %s: %w", c.server.Host, c.scrub(err, c.entry))
	}
	c.entry = e
	c.gen++
	c.setCurrent()
	if err := c.cfg.Store.Save(c.cfg.Key, e); err != nil {
		return fmt.Errorf("oauth: %s: cache the token: %w", c.server.Host, c.scrub(err, e))
	}
	return nil
}

func (c *Client) newToken(ctx context.Context, ch Challenge, m mode) (*Entry, error) {
	hc := c.httpClient()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	prm, asm, err := c.discover(ctx, hc, ch)
	if err != nil {
		return nil, err
	}
	e := &Entry{Server: c.server.String(), Issuer: asm.Issuer, TokenURL: asm.TokenEndpoint, Resource: c.server.String()}
	if prm != nil && prm.Resource != "" {
		e.Resource = prm.Resource
	}
	e.Scopes = c.selectScopes(ch, prm, asm, m)
	if err := c.identify(ctx, hc, asm, e); err != nil {
		return nil, err
	}
	if c.cfg.ClientCredentials {
		e.ClientCredentials = true
		tok, err := c.clientCredentials(ctx, e)
		if err != nil {
			return nil, err
		}
		e.Token = tok
		return e, nil
	}
	if c.cfg.CrossApp != nil {
		e.CrossApp = true
		tok, err := c.crossApp(ctx, hc, e)
		if err != nil {
			return nil, err
		}
		e.Token = tok
		return e, nil
	}
	if c.cfg.Agent == nil {
		return nil, fmt.Errorf("%w: %s", ErrLoginRequired, c.cfg.LoginHint)
	}
	if asm.AuthorizationEndpoint == "" {
		return nil, errors.New("the authorization server has no authorization endpoint")
	}
	if m := asm.CodeChallengeMethodsSupported; m != nil && !slices.Contains(m, "S256") {
		return nil, errors.New("the authorization server does not support PKCE with S256, which MCP requires")
	}
	if _, err := c.secure("authorization endpoint", asm.AuthorizationEndpoint); err != nil {
		return nil, err
	}
	if e.TokenURL == "" {
		return nil, errors.New("the authorization server has no token endpoint")
	}
	e.RedirectURI = c.cfg.Agent.RedirectURI()
	oc := c.oauth2Config(e, asm)
	verifier, state := oauth2.GenerateVerifier(), randomString()
	resource := oauth2.SetAuthURLParam("resource", e.Resource)
	authURL := oc.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), resource)
	back, err := c.cfg.Agent.Authorize(ctx, authURL)
	if err != nil {
		return nil, err
	}
	q := back.Query()
	if q.Get("state") != state {
		return nil, errors.New("the authorization response's state does not match the request's")
	}
	if ae := q.Get("error"); ae != "" {
		return nil, fmt.Errorf("authorization denied: %s %s", ae, q.Get("error_description"))
	}
	code := q.Get("code")
	if code == "" {
		return nil, errors.New("the authorization response has no code")
	}
	tok, err := oc.Exchange(ctx, code, oauth2.VerifierOption(verifier), resource)
	c.holdToken(tok)
	if err != nil {
		return nil, scrubString(c.scrub(err, e), code)
	}
	e.Token = tok
	if granted, ok := tok.Extra("scope").(string); ok && granted != "" {
		e.Scopes = strings.Fields(granted)
	}
	return e, nil
}

// selectScopes follows the MCP specification's scope selection: the
// configured Scopes, else the challenge's scope, else the resource's
// scopes_supported, else none. A renewal (a refused token) asks for the
// scopes held instead, whatever the challenge names: a scope not held is
// a step-up's to ask for. A step-up adds the challenge's scopes to those
// already held, so the new token still covers what the old one did.
// offline_access is added where the authorization server offers it, for
// a refresh token. With AllowedScopes, whatever it does not list is
// dropped.
func (c *Client) selectScopes(ch Challenge, prm *ResourceMetadata, asm *ServerMetadata, m mode) []string {
	var s []string
	switch {
	case m == modeRenew && c.entry != nil:
		s = slices.Clone(c.entry.Scopes)
	case c.cfg.Scopes != nil:
		s = slices.Clone(c.cfg.Scopes)
	case len(ch.Scope) > 0:
		s = slices.Clone(ch.Scope)
	case prm != nil:
		s = slices.Clone(prm.ScopesSupported)
	}
	if m == modeFirst && c.entry != nil && len(c.entry.Wanted) > 0 {
		// A step-up that waited for a login: the scopes held and those
		// demanded.
		for _, x := range append(slices.Clone(c.entry.Scopes), c.entry.Wanted...) {
			if !slices.Contains(s, x) {
				s = append(s, x)
			}
		}
	}
	if m == modeStepUp && c.entry != nil {
		for _, x := range c.entry.Scopes {
			if !slices.Contains(s, x) {
				s = append(s, x)
			}
		}
		for _, x := range ch.Scope {
			if !slices.Contains(s, x) {
				s = append(s, x)
			}
		}
	}
	if c.cfg.Scopes == nil && !c.cfg.ClientCredentials && len(s) > 0 && slices.Contains(asm.ScopesSupported, "offline_access") && !slices.Contains(s, "offline_access") {
		s = append(s, "offline_access")
	}
	if allowed := c.cfg.AllowedScopes; allowed != nil {
		s = slices.DeleteFunc(s, func(x string) bool { return !slices.Contains(allowed, x) })
	}
	return s
}

func (c *Client) oauth2Config(e *Entry, asm *ServerMetadata) *oauth2.Config {
	oc := &oauth2.Config{
		ClientID:     e.ClientID,
		ClientSecret: string(e.ClientSecret),
		RedirectURL:  e.RedirectURI,
		Scopes:       e.Scopes,
		Endpoint:     oauth2.Endpoint{TokenURL: e.TokenURL, AuthStyle: authStyle(e.AuthMethod)},
	}
	if asm != nil {
		oc.Endpoint.AuthURL = asm.AuthorizationEndpoint
	}
	return oc
}

func authStyle(method string) oauth2.AuthStyle {
	if method == AuthMethodBasic {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams // post sends the secret, none has none to send
}

// clientCredentials gets a token as the client itself, authenticating
// with its secret or a fresh signed assertion (RFC 7523).
func (c *Client) clientCredentials(ctx context.Context, e *Entry) (*oauth2.Token, error) {
	cc := clientcredentials.Config{
		ClientID:       e.ClientID,
		ClientSecret:   string(e.ClientSecret),
		TokenURL:       e.TokenURL,
		Scopes:         e.Scopes,
		EndpointParams: url.Values{"resource": {e.Resource}},
		AuthStyle:      authStyle(e.AuthMethod),
	}
	if e.AuthMethod == AuthMethodPrivateKeyJWT {
		aud := e.Issuer
		if aud == "" {
			aud = e.TokenURL
		}
		a, err := assertion(c.cfg.PrivateKey, c.cfg.SigningAlg, e.ClientID, aud)
		if err != nil {
			return nil, err
		}
		cc.ClientSecret = ""
		cc.EndpointParams.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		cc.EndpointParams.Set("client_assertion", a)
	}
	if _, err := c.secure("token endpoint", e.TokenURL); err != nil {
		return nil, err
	}
	tok, err := cc.Token(ctx)
	c.holdToken(tok)
	if err != nil {
		return nil, c.scrub(err, e)
	}
	return tok, nil
}

// scrub removes every secret the client knows of from err's text.
func (c *Client) scrub(err error, e *Entry) error {
	if err == nil {
		return nil
	}
	s := []string{string(c.cfg.ClientSecret), string(c.cfg.PrivateKey)}
	s = append(s, basicForms(c.cfg.ClientID, string(c.cfg.ClientSecret))...)
	if e != nil {
		s = append(s, string(e.ClientSecret))
		s = append(s, basicForms(e.ClientID, string(e.ClientSecret))...)
		if e.Token != nil {
			s = append(s, e.Token.AccessToken, e.Token.RefreshToken)
		}
	}
	return scrubString(err, s...)
}

// scrubString returns err with each non-empty secret replaced, as a
// plain error keeping ErrLoginRequired recognisable. A token endpoint's
// error body is dropped: it may echo what was sent.
func scrubString(err error, secrets ...string) error {
	var re *oauth2.RetrieveError
	msg := err.Error()
	if errors.As(err, &re) {
		msg = "token endpoint answered " + status(re.Response)
		if re.ErrorCode != "" {
			msg += ": " + re.ErrorCode
		}
		if re.ErrorDescription != "" {
			msg += ": " + re.ErrorDescription
		}
	}
	changed := msg != err.Error()
	for _, s := range secrets {
		if s != "" && strings.Contains(msg, s) {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
			changed = true
		}
	}
	if !changed {
		return err
	}
	if errors.Is(err, ErrLoginRequired) {
		return fmt.Errorf("%w: %s", ErrLoginRequired, msg)
	}
	return errors.New(msg)
}

// basicForms are the encodings a client secret takes on the wire, which a
// server echoing a request would show.
func basicForms(id, secret string) []string {
	if secret == "" {
		return nil
	}
	enc := base64.StdEncoding.EncodeToString
	return []string{url.QueryEscape(secret), enc([]byte(id + ":" + secret)),
		enc([]byte(url.QueryEscape(id) + ":" + url.QueryEscape(secret)))}
}

func randomString() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
