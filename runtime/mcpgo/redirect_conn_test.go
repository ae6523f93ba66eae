package mcpgo_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

const (
	staticBearer = "Bearer STATIC-BEARER-6c1d"
	staticKey    = "STATIC-KEY-90ae"
)

// clearRecorder is a plain-http server that records what reaches it.
type clearRecorder struct {
	*httptest.Server
	mu   sync.Mutex
	got  []http.Header
	body []string
}

func newClearRecorder(t *testing.T) *clearRecorder {
	r := &clearRecorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got, r.body = append(r.got, req.Header.Clone()), append(r.body, string(b))
		r.mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *clearRecorder) requests() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got
}

// A streamable HTTP server over TLS that answers tools/call with a
// redirect: to plain http on the same host it is refused, so the static
// headers (a bearer token, an API key) and the request do not go in clear;
// to another host over TLS they are not sent.
func TestStaticHeadersAcrossRedirects(t *testing.T) {
	mcpSrv := server.NewStreamableHTTPServer(fixture())
	var target string
	srv := testCA.Server("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if bytes.Contains(b, []byte(`"tools/call"`)) {
			http.Redirect(w, r, target, http.StatusTemporaryRedirect)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		mcpSrv.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	call := func() error {
		c := mcpgo.StreamableHTTP(srv.URL+"/mcp", mcpgo.WithName("redirector"),
			mcpgo.WithHeaders(map[string]string{"Authorization": staticBearer, "X-Api-Key": staticKey}))
		defer c.Close()
		if _, err := c.ToolNames(ctx); err != nil {
			t.Fatal(err)
		}
		_, err := c.CallTool(ctx, "weather", []byte(`{"city":"Oslo"}`))
		return err
	}

	plain := newClearRecorder(t)
	target = plain.URL + "/mcp"
	if err := call(); err == nil || !strings.Contains(err.Error(), "https to plain http") {
		t.Errorf("downgrade: %v", err)
	}
	if n := len(plain.requests()); n != 0 {
		t.Errorf("%d requests in clear: %v", n, plain.requests())
	}

	var mu sync.Mutex
	var seen []http.Header
	other := testCA.Server("127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
	}))
	defer other.Close()
	target = other.URL + "/mcp"
	if err := call(); err == nil {
		t.Error("the redirected call succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the redirect to the other host was not followed")
	}
	for _, h := range seen {
		if h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
			t.Errorf("the other host got credentials: %v", h)
		}
	}
}

// sniffListener serves TLS, and records (and drops) any connection whose
// first bytes are plain HTTP instead of a TLS handshake.
type sniffListener struct {
	net.Listener
	mu    sync.Mutex
	clear []string
}

type peekConn struct {
	net.Conn
	r *bufio.Reader
}

func (c peekConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (l *sniffListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		br := bufio.NewReader(c)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		first, err := br.Peek(1)
		_ = c.SetReadDeadline(time.Time{})
		if err == nil && first[0] == 0x16 { // a TLS record: handshake
			return peekConn{c, br}, nil
		}
		if req, err := http.ReadRequest(br); err == nil {
			l.mu.Lock()
			l.clear = append(l.clear, req.Method+" "+req.URL.String()+" Authorization="+req.Header.Get("Authorization"))
			l.mu.Unlock()
		}
		c.Close()
	}
}

func (l *sniffListener) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.clear
}

// An SSE server over TLS whose endpoint event names a plain http URL on
// the same host (mcp-go checks the host, not the scheme): the client does
// not POST there, so nothing crosses the network in clear.
func TestSSEEndpointDowngradeRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sniff := &sniffListener{Listener: ln}
	sse := server.NewSSEServer(fixture(), server.WithBaseURL("http://"+ln.Addr().String()))
	srv := httptest.NewUnstartedServer(sse)
	srv.Listener.Close()
	srv.Listener = sniff
	srv.TLS = testCA.ServerTLS()
	srv.StartTLS()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := mcpgo.SSE(srv.URL+"/sse", mcpgo.WithName("sse"), mcpgo.WithHeaders(map[string]string{"Authorization": staticBearer}))
	defer c.Close()
	if _, err := c.ToolNames(ctx); err == nil {
		t.Error("the session over a plain-http endpoint worked")
	}
	if s := sniff.seen(); len(s) != 0 {
		t.Errorf("requests in clear: %v", s)
	}
}
