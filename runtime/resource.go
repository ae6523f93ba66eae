package mcpruntime

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/mcpgen/mcpgen/runtime/internal/jsonscan"
)

// ResourceReader is implemented by connections that can read resources
// (resources/read). The mcpgo adapter's Conn does. A reader returns a
// *ProtocolError when the server answers with a JSON-RPC error, and should
// refuse a response larger than ReadLimit(ctx) before decoding it.
type ResourceReader interface {
	ReadResource(ctx context.Context, uri string) (*ResourceResult, error)
}

// DefaultMaxReadSize bounds one resource read or prompt get unless
// MaxReadSize says otherwise: 8 MiB. The limit counts the response as it
// arrives, the whole JSON-RPC message: a blob counts base64-encoded, plus
// the envelope, so a 6.5 MiB blob (8.7 MiB in base64) is refused at the
// default.
const DefaultMaxReadSize int64 = 8 << 20

// ResourceDescriptor describes one resource or resource template as
// snapshotted; generated code emits one package-level value per entry and
// never mutates it.
type ResourceDescriptor struct {
	// URI is a concrete resource's URI; "" for a template.
	URI string
	// URITemplate is a template's RFC 6570 URI template; "" for a concrete
	// resource.
	URITemplate string
	Name        string
	GoName      string
	Title       string
	Description string
	// MIMEType is the type the server declares for the resource ("" when
	// it declares none).
	MIMEType string
	// Schema is the JSON Schema a config binding gives the content; nil
	// when the resource is read as text or blob.
	Schema json.RawMessage
}

func (d *ResourceDescriptor) label() string {
	if d.URITemplate != "" {
		return fmt.Sprintf("resource template %q", d.URITemplate)
	}
	return fmt.Sprintf("resource %q", d.URI)
}

// ResourceResult is everything a server sent for one resources/read, kept
// losslessly: every contents item (uri, mimeType, text or base64 blob,
// _meta, and its raw JSON) and the result's _meta.
type ResourceResult struct {
	// URI is the URI that was read.
	URI      string
	Contents []ResourceContents
	Meta     json.RawMessage
	// Provenance says where the content came from; it is also in the run's
	// ledger (see WithRun). Resource content is external.
	Provenance Provenance
}

// ParseResourceResult decodes the JSON of a resources/read result (the
// JSON-RPC "result" member). Every contents item must be an object with
// a string uri and exactly one of a string text or blob member.
func ParseResourceResult(data []byte) (*ResourceResult, error) {
	var w struct {
		Contents *[]json.RawMessage `json:"contents"`
		Meta     json.RawMessage    `json:"_meta"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("resources/read result: %w", err)
	}
	if w.Contents == nil {
		return nil, errors.New("resources/read result: missing contents member")
	}
	r := &ResourceResult{Meta: cloneRaw(w.Meta)}
	for i, raw := range *w.Contents {
		var probe struct {
			URI  *string         `json:"uri"`
			Text json.RawMessage `json:"text"`
			Blob json.RawMessage `json:"blob"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, fmt.Errorf("resources/read result: /contents/%d: %w", i, err)
		}
		switch {
		case probe.URI == nil:
			return nil, fmt.Errorf("resources/read result: /contents/%d: missing uri", i)
		case probe.Text != nil && probe.Blob != nil:
			return nil, fmt.Errorf("resources/read result: /contents/%d: both text and blob", i)
		case probe.Text == nil && probe.Blob == nil:
			return nil, fmt.Errorf("resources/read result: /contents/%d: neither text nor blob", i)
		}
		var c ResourceContents
		if err := c.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("resources/read result: /contents/%d: %w", i, err)
		}
		if c.IsBlob {
			if _, err := base64.StdEncoding.DecodeString(c.Blob); err != nil {
				return nil, fmt.Errorf("resources/read result: /contents/%d/blob: not valid base64: %w", i, err)
			}
		} else if probe.Text[0] != '"' {
			return nil, fmt.Errorf("resources/read result: /contents/%d/text: not a string", i)
		}
		r.Contents = append(r.Contents, c)
	}
	return r, nil
}

// Bytes returns the decoded blob of a blob item, or the text of a text item
// as bytes.
func (r ResourceContents) Bytes() ([]byte, error) {
	if !r.IsBlob {
		return []byte(r.Text), nil
	}
	b, err := base64.StdEncoding.DecodeString(r.Blob)
	if err != nil {
		return nil, fmt.Errorf("resource %q: blob is not valid base64: %w", r.URI, err)
	}
	return b, nil
}

// size is the item's content size in bytes (decoded, for a blob).
func (r ResourceContents) size() int64 {
	if r.IsBlob {
		return int64(base64Len(r.Blob))
	}
	return int64(len(r.Text))
}

// Single returns the only contents item; a read that returned none or
// several is an error rather than a guess at which one was meant.
func (r *ResourceResult) Single() (ResourceContents, error) {
	if len(r.Contents) != 1 {
		return ResourceContents{}, &ResourceContentError{URI: r.URI, Msg: fmt.Sprintf("expected one contents item, got %d", len(r.Contents))}
	}
	return r.Contents[0], nil
}

// Text returns the text of the only contents item. A blob is an error, not
// converted.
func (r *ResourceResult) Text() (string, error) {
	c, err := r.Single()
	if err != nil {
		return "", err
	}
	if c.IsBlob {
		return "", &ResourceContentError{URI: r.URI, MIMEType: c.MIMEType, Msg: "expected text, got a blob"}
	}
	return c.Text, nil
}

// Blob returns the decoded bytes of the only contents item. Text is an
// error, not converted.
func (r *ResourceResult) Blob() ([]byte, error) {
	c, err := r.Single()
	if err != nil {
		return nil, err
	}
	if !c.IsBlob {
		return nil, &ResourceContentError{URI: r.URI, MIMEType: c.MIMEType, Msg: "expected a blob, got text"}
	}
	return c.Bytes()
}

// Size is the total size of the contents in bytes (blobs decoded).
func (r *ResourceResult) Size() int64 {
	var n int64
	for _, c := range r.Contents {
		n += c.size()
	}
	return n
}

// TypedResource is a resource read whose content was decoded into the Go
// type a config binding generated for it.
type TypedResource[T any] struct {
	// Content is the decoded and validated content.
	Content T
	*ResourceResult
}

// DecodeResource decodes the only contents item of res with decode (a
// generated Decode<Name>Content, which also validates). The item must be
// text of a JSON mime type (application/json or */*+json; when the item
// carries no mime type, the one the descriptor declares counts); anything
// else is a *ResourceContentError, never a guess.
func DecodeResource[T any](res *ResourceResult, d *ResourceDescriptor, decode func([]byte) (T, error)) (*TypedResource[T], error) {
	c, err := res.Single()
	if err != nil {
		return nil, err
	}
	mt := c.MIMEType
	if mt == "" {
		mt = d.MIMEType
	}
	if !isJSONType(mt) {
		got := mt
		if got == "" {
			got = "no mime type"
		}
		return nil, &ResourceContentError{URI: res.URI, MIMEType: c.MIMEType, Msg: "expected application/json content for the bound schema, got " + got}
	}
	if c.IsBlob {
		return nil, &ResourceContentError{URI: res.URI, MIMEType: c.MIMEType, Msg: "expected JSON text, got a blob"}
	}
	if !jsonscan.Valid([]byte(c.Text)) {
		// Said here: a decoder reading the kind from the first byte would
		// call "nope" an unexpected null.
		return nil, &ResourceContentError{URI: res.URI, MIMEType: c.MIMEType, Msg: "expected JSON text for the bound schema, got " + notJSON(c.Text)}
	}
	v, err := decode([]byte(c.Text))
	if err != nil {
		return nil, &ResourceContentError{URI: res.URI, MIMEType: c.MIMEType, Msg: "content does not match the bound schema", Err: err}
	}
	return &TypedResource[T]{Content: v, ResourceResult: res}, nil
}

// notJSON describes text that is not JSON by how it starts.
func notJSON(text string) string {
	t := strings.TrimSpace(text)
	if t == "" {
		return "empty text"
	}
	if i := strings.IndexAny(t, "\r\n"); i >= 0 {
		t = t[:i]
	}
	if r := []rune(t); len(r) > 24 {
		t = string(r[:24]) + "…"
	}
	return fmt.Sprintf("text that is not JSON (it starts %q)", t)
}

func isJSONType(mt string) bool {
	t, _, err := mime.ParseMediaType(mt)
	if err != nil {
		return false
	}
	return t == "application/json" || strings.HasSuffix(t, "+json")
}

// ResourceContentError reports content that is not what was declared: the
// wrong number of items, text where a blob was expected or the reverse,
// a non-JSON mime type for a bound schema, or JSON not matching it (Err is
// then the *ValidationError).
type ResourceContentError struct {
	URI      string
	MIMEType string
	Msg      string
	Err      error
}

func (e *ResourceContentError) Error() string {
	s := fmt.Sprintf("resource %q: %s", e.URI, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ResourceContentError) Unwrap() error { return e.Err }

// ErrResourceExpired matches a *ResourceExpiredError with errors.Is.
var ErrResourceExpired = errors.New("resource expired")

// ResourceExpiredError reports that the server no longer has a resource:
// it answered resources/read with "resource not found" (JSON-RPC -32002, or
// -32602 with a message saying the resource was not found, as newer
// protocol revisions do).
type ResourceExpiredError struct {
	URI    string
	Server string
	// Detail says why the read was not refreshed, or what the refresh did.
	Detail string
	// Err is the server's error.
	Err error
}

func (e *ResourceExpiredError) Error() string {
	s := fmt.Sprintf("resource %q has expired", e.URI)
	if e.Server != "" {
		s = fmt.Sprintf("resource %q on %s has expired", e.URI, e.Server)
	}
	if e.Err != nil {
		s += " (" + e.Err.Error() + ")"
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *ResourceExpiredError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrResourceExpired) true.
func (e *ResourceExpiredError) Is(target error) bool { return target == ErrResourceExpired }

// ResourceTooLargeError reports a read or prompt whose response exceeds
// the size limit (MaxReadSize). Nothing of it is returned.
type ResourceTooLargeError struct {
	// What names the resource or prompt.
	What  string
	Limit int64
	// Size is the size found; at least Limit+1 when the reader stopped
	// early.
	Size int64
}

func (e *ResourceTooLargeError) Error() string {
	return fmt.Sprintf("%s: response of %d bytes exceeds the limit of %d bytes (raise it with mcpruntime.MaxReadSize)", e.What, e.Size, e.Limit)
}

// notFound reports whether a server error means "resource not found".
func notFound(err error) (*ProtocolError, bool) {
	var pe *ProtocolError
	if !errors.As(err, &pe) {
		return nil, false
	}
	const resourceNotFound, invalidParams = -32002, -32602
	switch pe.Code {
	case resourceNotFound:
		return pe, true
	case invalidParams:
		return pe, strings.Contains(strings.ToLower(pe.Message), "not found")
	}
	return nil, false
}

// ReadOption configures a resource read or a prompt get.
type ReadOption func(*readOptions)

type readOptions struct {
	timeout time.Duration
	tokens  TokenProvider
	maxSize int64
	server  string
	refresh bool
	gate    *Gate // for resource readers only (ReaderGate)
	// observer sees the read (observe.go).
	observer Observer
}

func newReadOptions(c Caller, opts []ReadOption) readOptions {
	o := readOptions{timeout: DefaultTimeout, maxSize: DefaultMaxReadSize}
	for _, opt := range opts {
		opt(&o)
	}
	if n, ok := c.(interface{ Name() string }); ok && o.server == "" {
		o.server = n.Name()
	}
	return o
}

// MaxReadSize sets the size limit of one read or prompt (default
// DefaultMaxReadSize, counted as described there; n <= 0: the default).
// The mcpgo session layer enforces it while reading over streamable HTTP
// and SSE (the connection stays); over stdio the connection's message cap
// (mcpgo.WithMaxMessageBytes, 8 MiB by default) bounds each line and ends
// the connection past it. The runtime checks the decoded contents again.
func MaxReadSize(n int64) ReadOption {
	return func(o *readOptions) {
		if n > 0 {
			o.maxSize = n
		}
	}
}

// ReadTimeout bounds the read (default DefaultTimeout; 0: only the
// context bounds it).
func ReadTimeout(d time.Duration) ReadOption {
	return func(o *readOptions) { o.timeout = max(d, 0) }
}

// ReadIdentity makes the read act for the principal p returns for the
// call's context, as WithIdentity does for tools: a read without a
// principal fails before anything is sent; the token goes to the server as
// an "Authorization: Bearer" header (HTTP transports; resources/read has no
// arguments to carry it), and is scrubbed from what comes back.
func ReadIdentity(p TokenProvider) ReadOption {
	return func(o *readOptions) { o.tokens = p }
}

// ReadServerName labels the server in provenance records and errors
// (default: the connection's Name method, when it has one).
func ReadServerName(name string) ReadOption {
	return func(o *readOptions) { o.server = name }
}

// Refresh lets ReadLink replay, once, the idempotent tool call that
// produced an expired resource link. Without it an expired link fails.
func Refresh() ReadOption {
	return func(o *readOptions) { o.refresh = true }
}

// WithToolOptions applies tool options that also make sense for reads
// (WithTimeout, WithIdentity, WithServerName, WithGate, WithObserver), so
// one set of options can serve a program's tools and reads. WithGate holds
// only the reads a model asks for through a resource reader (ReaderGate).
func WithToolOptions(opts ...Option) ReadOption {
	return func(o *readOptions) {
		t := toolOptions{timeout: o.timeout, tokens: o.tokens, server: o.server, gate: o.gate, observer: o.observer}
		for _, opt := range opts {
			opt(&t)
		}
		o.timeout, o.tokens, o.server, o.gate, o.observer = t.timeout, t.tokens, t.server, t.gate, t.observer
	}
}

type readLimitKey struct{}

// ReadLimit returns the size limit of the read or prompt ctx belongs to.
// Connections implementing ResourceReader or PromptGetter call it and
// refuse a larger response (with a *ResourceTooLargeError) before decoding
// it.
func ReadLimit(ctx context.Context) (int64, bool) {
	n, ok := ctx.Value(readLimitKey{}).(int64)
	return n, ok && n > 0
}

// ReadResource reads the concrete resource d describes.
func ReadResource(ctx context.Context, c Caller, d *ResourceDescriptor, opts ...ReadOption) (*ResourceResult, error) {
	if d.URI == "" {
		return nil, fmt.Errorf("%s: a template is read with ReadTemplate", d.label())
	}
	return ReadURI(ctx, c, d.URI, opts...)
}

// ReadTemplate expands the template d describes with vars (RFC 6570,
// values percent-encoded as the operator requires) and reads the resource.
func ReadTemplate(ctx context.Context, c Caller, d *ResourceDescriptor, vars TemplateVars, opts ...ReadOption) (*ResourceResult, error) {
	if d.URITemplate == "" {
		return nil, fmt.Errorf("%s is not a template; read it with ReadResource", d.label())
	}
	uri, err := ExpandURITemplate(d.URITemplate, vars)
	if err != nil {
		return nil, err
	}
	return ReadURI(ctx, c, uri, opts...)
}

// ReaderGate is a resource reader's gate: it runs the reads a model asks
// for through the gate of the reader's options (WithToolOptions(WithGate))
// as calls of the tool d, with d's name, the server label (ReadServerName,
// WithServerName or the connection's Name) and the principal of
// ReadIdentity. A reader embeds it (mcpimpl.NewResourceReader does), and a
// Toolset then treats the reader as a tool with a gate: Toolset.Approval,
// Resume and MarkContinued, and so runtime/agent's pauses, work for it as
// for a tool.
type ReaderGate struct{ core toolCore }

// NewReaderGate returns the gate of a reader of descriptor d over c.
func NewReaderGate(d *Descriptor, c Caller, opts ...ReadOption) *ReaderGate {
	o := newReadOptions(c, opts)
	return &ReaderGate{core: toolCore{desc: d, tokens: o.tokens, server: o.server, gate: o.gate}}
}

func (g *ReaderGate) coreOf() *toolCore { return &g.core }

// GateRead runs read, the model's read with args, through the gate: held,
// an *ApprovalRequiredError; resumed (approval set), read once, then
// replayed.
func (g *ReaderGate) GateRead(ctx context.Context, args json.RawMessage, approval string, read func(context.Context, json.RawMessage) (*Result, *Provenance, error)) (*Result, *Provenance, error) {
	d := g.core.desc
	cl, err := g.core.newCall(ctx, args)
	if err == nil && approval != "" && g.core.gate == nil {
		err = fmt.Errorf("tool %q: resume approval %s: the reader has no gate (WithToolOptions(WithGate))", d.Name, approval)
	}
	if err != nil {
		return nil, nil, err
	}
	cl.approval = approval
	var gate interceptor
	if g.core.gate != nil {
		gate = g.core.gate.intercept
	}
	res, err := chain(func(ctx context.Context, cl *call) (res *Result, err error) {
		res, cl.prov, err = read(ctx, cl.args)
		return res, err
	}, gate)(ctx, cl)
	return res, cl.prov, err
}

// ReadURI reads any resource by URI through the guards: identity
// resolution and injection, the timeout, the size limit, and the taint
// record. A resource the server no longer has is a *ResourceExpiredError.
func ReadURI(ctx context.Context, c Caller, uri string, opts ...ReadOption) (*ResourceResult, error) {
	return newReadOptions(c, opts).read(ctx, c, uri)
}

func (o readOptions) read(ctx context.Context, c Caller, uri string) (*ResourceResult, error) {
	if o.observer != nil {
		return o.observedRead(ctx, c, uri)
	}
	what := fmt.Sprintf("resource %q", uri)
	r, ok := c.(ResourceReader)
	if !ok {
		return nil, fmt.Errorf("read %s: the connection (%T) cannot read resources: it does not implement mcpruntime.ResourceReader", what, c)
	}
	var res *ResourceResult
	err := o.guard(ctx, what, func(ctx context.Context) (err error) {
		res, err = r.ReadResource(ctx, uri)
		if err != nil {
			return err
		}
		if res == nil {
			return errors.New("the connection returned no result")
		}
		if n := res.Size(); n > o.maxSize {
			res = nil
			return &ResourceTooLargeError{What: what, Limit: o.maxSize, Size: n}
		}
		return nil
	}, func(tok Secret) { scrubContents(res, tok) })
	if err != nil {
		if pe, ok := notFound(err); ok {
			return nil, &ResourceExpiredError{URI: uri, Server: o.server, Err: pe}
		}
		var tl *ResourceTooLargeError
		if errors.As(err, &tl) && err == error(tl) {
			return nil, tl // it names the resource already
		}
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	res.URI = uri
	res.Provenance = o.record(ctx, Provenance{Resource: uri}, resourceDigest(res))
	return res, nil
}

// guard runs do with the read's guards: principal resolution before
// anything is sent, the bearer token in the context, the timeout and the
// size limit; scrub removes the token from what came back.
func (o readOptions) guard(ctx context.Context, what string, do func(context.Context) error, scrub func(Secret)) error {
	var tok Secret
	var b *bearer
	if o.tokens != nil {
		p, err := o.tokens(ctx)
		switch {
		case err != nil:
			return fmt.Errorf("%s: identity: %w", what, err)
		case p.Token == "":
			return fmt.Errorf("%s: identity: %w: principal %q has an empty token", what, ErrNoPrincipal, p.ID)
		}
		tok = p.Token
		ctx, b = withBearer(ctx, tok)
	}
	ctx = context.WithValue(ctx, readLimitKey{}, o.maxSize)
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	err := do(ctx)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w (after %s)", context.DeadlineExceeded, o.timeout)
	}
	if tok != "" {
		if err == nil {
			scrub(tok)
			noteUnsent(b, o.server, "resources and prompts")
		}
		err = redactError(err, tok)
	}
	return err
}

// record fills in and records a provenance entry for external content.
func (o readOptions) record(ctx context.Context, p Provenance, digest string) Provenance {
	p.Server, p.Time, p.Digest, p.External = o.server, time.Now().UTC(), digest, true
	if r := RunFrom(ctx); r != nil {
		r.Record(p)
	}
	reportTaint(ctx, p)
	return p
}

func resourceDigest(r *ResourceResult) string {
	b, _ := json.Marshal(struct {
		Contents []ResourceContents `json:"contents"`
		Meta     json.RawMessage    `json:"_meta,omitempty"`
	}{r.Contents, r.Meta}) // every part is JSON already
	return digestOf(b)
}

func scrubContents(r *ResourceResult, tok Secret) {
	if r == nil {
		return
	}
	j := tok.jsonScrubber()
	r.Meta = j.Scrub(r.Meta)
	for i := range r.Contents {
		tok.scrubContents(&r.Contents[i], j)
	}
}
