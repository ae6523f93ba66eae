package mcpruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
func (s Secret) appendJSONEscaped() []byte    { b, _ := json.Marshal(string(s)); return b[1 : len(b)-1] }
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

// BearerToken returns the token a call's identity guard chose to send as
// an "Authorization: Bearer" header. Connections whose transport has headers
// (streamable HTTP, SSE) call it from their per-request header hook; the
// mcpgo adapter does. It is unset for tools that take the token as an
// argument and for tools without an identity.
func BearerToken(ctx context.Context) (Secret, bool) {
	t, ok := ctx.Value(bearerKey{}).(Secret)
	return t, ok && t != ""
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
// whatever the arguments held, or as a bearer header through the context.
// On the way back it scrubs the token from the result and the error, since
// servers echo arguments in messages.
func identity(argument string) interceptor {
	return func(next handler) handler {
		return func(ctx context.Context, c *call) (*Result, error) {
			if c.token == "" {
				return next(ctx, c)
			}
			if argument != "" {
				args, err := setArgument(c.args, argument, string(c.token))
				if err != nil {
					return nil, fmt.Errorf("tool %q: inject identity argument %q: %w", c.desc.Name, argument, err)
				}
				c.args = args
			} else {
				ctx = context.WithValue(ctx, bearerKey{}, c.token)
			}
			res, err := next(ctx, c)
			if res != nil {
				scrubResult(res, c.token)
			}
			return res, redactError(err, c.token)
		}
	}
}

// setArgument sets member name of the JSON object args to the JSON string
// value, replacing any value already there.
func setArgument(args json.RawMessage, name, value string) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if b := bytes.TrimSpace(args); len(b) > 0 && !bytes.Equal(b, []byte("null")) {
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, errors.New("the arguments are not a JSON object")
		}
	}
	v, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	m[name] = v
	return json.Marshal(m) // sorted keys: deterministic bytes
}

// removeArgument drops member name from a model's arguments: the model is
// not shown the identity argument, and whatever it sent there is ignored.
// Arguments that are not a JSON object are returned unchanged for the
// decoder to report.
func removeArgument(args json.RawMessage, name string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || m == nil {
		return args
	}
	if _, ok := m[name]; !ok {
		return args
	}
	delete(m, name)
	b, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return b
}

// scrubResult replaces the token wherever the server echoed it.
func scrubResult(r *Result, tok Secret) {
	esc := tok.appendJSONEscaped()
	rawScrub := func(b json.RawMessage) json.RawMessage {
		if len(b) == 0 || !bytes.Contains(b, esc) {
			return b
		}
		return bytes.ReplaceAll(b, esc, []byte(redacted))
	}
	str := func(s string) string {
		if !tok.containedIn(s) {
			return s
		}
		return strings.ReplaceAll(s, string(tok), redacted)
	}
	r.StructuredContent = rawScrub(r.StructuredContent)
	r.Meta = rawScrub(r.Meta)
	for i := range r.Content {
		c := &r.Content[i]
		c.Text, c.Title, c.Description, c.URI, c.Name = str(c.Text), str(c.Title), str(c.Description), str(c.URI), str(c.Name)
		c.Annotations, c.Meta, c.Raw = rawScrub(c.Annotations), rawScrub(c.Meta), rawScrub(c.Raw)
		if c.Resource != nil {
			rc := *c.Resource
			rc.Text, rc.URI = str(rc.Text), str(rc.URI)
			rc.Meta, rc.Raw = rawScrub(rc.Meta), rawScrub(rc.Raw)
			c.Resource = &rc
		}
	}
}

// redactError returns err with the token removed from its text and from
// the text of everything it wraps. Errors in the chain whose text holds the
// token are hidden behind a redacting wrapper, so errors.As cannot reach
// them and print the token; errors.Is still matches sentinels such as
// context.DeadlineExceeded, whose text is fixed. A *ProtocolError is copied
// with its message and data scrubbed, since the model is shown its message.
func redactError(err error, tok Secret) error {
	if err == nil || tok == "" || !tok.containedIn(err.Error()) && !protocolLeaks(err, tok) {
		return err
	}
	var pe *ProtocolError
	if errors.As(err, &pe) && err == error(pe) {
		c := *pe
		c.Message = strings.ReplaceAll(c.Message, string(tok), redacted)
		c.Data = bytes.ReplaceAll(c.Data, tok.appendJSONEscaped(), []byte(redacted))
		return &c
	}
	return &redactedError{err: err, tok: tok}
}

func protocolLeaks(err error, tok Secret) bool {
	var pe *ProtocolError
	return errors.As(err, &pe) && bytes.Contains(pe.Data, tok.appendJSONEscaped())
}

type redactedError struct {
	err error
	tok Secret
}

func (e *redactedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), string(e.tok), redacted)
}

func (e *redactedError) Unwrap() []error {
	switch u := e.err.(type) {
	case interface{ Unwrap() []error }:
		var out []error
		for _, w := range u.Unwrap() {
			out = append(out, redactError(w, e.tok))
		}
		return out
	case interface{ Unwrap() error }:
		if w := u.Unwrap(); w != nil {
			return []error{redactError(w, e.tok)}
		}
	}
	return nil
}
