// Package mcpgo connects mcpgen bindings to MCP servers through mcp-go
// (github.com/mark3labs/mcp-go): stdio, streamable HTTP, SSE and in-process.
// A *Conn implements mcpruntime.Caller and mcpruntime.ToolLister.
//
// A Conn connects lazily on first use: constructing one never starts a
// process or opens a socket, so bindings built from a committed manifest
// start offline. It is safe for concurrent use; Close ends the session
// (and the server process, for stdio).
package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
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
)

// DefaultConnectTimeout bounds connecting and the protocol handshake.
const DefaultConnectTimeout = 30 * time.Second

// ErrClosed is returned by calls on a closed Conn.
var ErrClosed = errors.New("mcpgo: connection closed")

// Option configures a Conn.
type Option func(*config)

type config struct {
	name           string
	env            []string
	dir            string
	stderr         io.Writer
	stdioOpts      []transport.StdioOption
	httpOpts       []transport.StreamableHTTPCOption
	sseOpts        []transport.ClientOption
	headers        map[string]string
	headerFunc     func(context.Context) map[string]string
	clientOpts     []client.ClientOption
	info           mcp.Implementation
	connectTimeout time.Duration
	// hide lists strings (an endpoint URL and its parts) scrubbed from
	// errors, since mcp-go's errors quote URLs that may carry credentials.
	hide []string
}

// WithName labels the server in error messages (default: the command's base
// name, or the URL's host). URLs and environment values never appear in
// errors, since they may carry secrets.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithEnv adds KEY=VALUE entries to the inherited environment (stdio).
func WithEnv(env ...string) Option { return func(c *config) { c.env = append(c.env, env...) } }

// WithDir sets the server process's working directory (stdio).
func WithDir(dir string) Option { return func(c *config) { c.dir = dir } }

// WithStderr receives the server process's stderr (stdio; default:
// discarded).
func WithStderr(w io.Writer) Option { return func(c *config) { c.stderr = w } }

// WithHeaders sets HTTP headers sent with every request (streamable HTTP
// and SSE).
func WithHeaders(h map[string]string) Option { return func(c *config) { c.headers = h } }

// WithHeaderFunc adds HTTP headers computed per request from the call's
// context (streamable HTTP and SSE). The identity guard's bearer header is
// added after them and wins. A header function passed in through
// WithHTTPOptions or WithSSEOptions would replace the identity hook; use
// this instead.
func WithHeaderFunc(f func(context.Context) map[string]string) Option {
	return func(c *config) { c.headerFunc = f }
}

// WithStdioOptions passes options to mcp-go's stdio transport.
func WithStdioOptions(opts ...transport.StdioOption) Option {
	return func(c *config) { c.stdioOpts = append(c.stdioOpts, opts...) }
}

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

func newConfig(name string, opts []Option) config {
	c := config{
		name:           name,
		info:           mcp.Implementation{Name: "mcpgen", Version: "1"},
		connectTimeout: DefaultConnectTimeout,
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Conn is a lazily connected MCP client session.
type Conn struct {
	cfg  config
	dial func(cfg *config) (transport.Interface, error)

	life   context.Context // lives until Close; bounds the server process
	cancel context.CancelFunc

	mu      sync.Mutex
	cli     *client.Client
	pending *attempt
	closed  bool

	toolsMu sync.Mutex
	tools   []string // sorted; nil until listed
}

// attempt is one connection attempt, shared by the calls waiting on it.
type attempt struct {
	done chan struct{}
	cli  *client.Client
	err  error
}

// New returns a Conn over any mcp-go transport; dial is called on first use
// (and again after a failed attempt).
func New(dial func() (transport.Interface, error), opts ...Option) *Conn {
	return newConn(newConfig("server", opts), func(*config) (transport.Interface, error) { return dial() })
}

func newConn(cfg config, dial func(*config) (transport.Interface, error)) *Conn {
	life, cancel := context.WithCancel(context.Background())
	return &Conn{cfg: cfg, dial: dial, life: life, cancel: cancel}
}

// Stdio returns a Conn that runs command with args as a subprocess speaking
// MCP on stdin/stdout. The process starts on first use.
func Stdio(command string, args []string, opts ...Option) *Conn {
	cfg := newConfig(filepath.Base(command), opts)
	args = slices.Clone(args)
	return newConn(cfg, func(cfg *config) (transport.Interface, error) {
		o := slices.Clone(cfg.stdioOpts)
		dir, stderr := cfg.dir, cfg.stderr
		if dir != "" || stderr != nil {
			o = append(o, transport.WithCommandFunc(func(ctx context.Context, cmd string, env, args []string) (*exec.Cmd, error) {
				c := exec.CommandContext(ctx, cmd, args...)
				c.Env = append(os.Environ(), env...)
				c.Dir = dir
				c.Stderr = stderr
				return c, nil
			}))
		}
		return transport.NewStdioWithOptions(command, slices.Clone(cfg.env), args, o...), nil
	})
}

// StreamableHTTP returns a Conn to a streamable HTTP endpoint.
func StreamableHTTP(endpoint string, opts ...Option) *Conn {
	return newConn(hideURL(newConfig(hostOf(endpoint), opts), endpoint), func(cfg *config) (transport.Interface, error) {
		o := slices.Clone(cfg.httpOpts)
		if cfg.headers != nil {
			o = append(o, transport.WithHTTPHeaders(cfg.headers))
		}
		o = append(o, transport.WithHTTPHeaderFunc(cfg.requestHeaders))
		return transport.NewStreamableHTTP(endpoint, o...)
	})
}

// SSE returns a Conn to a legacy HTTP+SSE endpoint.
func SSE(endpoint string, opts ...Option) *Conn {
	return newConn(hideURL(newConfig(hostOf(endpoint), opts), endpoint), func(cfg *config) (transport.Interface, error) {
		o := slices.Clone(cfg.sseOpts)
		if cfg.headers != nil {
			o = append(o, transport.WithHeaders(cfg.headers))
		}
		o = append(o, transport.WithHeaderFunc(cfg.requestHeaders))
		return transport.NewSSE(endpoint, o...)
	})
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
	return newConn(newConfig("in-process server", opts), func(*config) (transport.Interface, error) {
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
	cfg.hide = append(cfg.hide, endpoint)
	if u, err := url.Parse(endpoint); err == nil {
		cfg.hide = append(cfg.hide, u.Redacted())
		if u.RawQuery != "" {
			cfg.hide = append(cfg.hide, u.RawQuery)
		}
		if p, ok := u.User.Password(); ok && p != "" {
			cfg.hide = append(cfg.hide, p)
		}
	}
	// Longest first, so a URL is replaced whole before its parts.
	slices.SortFunc(cfg.hide, func(a, b string) int { return len(b) - len(a) })
	return cfg
}

// errorf formats an error like fmt.Errorf with %w, then scrubs the
// endpoint from its text; errors.Is and errors.As still see the cause.
func (c *Conn) errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	msg := err.Error()
	for _, h := range c.cfg.hide {
		msg = strings.ReplaceAll(msg, h, "<endpoint>")
	}
	if msg == err.Error() {
		return err
	}
	return &scrubbed{msg: msg, err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// Name returns the label used for the server in errors.
func (c *Conn) Name() string { return c.cfg.name }

// Client returns the connected mcp-go client, connecting if needed, for
// what the bindings do not cover (resources, prompts, notifications). It
// stays owned by the Conn: close the Conn, not the client.
func (c *Conn) Client(ctx context.Context) (*client.Client, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if c.cli != nil {
		cli := c.cli
		c.mu.Unlock()
		return cli, nil
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
		return a.cli, a.err
	case <-ctx.Done():
		return nil, c.errorf("connect to %s: %w", c.cfg.name, ctx.Err())
	}
}

// connect runs one attempt detached from any caller's context, so one
// caller giving up does not fail the others or kill the process.
func (c *Conn) connect(a *attempt) {
	cli, err := c.open()
	c.mu.Lock()
	if err == nil && c.closed {
		_ = cli.Close()
		cli, err = nil, ErrClosed
	}
	if err == nil {
		c.cli = cli
	}
	c.pending = nil // a failed attempt is retried by the next call
	c.mu.Unlock()
	a.cli, a.err = cli, err
	close(a.done)
}

func (c *Conn) open() (*client.Client, error) {
	tr, err := c.dial(&c.cfg)
	if err != nil {
		return nil, c.errorf("connect to %s: %w", c.cfg.name, err)
	}
	cli := client.NewClient(wrap(tr), c.cfg.clientOpts...)
	// The transport's Start context bounds the connection's lifetime (for
	// stdio it is the process's), so it is the Conn's, not a caller's.
	if err := cli.Start(c.life); err != nil {
		_ = cli.Close()
		return nil, c.errorf("connect to %s: %w", c.cfg.name, err)
	}
	ctx, cancel := c.life, context.CancelFunc(func() {})
	if c.cfg.connectTimeout > 0 {
		ctx, cancel = context.WithTimeout(c.life, c.cfg.connectTimeout)
	}
	defer cancel()
	cli.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			c.forgetTools()
		}
	})
	if _, err := cli.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: c.cfg.info}}); err != nil {
		_ = cli.Close()
		return nil, c.errorf("initialize %s: %w", c.cfg.name, err)
	}
	return cli, nil
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
	cli := c.cli
	c.cli = nil
	c.mu.Unlock()
	var err error
	if cli != nil {
		err = cli.Close()
	}
	c.cancel()
	return err
}

// ToolNames lists the server's tools, sorted. The list is cached until the
// server announces a change or a call names a tool not in it.
func (c *Conn) ToolNames(ctx context.Context) ([]string, error) {
	c.toolsMu.Lock()
	cached := c.tools
	c.toolsMu.Unlock()
	if cached != nil {
		return slices.Clone(cached), nil
	}
	return c.listTools(ctx)
}

func (c *Conn) listTools(ctx context.Context) ([]string, error) {
	cli, err := c.Client(ctx)
	if err != nil {
		return nil, err
	}
	res, err := cli.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, c.errorf("list tools of %s: %w", c.cfg.name, err)
	}
	names := make([]string, 0, len(res.Tools))
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	c.toolsMu.Lock()
	c.tools = names
	c.toolsMu.Unlock()
	return slices.Clone(names), nil
}

func (c *Conn) forgetTools() {
	c.toolsMu.Lock()
	c.tools = nil
	c.toolsMu.Unlock()
}

// checkTool returns a *mcpruntime.MissingToolError when the server does not
// list name. A stale cache is refreshed once before deciding; a server that
// cannot list its tools is left to answer the call itself.
func (c *Conn) checkTool(ctx context.Context, name string) error {
	// The common case, a cached list that has the tool, costs no copy.
	c.toolsMu.Lock()
	listed := slices.Contains(c.tools, name)
	c.toolsMu.Unlock()
	if listed {
		return nil
	}
	names, err := c.ToolNames(ctx)
	if err == nil && !slices.Contains(names, name) {
		names, err = c.listTools(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return nil
	}
	if slices.Contains(names, name) {
		return nil
	}
	return &mcpruntime.MissingToolError{Server: c.cfg.name, Tools: []string{name}, Available: names}
}

// CallTool implements mcpruntime.Caller.
func (c *Conn) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpruntime.Result, error) {
	cli, err := c.Client(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.checkTool(ctx, name); err != nil {
		return nil, err
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	s := &sink{}
	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}}
	res, err := cli.CallTool(context.WithValue(ctx, sinkKey{}, s), req)
	raw, rpcErr := s.get()
	if err != nil || rpcErr != nil {
		if cerr := settle(ctx); cerr != nil {
			// The context ended: that, not what the server or transport
			// made of it, is the reason.
			return nil, c.errorf("%s: %w", c.cfg.name, cerr)
		}
	}
	if rpcErr != nil {
		return nil, &mcpruntime.ProtocolError{Code: rpcErr.Code, Message: rpcErr.Message, Data: dataOf(rpcErr.Data)}
	}
	if err != nil && (raw == nil || inputRequired(raw)) {
		return nil, c.errorf("%s: %w", c.cfg.name, err)
	}
	if raw != nil {
		// mcp-go may reject a result the runtime can read (a content kind
		// it does not know); the raw bytes decide.
		r, perr := mcpruntime.ParseResult(raw)
		if perr != nil {
			return nil, fmt.Errorf("%s: tool %q: %w", c.cfg.name, name, perr)
		}
		return r, nil
	}
	// No raw bytes (a transport that bypasses SendRequest): convert.
	b, merr := json.Marshal(res)
	if merr != nil {
		return nil, fmt.Errorf("%s: tool %q: re-encode result: %w", c.cfg.name, name, merr)
	}
	return mcpruntime.ParseResult(b)
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
