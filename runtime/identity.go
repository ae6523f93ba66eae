package mcpruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/mcpgen/mcpgen/runtime/internal/redact"
)

// Secret is a credential. It prints as [redacted] with the fmt verbs and
// encodes as "[redacted]" in JSON, so logging a Principal or an error that
// carries one does not leak it; string(s) is the only way to read it.
type Secret string

const redacted = "[redacted]"

func (Secret) String() string                 { return redacted }
func (Secret) GoString() string               { return redacted }
func (Secret) MarshalJSON() ([]byte, error)   { return []byte(`"` + redacted + `"`), nil }
func (Secret) MarshalText() ([]byte, error)   { return []byte(redacted), nil }
func (s Secret) Format(f fmt.State, _ rune)   { _, _ = f.Write([]byte(redacted)) }
func (s Secret) containedIn(text string) bool { return s != "" && strings.Contains(text, string(s)) }

// Principal is who a run acts for: an ID that may be shown and recorded
// (approvals carry it) and a Token that is sent to the server and nowhere
// else.
type Principal struct {
	ID    string
	Token Secret
}

// TokenProvider returns the principal of the run a call belongs to, read
// from the call's context. It is asked on every call, so one set of
// bindings serves many runs, each as its own principal.
type TokenProvider func(ctx context.Context) (Principal, error)

type principalKey struct{}

// WithPrincipal returns a context for a run acting as the principal id
// with the given token. ContextPrincipal reads it back.
func WithPrincipal(ctx context.Context, id string, token Secret) context.Context {
	return context.WithValue(ctx, principalKey{}, Principal{ID: id, Token: token})
}

// PrincipalFrom returns the principal WithPrincipal stored in ctx.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// ErrNoPrincipal: a tool configured with an identity was called without
// one. Nothing was sent.
var ErrNoPrincipal = errors.New("no principal for this call")

// ContextPrincipal is the TokenProvider that reads what WithPrincipal
// stored.
func ContextPrincipal(ctx context.Context) (Principal, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return Principal{}, fmt.Errorf("%w (give the run's context one with WithPrincipal)", ErrNoPrincipal)
	}
	return p, nil
}

type bearerKey struct{}

// bearer is the token a guard offers the transport as a header; sent
// records that a transport took it, so a connection without headers is
// noticed rather than silently calling without the identity.
type bearer struct {
	token Secret
	sent  atomic.Bool
	arg   bool // the token goes in an argument, not a header: CallToken only
}

func withBearer(ctx context.Context, tok Secret) (context.Context, *bearer) {
	b := &bearer{token: tok}
	return context.WithValue(ctx, bearerKey{}, b), b
}

// WithBearerToken returns ctx carrying tok for the session layer to send
// as an "Authorization: Bearer" header on requests made with it, for a
// request made as a principal outside a tool call (the connection
// manager's tool listing for a principal).
func WithBearerToken(ctx context.Context, tok Secret) context.Context {
	ctx, _ = withBearer(ctx, tok)
	return ctx
}

// BearerToken returns the token a call's identity guard chose to send as
// an "Authorization: Bearer" header. Connections whose transport has headers
// (streamable HTTP, SSE) call it from their per-request header hook; the
// mcpgo adapter does. It is unset for tools that take the token as an
// argument and for tools without an identity. A transport that calls it
// is taken to send the token.
func BearerToken(ctx context.Context) (Secret, bool) {
	b, ok := ctx.Value(bearerKey{}).(*bearer)
	if !ok || b.token == "" || b.arg {
		return "", false
	}
	b.sent.Store(true)
	return b.token, true
}

// CallToken returns the token a call's identity guard sends (header or argument), for a session
// layer to scrub from what the server sends outside the result; it does not count as sending it.
func CallToken(ctx context.Context) (tok Secret, ok bool) {
	if b, is := ctx.Value(bearerKey{}).(*bearer); is {
		tok = b.token
	}
	return tok, tok != ""
}

// unsentLogged holds the servers whose unsent identity was logged: once
// per server and process is enough to notice.
var unsentLogged sync.Map

// noteUnsent logs, once per server, that a call with an
// identity reached a server whose connection never took the bearer token:
// a connection without headers (stdio, in-process) and a tool without an
// identity argument. The call goes ahead without the token, by design: the
// principal still counts for the gate, approvals and the ledger, and many
// stdio tools take no identity. The log makes a missing identity.argument
// visible at debug level: at info it was the first line of every stdio
// program with an identity, where a missing token is the common, intended
// case (most stdio servers take none).
func noteUnsent(b *bearer, server, subject string) {
	if b == nil || b.sent.Load() {
		return
	}
	if _, done := unsentLogged.LoadOrStore(server, true); done {
		return
	}
	slog.Default().Debug("mcpruntime: the caller's identity was not sent: the connection has no headers (stdio, in-process) and the call takes no identity argument; nor will it be for the server's other such calls",
		"server", server, "call", subject, "hint", "if the server expects the caller's token, name its argument (identity.argument in mcpgen.yaml, or WithIdentityArgument)")
}

// resolvePrincipal asks the provider for the call's principal and checks
// it is usable before anything is sent.
func resolvePrincipal(ctx context.Context, p TokenProvider, tool string) (Principal, error) {
	pr, err := p(ctx)
	if err != nil {
		return Principal{}, fmt.Errorf("tool %q: identity: %w", tool, err)
	}
	if pr.Token == "" {
		return Principal{}, fmt.Errorf("tool %q: identity: %w: principal %q has an empty token", tool, ErrNoPrincipal, pr.ID)
	}
	if pr.ID == "" {
		return Principal{}, fmt.Errorf("tool %q: identity: %w: the principal has no ID (approvals and logs name it)", tool, ErrNoPrincipal)
	}
	return pr, nil
}

// identity injects the call's token: into the named argument, overriding
// whatever the arguments held and dropping every member a server's decoder
// could bind to it (see bindsTo), or as a bearer header through the
// context. declared are the input schema's other properties, which are
// kept. On the way back it scrubs the token from the result and the error,
// since servers echo arguments in messages.
func identity(argument string, declared map[string]bool) interceptor {
	return func(next handler) handler {
		return func(ctx context.Context, c *call) (*Result, error) {
			if c.token == "" {
				return next(ctx, c)
			}
			var b *bearer
			if argument != "" {
				args, err := setArgument(c.args, argument, string(c.token), declared)
				if err != nil {
					return nil, fmt.Errorf("tool %q: inject identity argument %q: %w (%w)", c.desc.Name, argument, err, ErrNotSent)
				}
				c.args = args
				ctx = context.WithValue(ctx, bearerKey{}, &bearer{token: c.token, arg: true})
			} else {
				ctx, b = withBearer(ctx, c.token)
			}
			res, err := next(ctx, c)
			if res != nil {
				noteUnsent(b, c.server, "tool "+c.desc.Name)
				scrubResult(res, c.token)
			}
			return res, redactError(err, c.token)
		}
	}
}

// setArgument sets member name of the JSON object args to the JSON string
// value, replacing any value already there and removing every other member
// that binds to name (declared members excepted).
func setArgument(args json.RawMessage, name, value string, declared map[string]bool) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if b := bytes.TrimSpace(args); len(b) > 0 && !bytes.Equal(b, []byte("null")) {
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, errors.New("the arguments are not a JSON object")
		}
	}
	for k := range m {
		if !declared[k] && bindsTo(k, name) {
			delete(m, k)
		}
	}
	v, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	m[name] = v
	return json.Marshal(m) // sorted keys, no duplicates: deterministic bytes
}

// removeArgument drops member name, and every member that binds to it
// (declared members excepted), from a model's arguments: the model is not
// shown the identity argument, and whatever it sent there is ignored.
// Arguments that are not a JSON object are returned unchanged for the
// decoder to report.
func removeArgument(args json.RawMessage, name string, declared map[string]bool) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || m == nil {
		return args
	}
	found := false
	for k := range m {
		if !declared[k] && bindsTo(k, name) {
			delete(m, k)
			found = true
		}
	}
	if !found {
		return args
	}
	b, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return b
}

// bindsTo reports whether a mainstream decoder could bind an object member
// named key to the field for the identity argument arg, so that a model
// sending key would set the token the server sees. Covered:
//   - exact match, and duplicates (the last member wins in most decoders);
//   - Go's encoding/json and mapstructure: case-insensitive with Unicode
//     simple folding (the Kelvin sign K matches k, the long s ſ matches s);
//   - .NET (PropertyNameCaseInsensitive) and Java (equalsIgnoreCase,
//     Jackson's ACCEPT_CASE_INSENSITIVE_PROPERTIES): per-character upper or
//     lower case mapping (the dotless ı matches i, the dotted İ matches i);
//   - Go's encoding/json/v2 with case-insensitive names, and decoders or
//     alias generators that accept snake_case, camelCase, PascalCase and
//     kebab-case spellings of one name: the above ignoring '_' and '-'.
//
// Not covered: Unicode normalization (NFKC: fullwidth letters, ligatures)
// and full case folding (ß for ss), which mainstream JSON decoders do not
// apply to member names.
func bindsTo(key, arg string) bool {
	if key == arg || foldEqual(key, arg) {
		return true
	}
	return foldEqual(separators.Replace(key), separators.Replace(arg))
}

var separators = strings.NewReplacer("_", "", "-", "")

// foldEqual compares rune by rune under every per-rune case mapping a
// decoder might use (see bindsTo).
func foldEqual(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		if !runeFold(ra[i], rb[i]) {
			return false
		}
	}
	return true
}

func runeFold(x, y rune) bool {
	if x == y || unicode.ToUpper(x) == unicode.ToUpper(y) || unicode.ToLower(x) == unicode.ToLower(y) {
		return true
	}
	for r := unicode.SimpleFold(x); r != x; r = unicode.SimpleFold(r) {
		if r == y {
			return true
		}
	}
	return false
}

// declaredProperties returns the names under the input schema's
// "properties": members the server declares are its own parameters, never
// aliases of the identity argument.
func declaredProperties(schema json.RawMessage, identityArg string) map[string]bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := map[string]bool{}
	for k := range s.Properties {
		if k != identityArg {
			out[k] = true
		}
	}
	return out
}

// scrubResult replaces the token wherever the server echoed it: every
// string field of every block (a mime type and base64 data included) and
// the raw JSON the blocks and the result keep.
func scrubResult(r *Result, tok Secret) {
	j := tok.jsonScrubber() // once: the token's JSON forms cost allocations
	raw := func(b json.RawMessage) json.RawMessage { return j.Scrub(b) }
	str := tok.scrub
	r.StructuredContent, r.Meta, r.Raw = raw(r.StructuredContent), raw(r.Meta), raw(r.Raw)
	for i := range r.Content {
		c := &r.Content[i]
		c.Type, c.Text, c.Data, c.MIMEType = str(c.Type), str(c.Text), str(c.Data), str(c.MIMEType)
		c.Title, c.Description, c.URI, c.Name = str(c.Title), str(c.Description), str(c.URI), str(c.Name)
		c.Annotations, c.Meta, c.Raw = raw(c.Annotations), raw(c.Meta), raw(c.Raw)
		if c.Resource != nil {
			rc := *c.Resource
			tok.scrubContents(&rc, j)
			c.Resource = &rc
		}
	}
}

func (s Secret) scrubContents(rc *ResourceContents, j redact.JSON) {
	rc.URI, rc.MIMEType, rc.Text, rc.Blob = s.scrub(rc.URI), s.scrub(rc.MIMEType), s.scrub(rc.Text), s.scrub(rc.Blob)
	rc.Meta, rc.Raw = j.Scrub(rc.Meta), j.Scrub(rc.Raw)
}

// scrub replaces the token in text.
func (s Secret) scrub(text string) string {
	if !s.containedIn(text) {
		return text
	}
	return strings.ReplaceAll(text, string(s), redacted)
}

// scrubJSON replaces the token in raw JSON, as encoding/json escapes it
// and, when it has nothing JSON must escape, as written (encoders other
// than Go's do not escape <, > and &).
func (s Secret) scrubJSON(b json.RawMessage) json.RawMessage { return s.jsonScrubber().Scrub(b) }

func (s Secret) jsonScrubber() redact.JSON { return redact.NewJSON(string(s), redacted) }

// redactError returns err with the token removed from its text and from
// everything it wraps. The returned value holds no token at all, in any
// field, so no fmt verb (%#v included) can print it: every error in the
// chain that shows the token (in its text or its Go syntax) is replaced by
// a copy holding only the scrubbed text and the scrubbed errors it wraps.
// errors.Is still matches sentinels such as context.DeadlineExceeded,
// which never hold the token, and errors.As still finds a
// *ProtocolError, copied with its message and data scrubbed since the
// model is shown its message.
func redactError(err error, tok Secret) error {
	if err == nil || tok == "" || !leaks(err, tok) {
		return err
	}
	if pe, ok := err.(*ProtocolError); ok {
		c := *pe
		c.Message = tok.scrub(c.Message)
		c.Data = tok.scrubJSON(c.Data)
		return &c
	}
	r := &redactedError{msg: tok.scrub(err.Error())}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, w := range u.Unwrap() {
			if w != nil {
				r.wrapped = append(r.wrapped, redactError(w, tok))
			}
		}
	case interface{ Unwrap() error }:
		if w := u.Unwrap(); w != nil {
			r.wrapped = []error{redactError(w, tok)}
		}
	}
	return r
}

// leaks reports whether err, or anything it wraps, shows the token.
func leaks(err error, tok Secret) bool {
	if err == nil {
		return false
	}
	if tok.containedIn(err.Error()) || tok.containedIn(fmt.Sprintf("%#v", err)) {
		return true
	}
	if pe, ok := err.(*ProtocolError); ok && !bytes.Equal(tok.scrubJSON(pe.Data), pe.Data) {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, w := range u.Unwrap() {
			if leaks(w, tok) {
				return true
			}
		}
	case interface{ Unwrap() error }:
		return leaks(u.Unwrap(), tok)
	}
	return false
}

// redactedError stands in for an error that showed the token: the scrubbed
// text and the scrubbed errors it wrapped, nothing else.
type redactedError struct {
	msg     string
	wrapped []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.wrapped }
