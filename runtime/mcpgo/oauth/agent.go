package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Headless follows the authorization endpoint's redirects itself, as a
// browser would for a user who is already signed in and has consented:
// for automated clients (the conformance suite's authorization servers
// answer at once with a redirect carrying the code). Redirect is the
// redirect_uri; nothing listens there, its query is read from the
// Location header. Every URL it requests must be https (http only for a
// loopback host). Nobody consents to what it asks for, so it is
// unattended: the client steps up through it only within
// Config.AllowedScopes.
type Headless struct {
	Redirect string
	Client   *http.Client // default: a client that does not follow redirects
}

func (h Headless) RedirectURI() string { return h.Redirect }

// Unattended says no person is behind the agent.
func (Headless) Unattended() bool { return true }

func (h Headless) Authorize(ctx context.Context, authURL string) (*url.URL, error) {
	hc := h.Client
	if hc == nil {
		hc = &http.Client{}
	}
	nc := *hc
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	next := authURL
	for range 10 {
		if u, err := url.Parse(next); err != nil || !openable(u) {
			return nil, errors.New("authorization endpoint: refusing a URL that is not https")
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		if err != nil {
			return nil, err
		}
		resp, err := nc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("authorization endpoint: %w", err)
		}
		resp.Body.Close()
		loc, err := resp.Location()
		if err != nil {
			return nil, fmt.Errorf("authorization endpoint answered %s without a redirect", resp.Status)
		}
		if strings.HasPrefix(loc.String(), h.Redirect) {
			return loc, nil
		}
		next = loc.String()
	}
	return nil, errors.New("authorization endpoint: too many redirects")
}

// Loopback is the native-app flow of RFC 8252: it listens on a 127.0.0.1
// port for the browser's redirect. Open is given the URL the user must
// visit (print it, or start a browser): only ever an https URL, or plain
// http for a loopback host; Authorize refuses any other without calling
// Open.
type Loopback struct {
	ln   net.Listener
	Open func(authURL string) error
}

// NewLoopback listens on 127.0.0.1:port (0: any free port).
func NewLoopback(port int, open func(string) error) (*Loopback, error) {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, fmt.Errorf("listen for the authorization redirect: %w", err)
	}
	return &Loopback{ln: ln, Open: open}, nil
}

func (l *Loopback) RedirectURI() string { return "http://" + l.ln.Addr().String() + "/callback" }

// Close stops listening.
func (l *Loopback) Close() error { return l.ln.Close() }

func (l *Loopback) Authorize(ctx context.Context, authURL string) (*url.URL, error) {
	au, err := url.Parse(authURL)
	if err != nil || !openable(au) {
		return nil, errors.New("refusing to open an authorization URL that is not https")
	}
	state := au.Query().Get("state")
	got := make(chan *url.URL, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		// Only the redirect answering this request ends the wait: another
		// page on this machine cannot hand the client a code of its own.
		if r.URL.Query().Get("state") != state {
			http.Error(w, "this is not the redirect mcpgen is waiting for", http.StatusBadRequest)
			return
		}
		u := *r.URL
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if e := r.URL.Query().Get("error"); e != "" {
			fmt.Fprintf(w, "<p>Authorization failed: %s. You can close this window.</p>", html.EscapeString(e))
		} else {
			fmt.Fprint(w, "<p>mcpgen is authorized. You can close this window.</p>")
		}
		select {
		case got <- &u:
		default:
		}
	})}
	go func() { _ = srv.Serve(l.ln) }()
	defer func() {
		// Shutdown, not Close: the handler that delivered the code is
		// still writing the page to the browser, which must get it whole.
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := l.Open(authURL); err != nil {
		return nil, err
	}
	select {
	case u := <-got:
		return u, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the authorization redirect: %w", ctx.Err())
	}
}
