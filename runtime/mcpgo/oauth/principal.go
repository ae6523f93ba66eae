package oauth

import (
	"context"
	"errors"
	"fmt"
	"sync"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// Token returns a valid access token, refreshing it if it expired. With
// none cached it fails with ErrLoginRequired, or, for the client
// credentials grant, gets one. Either is a token request from the
// client's budget (MaxTokenRequests).
func (c *Client) Token(ctx context.Context) (mcpruntime.Secret, error) {
	tok, gen, err := c.current(ctx)
	if err != nil {
		return "", err
	}
	if tok != "" {
		return mcpruntime.Secret(tok), nil
	}
	if !c.cfg.ClientCredentials {
		return "", fmt.Errorf("oauth: %s: %w: %s", c.server.Host, ErrLoginRequired, c.cfg.LoginHint)
	}
	stepUps := 0
	if err := c.reauthorize(ctx, c.probe(ctx), gen, &stepUps); err != nil {
		return "", err
	}
	tok, _, err = c.current(ctx)
	return mcpruntime.Secret(tok), err
}

type userKey struct{}

// WithUser returns a context for a run acting for the user id.
func WithUser(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, userKey{}, id)
}

// UserFrom returns the user WithUser stored in ctx.
func UserFrom(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(userKey{}).(string)
	return id, ok && id != ""
}

// Principals backs per-run identity with each user's own OAuth token,
// for agents serving many users over one set of bindings: its Provider is
// the mcpruntime.TokenProvider given to mcpruntime.WithIdentity. Each
// user has a Client of their own (Config with Key set to the server URL
// and the user's ID), sharing the Store; sign a user in with
// Client(id).Login. The identity guard sends the token as the bearer
// header, which this package's RoundTripper leaves alone.
type Principals struct {
	Server string
	Config Config
	// User reads the run's user from a call's context (default UserFrom).
	User func(ctx context.Context) (string, bool)

	mu      sync.Mutex
	clients map[string]*Client
}

// Client returns user id's client, creating it on first use.
func (p *Principals) Client(id string) (*Client, error) {
	if id == "" {
		return nil, errors.New("oauth: empty user ID")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[id]; ok {
		return c, nil
	}
	if p.Config.Store == nil {
		p.Config.Store = NewMemoryStore() // shared by every user's client
	}
	cfg := p.Config
	cfg.Key = p.Server + "#user=" + id
	c, err := New(p.Server, cfg)
	if err != nil {
		return nil, err
	}
	if p.clients == nil {
		p.clients = map[string]*Client{}
	}
	p.clients[id] = c
	return c, nil
}

// Provider is the TokenProvider reading the run's user from the context
// and answering with that user's current token.
func (p *Principals) Provider() mcpruntime.TokenProvider {
	return func(ctx context.Context) (mcpruntime.Principal, error) {
		user := p.User
		if user == nil {
			user = UserFrom
		}
		id, ok := user(ctx)
		if !ok {
			return mcpruntime.Principal{}, fmt.Errorf("%w (give the run's context one with oauth.WithUser)", mcpruntime.ErrNoPrincipal)
		}
		c, err := p.Client(id)
		if err != nil {
			return mcpruntime.Principal{}, err
		}
		tok, err := c.Token(ctx)
		if err != nil {
			return mcpruntime.Principal{}, fmt.Errorf("user %q: %w", id, err)
		}
		return mcpruntime.Principal{ID: id, Token: tok}, nil
	}
}
