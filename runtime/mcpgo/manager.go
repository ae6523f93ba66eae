package mcpgo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
)

// Connector opens sessions to registry entries for an
// manager.Manager:
//
//	reg := manager.NewRegistry(store, policy)
//	m := manager.NewManager(reg, mcpgo.NewConnector(policy))
//
// Each session is one connection of the package's session layer (see the
// package doc): a stdio server's exit ends the session, so the manager
// starts a new one before the next call; http and sse servers are dialed
// through a GuardedDialer, so the SSRF guard judges the addresses actually
// dialed; messages are capped on every transport
// (WithConnOptions(WithMaxMessageBytes(n))); tool-list changes are
// reported on every transport.
type Connector struct {
	allowPrivate bool
	resolver     manager.Resolver
	stderr       io.Writer
	opts         []Option
}

// ConnectorOption configures a Connector.
type ConnectorOption func(*Connector)

// WithDialResolver sets the resolver the dialer uses (default
// net.DefaultResolver).
func WithDialResolver(r manager.Resolver) ConnectorOption {
	return func(c *Connector) { c.resolver = r }
}

// WithServerStderr also receives the stderr of stdio servers (default:
// only its last lines are kept, for error messages; it may hold secrets
// the server printed).
func WithServerStderr(w io.Writer) ConnectorOption { return func(c *Connector) { c.stderr = w } }

// WithConnOptions passes options to every connection (client info,
// protocol version, sampling handlers, transport options).
func WithConnOptions(opts ...Option) ConnectorOption {
	return func(c *Connector) { c.opts = append(c.opts, opts...) }
}

// NewConnector returns a connector enforcing p's network rules at dial
// time (AllowPrivateNetworks; p.Resolver, if set, is also the dialer's
// resolver unless WithDialResolver says otherwise).
func NewConnector(p manager.Policy, opts ...ConnectorOption) *Connector {
	c := &Connector{allowPrivate: p.AllowPrivateNetworks, resolver: p.Resolver}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Connect implements manager.Connector.
func (c *Connector) Connect(ctx context.Context, cfg manager.ServerConfig, ev manager.SessionEvents) (manager.Session, error) {
	t := cfg.Transport
	opts := []Option{WithName(cfg.ID), WithConnectTimeout(cfg.EffectiveConnectTimeout())}
	if c.stderr != nil {
		opts = append(opts, WithStderr(c.stderr))
	}
	opts = append(opts, c.opts...)
	if ev.ToolsChanged != nil {
		opts = append(opts, WithNotificationHandler(func(n mcp.JSONRPCNotification) {
			if n.Method == string(mcp.MethodNotificationToolsListChanged) {
				ev.ToolsChanged()
			}
		}))
	}
	var conn *Conn
	switch t.Kind {
	case manager.TransportStdio:
		env := make([]string, 0, len(t.Env))
		for _, k := range slices.Sorted(maps.Keys(t.Env)) {
			env = append(env, k+"="+t.Env[k])
		}
		conn = Stdio(t.Command, t.Args, append(opts, WithEnv(env...))...)
	case manager.TransportHTTP, manager.TransportSSE:
		// The entry's headers go over whatever the connector's options set.
		opts = append(opts, WithNetworkPolicy(c.allowPrivate, c.resolver), func(cf *config) {
			cf.headers = mergeHeaders(cf.headers, t.Headers)
		})
		if t.Kind == manager.TransportSSE {
			conn = SSE(t.URL, opts...)
		} else {
			conn = StreamableHTTP(t.URL, opts...)
		}
	default:
		return nil, &manager.PermanentError{Err: fmt.Errorf("server %q: unknown transport %q", cfg.ID, string(t.Kind))}
	}
	// The manager decides about reconnecting: one Conn, one connection.
	conn.single = true
	l, err := conn.link(ctx)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return &session{server: cfg.ID, conn: conn, l: l}, nil
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

// session is one managed connection.
type session struct {
	server string
	conn   *Conn
	l      *link
}

// Done implements manager.Session.
func (s *session) Done() <-chan struct{} { return s.l.life.Done() }

// Close implements manager.Session.
func (s *session) Close() error { return s.conn.Close() }

// CallTool implements mcpruntime.Caller.
func (s *session) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpruntime.Result, error) {
	return s.conn.CallTool(ctx, name, args)
}

// StartTool, TaskStatus, TaskResult and CancelTask implement
// mcpruntime.TaskCaller on the session's connection.
func (s *session) StartTool(ctx context.Context, name string, args json.RawMessage, ttl time.Duration) (*mcpruntime.Result, error) {
	return s.conn.StartTool(ctx, name, args, ttl)
}

func (s *session) TaskStatus(ctx context.Context, ref mcpruntime.TaskRef) (mcpruntime.TaskStatus, error) {
	return s.conn.TaskStatus(ctx, ref)
}

func (s *session) TaskResult(ctx context.Context, ref mcpruntime.TaskRef) (*mcpruntime.Result, error) {
	return s.conn.TaskResult(ctx, ref)
}

func (s *session) CancelTask(ctx context.Context, ref mcpruntime.TaskRef) (mcpruntime.TaskStatus, error) {
	return s.conn.CancelTask(ctx, ref)
}

// TaskSession is the connection's (Conn.TaskSession).
func (s *session) TaskSession() string { return s.conn.TaskSession() }

// ListTools implements manager.Session from the raw tools/list pages,
// since mcp-go's own types drop schema keywords.
func (s *session) ListTools(ctx context.Context) ([]manager.ToolInfo, error) {
	ts, _, err := s.ListToolsHinted(ctx)
	return ts, err
}

// ListToolsHinted implements manager.HintedLister: the list and the
// caching hints its pages carry (the shortest ttlMs; private when any
// page is).
func (s *session) ListToolsHinted(ctx context.Context) ([]manager.ToolInfo, manager.ListHints, error) {
	var hints manager.ListHints
	l, err := s.conn.link(ctx)
	if err != nil {
		return nil, hints, err
	}
	if l.isDone() {
		return nil, hints, s.conn.lostBefore(l, "tools/list")
	}
	sink := &listSink{}
	bctx, release := s.conn.bound(ctx, l)
	defer release()
	if _, err := l.cli.ListTools(context.WithValue(bctx, listSinkKey{}, sink), mcp.ListToolsRequest{}); err != nil {
		return nil, hints, s.conn.requestError(ctx, l, "tools/list", err)
	}
	var out []manager.ToolInfo
	for _, page := range sink.get() {
		ts, err := parseTools(page)
		if err != nil {
			return nil, hints, fmt.Errorf("server %q: tools/list: %w", s.server, err)
		}
		out = append(out, ts...)
	}
	return out, listHints(sink.get()), nil
}

// listHints reads the caching hints of a list's pages (ttlMs and
// cacheScope, 2026-07-28): the shortest ttl; private unless every page
// says public.
func listHints(pages []json.RawMessage) manager.ListHints {
	var h manager.ListHints
	for i, page := range pages {
		var p struct {
			TTL   *float64 `json:"ttlMs"`
			Scope string   `json:"cacheScope"`
		}
		if json.Unmarshal(page, &p) != nil || p.TTL == nil {
			return manager.ListHints{} // a page without hints: none apply
		}
		ttl := time.Duration(max(*p.TTL, 0) * float64(time.Millisecond))
		if i == 0 || ttl < h.TTL {
			h.TTL = ttl
		}
		h.Hinted = true
		h.Private = h.Private || p.Scope != string(mcp.CacheScopePublic)
	}
	return h
}

type rawTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Execution    struct {
		TaskSupport string `json:"taskSupport"`
	} `json:"execution"`
	Annotations struct {
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
		info := manager.ToolInfo{Name: t.Name, Title: title, Description: t.Description, Annotations: a,
			InputSchema: t.InputSchema, OutputSchema: nullIsNone(t.OutputSchema)}
		switch ts := mcpruntime.TaskSupport(t.Execution.TaskSupport); ts {
		case mcpruntime.TaskOptional, mcpruntime.TaskRequired:
			info.TaskSupport = ts
		}
		out = append(out, info)
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
