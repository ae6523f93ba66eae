// Package mcpgo is mcpgen's one session layer, over mark3labs/mcp-go
// (github.com/mark3labs/mcp-go). Generated clients, the connection
// manager and the mcpgen command (snapshot, call, list, check) all connect
// through it, so a server that fails fails the same way everywhere:
//
//   - stdio servers run in a process group of their own, ended with what
//     they started; their stderr tail is kept for error messages; each
//     output line is capped (WithMaxMessageBytes) and checked, so a line
//     that is not JSON-RPC ends the connection with the line quoted
//     instead of a wait for the timeout; their exit is noticed at once;
//   - streamable HTTP opens the stream for server-to-client messages
//     (subscriptions/listen on 2026-07-28, the standalone GET stream on
//     older protocols), so tool-list changes arrive on every transport;
//     responses are capped too;
//   - SSE, and in-process servers;
//   - the SSRF-guarded dialer when WithNetworkPolicy asks for it;
//   - a raw tap (WithRawObserver) that sees every result as the server
//     sent it, since mcp-go's types drop schema keywords.
//
// # The client side of the protocol
//
// Capabilities are declared only when their handler is given:
// WithElicitation (form mode, and url mode when asked; a request in a mode
// not declared gets JSON-RPC error -32602 without reaching the handler, or
// on 2026-07-28 fails the call with it; defaults from the form's schema
// that fit their field's type, enum and bounds fill what the handler
// leaves out, per SEP-1034, and no other default is sent; ElicitDefaults
// and ElicitDeclineAll are ready-made handlers, FormFields and
// FormDefaults read a form's members), WithSampling (the request's
// messages and model preferences in, the completion out; at most
// DefaultSamplingLimit requests at once, WithSamplingLimit, the excess
// refused at once with an error saying so), WithRoots or WithRootsFunc
// (with Conn.RootsChanged for roots/list_changed).
// Notifications: mcpruntime.WithProgress on a call's context sets a
// progress token and receives notifications/progress; WithLogger takes the
// server's log messages, levels mapped to slog's, and sends logging/setLevel;
// Subscribe watches a resource (resources/subscribe, or the listen stream on
// 2026-07-28); WithNotificationHandler sees every notification.
//
// Everything a server sends that reaches the program this way (log
// messages with all their attributes, progress messages, resource-updated
// URIs, every notification's method and params, elicitation and sampling
// requests) is scrubbed of the tokens the Conn's calls carried
// (mcpruntime.CallToken; the last 256 distinct ones, and any a call under
// way holds) and of every secret the Conn knows of (WithSecrets,
// WithNamedSecret, header and environment values, the endpoint URL), as
// written and in their JSON-escaped forms. Close on an HTTP or SSE
// connection leaves no connection open: a request its transport carries
// after Close is sent with Connection: close, and idle connections are
// closed again once the last request under way ends.
//
// Cancelling a
// call's context sends notifications/cancelled where the protocol needs one
// (stdio, SSE, streamable HTTP before 2026-07-28). WithProtocolVersion pins
// the version, and a server that settles on another fails the connection
// (*VersionMismatchError); otherwise server/discover is tried first, and an
// answer that is not a discover result, or none, falls back to initialize
// (after a ping, so a stdio server that ignores unknown methods costs
// about 100 ms, not the 5 s mcp-go would wait). Either way a connection
// makes one handshake.
//
// A Conn is a mcpruntime.TaskCaller (tasks.go): task-augmented tools/call,
// tasks/get, tasks/result and tasks/cancel, with the call's bearer token
// on each. ToolNames keeps a list for as long as the server's ttlMs says
// (2026-07-28), per bearer token when its cacheScope is private.
//
// Failures are typed: a *mcpruntime.ConnectError (with the exit status and
// stderr tail of a stdio server) when no session could be set up, a
// *mcpruntime.ConnectionLostError when one ended under a request, and
// causes such as *MessageTooLargeError and *StdoutGarbageError. Each layer
// adds its context once.
//
// A *Conn implements mcpruntime.Caller, ToolLister, ResourceReader and
// PromptGetter. It connects lazily on first use: constructing one never
// starts a process or opens a socket, so bindings built from a committed
// manifest start offline. It is safe for concurrent use; a connection that
// ends is replaced on the next call; Close ends the session (and the server
// process, for stdio).
package mcpgo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/internal/callresult"
	"github.com/mcpgen/mcpgen/runtime/internal/jsonscan"
	"github.com/mcpgen/mcpgen/runtime/manager"
)

// DefaultConnectTimeout bounds connecting and the protocol handshake.
const DefaultConnectTimeout = 30 * time.Second

// ErrClosed is returned by calls on a closed Conn.
var ErrClosed = errors.New("the connection is closed")

// Option configures a Conn.
type Option func(*config)

type config struct {
	name           string
	env            []string
	dir            string
	stderr         io.Writer
	httpOpts       []transport.StreamableHTTPCOption
	sseOpts        []transport.ClientOption
	headers        map[string]string
	headerFunc     func(context.Context) map[string]string
	clientOpts     []client.ClientOption
	info           mcp.Implementation
	connectTimeout time.Duration
	limit          int64
	grace          time.Duration
	guard          *GuardedDialer
	observe        func(method string, result json.RawMessage)
	notify         []func(mcp.JSONRPCNotification)
	protocol       string
	elicit         ElicitationHandler
	elicitURL      bool
	sample         SamplingHandler
	sampleLimit    int
	roots          func(context.Context) ([]Root, error)
	logger         *slog.Logger
	wrapRT         []func(http.RoundTripper) http.RoundTripper
	// hide lists strings (an endpoint URL and its parts, header and
	// environment values, declared secrets) scrubbed from errors, since
	// mcp-go's errors quote URLs and servers echo what they were given.
	hide []hidden
	// live are asked for secrets that appear while the Conn lives.
	live []func() []string
}

// WithName labels the server in error messages (default: the command's base
// name, or the URL's host). URLs and environment values never appear in
// errors, since they may carry secrets.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithEnv adds KEY=VALUE entries to the inherited environment (stdio).
// Their values are kept out of error messages.
func WithEnv(env ...string) Option { return func(c *config) { c.env = append(c.env, env...) } }

// WithDir sets the server process's working directory (stdio). A relative
// command with a path separator is taken relative to it.
func WithDir(dir string) Option { return func(c *config) { c.dir = dir } }

// WithStderr also sends the server process's stderr to w (stdio; default:
// only the last lines are kept, for error messages).
func WithStderr(w io.Writer) Option { return func(c *config) { c.stderr = w } }

// WithHeaders sets HTTP headers sent with every request (streamable HTTP
// and SSE). Their values are kept out of error messages.
func WithHeaders(h map[string]string) Option { return func(c *config) { c.headers = h } }

// WithHeaderFunc adds HTTP headers computed per request from the call's
// context (streamable HTTP and SSE). The identity guard's bearer header is
// added after them and wins. A header function passed in through
// WithHTTPOptions or WithSSEOptions would replace the identity hook; use
// this instead.
func WithHeaderFunc(f func(context.Context) map[string]string) Option {
	return func(c *config) { c.headerFunc = f }
}

// WithSecrets names values that must never appear in an error message, a
// stderr tail or anything the server sends that reaches the program (log
// messages with all their attributes, progress messages, resource-updated
// URIs, notifications, elicitation and sampling requests): resolved
// ${VAR} references, tokens. They show as [redacted], as written and in
// their JSON-escaped forms.
func WithSecrets(values ...string) Option {
	return func(c *config) {
		for _, v := range values {
			c.hide = append(c.hide, hidden{v, "[redacted]"})
		}
	}
}

// WithNamedSecret is WithSecrets for one value, shown as [redacted label]
// (a label such as "${TOKEN}" says which reference leaked).
func WithNamedSecret(value, label string) Option {
	return func(c *config) { c.hide = append(c.hide, hidden{value, "[redacted " + label + "]"}) }
}

// WithSecretSource names secrets that appear while the Conn lives, such as
// the tokens an OAuth client fetches and renews (oauth.Client.Secrets): f
// is asked for them each time a message is scrubbed, and they show as
// [redacted].
func WithSecretSource(f func() []string) Option {
	return func(c *config) { c.live = append(c.live, f) }
}

// hidden is a value scrubbed from messages and what replaces it.
type hidden struct{ value, marker string }

// WithHTTPOptions passes options to mcp-go's streamable HTTP transport.
func WithHTTPOptions(opts ...transport.StreamableHTTPCOption) Option {
	return func(c *config) { c.httpOpts = append(c.httpOpts, opts...) }
}

// WithSSEOptions passes options to mcp-go's SSE transport.
func WithSSEOptions(opts ...transport.ClientOption) Option {
	return func(c *config) { c.sseOpts = append(c.sseOpts, opts...) }
}

// WithClientOptions passes options to the mcp-go client (protocol version,
// sampling and elicitation handlers, tracing).
func WithClientOptions(opts ...client.ClientOption) Option {
	return func(c *config) { c.clientOpts = append(c.clientOpts, opts...) }
}

// WithClientInfo sets the client name and version sent to the server.
func WithClientInfo(name, version string) Option {
	return func(c *config) { c.info = mcp.Implementation{Name: name, Version: version} }
}

// WithConnectTimeout bounds connecting and the handshake (default
// DefaultConnectTimeout; 0 disables).
func WithConnectTimeout(d time.Duration) Option {
	return func(c *config) { c.connectTimeout = max(d, 0) }
}

// WithMaxMessageBytes caps one message from the server (default
// DefaultMaxMessageBytes): a stdio line, an SSE line or a JSON response
// body. The cap is enforced while reading; a server exceeding it loses its
// connection, and the request gets a *MessageTooLargeError.
func WithMaxMessageBytes(n int64) Option { return func(c *config) { c.limit = max(n, 1) } }

// WithShutdownGrace sets how long a stdio server gets to exit after its
// stdin closes, and again after SIGTERM, before it is killed (default 2 s).
func WithShutdownGrace(d time.Duration) Option { return func(c *config) { c.grace = max(d, 0) } }

// WithNetworkPolicy dials HTTP and SSE servers through a GuardedDialer:
// the SSRF guard judges every address actually dialed (and each
// redirect's), refusing non-public ones unless allowPrivate. r resolves
// names (nil: net.DefaultResolver).
func WithNetworkPolicy(allowPrivate bool, r manager.Resolver) Option {
	return func(c *config) { c.guard = &GuardedDialer{AllowPrivate: allowPrivate, Resolver: r} }
}

// WithRoundTripper wraps the HTTP transport of streamable HTTP and SSE
// connections (under the message cap and the SSRF guard): for
// authorization (an OAuth client answering 401 and 403), tracing or
// metrics. f is called once per connection.
func WithRoundTripper(f func(http.RoundTripper) http.RoundTripper) Option {
	return func(c *config) { c.wrapRT = append(c.wrapRT, f) }
}

// OAuthClient is what WithOAuth needs of an OAuth client (an
// *oauth.Client of runtime/mcpgo/oauth): the transport that authorizes
// requests, and every token and secret it holds.
type OAuthClient interface {
	RoundTripper(base http.RoundTripper) http.RoundTripper
	Secrets() []string
}

// WithOAuth authorizes the connection's HTTP and SSE requests with c and
// scrubs every token and secret c holds (Secrets, asked each time) from
// the Conn's errors and from what the server sends: it is
// WithRoundTripper(c.RoundTripper) and WithSecretSource(c.Secrets) in one,
// and the way to connect with an OAuth client (oauth.Client.Option returns
// it). WithRoundTripper alone would leave the tokens in errors that echo
// them.
func WithOAuth(c OAuthClient) Option {
	return func(cfg *config) {
		cfg.wrapRT = append(cfg.wrapRT, c.RoundTripper)
		cfg.live = append(cfg.live, c.Secrets)
	}
}

// WithRawObserver calls f with the raw JSON result of every successful
// response, as the server sent it (mcp-go's own types drop schema
// keywords). f must not keep result past the call without copying it.
func WithRawObserver(f func(method string, result json.RawMessage)) Option {
	return func(c *config) { c.observe = f }
}

// WithNotificationHandler calls f with every notification the server
// sends (after the Conn's own handling of tool-list changes), its method
// and params scrubbed of the tokens the Conn's calls carried and of the
// secrets it knows of (see WithSecrets).
func WithNotificationHandler(f func(mcp.JSONRPCNotification)) Option {
	return func(c *config) { c.notify = append(c.notify, f) }
}

func newConfig(name string, opts []Option) config {
	c := config{
		name:           name,
		info:           mcp.Implementation{Name: "mcpgen", Version: "1"},
		connectTimeout: DefaultConnectTimeout,
		limit:          DefaultMaxMessageBytes,
		grace:          2 * time.Second,
		sampleLimit:    DefaultSamplingLimit,
	}
	for _, o := range opts {
		o(&c)
	}
	for _, kv := range c.env {
		if _, v, ok := strings.Cut(kv, "="); ok && len(v) >= minHidden {
			c.hide = append(c.hide, hidden{v, "[redacted]"})
		}
	}
	for _, v := range c.headers {
		if len(v) >= minHidden {
			c.hide = append(c.hide, hidden{v, "[redacted]"})
		}
	}
	sortHide(c.hide)
	return c
}

// minHidden: environment and header values shorter than this are not
// scrubbed from messages, where they would hide ordinary words; secrets
// are longer. WithSecrets values are scrubbed whatever their length.
const minHidden = 8

func sortHide(h []hidden) {
	// Longest first, so a URL is replaced whole before its parts; among
	// equal values the first given (a named one) wins.
	slices.SortStableFunc(h, func(a, b hidden) int { return len(b.value) - len(a.value) })
}

// kind is the transport of a Conn.
type kind int

const (
	kindCustom kind = iota
	kindStdio
	kindHTTP
	kindSSE
	kindInProcess
)

// Conn is a lazily connected MCP client session.
type Conn struct {
	cfg  config
	kind kind
	dial func(l *link) (transport.Interface, error)
	// addr is an HTTP endpoint's host and port (observe.go).
	addr netAddr
	// single: the Conn carries one connection only and does not replace
	// it when it ends (the connection manager decides about reconnecting).
	single bool

	life   context.Context // lives until Close; bounds the server process
	cancel context.CancelFunc

	mu      sync.Mutex
	cur     *link
	pending *attempt
	closed  bool

	toolsMu sync.Mutex
	// lists are the tool lists by authorization context: "" one every
	// caller may see, "p:" and a digest of the bearer token a private one
	// (cacheScope private).
	lists map[string]*toolList

	taskProgress taskProgressRoutes

	progress progressRoutes
	watch    resourceWatch
	tokens   tokenMemory // scrubbed from what the server sends (scrub.go)
	sampling chan struct{}
}

// link is one connection: a client, its process for stdio, and its end.
type link struct {
	cli        *client.Client
	init       *mcp.InitializeResult
	proc       *process
	modern     bool
	stopListen func()
	closeIdle  func() // the HTTP client's idle connections
	// continuous: dialed with mcp-go's standalone GET stream, which it
	// opens on an older protocol over streamable HTTP; listening is closed
	// once the first GET for it is answered or fails.
	continuous bool
	listening  chan struct{}
	listenOnce sync.Once

	life     context.Context // ends when the connection does
	cancel   context.CancelFunc
	doneOnce sync.Once
	mu       sync.Mutex
	why      error
}

func (l *link) lose(why error) {
	l.mu.Lock()
	if l.why == nil || (telling(why) && !telling(l.why)) {
		l.why = why
	}
	l.mu.Unlock()
	l.doneOnce.Do(l.cancel)
}

func (l *link) isDone() bool { return l.life.Err() != nil }

// listened records that the standalone GET stream was answered (or
// failed).
func (l *link) listened() {
	if l.listening != nil {
		l.listenOnce.Do(func() { close(l.listening) })
	}
}

// attempt is one connection attempt, shared by the calls waiting on it.
type attempt struct {
	done chan struct{}
	l    *link
	err  error
}

// New returns a Conn over any mcp-go transport; dial is called on first use
// (and again after a failed attempt or a lost connection).
func New(dial func() (transport.Interface, error), opts ...Option) *Conn {
	return newConn(newConfig("server", opts), kindCustom, func(*link) (transport.Interface, error) { return dial() })
}

func newConn(cfg config, k kind, dial func(*link) (transport.Interface, error)) *Conn {
	life, cancel := context.WithCancel(context.Background())
	return &Conn{cfg: cfg, kind: k, dial: dial, life: life, cancel: cancel, sampling: make(chan struct{}, cfg.sampleLimit)}
}

// Stdio returns a Conn that runs command with args as a subprocess speaking
// MCP on stdin/stdout. The process starts on first use.
func Stdio(command string, args []string, opts ...Option) *Conn {
	cfg := newConfig(filepath.Base(command), opts)
	args = slices.Clone(args)
	c := newConn(cfg, kindStdio, nil)
	c.dial = func(l *link) (transport.Interface, error) {
		p, err := startProcess(processSpec{server: c.cfg.name, command: command, args: args, env: slices.Clone(c.cfg.env),
			dir: c.cfg.dir, stderr: c.cfg.stderr, limit: c.cfg.limit, grace: c.cfg.grace})
		if err != nil {
			return nil, err
		}
		l.proc = p
		go func() {
			select {
			case <-p.gone:
				l.lose(nil) // the reason is the process's, read lazily
			case <-l.life.Done():
			}
		}()
		return p, nil
	}
	return c
}

// StreamableHTTP returns a Conn to a streamable HTTP endpoint.
func StreamableHTTP(endpoint string, opts ...Option) *Conn {
	c := newConn(hideURL(newConfig(hostOf(endpoint), opts), endpoint), kindHTTP, nil)
	c.addr = addrOf(endpoint)
	c.dial = func(l *link) (transport.Interface, error) {
		o := []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(c.httpClient(l, endpoint))}
		o = append(o, c.cfg.httpOpts...)
		if c.cfg.headers != nil {
			o = append(o, transport.WithHTTPHeaders(c.cfg.headers))
		}
		o = append(o, transport.WithHTTPHeaderFunc(c.cfg.requestHeaders), transport.WithHTTPLogger(discardLogger))
		// On an older protocol, server-to-client messages come only on the
		// standalone GET stream, which mcp-go opens only when asked before
		// connecting; it opens none on a 2026-07-28 connection. mcp-go's
		// client takes the option as a reason not to try 2026-07-28, which
		// the tap hides (listenAnyway), so one handshake finds the
		// version and the stream opens when that is an older one.
		o = append(o, transport.WithContinuousListening())
		l.continuous = true
		return transport.NewStreamableHTTP(endpoint, o...)
	}
	return c
}

// SSE returns a Conn to a legacy HTTP+SSE endpoint.
func SSE(endpoint string, opts ...Option) *Conn {
	c := newConn(hideURL(newConfig(hostOf(endpoint), opts), endpoint), kindSSE, nil)
	c.addr = addrOf(endpoint)
	c.dial = func(l *link) (transport.Interface, error) {
		o := []transport.ClientOption{transport.WithHTTPClient(c.httpClient(l, endpoint))}
		o = append(o, c.cfg.sseOpts...)
		if c.cfg.headers != nil {
			o = append(o, transport.WithHeaders(c.cfg.headers))
		}
		o = append(o, transport.WithHeaderFunc(c.cfg.requestHeaders), transport.WithSSELogger(discardLogger))
		tr, err := transport.NewSSE(endpoint, o...)
		if err != nil {
			return nil, err
		}
		tr.SetConnectionLostHandler(func(err error) { l.lose(err) })
		return tr, nil
	}
	return c
}

// httpClient is the HTTP client of one connection to endpoint: guarded
// when a network policy asks for it, always capping response messages and
// reporting an oversized one to the connection, and never sending plain
// http to the host (and port) of an https endpoint.
func (c *Conn) httpClient(l *link, endpoint string) *http.Client {
	hc := messageCappedClient(c.cfg.guard, c.cfg.limit, c.cfg.name, l.lose)
	// Held under any wrapper: a wrapper need not pass CloseIdleConnections
	// on, and the connection's sockets must close.
	base := hc.Transport.(*limitTransport)
	if u, err := url.Parse(endpoint); err == nil && strings.EqualFold(u.Scheme, "https") {
		base.tlsHost = u.Host
	}
	ct := &closingTransport{base: base, onListen: l.listened}
	hc.Transport = ct
	l.closeIdle = ct.close
	for _, f := range c.cfg.wrapRT {
		hc.Transport = f(hc.Transport)
	}
	return hc
}

// closingTransport is a connection's HTTP transport, which ends with it.
// Closing idle connections once is not enough: a request under way, or
// one made after Close (a cancellation sent as the connection ends, an
// OAuth client's token request), would leave its keep-alive connection
// idle for IdleConnTimeout. So after close each request asks for its
// connection to be closed once answered (Connection: close), and when the
// last request under way is over (its body read or closed) the idle
// connections are closed again; from then on the transport closes any
// connection that becomes idle.
type closingTransport struct {
	base *limitTransport
	// onListen hears when a GET without Last-Event-ID (mcp-go's standalone
	// stream; resuming a stream sends the header) is answered or fails.
	onListen func()
	mu       sync.Mutex
	closed   bool
	busy     int
}

func (t *closingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	if t.closed && !req.Close {
		r := *req // a RoundTripper must not change the request it is given
		r.Close = true
		req = &r
	}
	t.busy++
	t.mu.Unlock()
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp = methodNotFound404(req, resp)
	}
	if req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") == "" && t.onListen != nil {
		t.onListen()
	}
	if err != nil || resp.Body == nil {
		t.done()
		return resp, err
	}
	resp.Body = &doneBody{ReadCloser: resp.Body, done: t.done}
	return resp, nil
}

func (t *closingTransport) done() {
	t.mu.Lock()
	t.busy--
	last := t.closed && t.busy == 0
	t.mu.Unlock()
	if last {
		t.base.CloseIdleConnections()
	}
}

func (t *closingTransport) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.base.CloseIdleConnections()
}

// doneBody reports, once, that its response is over: read to its end
// or closed.
type doneBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *doneBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.once.Do(b.done) // a body read to its end need not be closed
	}
	return n, err
}

func (b *doneBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}

// requestHeaders is the per-request header hook of the HTTP transports: the
// caller's own header function, then the bearer token the identity guard
// put in the call's context. mcp-go applies it last, over static headers.
func (c *config) requestHeaders(ctx context.Context) map[string]string {
	var h map[string]string
	if c.headerFunc != nil {
		h = c.headerFunc(ctx)
	}
	if tok, ok := mcpruntime.BearerToken(ctx); ok {
		own := make(map[string]string, len(h)+1) // the caller's map may be shared
		for k, v := range h {
			if !strings.EqualFold(k, "Authorization") {
				own[k] = v
			}
		}
		own["Authorization"] = "Bearer " + string(tok)
		h = own
	}
	return h
}

// InProcess returns a Conn to an mcp-go server in the same process.
func InProcess(s *server.MCPServer, opts ...Option) *Conn {
	return newConn(newConfig("in-process server", opts), kindInProcess, func(*link) (transport.Interface, error) {
		return transport.NewInProcessTransport(s), nil
	})
}

// hostOf names an endpoint by host only: URLs may carry tokens in their
// query or userinfo.
func hostOf(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		return u.Host
	}
	return "server"
}

func hideURL(cfg config, endpoint string) config {
	add := func(v string) { cfg.hide = append(cfg.hide, hidden{v, "<endpoint>"}) }
	// A URL holding a declared secret shows with the secret named; any
	// other URL is hidden whole, since its query may carry a token.
	declared := false
	for _, h := range cfg.hide {
		declared = declared || (h.value != "" && strings.Contains(endpoint, h.value))
	}
	u, err := url.Parse(endpoint)
	if !declared {
		add(endpoint)
		if err == nil {
			add(u.Redacted())
			if u.RawQuery != "" {
				add(u.RawQuery)
			}
		}
	}
	if err == nil {
		if p, ok := u.User.Password(); ok && p != "" {
			add(p)
		}
	}
	sortHide(cfg.hide)
	return cfg
}

// Name returns the label used for the server in errors.
func (c *Conn) Name() string { return c.cfg.name }

// Client returns the connected mcp-go client, connecting if needed, for
// what the bindings do not cover (notifications, completions, tasks/list). It
// stays owned by the Conn: close the Conn, not the client.
func (c *Conn) Client(ctx context.Context) (*client.Client, error) {
	l, err := c.link(ctx)
	if err != nil {
		return nil, err
	}
	return l.cli, nil
}

// ProtocolVersion returns the protocol version of the current connection,
// or "" before the first one.
func (c *Conn) ProtocolVersion() string {
	c.mu.Lock()
	l := c.cur
	c.mu.Unlock()
	if l == nil {
		return ""
	}
	return l.cli.ProtocolVersion()
}

// InitializeResult returns what the handshake of the current connection
// said of the server (synthesised from server/discover on 2026-07-28), or
// nil before the first connection.
func (c *Conn) InitializeResult() *mcp.InitializeResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil {
		return nil
	}
	return c.cur.init
}

// link returns the live connection, connecting (once, for every caller
// waiting) when there is none or the last one ended.
func (c *Conn) link(ctx context.Context) (*link, error) {
	// Every request may carry a token the server can echo later.
	c.tokens.hold(ctx)()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if l := c.cur; l != nil && (c.single || !l.isDone()) {
		c.mu.Unlock()
		return l, nil
	}
	if c.cur != nil {
		// The connection ended; its resources go before a new one starts.
		old := c.cur
		c.cur = nil
		go old.close()
	}
	a := c.pending
	if a == nil {
		a = &attempt{done: make(chan struct{})}
		c.pending = a
		go c.connect(a)
	}
	c.mu.Unlock()
	select {
	case <-a.done:
		return a.l, a.err
	case <-ctx.Done():
		// The cause says why (a capture's own timeout, a tool's); the
		// context's error keeps errors.Is(err, context.DeadlineExceeded).
		cause := context.Cause(ctx)
		if !errors.Is(cause, ctx.Err()) {
			cause = &cleanError{msg: cause.Error(), kinds: []error{ctx.Err()}}
		}
		return nil, &mcpruntime.ConnectError{Server: c.cfg.name, Attempts: 1, Err: c.clean(cause)}
	}
}

// connect runs one attempt detached from any caller's context, so one
// caller giving up does not fail the others or kill the process.
func (c *Conn) connect(a *attempt) {
	l, err := c.open()
	c.mu.Lock()
	if err == nil && c.closed {
		l.close()
		l, err = nil, ErrClosed
	}
	if err == nil {
		c.cur = l
	}
	c.pending = nil // a failed attempt is retried by the next call
	c.mu.Unlock()
	a.l, a.err = l, err
	close(a.done)
}

func (c *Conn) open() (*link, error) {
	life, cancel := context.WithCancel(c.life)
	l := &link{life: life, cancel: cancel, listening: make(chan struct{})}
	if pin := c.cfg.protocol; pin != "" && !slices.Contains(ProtocolVersions, pin) {
		l.cancel()
		return nil, c.connectError(l, &manager.PermanentError{Err: &UnknownVersionError{Pinned: pin}})
	}
	tr, err := c.dial(l)
	if err != nil {
		l.cancel()
		return nil, c.connectError(l, err)
	}
	cli := client.NewClient(wrap(tr, c.cfg.observe, c.answerFirst, l.continuous), append(c.clientOptions(), c.cfg.clientOpts...)...)
	l.cli = cli
	// The transport's Start context bounds the connection's lifetime (for
	// stdio it is the process's), so it is the link's, not a caller's.
	if err := cli.Start(life); err != nil {
		err = c.connectError(l, err)
		l.close()
		return nil, err
	}
	cli.OnNotification(func(n mcp.JSONRPCNotification) {
		// What reaches user code is scrubbed (scrub.go); the routing reads
		// what the server sent.
		sn := c.scrubber().notification(n)
		switch n.Method {
		case string(mcp.MethodNotificationToolsListChanged):
			c.forgetTools()
		case string(mcp.MethodNotificationProgress):
			c.progress.deliver(n, sn)
		case string(mcp.MethodNotificationResourceUpdated):
			c.watch.deliver(n, sn)
		case "notifications/message":
			if c.cfg.logger != nil {
				c.logMessage(sn)
			}
		}
		for _, f := range c.cfg.notify {
			f(sn)
		}
	})
	ctx, stop := life, context.CancelFunc(func() {})
	if c.cfg.connectTimeout > 0 {
		ctx, stop = context.WithTimeoutCause(life, c.cfg.connectTimeout, &handshakeTimeout{c.cfg.connectTimeout})
	}
	defer stop()
	if c.kind == kindStdio && c.cfg.protocol == "" {
		// Set before Initialize, which is the first use of the client.
		client.WithDiscoverTimeout(probe(ctx, tr))(cli)
	}
	init, err := cli.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: c.cfg.info}})
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil && !l.isDone() {
			err = cause
		}
		err = c.connectError(l, err)
		l.close()
		return nil, err
	}
	if pin, got := c.cfg.protocol, cli.ProtocolVersion(); pin != "" && got != pin {
		// A pin is not a preference: the server settling on another
		// version fails the connection, and every retry would too.
		err = c.connectError(l, &manager.PermanentError{Err: &VersionMismatchError{Pinned: pin, Server: got}})
		l.close()
		return nil, err
	}
	l.init = init
	l.modern = mcp.IsModernProtocol(cli.ProtocolVersion())
	if l.continuous && !l.modern {
		// mcp-go opens the standalone GET stream once the handshake is
		// answered, and ignores responses on it. A server that sees a
		// call's request before that GET may answer the call on the GET
		// (the sse-retry scenario of the conformance suite does when the
		// two arrive together), and the answer is lost. So no request
		// goes out before the server has answered the GET, or listenWait
		// has passed for a server slow to.
		select {
		case <-l.listening:
		case <-ctx.Done():
		case <-time.After(listenWait):
		}
	}
	if l.modern && (c.kind == kindHTTP || c.kind == kindSSE || len(c.watch.uris()) > 0) {
		// Modern HTTP transports deliver server-to-client messages only on
		// a subscriptions/listen stream, and resource subscriptions travel
		// on it on every transport. Losing it loses them, so the connection
		// counts as lost and the next call reconnects.
		_ = c.listen(l)
	} else if !l.modern {
		// Subscriptions made on an earlier connection are made again.
		for _, uri := range c.watch.uris() {
			_ = cli.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}})
		}
	}
	c.setLogLevel(ctx, cli)
	return l, nil
}

// probe times the server/discover probe of a stdio server. A server that
// never answers unknown methods would make mcp-go wait 5 s for discover on
// every connection; a ping (which every protocol version allows before
// the handshake) shows when the server is up and reading, after which a
// server that supports discover answers it at once, so a short probe
// timeout is enough.
func probe(ctx context.Context, tr transport.Interface) time.Duration {
	// Any answer, or none within pingWait (a server silent even to ping
	// will not answer discover either), leaves the same short probe.
	ctx, cancel := context.WithTimeout(ctx, pingWait)
	defer cancel()
	_, _ = tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId("mcpgen-probe"),
		Method: string(mcp.MethodPing)})
	return discoverProbe
}

const (
	pingWait      = 2 * time.Second
	discoverProbe = 100 * time.Millisecond
	listenWait    = 2 * time.Second
)

// handshakeTimeout is the cause of a connect timeout.
type handshakeTimeout struct{ d time.Duration }

func (e *handshakeTimeout) Error() string {
	return fmt.Sprintf("no answer to the handshake within %s", e.d)
}

func (e *handshakeTimeout) Is(target error) bool { return target == context.DeadlineExceeded }

func (l *link) close() {
	l.mu.Lock()
	stop := l.stopListen
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	if l.cli != nil {
		_ = l.cli.Close()
	} else if l.proc != nil {
		_ = l.proc.Close()
	}
	l.lose(ErrClosed)
	if l.closeIdle != nil {
		l.closeIdle()
	}
}

// Close ends the session. For stdio it closes the server's stdin and, if
// it does not exit, terminates it. Close is idempotent.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	l := c.cur
	c.cur = nil
	a := c.pending
	c.mu.Unlock()
	if l != nil {
		l.close()
	}
	c.cancel()
	if a != nil {
		// An attempt still connecting ends with the Conn, and so does its
		// process: nothing is left running when Close returns.
		<-a.done
	}
	return nil
}

// toolList is one tools/list answer: the names, sorted, their
// execution.taskSupport where set, and how long the server says it stays
// fresh (ttlMs of 2026-07-28; without it, until the server announces a
// change).
type toolList struct {
	names     []string
	taskTools map[string]string
	at        time.Time
	ttl       time.Duration
	hinted    bool
}

func (l *toolList) fresh() bool { return !l.hinted || time.Since(l.at) < l.ttl }

// listKey names the authorization context of ctx for a private list: a
// digest of the bearer token its requests carry.
func listKey(ctx context.Context) string {
	tok, _ := mcpruntime.CallToken(ctx)
	if tok == "" {
		return "p:"
	}
	sum := sha256.Sum256([]byte(tok))
	return "p:" + hex.EncodeToString(sum[:])
}

// list returns the cached list ctx may see, fresh or not.
func (c *Conn) list(ctx context.Context) *toolList {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	if l := c.lists[""]; l != nil {
		return l
	}
	return c.lists[listKey(ctx)]
}

// ToolNames lists the server's tools, sorted. The list is cached for as
// long as the server's ttlMs says (2026-07-28; 0 lists again every time),
// otherwise until the server announces a change or a call names a tool not
// in it. A list whose cacheScope is private (or missing) is kept for the
// bearer token it was fetched with only.
func (c *Conn) ToolNames(ctx context.Context) ([]string, error) {
	if l := c.list(ctx); l != nil && l.fresh() {
		return slices.Clone(l.names), nil
	}
	return c.listTools(ctx)
}

func (c *Conn) listTools(ctx context.Context) ([]string, error) {
	l, err := c.link(ctx)
	if err != nil {
		return nil, err
	}
	bctx, release := c.bound(ctx, l)
	defer release()
	// mcp-go sees only the tools with x-mcp-header annotations (see
	// withHeaderToolsOnly); the names come from the raw pages, less any
	// annotated tool mcp-go refused.
	sink := &listSink{namesOnly: true}
	res, err := l.cli.ListTools(context.WithValue(bctx, listSinkKey{}, sink), mcp.ListToolsRequest{})
	if err != nil {
		return nil, c.requestError(ctx, l, "tools/list", err)
	}
	kept := map[string]bool{}
	for _, t := range res.Tools {
		kept[t.Name] = true
	}
	var names []string
	taskTools := map[string]string{}
	for _, page := range sink.get() {
		var p struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(page, &p); err != nil {
			return nil, fmt.Errorf("server %q: tools/list: %w", c.cfg.name, err)
		}
		for _, t := range p.Tools {
			var tool struct {
				Name      string `json:"name"`
				Execution struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
			}
			if json.Unmarshal(t, &tool) != nil || tool.Name == "" {
				continue
			}
			if kept[tool.Name] || !bytes.Contains(t, []byte("x-mcp-header")) {
				names = append(names, tool.Name)
				if ts := tool.Execution.TaskSupport; ts != "" {
					taskTools[tool.Name] = ts
				}
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if names == nil {
		names = []string{}
	}
	hints := listHints(sink.get())
	tl := &toolList{names: names, taskTools: taskTools, at: time.Now(), ttl: hints.TTL, hinted: hints.Hinted}
	key := ""
	if hints.Hinted && hints.Private {
		key = listKey(ctx)
	}
	c.toolsMu.Lock()
	if c.lists == nil || key == "" {
		c.lists = map[string]*toolList{}
	}
	if len(c.lists) >= maxLists {
		c.lists = map[string]*toolList{} // many principals: start again
	}
	c.lists[key] = tl
	c.toolsMu.Unlock()
	return slices.Clone(names), nil
}

// maxLists bounds the private lists a Conn keeps.
const maxLists = 1024

// taskSupport is the listed tool's execution.taskSupport, "" when unknown.
func (c *Conn) taskSupport(name string) string {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	for _, l := range c.lists {
		if ts := l.taskTools[name]; ts != "" {
			return ts
		}
	}
	return ""
}

func (c *Conn) forgetTools() {
	c.toolsMu.Lock()
	c.lists = nil
	c.toolsMu.Unlock()
}

// checkTool returns a *mcpruntime.MissingToolError when the server does not
// list name. A stale cache is refreshed once before deciding; a server that
// cannot list its tools is left to answer the call itself.
func (c *Conn) checkTool(ctx context.Context, name string) error {
	// The common case, a cached list that has the tool, costs no copy; a
	// stale one will do, since a tool it lacks is listed again.
	if l := c.list(ctx); l != nil && slices.Contains(l.names, name) {
		return nil
	}
	names, err := c.ToolNames(ctx)
	if err == nil && !slices.Contains(names, name) {
		names, err = c.listTools(ctx)
	}
	if err != nil {
		var ce *mcpruntime.ConnectError
		var le *mcpruntime.ConnectionLostError
		if ctx.Err() != nil || errors.As(err, &ce) || errors.As(err, &le) {
			return err
		}
		return nil
	}
	if slices.Contains(names, name) {
		return nil
	}
	return &mcpruntime.MissingToolError{Server: c.cfg.name, Tools: []string{name}, Available: names}
}

// bound returns ctx, also ended when the connection ends: a request in
// flight then fails at once instead of waiting for an answer that can no
// longer come (over SSE the answer would come on the dead stream). release
// must be called when the request is over.
func (c *Conn) bound(ctx context.Context, l *link) (context.Context, func()) {
	if c.kind != kindSSE {
		// stdio and streamable HTTP fail such requests themselves, and say
		// more precisely whether the request went out.
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(l.life, func() { cancel(errLinkEnded) })
	return ctx, func() { stop(); cancel(nil) }
}

var errLinkEnded = errors.New("the connection ended")

// CallTool implements mcpruntime.Caller.
func (c *Conn) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpruntime.Result, error) {
	return c.callTool(ctx, name, args, nil)
}

// callTool makes a tools/call, task-augmented when task is set (tasks.go).
func (c *Conn) callTool(ctx context.Context, name string, args json.RawMessage, task *mcp.TaskParams) (*mcpruntime.Result, error) {
	defer c.tokens.hold(ctx)()
	l, err := c.link(ctx)
	if err != nil {
		return nil, err
	}
	if l.isDone() {
		return nil, c.lostBefore(l, fmt.Sprintf("call to tool %q", name))
	}
	if err := c.checkTool(ctx, name); err != nil {
		return nil, err
	}
	if task != nil {
		if err := c.checkTasks(l, name); err != nil {
			return nil, err
		}
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	s := &sink{}
	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args, Task: task}}
	var raw json.RawMessage
	if fn := mcpruntime.ProgressFrom(ctx); fn != nil {
		token, done := c.progress.add(fn)
		defer func() {
			if id := taskID(raw); task != nil && id != "" {
				// A task's progress comes after its start is answered.
				c.taskProgress.keep(id, done)
				return
			}
			done()
		}()
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	bctx, release := c.bound(ctx, l)
	defer release()
	res, err := l.cli.CallTool(context.WithValue(bctx, sinkKey{}, s), req)
	raw, rpcErr := s.get()
	if task != nil && rpcErr == nil && taskID(raw) != "" {
		// The task exists once the start is answered, whatever mcp-go
		// made of the answer.
		return &mcpruntime.Result{Raw: raw}, nil
	}
	if err != nil || rpcErr != nil {
		if cerr := settle(ctx); cerr != nil {
			// The context ended: that, not what the server or transport
			// made of it, is the reason.
			return nil, fmt.Errorf("server %q: call to tool %q: %w", c.cfg.name, name, cerr)
		}
	}
	if rpcErr != nil {
		pe := &mcpruntime.ProtocolError{Code: rpcErr.Code, Message: rpcErr.Message, Data: dataOf(rpcErr.Data)}
		if task == nil && rpcErr.Code == mcp.METHOD_NOT_FOUND && c.taskSupport(name) == string(mcp.TaskSupportRequired) {
			pe.Message += fmt.Sprintf(" (tool %q runs only as a task: its execution.taskSupport is required, so it must be started as one)", name)
		}
		return nil, pe
	}
	if err != nil && (raw == nil || inputRequired(raw)) {
		return nil, c.requestError(ctx, l, fmt.Sprintf("call to tool %q", name), err)
	}
	if raw != nil {
		// mcp-go may reject a result the runtime can read (a content kind
		// it does not know); the raw bytes decide.
		r, perr := parseOwned(raw)
		if perr != nil {
			return nil, fmt.Errorf("server %q: tool %q: %w", c.cfg.name, name, perr)
		}
		return r, nil
	}
	// No raw bytes (a transport that bypasses SendRequest): convert.
	b, merr := json.Marshal(res)
	if merr != nil {
		return nil, fmt.Errorf("server %q: tool %q: re-encode result: %w", c.cfg.name, name, merr)
	}
	return parseOwned(b)
}

// parseOwned is mcpruntime.ParseResult for bytes nothing else will change
// (the sink's): the Result keeps them instead of a copy. What the scanner
// does not take goes to ParseResult, for encoding/json's reading and errors.
func parseOwned(raw []byte) (*mcpruntime.Result, error) {
	raw = jsonscan.Trim(raw)
	raw = raw[:len(raw):len(raw)]
	if p, ok := callresult.Parse[mcpruntime.Content, mcpruntime.ResourceContents](raw); ok {
		return &mcpruntime.Result{Content: p.Content, StructuredContent: p.StructuredContent, Meta: p.Meta, IsError: p.IsError, Raw: raw}, nil
	}
	return mcpruntime.ParseResult(raw)
}

// settle returns the context's error once it has ended. A transport may
// fail a moment before the deadline on a timer of its own (mcp-go's SSE
// does), so when the deadline is that close it waits for it.
func settle(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dl, ok := ctx.Deadline()
	if !ok {
		return nil
	}
	if d := time.Until(dl); d < 100*time.Millisecond {
		t := time.NewTimer(d + 10*time.Millisecond)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

func inputRequired(raw json.RawMessage) bool {
	var p struct {
		ResultType string `json:"resultType"`
	}
	return json.Unmarshal(raw, &p) == nil && p.ResultType == string(mcp.ResultTypeInputRequired)
}

func dataOf(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	if b, err := json.Marshal(v); err == nil {
		return b
	}
	return nil
}

var (
	_ mcpruntime.Caller     = (*Conn)(nil)
	_ mcpruntime.ToolLister = (*Conn)(nil)
)

// Do runs f with the connected mcp-go client, for requests the Conn has no
// method for (listing pages, completions, subscriptions). An error f
// returns is reported as the Conn's own are: a *mcpruntime.ConnectError
// when no connection could be made, a *mcpruntime.ConnectionLostError when
// it ended under the request, otherwise "server %q: what: cause" with the
// cause tidied and its secrets redacted. what names the request
// ("tools/list").
func (c *Conn) Do(ctx context.Context, what string, f func(ctx context.Context, cli *client.Client) error) error {
	defer c.tokens.hold(ctx)()
	l, err := c.link(ctx)
	if err != nil {
		return err
	}
	if l.isDone() {
		return c.lostBefore(l, what)
	}
	bctx, release := c.bound(ctx, l)
	defer release()
	if err := f(bctx, l.cli); err != nil {
		var pe *mcpruntime.ProtocolError
		if errors.As(err, &pe) {
			return err
		}
		return c.requestError(ctx, l, what, err)
	}
	return nil
}
