package manager

import (
	mcpruntime "github.com/mcpgen/mcpgen/runtime"

	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults a Registry fills into a ServerConfig that leaves them zero.
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultToolTimeout    = mcpruntime.DefaultTimeout
	DefaultMaxRetries     = 2
)

// NoTimeout, as a ServerConfig's ConnectTimeout or ToolTimeout, disables
// that timeout (a zero value means "the default").
const NoTimeout time.Duration = -1

// NoRetries, as a ServerConfig's MaxRetries, disables retries.
const NoRetries = -1

// TransportKind says how to reach a server.
type TransportKind string

const (
	TransportStdio TransportKind = "stdio" // a subprocess speaking MCP on stdin/stdout
	TransportHTTP  TransportKind = "http"  // streamable HTTP
	TransportSSE   TransportKind = "sse"   // legacy HTTP+SSE
)

// Transport is how to reach a server. Env, Headers and the URL may hold
// secrets: they never appear in errors or in the String form.
type Transport struct {
	Kind TransportKind `json:"kind"`
	// Command is a bare program name from the stdio allowlist, looked up in
	// the PATH; Args are passed as they are.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env adds variables to the inherited environment (stdio).
	Env map[string]string `json:"env,omitempty"`
	// URL is the endpoint (http, sse).
	URL string `json:"url,omitempty"`
	// Headers are sent with every request (http, sse).
	Headers map[string]string `json:"headers,omitempty"`
}

// String describes the transport without secrets: the command for stdio,
// the host for HTTP.
func (t Transport) String() string {
	switch t.Kind {
	case TransportStdio:
		return "stdio " + t.Command
	case TransportHTTP, TransportSSE:
		if u, err := url.Parse(t.URL); err == nil && u.Host != "" {
			return string(t.Kind) + " " + u.Host
		}
		return string(t.Kind)
	}
	return fmt.Sprintf("transport %q", string(t.Kind))
}

// GoString keeps %#v from printing secrets.
func (t Transport) GoString() string { return "Transport(" + t.String() + ")" }

// ServerConfig is one entry of the server registry: everything needed to
// reach a server and the limits its calls run under. Generated code names
// servers by ID only; the registry is the trusted place for transports and
// secrets.
type ServerConfig struct {
	ID          string    `json:"id"`
	Name        string    `json:"name,omitempty"`
	Description string    `json:"description,omitempty"`
	Transport   Transport `json:"transport"`
	// AllowedAgents lists the agent ids that may resolve tools from the
	// server; empty allows every agent.
	AllowedAgents []string `json:"allowedAgents,omitempty"`
	// ConnectTimeout bounds each connection attempt, handshake included
	// (0: DefaultConnectTimeout; NoTimeout: none).
	ConnectTimeout time.Duration `json:"connectTimeout,omitempty"`
	// ToolTimeout bounds each tool call, retries included (0:
	// DefaultToolTimeout; NoTimeout: only the caller's context).
	ToolTimeout time.Duration `json:"toolTimeout,omitempty"`
	// MaxConcurrentCalls caps the calls in flight to the server; further
	// calls wait (0: no cap).
	MaxConcurrentCalls int `json:"maxConcurrentCalls,omitempty"`
	// MaxRetries caps the retries of a connection attempt and of a call
	// that is safe to repeat (0: DefaultMaxRetries; NoRetries: none).
	MaxRetries int `json:"maxRetries,omitempty"`
}

// String names the server and its transport, without secrets.
func (c ServerConfig) String() string { return fmt.Sprintf("server %q (%s)", c.ID, c.Transport) }

// GoString keeps %#v from printing secrets.
func (c ServerConfig) GoString() string { return "ServerConfig(" + c.String() + ")" }

// AllowsAgent reports whether agent may resolve tools from the server.
func (c ServerConfig) AllowsAgent(agent string) bool {
	return len(c.AllowedAgents) == 0 || slices.Contains(c.AllowedAgents, agent)
}

// EffectiveToolTimeout is the per-call timeout to apply; 0 means none.
func (c ServerConfig) EffectiveToolTimeout() time.Duration {
	return effective(c.ToolTimeout, DefaultToolTimeout)
}

// EffectiveConnectTimeout is the connect timeout to apply; 0 means none.
func (c ServerConfig) EffectiveConnectTimeout() time.Duration {
	return effective(c.ConnectTimeout, DefaultConnectTimeout)
}

// EffectiveMaxRetries is the number of retries to allow.
func (c ServerConfig) EffectiveMaxRetries() int {
	switch {
	case c.MaxRetries == 0:
		return DefaultMaxRetries
	case c.MaxRetries < 0:
		return 0
	}
	return c.MaxRetries
}

func effective(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

func (c ServerConfig) clone() ServerConfig {
	c.Transport.Args = slices.Clone(c.Transport.Args)
	c.Transport.Env = maps.Clone(c.Transport.Env)
	c.Transport.Headers = maps.Clone(c.Transport.Headers)
	c.AllowedAgents = slices.Clone(c.AllowedAgents)
	return c
}

// ErrServerNotFound is returned for a server id nobody registered.
var ErrServerNotFound = errors.New("server not registered")

// ServerStore persists registry entries. It does no validation: the
// Registry validates every entry it saves and every entry it loads, so a
// store that was written around it cannot slip an unsafe entry through.
// Implementations must be safe for concurrent use; Get and Delete return
// an error matching ErrServerNotFound for an unknown id. List may return
// the entries it could read together with an error naming those it could
// not; the Registry lists the former and reports the latter.
type ServerStore interface {
	Put(ctx context.Context, cfg ServerConfig) error
	Get(ctx context.Context, id string) (ServerConfig, error)
	List(ctx context.Context) ([]ServerConfig, error)
	Delete(ctx context.Context, id string) error
}

// MemoryServerStore is a ServerStore in memory.
type MemoryServerStore struct {
	mu sync.Mutex
	m  map[string]ServerConfig
}

// NewMemoryServerStore returns an empty store.
func NewMemoryServerStore() *MemoryServerStore {
	return &MemoryServerStore{m: map[string]ServerConfig{}}
}

// Put implements ServerStore.
func (s *MemoryServerStore) Put(_ context.Context, cfg ServerConfig) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[cfg.ID] = cfg.clone()
	return nil
}

// Get implements ServerStore.
func (s *MemoryServerStore) Get(_ context.Context, id string) (ServerConfig, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.m[id]
	if !ok {
		return ServerConfig{}, serverNotFound(id)
	}
	return c.clone(), nil
}

// List implements ServerStore; entries come sorted by id.
func (s *MemoryServerStore) List(context.Context) ([]ServerConfig, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ServerConfig, 0, len(s.m))
	for _, id := range slices.Sorted(maps.Keys(s.m)) {
		out = append(out, s.m[id].clone())
	}
	return out, nil
}

// Delete implements ServerStore.
func (s *MemoryServerStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[id]; !ok {
		return serverNotFound(id)
	}
	delete(s.m, id)
	return nil
}

func serverNotFound(id string) error { return fmt.Errorf("server %q: %w", id, ErrServerNotFound) }

// Registry is the validated server registry: every entry is checked
// against the Policy when saved and again when loaded, and defaults are
// filled in.
type Registry struct {
	store  ServerStore
	policy Policy
}

// NewRegistry returns a registry over store enforcing p (see
// PolicyFromEnv).
func NewRegistry(store ServerStore, p Policy) *Registry {
	return &Registry{store: store, policy: p}
}

// Policy returns the policy the registry enforces.
func (r *Registry) Policy() Policy { return r.policy }

// Save validates cfg, fills in defaults and stores it, replacing an entry
// with the same id. It returns the entry as stored. An invalid entry is a
// *ConfigError and nothing is stored.
func (r *Registry) Save(ctx context.Context, cfg ServerConfig) (ServerConfig, error) {
	n, err := r.policy.Validate(ctx, cfg)
	if err != nil {
		return ServerConfig{}, err
	}
	if err := r.store.Put(ctx, n); err != nil {
		return ServerConfig{}, fmt.Errorf("save server %q: %w", n.ID, err)
	}
	return n.clone(), nil
}

// Load returns the entry for id, validated again: an entry that no longer
// passes (a store edited behind the registry's back, or a stricter policy)
// is a *ConfigError.
func (r *Registry) Load(ctx context.Context, id string) (ServerConfig, error) {
	cfg, err := r.store.Get(ctx, id)
	if err != nil {
		if errors.Is(err, ErrServerNotFound) {
			return ServerConfig{}, err
		}
		return ServerConfig{}, fmt.Errorf("load server %q: %w", id, err)
	}
	if cfg.ID != id {
		return ServerConfig{}, &ConfigError{Server: id, Problems: []string{fmt.Sprintf("the store returned the entry of %q", cfg.ID)}}
	}
	return r.policy.Validate(ctx, cfg)
}

// List returns the valid entries sorted by id. Entries that fail
// validation, and those the store could not read, are left out and
// reported together in the error, so one bad entry does not hide the
// others.
func (r *Registry) List(ctx context.Context) ([]ServerConfig, error) {
	all, err := r.store.List(ctx)
	if err != nil && len(all) == 0 {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	var out []ServerConfig
	var errs []error
	if err != nil {
		errs = append(errs, fmt.Errorf("list servers: %w", err))
	}
	for _, c := range all {
		n, err := r.policy.Validate(ctx, c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b ServerConfig) int { return strings.Compare(a.ID, b.ID) })
	return out, errors.Join(errs...)
}

// Delete removes the entry for id.
func (r *Registry) Delete(ctx context.Context, id string) error {
	if err := r.store.Delete(ctx, id); err != nil {
		if errors.Is(err, ErrServerNotFound) {
			return err
		}
		return fmt.Errorf("delete server %q: %w", id, err)
	}
	return nil
}

// ConfigError lists what is wrong with a registry entry. It never quotes
// environment values, header values or URLs, which may hold secrets.
type ConfigError struct {
	Server   string
	Problems []string
}

func (e *ConfigError) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("server %q: %s", e.Server, e.Problems[0])
	}
	return fmt.Sprintf("server %q: %d problems:\n  %s", e.Server, len(e.Problems), strings.Join(e.Problems, "\n  "))
}
