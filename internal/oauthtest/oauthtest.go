// Package oauthtest is a local OAuth 2.1 authorization server and an MCP
// server protected by it (the real internal/testserver behind a bearer
// check), for the tests of mcpgen's OAuth client and of mcpgen auth. The
// authorization endpoint approves at once, redirecting to the
// redirect_uri with a code, as a signed-in user's browser would see. Both
// serve https with a certificate of a private CA (internal/testca), or
// plain http on loopback without one.
package oauthtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgen/mcpgen/internal/testca"
	"github.com/mcpgen/mcpgen/internal/testserver"
)

// Server is the authorization server and the protected MCP server.
type Server struct {
	AS, RS *httptest.Server
	// MCPURL is the protected MCP endpoint.
	MCPURL string
	// ClientID and ClientSecret are a pre-registered confidential client.
	ClientID, ClientSecret string
	// TokenPrefix starts every access and refresh token issued (a canary).
	TokenPrefix string
	// TokenTTL is the access tokens' lifetime (expires_in).
	TokenTTL time.Duration
	// Scope is what the MCP server's challenge asks for.
	Scope string
	// EchoErrors makes token endpoint errors echo the request's form and
	// Authorization header, as a careless server might.
	EchoErrors bool
	// StepUp, when set, is a scope every request must hold beyond Scope:
	// a token without it is refused with 403 insufficient_scope.
	StepUp string
	// Withhold makes the authorization server never grant StepUp.
	Withhold bool
	// ServerMetadata and ResourceMetadata, when set, change the metadata
	// documents before they are served (a hostile or broken server).
	ServerMetadata   func(m map[string]any)
	ResourceMetadata func(m map[string]any)
	// Intercept, when set, sees every MCP request that carries a valid
	// token, with its body, first; it answers it itself by returning true.
	Intercept func(w http.ResponseWriter, r *http.Request, body []byte) bool
	// EchoBearer serves an MCP server whose tool whoami shows the token the
	// request carried, in its description and in its result, as a careless
	// server might.
	EchoBearer bool
	// Authorizations counts authorization requests.
	Authorizations int
	// Scopes lists the scope of every authorization request and client
	// credentials token request.
	Scopes []string
	// Requests lists every request the authorization server got ("POST
	// /token"), and StepUpMethod, when set, limits StepUp to requests of
	// that MCP method ("tools/call").
	Requests     []string
	StepUpMethod string
	// Bearers lists the token of every MCP request let through, in order;
	// read it with SeenBearers while the server runs.
	Bearers []string

	mu        sync.Mutex
	n         int
	codes     map[string]grant
	access    map[string]time.Time // token -> expiry
	scopes    map[string]string    // token -> scope granted
	refresh   map[string]grant
	clients   map[string]string // registered client -> secret ("" public)
	Grants    []string          // grant_type of every token request, in order
	Resources []string          // resource of every token request
	// JAGs are the identity assertion grants the jwt-bearer grant accepts
	// (cross-app access), issued by a test's identity provider.
	JAGs []string
}

// AddJAG makes the jwt-bearer grant accept jag.
func (s *Server) AddJAG(jag string) {
	s.mu.Lock()
	s.JAGs = append(s.JAGs, jag)
	s.mu.Unlock()
}

type grant struct {
	client, challenge, redirect, scope, resource string
}

type bearerKey struct{}

// New starts both servers, over https with certificates of ca, or over
// plain http on 127.0.0.1 with a nil ca; Close stops them.
func New(ca *testca.CA, clientSecret, tokenPrefix string) *Server {
	s := &Server{ClientID: "pre-registered", ClientSecret: clientSecret, TokenPrefix: tokenPrefix, TokenTTL: time.Hour,
		Scope: "mcp:read", codes: map[string]grant{}, access: map[string]time.Time{}, scopes: map[string]string{}, refresh: map[string]grant{},
		clients: map[string]string{}}
	start := func(h http.Handler) *httptest.Server {
		if ca == nil {
			return httptest.NewServer(h)
		}
		return ca.Server("", h)
	}
	s.AS = start(http.HandlerFunc(s.serveAS))
	mcpSrv := server.NewStreamableHTTPServer(testserver.New(testserver.Options{}))
	echo := server.NewStreamableHTTPServer(echoServer(), server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		return context.WithValue(ctx, bearerKey{}, tok)
	}))
	s.RS = start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp":
			m := map[string]any{"resource": s.MCPURL, "authorization_servers": []string{s.AS.URL}, "scopes_supported": []string{"mcp:read"}}
			if s.ResourceMetadata != nil {
				s.ResourceMetadata(m)
			}
			writeJSON(w, 200, m)
			return
		case "/mcp":
		default:
			http.NotFound(w, r)
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !s.valid(tok) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", scope=%q, resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, s.Scope, s.RS.URL))
			writeJSON(w, 401, map[string]string{"error": "invalid_token"})
			return
		}
		s.mu.Lock()
		s.Bearers = append(s.Bearers, tok)
		s.mu.Unlock()
		if s.StepUp != "" && !s.has(tok, s.StepUp) && (s.StepUpMethod == "" || mcpMethod(r) == s.StepUpMethod) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s %s", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, s.Scope, s.StepUp, s.RS.URL))
			writeJSON(w, 403, map[string]string{"error": "insufficient_scope"})
			return
		}
		if s.Intercept != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if s.Intercept(w, r, body) {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if s.EchoBearer {
			echo.ServeHTTP(w, r)
			return
		}
		mcpSrv.ServeHTTP(w, r)
	}))
	s.MCPURL = s.RS.URL + "/mcp"
	return s
}

// mcpMethod reads the JSON-RPC method of an MCP request, leaving its body
// to be read again.
func mcpMethod(r *http.Request) string {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &m)
	return m.Method
}

// echoServer has one tool, whoami, that shows the caller's token.
func echoServer() *server.MCPServer {
	bearer := func(ctx context.Context) string { v, _ := ctx.Value(bearerKey{}).(string); return v }
	srv := server.NewMCPServer("echo", "1.0", server.WithToolCapabilities(false),
		server.WithToolFilter(func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
			out := slices.Clone(tools)
			for i := range out {
				out[i].Description = "Shows who you are: " + bearer(ctx)
			}
			return out
		}))
	srv.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Shows who you are."), mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("you are " + bearer(ctx)), nil
		})
	return srv
}

func (s *Server) Close() { s.AS.Close(); s.RS.Close() }

// Expire makes every access token issued so far invalid.
func (s *Server) Expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

func (s *Server) valid(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.access[tok]
	return ok && time.Now().Before(exp)
}

func (s *Server) has(tok, scope string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(strings.Fields(s.scopes[tok]), scope)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) serveAS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.Requests = append(s.Requests, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		m := map[string]any{
			"issuer": s.AS.URL, "authorization_endpoint": s.AS.URL + "/authorize", "token_endpoint": s.AS.URL + "/token",
			"registration_endpoint": s.AS.URL + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post", "none"},
			"scopes_supported":                      []string{"mcp:read", "offline_access"},
		}
		if s.ServerMetadata != nil {
			s.ServerMetadata(m)
		}
		writeJSON(w, 200, m)
	case "/register":
		var m struct {
			RedirectURIs []string `json:"redirect_uris"`
			Method       string   `json:"token_endpoint_auth_method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		s.mu.Lock()
		s.n++
		id := fmt.Sprintf("dyn-%d", s.n)
		s.clients[id] = ""
		s.mu.Unlock()
		writeJSON(w, 201, map[string]any{"client_id": id, "redirect_uris": m.RedirectURIs, "token_endpoint_auth_method": "none"})
	case "/authorize":
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") == "" {
			http.Error(w, "PKCE S256 and a resource are required", 400)
			return
		}
		red, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || red.Hostname() != "127.0.0.1" {
			http.Error(w, "loopback redirect required", 400)
			return
		}
		s.mu.Lock()
		s.n++
		s.Authorizations++
		s.Scopes = append(s.Scopes, q.Get("scope"))
		code := fmt.Sprintf("code-%d", s.n)
		s.codes[code] = grant{client: q.Get("client_id"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), scope: q.Get("scope"), resource: q.Get("resource")}
		s.mu.Unlock()
		v := red.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		red.RawQuery = v.Encode()
		http.Redirect(w, r, red.String(), http.StatusFound)
	case "/token":
		s.token(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	fail := func(code, desc string) {
		if s.EchoErrors {
			desc += fmt.Sprintf(" (request %v, authorization %q)", r.PostForm, r.Header.Get("Authorization"))
		}
		writeJSON(w, 400, map[string]string{"error": code, "error_description": desc})
	}
	client, secret, basic := r.BasicAuth()
	if !basic {
		client, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Grants = append(s.Grants, r.PostForm.Get("grant_type"))
	s.Resources = append(s.Resources, r.PostForm.Get("resource"))
	if r.PostForm.Get("grant_type") == "client_credentials" {
		s.Scopes = append(s.Scopes, r.PostForm.Get("scope"))
	}
	want, known := s.clients[client]
	if client == s.ClientID {
		want, known = s.ClientSecret, true
	}
	if !known || want != secret {
		fail("invalid_client", "unknown client or wrong secret")
		return
	}
	var g grant
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		c, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || c.client != client || c.redirect != r.PostForm.Get("redirect_uri") || base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
			fail("invalid_grant", "bad code, client, redirect or verifier")
			return
		}
		g = c
	case "refresh_token":
		c, ok := s.refresh[r.PostForm.Get("refresh_token")]
		if !ok || c.client != client {
			fail("invalid_grant", "bad refresh token")
			return
		}
		g = c
	case "client_credentials":
		g = grant{client: client, scope: r.PostForm.Get("scope")}
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		// Cross-app access: the assertion is an identity assertion grant
		// the identity provider issued (JAGs).
		if !slices.Contains(s.JAGs, r.PostForm.Get("assertion")) {
			fail("invalid_grant", "unknown assertion")
			return
		}
		g = grant{client: client, scope: r.PostForm.Get("scope")}
	default:
		fail("unsupported_grant_type", "")
		return
	}
	s.n++
	tok := fmt.Sprintf("%s-access-%d", s.TokenPrefix, s.n)
	s.access[tok] = time.Now().Add(s.TokenTTL)
	s.scopes[tok] = g.scope
	if s.Withhold {
		s.scopes[tok] = strings.Join(slices.DeleteFunc(strings.Fields(g.scope), func(x string) bool { return x == s.StepUp }), " ")
	}
	out := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(s.TokenTTL.Seconds())}
	if g.scope != "" {
		out["scope"] = g.scope
	}
	if slices.Contains(strings.Fields(g.scope), "offline_access") || r.PostForm.Get("grant_type") == "refresh_token" {
		rt := fmt.Sprintf("%s-refresh-%d", s.TokenPrefix, s.n)
		s.refresh[rt] = g
		out["refresh_token"] = rt
	}
	writeJSON(w, 200, out)
}

// Seen returns a copy of Requests.
func (s *Server) Seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.Requests)
}

// Recorder is a server that records the requests it gets and answers each
// with Status (default 200, an empty JSON object).
type Recorder struct {
	*httptest.Server
	Status int
	// Header is added to every answer (a WWW-Authenticate challenge, say).
	Header http.Header

	mu   sync.Mutex
	reqs []*http.Request
}

// NewRecorder starts a recorder over https with ca's certificate, or over
// plain http with a nil ca, listening on addr ("": 127.0.0.1, any port).
func NewRecorder(ca *testca.CA, addr string) *Recorder {
	rec := &Recorder{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r2 := r.Clone(context.Background())
		r2.Body = io.NopCloser(bytes.NewReader(body))
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, r2)
		status, hdr := rec.Status, rec.Header
		rec.mu.Unlock()
		for k, v := range hdr {
			w.Header()[k] = v
		}
		if status == 0 {
			status = 200
		}
		writeJSON(w, status, map[string]any{})
	})
	switch {
	case ca != nil:
		rec.Server = ca.Server(addr, h)
	case addr != "":
		rec.Server = httptest.NewUnstartedServer(h)
		rec.Server.Listener.Close()
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			panic(err)
		}
		rec.Server.Listener = ln
		rec.Server.Start()
	default:
		rec.Server = httptest.NewServer(h)
	}
	return rec
}

// Requests returns the requests recorded so far.
func (r *Recorder) Requests() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// SeenBearers returns a copy of Bearers, safe to read while requests
// arrive (a connection's own requests, such as its event stream, may come
// at any time).
func (s *Server) SeenBearers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.Bearers)
}
