package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpgen/mcpgen/config"
	"github.com/mcpgen/mcpgen/manifest"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
	"github.com/mcpgen/mcpgen/runtime/mcpgo/oauth"
	"github.com/mcpgen/mcpgen/snapshot"
)

func init() {
	register(&command{
		name:    "auth",
		summary: "sign in to OAuth-protected servers: login, logout, status",
		usage:   "mcpgen auth (login | logout | status) [--config FILE] [SERVER...]",
		flags:   authFlags,
	})
}

type authOpts struct {
	config  string
	timeout time.Duration
}

func authFlags(fs *pflag.FlagSet) func(context.Context, *env) error {
	o := &authOpts{}
	fs.StringVar(&o.config, "config", config.DefaultFile, "config file")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "login: how long to wait for the browser's redirect")
	return func(ctx context.Context, e *env) error {
		if len(e.args) == 0 {
			return usagef("want login, logout or status")
		}
		verb, ids := e.args[0], e.args[1:]
		if o.timeout <= 0 {
			return usagef("--timeout must be positive")
		}
		cfg, err := config.Load(o.config)
		if err != nil {
			return err
		}
		servers, err := authServers(cfg, ids, o.config, verb == "status")
		if err != nil {
			return err
		}
		switch verb {
		case "login":
			if len(ids) != 1 {
				return usagef("login wants one SERVER")
			}
			ctx, cancel := context.WithTimeout(ctx, o.timeout)
			defer cancel()
			return o.login(ctx, e, servers[0])
		case "logout":
			if len(ids) == 0 {
				return usagef("logout wants SERVER...")
			}
			for _, s := range servers {
				c, _, err := oauthClient(s, nil)
				if err != nil {
					return err
				}
				if err := c.Logout(); err != nil {
					return fmt.Errorf("server %q: %w", s.ID, err)
				}
				fmt.Fprintf(e.stdout, "%s: signed out\n", s.ID)
			}
			return nil
		case "status":
			for _, s := range servers {
				c, _, err := oauthClient(s, nil)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s: %s\n", s.ID, describeEntry(c.Entry(), s.Auth))
			}
			return nil
		}
		return usagef("unknown auth command %q (login, logout or status)", verb)
	}
}

// authServers picks the servers named (every server with an auth block
// when none is named and all is set).
func authServers(cfg *config.Config, ids []string, file string, all bool) ([]*config.Server, error) {
	var out []*config.Server
	for _, id := range ids {
		i := slices.IndexFunc(cfg.Servers, func(s *config.Server) bool { return s.ID == id })
		if i < 0 {
			return nil, usagef("no server %q in %s", id, file)
		}
		if cfg.Servers[i].Auth == nil {
			return nil, fmt.Errorf("server %q has no auth block in %s (see docs/config.md)", id, file)
		}
		out = append(out, cfg.Servers[i])
	}
	if len(ids) == 0 && all {
		for _, s := range cfg.Servers {
			if s.Auth != nil {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

func (o *authOpts) login(ctx context.Context, e *env, s *config.Server) error {
	var agent oauth.UserAgent
	if s.Auth.Grant != config.GrantClientCredentials {
		lb, err := oauth.NewLoopback(s.Auth.RedirectPort, func(u string) error {
			_, err := fmt.Fprintf(e.stderr, "Open this URL in your browser to sign in to %s:\n\n  %s\n\nWaiting for the redirect to 127.0.0.1...\n", s.ID, u)
			return err
		})
		if err != nil {
			return err
		}
		defer lb.Close()
		agent = lb
	}
	c, secrets, err := oauthClient(s, agent)
	if err != nil {
		return err
	}
	if err := c.Login(ctx); err != nil {
		return redactedErr(newRedactor(secrets, c.Secrets), fmt.Errorf("server %q: %w", s.ID, err))
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", s.ID, describeEntry(c.Entry(), s.Auth))
	return nil
}

// describeEntry says what is cached, never the token itself.
func describeEntry(en *oauth.Entry, a *config.Auth) string {
	if en == nil || en.Token == nil {
		return "not signed in"
	}
	var b strings.Builder
	switch {
	case en.Token.Valid():
		b.WriteString("signed in")
		if !en.Token.Expiry.IsZero() {
			fmt.Fprintf(&b, " until %s", en.Token.Expiry.UTC().Format(time.RFC3339))
		}
	case en.Token.RefreshToken != "":
		b.WriteString("token expired; it is refreshed on next use")
	default:
		b.WriteString("token expired: run mcpgen auth login")
	}
	fmt.Fprintf(&b, " (authorization server %s, client %s", en.Issuer, en.ClientID)
	if len(en.Scopes) > 0 {
		fmt.Fprintf(&b, ", scopes %s", strings.Join(en.Scopes, " "))
	}
	if en.Token.RefreshToken != "" {
		b.WriteString(", refreshable")
	}
	b.WriteString(")")
	return b.String()
}

// oauthClient is the OAuth client of s, with tokens cached under the
// user's config directory. It returns the resolved secrets for redaction.
func oauthClient(s *config.Server, agent oauth.UserAgent) (*oauth.Client, []string, error) {
	src, err := s.Source(os.LookupEnv)
	if err != nil {
		return nil, nil, err
	}
	sec, err := s.ResolveAuth(os.LookupEnv)
	if err != nil {
		return nil, nil, err
	}
	dir, err := oauth.DefaultDir()
	if err != nil {
		return nil, nil, fmt.Errorf("token cache: %w", err)
	}
	a := s.Auth
	c, err := oauth.New(src.URL, oauth.Config{
		ClientID:          a.ClientID,
		ClientSecret:      mcpruntime.Secret(sec.ClientSecret),
		ClientMetadataURL: a.ClientMetadataURL,
		AuthMethod:        a.Method,
		PrivateKey:        mcpruntime.Secret(sec.PrivateKey),
		SigningAlg:        a.SigningAlg,
		ClientCredentials: a.Grant == config.GrantClientCredentials,
		Scopes:            a.Scopes,
		AllowedScopes:     a.AllowedScopes,
		AllowLoopbackHTTP: a.AllowLoopbackHTTP,
		Agent:             agent,
		Store:             oauth.FileStore{Dir: dir},
		LoginHint:         fmt.Sprintf("run `mcpgen auth login %s`", s.ID),
		// A command prints what the server sent at its end: every token
		// of the run must still be redacted then. A run is short, and the
		// client's token request budget bounds how many it holds.
		MaxHeldSecrets: -1,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("server %q: %w", s.ID, err)
	}
	var secrets []string
	for _, v := range []string{sec.ClientSecret, sec.PrivateKey} {
		if v != "" {
			secrets = append(secrets, v)
		}
	}
	return c, append(slices.Clone(src.Secrets), secrets...), nil
}

// serverSource is s.Source with the connection options its auth block
// asks for: snapshot, check, list and call connect through it. The auth
// block's secrets join the source's, and every token and secret the OAuth
// client holds at any time during the run (cached, refreshed after the
// server refused one, stepped up, registered) is a live secret of the
// source, so every output redacts them and no manifest holds one.
func serverSource(ctx context.Context, s *config.Server) (snapshot.Source, []mcpgo.Option, error) {
	src, err := s.Source(os.LookupEnv)
	if err != nil || s.Auth == nil {
		return src, nil, err
	}
	c, secrets, err := oauthClient(s, nil)
	if err != nil {
		return src, nil, err
	}
	// Renew an expired token now rather than on the first request. (No
	// token yet: the 401 says so.)
	_, _ = c.Token(ctx)
	src.Secrets, src.LiveSecrets = secrets, c.Secrets
	return src, []mcpgo.Option{c.Option()}, nil
}

// captureServer is snapshot.Capture with extra connection options.
func captureServer(ctx context.Context, src snapshot.Source, opts snapshot.Options, extra []mcpgo.Option) (*manifest.Manifest, error) {
	sess := snapshot.Open(src, opts, extra...)
	defer sess.Close()
	return sess.Capture(ctx)
}
