package mcpgo

import (
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"

	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// GuardedDialer connects only to addresses the SSRF guard allows. It
// resolves the host itself and checks every address it resolves to before
// dialing one, and the socket's Control hook checks the address actually
// being connected to once more. Because the check happens at dial time, on
// the addresses dialed, a name that resolved to a public address when the
// registry entry was saved and to a private one now (DNS rebinding) is
// refused.
type GuardedDialer struct {
	// AllowPrivate permits loopback, private, link-local, unique-local and
	// CGNAT addresses (never cloud metadata ones).
	AllowPrivate bool
	// Resolver resolves host names (default net.DefaultResolver).
	Resolver manager.Resolver
	// Timeout bounds one dial (default 30 s).
	Timeout time.Duration
}

// DialContext dials network ("tcp", "tcp4", "tcp6") address ("host:port").
// Errors match manager.ErrNotSent; refused addresses are a
// *manager.PermanentError holding a *manager.BlockedAddressError.
func (g *GuardedDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := g.dial(ctx, network, address)
	if err != nil {
		var be *manager.BlockedAddressError
		if errors.As(err, &be) {
			err = &manager.PermanentError{Err: err}
		}
		return nil, &notSent{err}
	}
	return conn, nil
}

func (g *GuardedDialer) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %s: bad port", host)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		r := g.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		ipNet := "ip"
		switch network {
		case "tcp4":
			ipNet = "ip4"
		case "tcp6":
			ipNet = "ip6"
		}
		if addrs, err = r.LookupNetIP(ctx, ipNet, host); err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("resolve %q: no addresses", host)
		}
	}
	// Every answer is checked, not just the one dialed: a name that mixes
	// public and private answers is an attack, not a fallback.
	for _, a := range addrs {
		if err := manager.CheckAddr(a, g.AllowPrivate); err != nil {
			be := err.(*manager.BlockedAddressError)
			be.Host = host
			return nil, be
		}
	}
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	d := net.Dialer{Timeout: timeout, ControlContext: g.control}
	var errs []error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// control is the last check, on the address the socket connects to.
func (g *GuardedDialer) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial: unexpected address form")
	}
	return manager.CheckAddr(ap.Addr(), g.AllowPrivate)
}

// messageCappedClient returns an HTTP client that caps response messages at
// limit bytes while reading them and reports an oversized message to
// onTooLarge. With a guard it dials through g and ignores proxy settings
// (a proxy would dial the target on the guard's behalf); without one it
// dials and proxies as net/http does by default.
func messageCappedClient(g *GuardedDialer, limit int64, server string, onTooLarge func(error)) *http.Client {
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           plainDial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if g != nil {
		t.Proxy, t.DialContext = nil, g.DialContext
	}
	return &http.Client{
		Transport:     &limitTransport{rt: t, limit: limit, server: server, onTooLarge: onTooLarge},
		CheckRedirect: checkRedirect,
	}
}

// redirectHeaders are the request headers a redirect to another origin
// keeps: what the protocol needs to be understood. Everything else may be
// a credential (Authorization, cookies, an API key in a header of its own,
// the session ID) and was meant for the server the connection is to.
var redirectHeaders = []string{"Accept", "Content-Type", "Last-Event-Id", "Mcp-Method", "Mcp-Name", "Mcp-Protocol-Version", "User-Agent"}

// checkRedirect is the redirect policy of HTTP connections. Redirects dial
// through the guard too; a short chain is plenty. A redirect from https to
// plain http is refused: the request, and any credentials in it, would go
// in clear. A request with a body (every POST: the JSON-RPC message, which
// may carry a caller's token in its arguments) is never re-sent to another
// origin (scheme, host and port): an MCP server has no reason to send a
// message elsewhere, and net/http would re-send the body on a 307 or 308.
// A GET without a body (an event stream) follows a redirect to another
// origin with the headers in redirectHeaders only (net/http alone keeps
// credentials for the same host on another port and for subdomains). No
// Referer: the URL may carry a secret.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 3 {
		return errors.New("too many redirects")
	}
	for _, v := range via {
		if strings.EqualFold(v.URL.Scheme, "https") && !strings.EqualFold(req.URL.Scheme, "https") {
			return &redirectError{msg: "refusing a redirect from https to plain http (" + originOf(req.URL) + ")"}
		}
	}
	req.Header.Del("Referer")
	first := via[0]
	if !sameOrigin(req.URL, first.URL) {
		if hasBody(first) {
			return &redirectError{msg: fmt.Sprintf("refusing to follow a redirect of a %s to another origin (%s): what it carries is for the server's own origin only",
				first.Method, originOf(req.URL))}
		}
		for k := range req.Header {
			if !slices.Contains(redirectHeaders, http.CanonicalHeaderKey(k)) {
				req.Header.Del(k)
			}
		}
	}
	return nil
}

// hasBody reports whether r is anything but a GET without a body: a
// request whose redirect may re-send what it carried.
func hasBody(r *http.Request) bool {
	if r.Method != "" && r.Method != http.MethodGet {
		return true
	}
	return r.ContentLength != 0 || r.GetBody != nil || r.Body != nil && r.Body != http.NoBody
}

// redirectError is a redirect the policy refuses. net/http wraps it in a
// *url.Error quoting the whole target URL; Conn.clean shows this message
// alone, which names the target's origin only.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

// originOf is u's scheme, host and port, for messages: never its path or
// query, which may carry a secret.
func originOf(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + u.Host
}

// sameOrigin reports whether a and b have the same scheme, host and port
// (a default port written or not).
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// limitTransport caps response bodies: an event stream per line (it may
// rightly run for hours), anything else in total.
type limitTransport struct {
	rt         http.RoundTripper
	limit      int64
	server     string
	onTooLarge func(error)
	// tlsHost, when set, is the host (and port, as written) of an https
	// endpoint: nothing is sent to it over plain http. An SSE endpoint
	// event may name an http URL with the same host, which is all mcp-go
	// checks.
	tlsHost string
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.tlsHost != "" && !strings.EqualFold(req.URL.Scheme, "https") && strings.EqualFold(req.URL.Host, t.tlsHost) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &notSent{errors.New("refusing to send over plain http on an https connection")}
	}
	resp, err := t.rt.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	onErr := func(err error) {
		var tl *MessageTooLargeError
		if errors.As(err, &tl) {
			tl.Server = t.server
			if t.onTooLarge != nil {
				t.onTooLarge(tl)
			}
		}
	}
	limit, perRead := t.limit, false
	if rl, ok := mcpruntime.ReadLimit(req.Context()); ok && rl <= limit {
		// A resource read or prompt with a smaller limit of its own is cut
		// off at it while being read, not after it is all in memory; the
		// connection stays (only this answer is refused). A POST's event
		// stream carries that request's answer only.
		limit, perRead = rl, true
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/event-stream" {
		ll := &lineLimit{r: resp.Body, limit: limit, onErr: onErr}
		if perRead {
			ll.onErr = nil
			ll.failWith = func(error) error { return &mcpruntime.ResourceTooLargeError{Limit: limit, Size: limit + 1} }
		}
		resp.Body = readCloser{ll, resp.Body}
		return resp, nil
	}
	resp.Body = readCloser{&totalLimit{r: resp.Body, left: limit, limit: limit, perRead: perRead, onErr: onErr}, resp.Body}
	return resp, nil
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// transport when a session ends.
func (t *limitTransport) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

type readCloser struct {
	io.Reader
	io.Closer
}

type totalLimit struct {
	r       io.Reader
	left    int64
	limit   int64
	perRead bool // the limit is the read's own (a *ResourceTooLargeError), not the connection's
	onErr   func(error)
	err     error
}

func (l *totalLimit) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		if l.perRead {
			l.err = &mcpruntime.ResourceTooLargeError{Limit: l.limit, Size: l.limit - l.left}
			return 0, l.err
		}
		l.err = &MessageTooLargeError{Limit: l.limit}
		l.onErr(l.err)
		return 0, l.err
	}
	return n, err
}

var plainDialer = net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// plainDial dials as net/http does, marking failures as not sent: without
// a connection no request reached the server.
func plainDial(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := plainDialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, &notSent{err}
	}
	return conn, nil
}
