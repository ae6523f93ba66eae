// Package oauth is the OAuth 2.1 client of MCP's authorization
// specification for HTTP and SSE connections: a RoundTripper that answers
// a server's 401 by discovering its authorization server, identifying the
// client, getting a token and sending the request again, and a 403
// insufficient_scope by asking for the scopes the server named (a bounded
// number of times).
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
// Tokens and client secrets are held as mcpruntime.Secret or inside
// *oauth2.Token, are sent only to the token endpoint and the server, and
// are scrubbed from every error this package returns.
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

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// Token endpoint authentication methods (RFC 7591 section 2).
const (
	AuthMethodBasic         = "client_secret_basic"
	AuthMethodPost          = "client_secret_post"
	AuthMethodNone          = "none"
	AuthMethodPrivateKeyJWT = "private_key_jwt"
)

// DefaultMaxStepUps is how many times one request may re-authorize for
// more scopes after a 403 insufficient_scope before the 403 is returned.
const DefaultMaxStepUps = 2

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
	// Scopes, when set, are requested instead of the challenge's or the
	// metadata's.
	Scopes []string
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
	// MaxStepUps bounds re-authorizations per request on 403
	// insufficient_scope (0: DefaultMaxStepUps; negative: none).
	MaxStepUps int
}

// UserAgent is the browser of the authorization code flow.
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
	// stepUps counts re-authorizations per demanded scope set since the
	// last request that got through.
	stepUps map[string]int
	base    http.RoundTripper
}

// New returns the client for the MCP server at serverURL.
func New(serverURL string, cfg Config) (*Client, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("oauth: server URL %q is not an http(s) URL", serverURL)
	}
	u.Fragment, u.RawQuery = "", ""
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
	return &Client{server: u, cfg: cfg, base: http.DefaultTransport}, nil
}

// RoundTripper wraps base (the connection's transport, under its SSRF
// guard and message cap) so requests carry this client's token; the
// authorization server is reached through base too. It is the function
// mcpgo.WithRoundTripper takes.
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
	// token from the identity guard) is that principal's, not ours.
	if req.Header.Get("Authorization") != "" {
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
		tok, gen := t.c.current(ctx)
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
			if err := t.c.authorize(ctx, ch, gen, false); err != nil {
				return nil, err
			}
			continue
		case resp.StatusCode == http.StatusForbidden && stepUps < t.c.cfg.MaxStepUps:
			ch := ParseChallenge(resp.Header)
			if ch.Error != "insufficient_scope" || !t.c.mayStepUp(ch) {
				return resp, nil
			}
			stepUps++
			drain(resp)
			if err := t.c.authorize(ctx, ch, gen, true); err != nil {
				return nil, err
			}
			continue
		}
		if resp.StatusCode < 400 {
			t.c.steppedUp()
		}
		return resp, nil
	}
}

// mayStepUp counts a step-up for the scopes ch demands, across requests:
// a server that keeps demanding scopes its authorization server never
// grants gets MaxStepUps re-authorizations in all, not per request.
func (c *Client) mayStepUp(ch Challenge) bool {
	key := strings.Join(slices.Sorted(slices.Values(ch.Scope)), " ")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stepUps == nil {
		c.stepUps = map[string]int{}
	}
	if c.stepUps[key] >= c.cfg.MaxStepUps {
		return false
	}
	c.stepUps[key]++
	return true
}

// steppedUp resets the count once a request gets through.
func (c *Client) steppedUp() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.stepUps)
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
// cache and refreshing an expired token first.
func (c *Client) current(ctx context.Context) (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entry == nil {
		if e, err := c.cfg.Store.Load(c.cfg.Key); err == nil && e != nil {
			c.entry = e
		}
	}
	e := c.entry
	if e == nil || e.Token == nil {
		return "", c.gen
	}
	if !e.Token.Valid() {
		if tok, err := c.refresh(ctx, e); err == nil {
			if tok.RefreshToken == "" {
				tok.RefreshToken = e.Token.RefreshToken
			}
			e.Token = tok
			_ = c.cfg.Store.Save(c.cfg.Key, e)
		} else {
			e.Token = nil
			return "", c.gen
		}
	}
	return e.Token.AccessToken, c.gen
}

func (c *Client) httpClient() *http.Client {
	return &http.Client{Transport: c.base, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (c *Client) refresh(ctx context.Context, e *Entry) (*oauth2.Token, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, c.httpClient())
	if e.ClientCredentials && e.TokenURL != "" {
		// A service just asks again: it needs no refresh token.
		return c.clientCredentials(ctx, e)
	}
	if e.Token.RefreshToken == "" || e.TokenURL == "" {
		return nil, errors.New("no refresh token")
	}
	oc := c.oauth2Config(e, nil)
	tok, err := oc.TokenSource(ctx, &oauth2.Token{RefreshToken: e.Token.RefreshToken}).Token()
	if err != nil {
		return nil, c.scrub(err, e)
	}
	return tok, nil
}

// Login authorizes now, without waiting for a 401: mcpgen auth login.
func (c *Client) Login(ctx context.Context) error {
	c.mu.Lock()
	if c.entry == nil {
		c.entry, _ = c.cfg.Store.Load(c.cfg.Key)
	}
	gen := c.gen
	c.mu.Unlock()
	ch := Challenge{}
	if c.cfg.Scopes == nil {
		// The server's challenge names the resource metadata and scopes;
		// ask for one with an unauthenticated request.
		ch = c.probe(ctx)
	}
	return c.authorize(ctx, ch, gen, false)
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
	return c.cfg.Store.Delete(c.cfg.Key)
}

// Entry returns a copy of the cached state (nil when there is none).
func (c *Client) Entry() *Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entry == nil {
		c.entry, _ = c.cfg.Store.Load(c.cfg.Key)
	}
	if c.entry == nil {
		return nil
	}
	e := *c.entry
	return &e
}

// authorize gets a new token. gen is the generation the failed request
// was sent with: if another request authorized since, its token is used.
func (c *Client) authorize(ctx context.Context, ch Challenge, gen int, stepUp bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return nil
	}
	// A token the server refused (revoked, or expired early) is renewed
	// with the refresh token first: no user is needed for that. A step-up
	// needs new consent, so it always authorizes again.
	if old := c.entry; !stepUp && old != nil && old.Token != nil && old.Token.RefreshToken != "" {
		if tok, err := c.refresh(ctx, old); err == nil && tok.AccessToken != old.Token.AccessToken {
			if tok.RefreshToken == "" {
				tok.RefreshToken = old.Token.RefreshToken
			}
			old.Token = tok
			c.gen++
			return c.cfg.Store.Save(c.cfg.Key, old)
		}
	}
	e, err := c.newToken(ctx, ch, stepUp)
	if err != nil {
		return fmt.Errorf("oauth: %s: %w", c.server.Host, c.scrub(err, c.entry))
	}
	c.entry = e
	c.gen++
	if err := c.cfg.Store.Save(c.cfg.Key, e); err != nil {
		return fmt.Errorf("oauth: %s: cache the token: %w", c.server.Host, c.scrub(err, e))
	}
	return nil
}

func (c *Client) newToken(ctx context.Context, ch Challenge, stepUp bool) (*Entry, error) {
	hc := c.httpClient()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	prm, asm, err := discover(ctx, hc, c.server, ch)
	if err != nil {
		return nil, err
	}
	e := &Entry{Server: c.server.String(), Issuer: asm.Issuer, TokenURL: asm.TokenEndpoint, Resource: c.server.String()}
	if prm != nil && prm.Resource != "" {
		e.Resource = prm.Resource
	}
	e.Scopes = c.selectScopes(ch, prm, asm, stepUp)
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
	if c.cfg.Agent == nil {
		return nil, fmt.Errorf("%w: %s", ErrLoginRequired, c.cfg.LoginHint)
	}
	if asm.AuthorizationEndpoint == "" {
		return nil, errors.New("the authorization server has no authorization endpoint")
	}
	if m := asm.CodeChallengeMethodsSupported; m != nil && !slices.Contains(m, "S256") {
		return nil, errors.New("the authorization server does not support PKCE with S256, which MCP requires")
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
// challenge's scope, else the resource's scopes_supported, else none. A
// step-up adds the challenge's scopes to those already held, so the new
// token still covers what the old one did. offline_access is added
// where the authorization server offers it, for a refresh token.
func (c *Client) selectScopes(ch Challenge, prm *ResourceMetadata, asm *ServerMetadata, stepUp bool) []string {
	var s []string
	switch {
	case c.cfg.Scopes != nil:
		s = slices.Clone(c.cfg.Scopes)
	case len(ch.Scope) > 0:
		s = slices.Clone(ch.Scope)
	case prm != nil:
		s = slices.Clone(prm.ScopesSupported)
	}
	if stepUp && c.entry != nil {
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
	tok, err := cc.Token(ctx)
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
		msg = "token endpoint answered " + re.Response.Status
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
