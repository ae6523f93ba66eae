package mcpgo_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
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
// to another host over TLS it is refused as well, so nothing goes there.
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

	// To another host over TLS: refused too, before anything is sent
	// there (a POST is never re-sent to another origin).
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
	if err := call(); err == nil || !strings.Contains(err.Error(), "another origin ("+other.URL+")") {
		t.Errorf("redirect to another host: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Errorf("the other host got %d requests: %v", len(seen), seen)
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

// A server over TLS that answers tools/call with a redirect to another
// origin does not get the call's body sent there: with the identity
// argument the caller's token is in it. Every redirect status is refused
// for a POST (307 and 308 would re-send the body; 301, 302 and 303 would
// turn the call into a GET elsewhere), the target host gets nothing, and
// the error names the target's origin, not its URL. A redirect to the same
// origin is still followed, body and all.
func TestIdentityArgumentNotRedirected(t *testing.T) {
	var mu sync.Mutex
	var got []string
	other := testCA.Server("127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+string(b))
		mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
	}))
	defer other.Close()
	mcpSrv := server.NewStreamableHTTPServer(attackServer())
	var status int
	var target string
	srv := testCA.Server("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		if r.URL.Path == "/mcp" && r.URL.RawQuery != "again" && bytes.Contains(b, []byte(`"tools/call"`)) {
			http.Redirect(w, r, target, status)
			return
		}
		mcpSrv.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call := func() (mcpruntime.ModelResult, error) {
		c := mcpgo.StreamableHTTP(srv.URL+"/mcp", mcpgo.WithName("redirector"))
		defer c.Close()
		tok := token("SECRET-ARG-")
		m, err := attackTool(t, c, "whoami").Invoke(mcpruntime.WithPrincipal(ctx, "alice", tok), json.RawMessage(`{"note":"n"}`))
		if err != nil && strings.Contains(err.Error(), string(tok)) {
			t.Errorf("the error shows the token: %v", err)
		}
		return m, err
	}
	for _, st := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound, http.StatusSeeOther, http.StatusMovedPermanently} {
		t.Run(strconv.Itoa(st), func(t *testing.T) {
			status, target = st, other.URL+"/elsewhere?key=QUERY-SECRET"
			_, err := call()
			if err == nil || !strings.Contains(err.Error(), "another origin ("+other.URL+")") {
				t.Errorf("redirected call: %v", err)
			}
			if err != nil && (strings.Contains(err.Error(), "/elsewhere") || strings.Contains(err.Error(), "QUERY-SECRET")) {
				t.Errorf("the error shows the target's URL: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 0 {
				t.Errorf("the other origin got %q", got)
			}
			got = nil
		})
	}
	// Same origin: followed, and the call works.
	status, target = http.StatusTemporaryRedirect, "/mcp?again"
	if m, err := call(); err != nil || m.IsError || !strings.Contains(m.Text, "access_token=[redacted]") {
		t.Errorf("same-origin redirect: %+v, %v", m, err)
	}
}
