package mcpgo

import (
	"github.com/mcpgen/mcpgen/runtime/manager"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// Connector opens sessions to registry entries for an
// manager.Manager:
//
//	reg := manager.NewRegistry(store, policy)
//	m := manager.NewManager(reg, mcpgo.NewConnector(policy))
//
// stdio servers run as subprocesses whose output lines are capped
// (WithMaxMessageBytes) and whose exit ends the session, so the manager
// starts a new one before the next call. http and sse servers are dialed
// through a GuardedDialer, so the SSRF guard judges the addresses actually
// dialed, and response messages are capped too. Tool-list changes are
// reported on every transport: stdio and SSE deliver them as they are,
// streamable HTTP needs a subscriptions/listen stream (protocol
// 2026-07-28) or, on older protocols, the standalone GET stream, which the
// connector opens by reconnecting once on the older protocol.
type Connector struct {
	allowPrivate bool
	resolver     manager.Resolver
	limit        int64
	stderr       io.Writer
	opts         []Option
	grace        time.Duration

	mu     sync.Mutex
	legacy map[string]bool // streamable HTTP servers found to speak an older protocol
}

// ConnectorOption configures a Connector.
type ConnectorOption func(*Connector)

// WithDialResolver sets the resolver the dialer uses (default
// net.DefaultResolver).
func WithDialResolver(r manager.Resolver) ConnectorOption {
	return func(c *Connector) { c.resolver = r }
}

// WithMaxMessageBytes caps one message from a server (default
// DefaultMaxMessageBytes). A server exceeding it loses its connection, and
// the call gets a *MessageTooLargeError.
func WithMaxMessageBytes(n int64) ConnectorOption {
	return func(c *Connector) { c.limit = max(n, 1) }
}

// WithServerStderr receives the stderr of stdio servers (default:
// discarded; it may hold secrets the server printed).
func WithServerStderr(w io.Writer) ConnectorOption { return func(c *Connector) { c.stderr = w } }

// WithShutdownGrace sets how long a stdio server gets to exit after its
// stdin closes, and again after SIGTERM, before it is killed (default 2 s).
func WithShutdownGrace(d time.Duration) ConnectorOption {
	return func(c *Connector) { c.grace = max(d, 0) }
}

// WithConnOptions passes options to every connection (client info,
// protocol version, sampling handlers, transport options).
func WithConnOptions(opts ...Option) ConnectorOption {
	return func(c *Connector) { c.opts = append(c.opts, opts...) }
}

// NewConnector returns a connector enforcing p's network rules at dial
// time (AllowPrivateNetworks; p.Resolver, if set, is also the dialer's
// resolver unless WithDialResolver says otherwise).
func NewConnector(p manager.Policy, opts ...ConnectorOption) *Connector {
	c := &Connector{allowPrivate: p.AllowPrivateNetworks, resolver: p.Resolver, limit: DefaultMaxMessageBytes,
		grace: 2 * time.Second, legacy: map[string]bool{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Connect implements manager.Connector.
func (c *Connector) Connect(ctx context.Context, cfg manager.ServerConfig, ev manager.SessionEvents) (manager.Session, error) {
	s, err := c.connect(ctx, cfg, ev)
	if err != nil || cfg.Transport.Kind != manager.TransportHTTP || s.modern || c.isLegacy(cfg.ID) {
		return s, err
	}
	// An older protocol over streamable HTTP sends tool-list changes only
	// on the standalone GET stream, which mcp-go opens only when asked
	// before connecting (and then it stays on the older protocol).
	// Remember the server and reconnect that way.
	c.mu.Lock()
	c.legacy[cfg.ID] = true
	c.mu.Unlock()
	_ = s.Close()
	return c.connect(ctx, cfg, ev)
}

func (c *Connector) isLegacy(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.legacy[id]
}

func (c *Connector) connect(ctx context.Context, cfg manager.ServerConfig, ev manager.SessionEvents) (*session, error) {
	life, cancel := context.WithCancel(context.Background())
	s := &session{server: cfg.ID, done: make(chan struct{}), life: life, cancel: cancel, sse: cfg.Transport.Kind == manager.TransportSSE}
	opts := slices.Concat([]Option{WithName(cfg.ID), WithConnectTimeout(cfg.EffectiveConnectTimeout())}, c.opts)
	t := cfg.Transport
	switch t.Kind {
	case manager.TransportStdio:
		env := make([]string, 0, len(t.Env))
		for _, k := range slices.Sorted(mapsKeys(t.Env)) {
			env = append(env, k+"="+t.Env[k])
		}
		spec := processSpec{server: cfg.ID, command: t.Command, args: slices.Clone(t.Args), env: env,
			stderr: c.stderr, limit: c.limit, grace: c.grace}
		s.conn = newConn(newConfig(cfg.ID, opts), func(*config) (transport.Interface, error) {
			p, err := startProcess(spec)
			if err != nil {
				return nil, err
			}
			s.watch(p)
			return wrapList(p), nil
		})
	case manager.TransportHTTP, manager.TransportSSE:
		g := &GuardedDialer{AllowPrivate: c.allowPrivate, Resolver: c.resolver}
		hc := guardedClient(g, c.limit, cfg.ID, s.lose)
		s.closeIdle = hc.CloseIdleConnections
		conf := hideURL(newConfig(cfg.ID, opts), t.URL)
		headers := t.Headers
		for _, v := range headers {
			// Header values are secrets and mcp-go errors may echo them.
			// Very short ones would scrub ordinary words instead.
			if len(v) >= 8 {
				conf.hide = append(conf.hide, v)
			}
		}
		slices.SortFunc(conf.hide, func(a, b string) int { return len(b) - len(a) })
		legacy := c.isLegacy(cfg.ID)
		kind, url := t.Kind, t.URL
		s.conn = newConn(conf, func(cf *config) (transport.Interface, error) {
			if kind == manager.TransportSSE {
				o := slices.Concat(cf.sseOpts, []transport.ClientOption{transport.WithHTTPClient(hc), transport.WithHeaders(mergeHeaders(cf.headers, headers)), transport.WithHeaderFunc(cf.requestHeaders)})
				tr, err := transport.NewSSE(url, o...)
				if err != nil {
					return nil, err
				}
				return wrapList(tr), nil
			}
			o := slices.Concat(cf.httpOpts, []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(hc), transport.WithHTTPHeaders(mergeHeaders(cf.headers, headers)), transport.WithHTTPHeaderFunc(cf.requestHeaders)})
			if legacy {
				o = append(o, transport.WithContinuousListening())
			}
			tr, err := transport.NewStreamableHTTP(url, o...)
			if err != nil {
				return nil, err
			}
			return wrapList(tr), nil
		})
	default:
		cancel()
		return nil, &manager.PermanentError{Err: fmt.Errorf("server %q: unknown transport %q", cfg.ID, string(t.Kind))}
	}
	cli, err := s.conn.Client(ctx)
	if err != nil {
		_ = s.Close()
		return nil, s.explain(err)
	}
	cli.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) && ev.ToolsChanged != nil {
			ev.ToolsChanged()
		}
	})
	s.modern = mcp.IsModernProtocol(cli.ProtocolVersion())
	if s.modern && t.Kind != manager.TransportStdio {
		// Modern HTTP transports deliver notifications only on a
		// subscriptions/listen stream. Losing it loses the notifications,
		// so the session counts as lost and the next call reconnects.
		stop, err := cli.ListenAsync(life, mcp.SubscriptionFilter{ToolsListChanged: true}, func(err error) {
			s.lose(fmt.Errorf("the notification stream failed: %w", err))
		})
		if err == nil {
			s.stopListen = stop
		}
	}
	return s, nil
}

func mergeHeaders(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// session is one managed connection.
type session struct {
	server string
	conn   *Conn
	modern bool
	sse    bool

	life       context.Context // ends at Close
	cancel     context.CancelFunc
	stopListen func()
	closeIdle  func() // the HTTP client's idle connections

	done     chan struct{}
	doneOnce sync.Once
	mu       sync.Mutex
	why      error
	proc     *process
}

// watch ties the session to a stdio process: its end ends the session.
func (s *session) watch(p *process) {
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	go func() {
		select {
		case <-p.gone:
			// Done at once, so no call goes to the dead process; the
			// reason (which may wait for the exit status) is read lazily.
			s.lose(nil)
		case <-s.life.Done():
		}
	}()
}

func (s *session) lose(why error) {
	s.mu.Lock()
	if s.why == nil {
		s.why = why
	}
	s.mu.Unlock()
	s.doneOnce.Do(func() { close(s.done) })
}

func (s *session) reason() error {
	s.mu.Lock()
	why, p := s.why, s.proc
	s.mu.Unlock()
	if why == nil && p != nil {
		select {
		case <-p.gone:
			return p.reason()
		default:
		}
	}
	return why
}

// Done implements manager.Session.
func (s *session) Done() <-chan struct{} { return s.done }

// Close implements manager.Session.
func (s *session) Close() error {
	if s.stopListen != nil {
		s.stopListen()
	}
	err := s.conn.Close()
	s.cancel()
	if s.closeIdle != nil {
		s.closeIdle()
	}
	s.lose(ErrClosed)
	return err
}

// explain adds what the session knows to a connection error: that the
// process exited, that a message was too large, that the server wrote
// output that is not JSON-RPC.
func (s *session) explain(err error) error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	var tl *MessageTooLargeError
	if why := s.reason(); why != nil && !errors.Is(why, ErrClosed) && !errors.As(err, &tl) && !strings.Contains(err.Error(), why.Error()) {
		if errors.As(why, &tl) {
			return fmt.Errorf("%w (%w)", err, why)
		}
		err = fmt.Errorf("%w (%v)", err, why)
	}
	if p != nil {
		if n := p.out.bad.Load(); n > 0 {
			err = fmt.Errorf("%w (the server wrote %d line(s) that are not JSON-RPC messages on stdout)", err, n)
		}
		if why := s.reason(); why == nil || errors.Is(why, ErrClosed) {
			select {
			case <-p.gone:
				if r := p.reason(); !strings.Contains(err.Error(), r.Error()) {
					err = fmt.Errorf("%w (%v)", err, r)
				}
			default:
			}
		}
	}
	var be *manager.BlockedAddressError
	if errors.As(err, &be) {
		return &manager.PermanentError{Err: err}
	}
	return err
}

// CallTool implements mcpruntime.Caller.
func (s *session) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpruntime.Result, error) {
	select {
	case <-s.done:
		return nil, &notSent{fmt.Errorf("server %q: connection lost before the call: %v", s.server, s.reason())}
	default:
	}
	cctx := ctx
	if s.sse {
		// Over SSE the answer comes on the event stream, so a call in
		// flight when the stream dies would wait for an answer that can no
		// longer come; it ends with the session. (stdio and streamable HTTP
		// fail such calls themselves, and report more precisely whether
		// the request went out.)
		var cancel context.CancelFunc
		cctx, cancel = context.WithCancel(ctx)
		defer cancel()
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-s.done:
				cancel()
			case <-stop:
			}
		}()
	}
	res, err := s.conn.CallTool(cctx, name, args)
	if err == nil {
		return res, nil
	}
	if errors.Is(err, transport.ErrSessionTerminated) {
		s.lose(err)
	}
	if ctx.Err() == nil && (errors.Is(err, transport.ErrTransportClosed) || s.isDone()) && !errors.Is(err, manager.ErrNotSent) {
		if errors.Is(err, context.Canceled) {
			// Cancelled above because the session ended, not by the caller.
			err = transport.ErrTransportClosed
		}
		return nil, s.explainLost(err)
	}
	if s.isDone() {
		return nil, s.explain(err)
	}
	return nil, err
}

// explainLost describes a call that was in flight when the connection
// ended: it may have run.
func (s *session) explainLost(err error) error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p != nil {
		// The process's end is what the session reports; wait for it.
		<-p.gone
		s.lose(nil)
	}
	var tl *MessageTooLargeError
	if why := s.reason(); errors.As(why, &tl) {
		return fmt.Errorf("server %q: %w", s.server, why)
	}
	return fmt.Errorf("server %q: the connection ended during the call (%v); the call may have run: %w", s.server, s.reason(), err)
}

func (s *session) isDone() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// ListTools implements manager.Session from the raw tools/list pages,
// since mcp-go's own types drop schema keywords.
func (s *session) ListTools(ctx context.Context) ([]manager.ToolInfo, error) {
	cli, err := s.conn.Client(ctx)
	if err != nil {
		return nil, err
	}
	sink := &listSink{}
	if _, err := cli.ListTools(context.WithValue(ctx, listSinkKey{}, sink), mcp.ListToolsRequest{}); err != nil {
		if s.isDone() {
			return nil, s.explain(err)
		}
		return nil, s.conn.errorf("list tools of %s: %w", s.server, err)
	}
	var out []manager.ToolInfo
	for _, page := range sink.get() {
		ts, err := parseTools(page)
		if err != nil {
			return nil, fmt.Errorf("list tools of %s: %w", s.server, err)
		}
		out = append(out, ts...)
	}
	return out, nil
}

type rawTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  struct {
		Title       string          `json:"title"`
		ReadOnly    json.RawMessage `json:"readOnlyHint"`
		Destructive json.RawMessage `json:"destructiveHint"`
		Idempotent  json.RawMessage `json:"idempotentHint"`
		OpenWorld   json.RawMessage `json:"openWorldHint"`
	} `json:"annotations"`
}

func parseTools(page json.RawMessage) ([]manager.ToolInfo, error) {
	var p struct {
		Tools []rawTool `json:"tools"`
	}
	if err := json.Unmarshal(page, &p); err != nil {
		return nil, fmt.Errorf("tools/list result: %w", err)
	}
	out := make([]manager.ToolInfo, 0, len(p.Tools))
	for _, t := range p.Tools {
		a := mcpruntime.DefaultAnnotations()
		a.Title = t.Annotations.Title
		// A hint that is not a boolean is ignored: the default applies.
		hint(t.Annotations.ReadOnly, &a.ReadOnly)
		hint(t.Annotations.Destructive, &a.Destructive)
		hint(t.Annotations.Idempotent, &a.Idempotent)
		hint(t.Annotations.OpenWorld, &a.OpenWorld)
		title := t.Title
		if title == "" {
			title = a.Title
		}
		out = append(out, manager.ToolInfo{Name: t.Name, Title: title, Description: t.Description, Annotations: a,
			InputSchema: t.InputSchema, OutputSchema: nullIsNone(t.OutputSchema)})
	}
	return out, nil
}

func hint(raw json.RawMessage, dst *bool) {
	var b bool
	if json.Unmarshal(raw, &b) == nil && len(raw) > 0 && strings.TrimSpace(string(raw)) != "null" {
		*dst = b
	}
}

func nullIsNone(raw json.RawMessage) json.RawMessage {
	if t := strings.TrimSpace(string(raw)); t == "" || t == "null" {
		return nil
	}
	return raw
}

var _ manager.Connector = (*Connector)(nil)
