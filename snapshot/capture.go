package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"slices"
	"strings"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgen/mcpgen/manifest"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// clientInfo is fixed so that a server that varies its answer by client
// sees the same client on every snapshot.
var clientInfo = mcp.Implementation{Name: "mcpgen-snapshot", Version: "1"}

// maxPages stops a server that keeps inventing new cursors.
const maxPages = 10000

// discardLogger keeps transport logs (which can include URLs carrying
// secrets) out of the user's terminal; every failure is returned instead.
var discardLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// Capture connects to the server described by src, reads everything it
// offers and returns it as a manifest. Tool, resource, template and prompt
// objects are kept byte-for-byte as the server sent them (only tools are
// filtered, by Options.Include/Exclude). The whole capture is bounded by
// Options.Timeout, and a stdio server process is always gone when Capture
// returns. Errors are *Error values naming the server, with every secret in
// src redacted.
func Capture(ctx context.Context, src Source, opts Options) (*manifest.Manifest, error) {
	s := Open(src, opts)
	defer s.Close()
	return s.Capture(ctx)
}

// Session is one connection to a server that can capture it and then go
// on being used (mcpgen call lists a tool's schema and calls it on one
// connection, as a server that counts its clients' connections expects).
type Session struct{ c *capture }

// Open prepares a session to src; nothing connects before Capture or the
// first use of Conn. extra options are added to the connection's.
func Open(src Source, opts Options, extra ...mcpgo.Option) *Session {
	c := &capture{src: src, opts: opts, red: newRedactor(&src)}
	c.tap = &tap{last: map[string]json.RawMessage{}}
	c.conn = Dial(c.src, append(append(ConnOptions(c.opts), mcpgo.WithClientInfo(clientInfo.Name, clientInfo.Version),
		mcpgo.WithRawObserver(c.tap.record),
		// The capture's own deadline bounds the handshake.
		mcpgo.WithConnectTimeout(0)), extra...)...)
	return &Session{c: c}
}

// Capture reads everything the server offers into a manifest, as the
// package-level Capture does.
func (s *Session) Capture(ctx context.Context) (*manifest.Manifest, error) {
	m, err := s.c.run(ctx)
	if err != nil {
		return nil, s.c.wrap(err)
	}
	return m, nil
}

// Conn is the session's connection.
func (s *Session) Conn() *mcpgo.Conn { return s.c.conn }

// Close ends the connection (and a stdio server's process).
func (s *Session) Close() error { return s.c.conn.Close() }

type capture struct {
	src  Source
	opts Options
	red  *redactor
	conn *mcpgo.Conn
	tap  *tap
	ctx  context.Context
}

func (c *capture) wrap(err error) error {
	e := &Error{ID: c.src.ID}
	var ce *mcpruntime.ConnectError
	var le *mcpruntime.ConnectionLostError
	var exit, stderr string
	msg := ""
	switch {
	case errors.As(err, &ce):
		exit, stderr, msg = ce.Exit, ce.Stderr, err.Error()
		e.session = err
	case errors.As(err, &le):
		exit, stderr, msg = le.Exit, le.Stderr, err.Error()
		e.session = err
	default:
		msg = fmt.Sprintf("server %q: %v", c.src.ID, err)
	}
	e.Stderr = c.red.redact(stderr)
	e.msg = c.red.redact(msg)
	// The cause chain may hold secrets (a URL inside a net/http error), so
	// only a known kind is kept for errors.Is, never the chain itself.
	e.Err = errors.New(c.red.redact(err.Error()))
	var ge *mcpgo.StdoutGarbageError
	switch {
	case errors.As(err, &ge):
		e.Err = ErrNotMCP
	case exit != "" || (c.src.Transport == Stdio && (ce != nil || le != nil) && strings.Contains(msg, "closed its output")):
		e.Err = ErrExited
	default:
		for _, k := range []error{ErrTimeout, ErrExited, ErrNotMCP, ErrNoTools, ErrRepeatedCursor, ErrSecretInOutput, ErrInvalidSource, context.Canceled, context.DeadlineExceeded} {
			if errors.Is(err, k) {
				e.Err = k
				break
			}
		}
	}
	return e
}

func (c *capture) check() error {
	s := &c.src
	if s.ID == "" {
		return fmt.Errorf("%w: empty server id", ErrInvalidSource)
	}
	switch s.Transport {
	case Stdio:
		if s.Command == "" {
			return fmt.Errorf("%w: stdio transport without a command", ErrInvalidSource)
		}
	case HTTP, SSE:
		if s.URL == "" {
			return fmt.Errorf("%w: %s transport without a url", ErrInvalidSource, s.Transport)
		}
	default:
		return fmt.Errorf("%w: unknown transport %q", ErrInvalidSource, s.Transport)
	}
	if v := c.opts.ProtocolVersion; v != "" && !slices.Contains(ProtocolVersions, v) {
		return fmt.Errorf("%w: unknown protocol version %q", ErrInvalidSource, v)
	}
	for _, k := range c.opts.Capabilities {
		if !slices.Contains(Capabilities, k) {
			return fmt.Errorf("%w: unknown client capability %q", ErrInvalidSource, k)
		}
	}
	for _, p := range append(append([]string(nil), c.opts.Include...), c.opts.Exclude...) {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("%w: bad tool pattern %q: %v", ErrInvalidSource, p, err)
		}
	}
	return nil
}

func (c *capture) run(parent context.Context) (*manifest.Manifest, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	timeout := c.opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, abort := context.WithCancelCause(parent)
	defer abort(nil)
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("%w (%s)", ErrTimeout, timeout))
	defer cancel()
	c.ctx = ctx

	cl, err := c.conn.Client(ctx)
	if err != nil {
		return nil, c.fail("connect", err)
	}
	init := c.conn.InitializeResult()
	m := &manifest.Manifest{Format: manifest.FormatVersion, ID: c.src.ID, ProtocolVersion: cl.ProtocolVersion()}
	if m.ProtocolVersion == "" {
		m.ProtocolVersion = init.ProtocolVersion
	}
	caps, err := c.serverRecord(m, init)
	if err != nil {
		return nil, err
	}

	if caps["tools"] {
		tools, err := c.list("tools/list", "tools", "name", func(method string, cur mcp.Cursor) error {
			return c.conn.Do(ctx, method, func(ctx context.Context, cl *client.Client) error {
				_, err := cl.ListToolsByPage(ctx, mcp.ListToolsRequest{PaginatedRequest: page(cur)})
				return err
			})
		})
		if err != nil {
			return nil, err
		}
		m.Tools = c.filter(tools)
		if len(m.Tools) == 0 && !c.opts.AllowEmpty {
			if len(tools) > 0 {
				return nil, fmt.Errorf("%w left after the include/exclude filters (the server lists %d)", ErrNoTools, len(tools))
			}
			return nil, fmt.Errorf("%w: the server lists none (pass --allow-empty to accept that)", ErrNoTools)
		}
	} else if !c.opts.AllowEmpty {
		return nil, fmt.Errorf("%w: the server does not advertise the tools capability (pass --allow-empty to accept that)", ErrNoTools)
	}
	if caps["resources"] {
		m.Resources, err = c.list("resources/list", "resources", "uri", func(method string, cur mcp.Cursor) error {
			return c.conn.Do(ctx, method, func(ctx context.Context, cl *client.Client) error {
				_, err := cl.ListResourcesByPage(ctx, mcp.ListResourcesRequest{PaginatedRequest: page(cur)})
				return err
			})
		})
		if err != nil {
			return nil, err
		}
		m.ResourceTemplates, err = c.list("resources/templates/list", "resourceTemplates", "uriTemplate", func(method string, cur mcp.Cursor) error {
			return c.conn.Do(ctx, method, func(ctx context.Context, cl *client.Client) error {
				_, err := cl.ListResourceTemplatesByPage(ctx, mcp.ListResourceTemplatesRequest{PaginatedRequest: page(cur)})
				return err
			})
		})
		if err != nil {
			return nil, err
		}
	}
	if caps["prompts"] {
		m.Prompts, err = c.list("prompts/list", "prompts", "name", func(method string, cur mcp.Cursor) error {
			return c.conn.Do(ctx, method, func(ctx context.Context, cl *client.Client) error {
				_, err := cl.ListPromptsByPage(ctx, mcp.ListPromptsRequest{PaginatedRequest: page(cur)})
				return err
			})
		})
		if err != nil {
			return nil, err
		}
	}
	if d := m.Duplicates(); len(d) > 0 {
		return nil, fmt.Errorf("%w: the server lists %s more than once", ErrNotMCP, strings.Join(d, ", "))
	}
	if err := c.refuseSecrets(m); err != nil {
		return nil, err
	}
	return m, nil
}

func page(cur mcp.Cursor) mcp.PaginatedRequest {
	return mcp.PaginatedRequest{Params: mcp.PaginatedParams{Cursor: cur}}
}

// ConnOptions are the session-layer options o implies: the protocol pin,
// and the declared capabilities with handlers that do nothing on anyone's
// behalf (forms declined, sampling refused, no roots).
func ConnOptions(o Options) []mcpgo.Option {
	var out []mcpgo.Option
	if o.ProtocolVersion != "" {
		out = append(out, mcpgo.WithProtocolVersion(o.ProtocolVersion))
	}
	for _, c := range o.Capabilities {
		switch c {
		case "elicitation":
			out = append(out, mcpgo.WithElicitation(mcpgo.ElicitDeclineAll, true))
		case "sampling":
			out = append(out, mcpgo.WithSampling(func(context.Context, mcpgo.SamplingRequest) (mcpgo.SamplingResponse, error) {
				return mcpgo.SamplingResponse{}, errors.New("mcpgen does not sample on a model's behalf while capturing")
			}))
		case "roots":
			out = append(out, mcpgo.WithRoots())
		}
	}
	return out
}

// Dial returns a session-layer connection to src (not yet connected),
// with every secret in src redacted from its errors by name. mcpgen's
// commands connect through it, so a server fails the same way in each.
func Dial(src Source, opts ...mcpgo.Option) *mcpgo.Conn {
	red := newRedactor(&src)
	o := []mcpgo.Option{mcpgo.WithName(src.ID)}
	for _, f := range red.values {
		o = append(o, mcpgo.WithNamedSecret(f, red.names[f]))
	}
	if live := src.LiveSecrets; live != nil {
		o = append(o, mcpgo.WithSecretSource(func() []string {
			var out []string
			for _, v := range live() {
				out = append(out, secretForms(v)...)
			}
			return out
		}))
	}
	o = append(o, opts...)
	switch src.Transport {
	case HTTP:
		return mcpgo.StreamableHTTP(src.URL, append(o, mcpgo.WithHeaders(src.Headers))...)
	case SSE:
		return mcpgo.SSE(src.URL, append(o, mcpgo.WithHeaders(src.Headers))...)
	}
	return mcpgo.Stdio(src.Command, src.Args, append(o, mcpgo.WithEnv(src.Env...), mcpgo.WithDir(src.Dir))...)
}

// fail explains why a request failed: the session layer's facts about the
// server (garbage on stdout, its exit, its stderr) come with its error; a
// capture cut off by its own deadline says so.
func (c *capture) fail(op string, err error) error {
	var ce *mcpruntime.ConnectError
	var le *mcpruntime.ConnectionLostError
	var ge *mcpgo.StdoutGarbageError
	isCE, isLE := errors.As(err, &ce), errors.As(err, &le)
	telling := errors.As(err, &ge) || (isCE && ce.Exit != "") || (isLE && le.Exit != "")
	if cause := context.Cause(c.ctx); cause != nil && c.ctx.Err() != nil && !telling {
		if ce != nil || le != nil {
			return &kindError{err: err, kind: cause}
		}
		return fmt.Errorf("%s: %w", op, cause)
	}
	if ce != nil || le != nil {
		return err
	}
	return fmt.Errorf("%s: %w", op, err)
}

// kindError is err, also matching kind (the capture's timeout).
type kindError struct{ err, kind error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.err, e.kind} }

// serverRecord fills the server's identity from the raw handshake result
// (server/discover on 2026-07-28 and later, initialize before) and returns
// which capabilities it advertises.
func (c *capture) serverRecord(m *manifest.Manifest, init *mcp.InitializeResult) (map[string]bool, error) {
	var raw struct {
		ServerInfo   json.RawMessage            `json:"serverInfo"`
		Capabilities json.RawMessage            `json:"capabilities"`
		Instructions *string                    `json:"instructions"`
		Meta         map[string]json.RawMessage `json:"_meta"`
	}
	method := "initialize"
	if mcp.IsModernProtocol(m.ProtocolVersion) {
		method = string(mcp.MethodServerDiscover)
	}
	res, ok := c.tap.take(method)
	if !ok {
		return nil, fmt.Errorf("%w: no raw %s result was seen", ErrNotMCP, method)
	}
	if err := json.Unmarshal(res, &raw); err != nil {
		return nil, fmt.Errorf("%w: %s result: %v", ErrNotMCP, method, err)
	}
	if raw.ServerInfo == nil {
		// The modern protocol carries server info in the result's _meta.
		raw.ServerInfo = raw.Meta[mcp.MetaKeyServerInfo]
	}
	if isNull(raw.ServerInfo) {
		// Nothing on the wire; the client's view is the best record left.
		b, err := json.Marshal(init.ServerInfo)
		if err != nil {
			return nil, err
		}
		raw.ServerInfo = b
	}
	if !isObject(raw.ServerInfo) {
		return nil, fmt.Errorf("%w: serverInfo in the %s result is not an object", ErrNotMCP, method)
	}
	if isNull(raw.Capabilities) {
		raw.Capabilities = json.RawMessage("{}")
	}
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(raw.Capabilities, &caps); err != nil {
		return nil, fmt.Errorf("%w: capabilities in the %s result are not an object", ErrNotMCP, method)
	}
	m.ServerInfo = raw.ServerInfo
	m.Capabilities = raw.Capabilities
	if raw.Instructions != nil {
		m.Instructions = *raw.Instructions
	}
	has := map[string]bool{}
	for k, v := range caps {
		has[k] = !isNull(v)
	}
	return has, nil
}

// list fetches every page of one list method through the client (which adds
// the per-request metadata the protocol needs) and returns the raw items
// from the tap. A page the client fails to decode is still used when the
// server's answer itself was a success: the raw bytes are what count.
func (c *capture) list(method, member, key string, fetch func(string, mcp.Cursor) error) ([]manifest.Entry, error) {
	var out []manifest.Entry
	seen := map[string]int{"": 0}
	cursor := ""
	for n := 1; ; n++ {
		if n > maxPages {
			return nil, fmt.Errorf("%w: %s returned more than %d pages", ErrNotMCP, method, maxPages)
		}
		err := fetch(method, mcp.Cursor(cursor))
		res, ok := c.tap.take(method)
		if !ok {
			if err == nil {
				err = errors.New("no result")
			}
			return nil, c.fail(method, err)
		}
		var pg map[string]json.RawMessage
		if err := json.Unmarshal(res, &pg); err != nil {
			return nil, fmt.Errorf("%w: %s page %d is not a JSON object", ErrNotMCP, method, n)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(pg[member], &items); err != nil || pg[member] == nil {
			return nil, fmt.Errorf("%w: %s page %d has no %q array", ErrNotMCP, method, n, member)
		}
		for i, it := range items {
			e, err := manifest.NewEntry(it, key)
			if err != nil {
				return nil, fmt.Errorf("%w: %s page %d item %d: %v", ErrNotMCP, method, n, i, err)
			}
			out = append(out, e)
		}
		next := ""
		if v, ok := pg["nextCursor"]; ok && !isNull(v) {
			if err := json.Unmarshal(v, &next); err != nil {
				return nil, fmt.Errorf("%w: %s page %d: nextCursor is not a string", ErrNotMCP, method, n)
			}
		}
		if next == "" {
			return out, nil
		}
		if p, dup := seen[next]; dup {
			return nil, fmt.Errorf("%w: %s page %d returned cursor %q, already returned by page %d", ErrRepeatedCursor, method, n, next, p)
		}
		seen[next] = n
		cursor = next
	}
}

// filter applies Include and Exclude to tool names.
func (c *capture) filter(tools []manifest.Entry) []manifest.Entry {
	var out []manifest.Entry
	for _, t := range tools {
		if Keep(t.Key, c.opts.Include, c.opts.Exclude) {
			out = append(out, t)
		}
	}
	return out
}

// Keep reports whether a tool named name passes the include and exclude
// patterns (path.Match globs; an empty include keeps everything).
func Keep(name string, include, exclude []string) bool {
	in := len(include) == 0
	for _, p := range include {
		if ok, _ := path.Match(p, name); ok {
			in = true
			break
		}
	}
	if !in {
		return false
	}
	for _, p := range exclude {
		if ok, _ := path.Match(p, name); ok {
			return false
		}
	}
	return true
}

// refuseSecrets fails when a resolved secret shows up in anything that
// would be written: a server echoing its token into a description must not
// put it into a committed file.
func (c *capture) refuseSecrets(m *manifest.Manifest) error {
	where := func(what string, b []byte) error {
		if name, ok := c.red.find(b); ok && name == "" {
			return fmt.Errorf("%w: a token or secret of the server's OAuth client appears in %s; refusing to write it to a manifest", ErrSecretInOutput, what)
		} else if ok {
			return fmt.Errorf("%w: the value of %s appears in %s; refusing to write it to a manifest (if it is not a secret, write it literally in the config instead of as a reference)", ErrSecretInOutput, name, what)
		}
		return nil
	}
	checks := []struct {
		what string
		b    []byte
	}{
		{"serverInfo", m.ServerInfo}, {"capabilities", m.Capabilities},
		{"the instructions", []byte(m.Instructions)}, {"the protocol version", []byte(m.ProtocolVersion)},
	}
	for _, l := range []struct {
		kind string
		es   []manifest.Entry
	}{{"tool", m.Tools}, {"resource", m.Resources}, {"resource template", m.ResourceTemplates}, {"prompt", m.Prompts}} {
		for _, e := range l.es {
			// The entry key itself may be the secret; name the entry by
			// position then.
			checks = append(checks, struct {
				what string
				b    []byte
			}{fmt.Sprintf("%s %q", l.kind, c.red.redact(e.Key)), e.Raw})
		}
	}
	for _, ch := range checks {
		if err := where(ch.what, ch.b); err != nil {
			return err
		}
	}
	// Last, the bytes that would be written, in case encoding produced a
	// form the checks above did not see.
	b, err := manifest.Encode(m)
	if err != nil {
		return err
	}
	return where("the manifest", b)
}

func isNull(b json.RawMessage) bool {
	t := strings.TrimSpace(string(b))
	return t == "" || t == "null"
}

func isObject(b json.RawMessage) bool {
	t := strings.TrimSpace(string(b))
	return strings.HasPrefix(t, "{")
}
