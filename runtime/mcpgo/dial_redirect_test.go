package mcpgo

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgen/mcpgen/internal/testca"
	"github.com/mcpgen/mcpgen/runtime/manager"
)

// fixedResolver answers every name from a table, as a DNS server under an
// attacker's control would.
type fixedResolver map[string][]netip.Addr

func (r fixedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestGuardedClientRedirects: the HTTP client of guarded connections
// follows a short chain of redirects, each hop dialed through the SSRF
// guard, so a server cannot bounce a request (the GET of an event stream:
// a POST never leaves the server's origin) to an address the guard
// refuses, by address or by a name that resolves to one.
func TestGuardedClientRedirects(t *testing.T) {
	var hits atomic.Int32
	var lastBody atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch p := r.URL.Path; {
		case strings.HasPrefix(p, "/hop/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/hop/"))
			if n == 0 {
				b, _ := io.ReadAll(r.Body)
				lastBody.Store(string(b))
				fmt.Fprint(w, "arrived")
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusTemporaryRedirect)
		case p == "/to":
			http.Redirect(w, r, r.URL.Query().Get("url"), http.StatusTemporaryRedirect)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	g := &GuardedDialer{
		AllowPrivate: true, // the test server is on loopback; metadata addresses stay refused
		Resolver: fixedResolver{
			"metadata.test":  {netip.MustParseAddr("169.254.169.254")},
			"mixed.test":     {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("169.254.169.254")},
			"loopback.test":  {netip.MustParseAddr("127.0.0.1")},
			"metadata6.test": {netip.MustParseAddr("fd00:ec2::254")},
		},
	}
	c := messageCappedClient(g, 1<<20, "redirector", nil)
	t.Cleanup(c.CloseIdleConnections)
	do := func(method, url string) (string, error) {
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		}
		req, err := http.NewRequest(method, url, body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	post := func(url string) (string, error) { return do(http.MethodPost, url) }
	// A POST never follows a redirect to another origin; the GET of an
	// event stream does, so it is what reaches other names and addresses.
	get := func(url string) (string, error) { return do(http.MethodGet, url) }

	t.Run("short chain followed", func(t *testing.T) {
		hits.Store(0)
		lastBody.Store("")
		if got, err := post(srv.URL + "/hop/2"); err != nil || got != "arrived" {
			t.Fatalf("two redirects: %q, %v", got, err)
		}
		if hits.Load() != 3 || lastBody.Load() != `{"jsonrpc":"2.0","id":1,"method":"ping"}` {
			t.Errorf("%d requests, last body %q", hits.Load(), lastBody.Load())
		}
		// A redirect to a name is resolved by the guard's resolver.
		if got, err := get(srv.URL + "/to?url=http://loopback.test:" + port + "/hop/0"); err != nil || got != "arrived" {
			t.Errorf("redirect to an allowed name: %q, %v", got, err)
		}
	})

	t.Run("long chain refused", func(t *testing.T) {
		hits.Store(0)
		_, err := post(srv.URL + "/hop/3")
		if err == nil || !strings.Contains(err.Error(), "too many redirects") {
			t.Fatalf("three redirects: %v", err)
		}
		if hits.Load() != 3 {
			t.Errorf("the fourth hop was requested (%d requests)", hits.Load())
		}
	})

	for _, tc := range []struct{ name, url, reason string }{
		{"metadata address", "http://169.254.169.254/latest/meta-data/", "metadata"},
		{"name resolving to metadata", "http://metadata.test/latest/meta-data/", "metadata"},
		{"name with one bad answer", "http://mixed.test:" + port + "/hop/0", "metadata"},
		{"IPv6 metadata name", "http://metadata6.test/", "metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits.Store(0)
			_, err := get(srv.URL + "/to?url=" + tc.url)
			var be *manager.BlockedAddressError
			var pe *manager.PermanentError
			if !errors.As(err, &be) || !errors.As(err, &pe) || !errors.Is(err, manager.ErrNotSent) || !strings.Contains(be.Reason, tc.reason) {
				t.Fatalf("redirect to %s: %v", tc.url, err)
			}
			if hits.Load() != 1 {
				t.Errorf("%d requests reached the test server, want only the redirecting one", hits.Load())
			}
		})
	}

	t.Run("private refused without AllowPrivate", func(t *testing.T) {
		strict := messageCappedClient(&GuardedDialer{Resolver: g.Resolver}, 1<<20, "strict", nil)
		t.Cleanup(strict.CloseIdleConnections)
		_, err := strict.Get("http://loopback.test:" + port + "/hop/0")
		var be *manager.BlockedAddressError
		if !errors.As(err, &be) || be.Host != "loopback.test" || !be.Private {
			t.Fatalf("loopback without AllowPrivate: %v", err)
		}
	})
}

// TestRedirectCredentialsPolicy: over real TLS (a private CA whose pool the
// client is given), a redirect to another origin (another address, or
// another port of the same one) is refused for a request with a body (or
// any but a GET) and loses every header but the protocol's for a GET, and
// one from https to plain http is refused before anything is sent.
// net/http alone keeps Authorization for the same host on another port
// and any custom header (an API key) everywhere.
func TestRedirectCredentialsPolicy(t *testing.T) {
	ca, err := testca.New()
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		header http.Header
		body   string
	}
	record := func(ch chan seen) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			ch <- seen{r.Header.Clone(), string(b)}
			fmt.Fprint(w, "arrived")
		}
	}
	secrets := map[string]string{"Authorization": "Bearer SECRET-BEARER", "X-Api-Key": "SECRET-KEY", "Cookie": "s=SECRET-COOKIE",
		"Mcp-Session-Id": "SECRET-SESSION"}
	kept := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-11-25"}

	sameCh, otherCh, portCh, plainCh := make(chan seen, 4), make(chan seen, 4), make(chan seen, 4), make(chan seen, 4)
	other := ca.Server("127.0.0.2:0", record(otherCh))
	defer other.Close()
	otherPort := ca.Server("127.0.0.1:0", record(portCh))
	defer otherPort.Close()
	plain := httptest.NewServer(record(plainCh))
	defer plain.Close()
	var origin *httptest.Server
	origin = ca.Server("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/here", http.StatusTemporaryRedirect)
		case "/here":
			record(sameCh)(w, r)
		default:
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusTemporaryRedirect)
		}
	}))
	defer origin.Close()

	c := messageCappedClient(nil, 1<<20, "redirector", nil)
	c.Transport.(*limitTransport).rt.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: ca.Pool}
	t.Cleanup(c.CloseIdleConnections)
	send := func(method, u string) error {
		var body io.Reader
		if method != http.MethodGet {
			body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
		}
		req, _ := http.NewRequest(method, u, body)
		for k, v := range secrets {
			req.Header.Set(k, v)
		}
		for k, v := range kept {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	post := func(u string) error { return send(http.MethodPost, u) }

	// The same origin keeps everything, the body too.
	if err := post(origin.URL + "/same"); err != nil {
		t.Fatal(err)
	}
	if got := <-sameCh; got.header.Get("Authorization") != secrets["Authorization"] || got.header.Get("X-Api-Key") != secrets["X-Api-Key"] || got.body == "" {
		t.Errorf("same origin lost headers or body: %v %q", got.header, got.body)
	}
	for name, to := range map[string]string{"another address": other.URL, "another port": otherPort.URL} {
		ch := otherCh
		if name == "another port" {
			ch = portCh
		}
		redirect := origin.URL + "/to?to=" + url.QueryEscape(to+"/mcp?k=QUERY-SECRET")
		// A request with a body, or any but a GET, is not re-sent there:
		// the error names the target's origin, not its URL.
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			err := send(m, redirect)
			var re *redirectError
			if !errors.As(err, &re) || !strings.Contains(re.Error(), "another origin ("+to+")") || strings.Contains(re.Error(), "QUERY-SECRET") {
				t.Errorf("%s, %s: %v", name, m, err)
			}
		}
		if len(ch) != 0 {
			t.Fatalf("%s got a request with a body: %+v", name, <-ch)
		}
		// The GET of an event stream follows it with the protocol's
		// headers only.
		if err := send(http.MethodGet, redirect); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := <-ch
		for k := range secrets {
			if v := got.header.Get(k); v != "" {
				t.Errorf("%s got %s: %s", name, k, v)
			}
		}
		for k, v := range kept {
			if got.header.Get(k) != v {
				t.Errorf("%s lost %s", name, k)
			}
		}
		if got.header.Get("Referer") != "" {
			t.Errorf("%s: referer %q", name, got.header.Get("Referer"))
		}
	}
	err = post(origin.URL + "/to?to=" + url.QueryEscape(plain.URL+"/mcp"))
	if err == nil || !strings.Contains(err.Error(), "from https to plain http") {
		t.Errorf("downgrade: %v", err)
	}
	select {
	case got := <-plainCh:
		t.Errorf("the plain-http server got a request: %v", got.header)
	default:
	}
	// The same host over plain http is refused even without a redirect on
	// a connection whose endpoint is https (an SSE endpoint event may name
	// one).
	c.Transport.(*limitTransport).tlsHost = strings.TrimPrefix(plain.URL, "http://")
	if err := post(plain.URL + "/mcp"); err == nil || !errors.Is(err, manager.ErrNotSent) {
		t.Errorf("plain http on an https connection: %v", err)
	}
	if len(plainCh) != 0 {
		t.Error("the plain-http server got a request")
	}
}
