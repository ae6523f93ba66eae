package manager

import (
	mcpruntime "github.com/mcpgen/mcpgen/runtime"

	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultToolCacheTTL is how long a server's tool list is trusted before
// it is listed again (list_changed notifications invalidate it sooner).
const DefaultToolCacheTTL = 5 * time.Minute

// ToolInfo is a tool as a live server lists it, schemas as the raw JSON
// the server sent.
type ToolInfo struct {
	Name, Title, Description  string
	Annotations               mcpruntime.Annotations // spec defaults applied
	InputSchema, OutputSchema json.RawMessage
	// TaskSupport is the tool's execution.taskSupport.
	TaskSupport mcpruntime.TaskSupport
}

// SchemaHash is the hash of the tool's schemas (see SchemaHash).
func (t ToolInfo) SchemaHash() string { return SchemaHash(t.InputSchema, t.OutputSchema) }

// Descriptor describes the live tool.
func (t ToolInfo) Descriptor() *mcpruntime.Descriptor {
	return &mcpruntime.Descriptor{Name: t.Name, Title: t.Title, Description: t.Description, Annotations: t.Annotations,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, SchemaHash: t.SchemaHash(), TaskSupport: t.TaskSupport}
}

// ListHints are the caching hints a server sends with a list result on
// 2026-07-28 (ttlMs and cacheScope): when Hinted, the list is fresh for
// TTL (0: stale at once), and Private keeps it to the authorization
// context that fetched it (a missing cacheScope counts as private).
type ListHints struct {
	Hinted  bool
	TTL     time.Duration
	Private bool
}

// HintedLister is a Session that reports its tool list's caching hints;
// the mcpgo connector's sessions are. Without it, or without hints, a list
// is kept for WithToolCacheTTL and shared by every caller.
type HintedLister interface {
	ListToolsHinted(ctx context.Context) ([]ToolInfo, ListHints, error)
}

// SchemaHash identifies a tool's input and output schemas: "sha256:" and
// the hex SHA-256 of {"inputSchema":…,"outputSchema":…} in canonical JSON
// (members sorted, no insignificant space, numbers as written; a missing or
// null output schema is left out). Two encodings of one schema have one
// hash. Generated Descriptors carry it; the Manager compares it with the
// live server's. Invalid JSON hashes as its bytes, so it still differs.
func SchemaHash(input, output json.RawMessage) string {
	// The same bytes as the generator's gen.SchemaHash: the canonical JSON
	// of an object holding the schemas that are present (a test in gen
	// checks they agree).
	var b strings.Builder
	b.WriteString("{")
	if i := canonicalJSON(input); string(i) != "null" {
		b.WriteString(`"inputSchema":`)
		b.Write(i)
	}
	if o := canonicalJSON(output); string(o) != "null" {
		if b.Len() > 1 {
			b.WriteString(",")
		}
		b.WriteString(`"outputSchema":`)
		b.Write(o)
	}
	b.WriteString("}")
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func canonicalJSON(raw json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if len(bytes.TrimSpace(raw)) == 0 {
			return []byte("null")
		}
		return raw
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // maps encode with sorted keys
		return raw
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

// Session is a live connection to one server, opened by a Connector.
type Session interface {
	mcpruntime.Caller
	// ListTools lists every tool the server offers (all pages).
	ListTools(ctx context.Context) ([]ToolInfo, error)
	// Done is closed once the session cannot carry calls any more (the
	// server process exited, the connection was lost); the Manager opens a
	// new session before the next call.
	Done() <-chan struct{}
	Close() error
}

// SessionEvents are the callbacks a Connector wires to the session.
type SessionEvents struct {
	// ToolsChanged is called when the server announces that its tool list
	// changed (notifications/tools/list_changed).
	ToolsChanged func()
}

// Connector opens sessions to registered servers; the mcpgo adapter
// implements it. ctx bounds the attempt (connect and handshake) only, not
// the session's life. cfg has passed the Registry's validation.
type Connector interface {
	Connect(ctx context.Context, cfg ServerConfig, ev SessionEvents) (Session, error)
}

// ErrNotSent marks a call error where the request provably never reached
// the server (the connection could not be made, the process was already
// gone): retrying it cannot run the tool twice. It is the runtime's
// mcpruntime.ErrNotSent, so gates record such calls as never sent.
var ErrNotSent = mcpruntime.ErrNotSent

// PermanentError marks a connection failure retrying cannot fix (an address
// the SSRF guard refuses, a program that does not exist).
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// ConnectError is mcpruntime.ConnectError, the one type every session
// layer reports a failed connection with; the manager adds its attempts.
type ConnectError = mcpruntime.ConnectError

// ErrAgentNotAllowed matches every *AccessError.
var ErrAgentNotAllowed = errors.New("agent not allowed")

// AccessError: the server's allowedAgents does not list the agent.
type AccessError struct{ Agent, Server string }

func (e *AccessError) Error() string {
	return fmt.Sprintf("agent %q may not use server %q (it is not in the server's allowedAgents)", e.Agent, e.Server)
}

// Is makes errors.Is(err, ErrAgentNotAllowed) true.
func (e *AccessError) Is(target error) bool { return target == ErrAgentNotAllowed }

// DriftPolicy decides what happens when a live tool's schemas no longer
// match the hash compiled into the bindings.
type DriftPolicy int

const (
	// DriftWarn reports the drift (once per tool and live hash) to the
	// drift handler and makes the call.
	DriftWarn DriftPolicy = iota
	// DriftFail refuses the call with a *DriftError.
	DriftFail
)

// ErrDrift matches every *DriftError.
var ErrDrift = errors.New("tool schema drift")

// DriftError reports a live tool whose schemas differ from the ones the
// bindings were generated from.
type DriftError struct {
	Server, Tool string
	Want, Got    string // schema hashes: the bindings', the live server's
}

func (e *DriftError) Error() string {
	return fmt.Sprintf("tool %q on server %q changed since the bindings were generated (schema hash %s, live %s); regenerate the bindings (mcpgen check shows the change)",
		e.Tool, e.Server, e.Want, e.Got)
}

// Is makes errors.Is(err, ErrDrift) true.
func (e *DriftError) Is(target error) bool { return target == ErrDrift }

// ErrManagerClosed is returned after CloseAll.
var ErrManagerClosed = errors.New("manager closed")

// ManagerOption configures a Manager.
type ManagerOption func(*Manager)

// WithToolCacheTTL sets how long tool lists are cached (default
// DefaultToolCacheTTL); 0 disables the cache, so every check lists again.
// A server's own ttlMs shortens it for its lists (see ListHints).
func WithToolCacheTTL(d time.Duration) ManagerOption {
	return func(m *Manager) { m.ttl = max(d, 0) }
}

// WithDriftPolicy sets the drift policy (default DriftWarn).
func WithDriftPolicy(p DriftPolicy) ManagerOption { return func(m *Manager) { m.drift = p } }

// WithDriftHandler receives drift under DriftWarn (default: a warning on
// slog's default logger).
func WithDriftHandler(f func(*DriftError)) ManagerOption { return func(m *Manager) { m.onDrift = f } }

// WithBreaker configures the per-tool circuit breakers.
func WithBreaker(c BreakerConfig) ManagerOption { return func(m *Manager) { m.breaker = c } }

// WithBackoff sets the first retry delay and the cap of the exponential
// backoff (defaults 200 ms and 5 s). Each delay is jittered to between half
// and all of its nominal value.
func WithBackoff(base, maxDelay time.Duration) ManagerOption {
	return func(m *Manager) { m.backoffBase, m.backoffMax = max(base, 0), max(maxDelay, 0) }
}

// WithClock sets the clock used by the breakers and the tool cache.
func WithClock(now func() time.Time) ManagerOption { return func(m *Manager) { m.now = now } }

// WithSleep replaces the wait between retries (it must return ctx.Err()
// when ctx ends first); with WithJitter it makes retries deterministic in
// tests.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) ManagerOption {
	return func(m *Manager) { m.sleep = sleep }
}

// WithJitter sets the random source of the backoff jitter: values in [0, 1).
func WithJitter(r func() float64) ManagerOption { return func(m *Manager) { m.rand = r } }

// Manager turns server ids into live, guarded connections and agents' tool
// sources into toolsets. It keeps one session per server, shared by all
// concurrent callers, and applies the registry entry's limits to every
// call: timeout, concurrency cap, retries where safe, and a circuit breaker
// per tool. It is safe for concurrent use.
type Manager struct {
	reg         *Registry
	conn        Connector
	ttl         time.Duration
	drift       DriftPolicy
	onDrift     func(*DriftError)
	breaker     BreakerConfig
	backoffBase time.Duration
	backoffMax  time.Duration
	now         func() time.Time
	sleep       func(context.Context, time.Duration) error
	rand        func() float64
	observer    mcpruntime.Observer

	life   context.Context // ends at CloseAll; bounds connection attempts
	cancel context.CancelFunc

	mu      sync.Mutex
	servers map[string]*server
	goTools map[string]*breaker
	closed  bool
}

// NewManager returns a manager resolving server ids through reg and
// connecting with c. It connects to nothing until asked.
func NewManager(reg *Registry, c Connector, opts ...ManagerOption) *Manager {
	m := &Manager{
		reg: reg, conn: c, ttl: DefaultToolCacheTTL,
		backoffBase: 200 * time.Millisecond, backoffMax: 5 * time.Second,
		now: time.Now, sleep: sleepCtx, rand: rand.Float64,
		servers: map[string]*server{}, goTools: map[string]*breaker{},
	}
	m.onDrift = func(e *DriftError) {
		slog.Warn("mcpgen: tool schema drift", "server", e.Server, "tool", e.Tool, "want", e.Want, "live", e.Got)
	}
	for _, o := range opts {
		o(m)
	}
	m.life, m.cancel = context.WithCancel(context.Background())
	return m
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backoff returns the wait before retry number n (0-based).
func (m *Manager) backoff(n int) time.Duration {
	d := m.backoffBase
	for i := 0; i < n && d < m.backoffMax; i++ {
		d *= 2
	}
	d = min(d, m.backoffMax)
	return d/2 + time.Duration(m.rand()*float64(d/2))
}

func (m *Manager) server(id string) (*server, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrManagerClosed
	}
	s, ok := m.servers[id]
	if !ok {
		s = &server{m: m, id: id, breakers: map[string]*breaker{}, warned: map[string]string{}}
		m.servers[id] = s
	}
	return s, nil
}

// Reconnect closes the server's session, forgets its tool list and
// connects again, reading the registry entry anew.
func (m *Manager) Reconnect(ctx context.Context, id string) error {
	s, err := m.server(id)
	if err != nil {
		return err
	}
	s.reset()
	_, err = s.session(ctx)
	return err
}

// CloseAll closes every session and ends the manager: later calls fail with
// ErrManagerClosed.
func (m *Manager) CloseAll() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	servers := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		servers = append(servers, s)
	}
	m.mu.Unlock()
	m.cancel()
	var errs []error
	for _, s := range servers {
		if err := s.reset(); err != nil {
			errs = append(errs, fmt.Errorf("close server %q: %w", s.id, err))
		}
	}
	return errors.Join(errs...)
}

// CircuitState returns the state of a tool's circuit breaker (Go tools are
// under server "").
func (m *Manager) CircuitState(serverID, tool string) BreakerState {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b *breaker
	if serverID == "" {
		b = m.goTools[tool]
	} else if s := m.servers[serverID]; s != nil {
		s.mu.Lock()
		b = s.breakers[tool]
		s.mu.Unlock()
	}
	if b == nil {
		return BreakerClosed
	}
	return b.State()
}

// Tools lists the server's tools (from the cache while it is fresh),
// connecting if needed. The agent must be allowed to use the server. With
// a principal in ctx (mcpruntime.WithPrincipal) the list is fetched as
// that principal, and one the server marks private is kept for it alone
// (see ListHints).
func (m *Manager) Tools(ctx context.Context, agent, serverID string) ([]ToolInfo, error) {
	if _, err := m.access(ctx, agent, serverID); err != nil {
		return nil, err
	}
	s, err := m.server(serverID)
	if err != nil {
		return nil, err
	}
	ts, err := s.tools(ctx)
	return slices.Clone(ts), err
}

func (m *Manager) access(ctx context.Context, agent, serverID string) (ServerConfig, error) {
	cfg, err := m.reg.Load(ctx, serverID)
	if err != nil {
		return ServerConfig{}, err
	}
	if !cfg.AllowsAgent(agent) {
		return ServerConfig{}, &AccessError{Agent: agent, Server: serverID}
	}
	return cfg, nil
}

// Caller returns a connection to the server for agent, for generated
// clients used outside a Toolset. Calls go through the manager's limits,
// retries and breakers, each bounded by the entry's toolTimeout (retries
// and waiting for a slot included; a *mcpruntime.TimeoutError when it
// passes); tools named in expect are checked for drift against the live
// server. Nothing connects until the first call.
func (m *Manager) Caller(ctx context.Context, agent, serverID string, expect ...*mcpruntime.Descriptor) (mcpruntime.Caller, error) {
	cfg, err := m.access(ctx, agent, serverID)
	if err != nil {
		return nil, err
	}
	s, err := m.server(serverID)
	if err != nil {
		return nil, err
	}
	c := &managedCaller{s: s, tools: map[string]*mcpruntime.Descriptor{}, timeout: cfg.EffectiveToolTimeout()}
	for _, d := range expect {
		if d != nil {
			c.tools[d.Name] = d
		}
	}
	return c, nil
}

// server is the manager's state for one server id.
type server struct {
	m  *Manager
	id string

	mu      sync.Mutex
	cfg     ServerConfig // as of the last connection
	sess    Session
	pending *connecting
	sem     chan struct{} // nil: no cap
	// lists are the cached tool lists: "" holds one every caller may see
	// (a public one, or one without hints), "p:" and a principal's id
	// (none for calls without one) a private one fetched as it.
	lists    map[string]*cachedList
	listing  map[string]*listing // by the principal listing
	epoch    uint64              // bumped when the tool list is invalidated
	gen      uint64              // bumped when a session is dropped; stale sessions' events are ignored
	breakers map[string]*breaker
	warned   map[string]string // tool → live hash already reported
}

type connecting struct {
	done chan struct{}
	sess Session
	err  error
}

type listing struct {
	done  chan struct{}
	tools []ToolInfo
	err   error
}

type cachedList struct {
	tools []ToolInfo
	at    time.Time
	ttl   time.Duration
}

// session returns the live session, connecting (with retries) if there is
// none or the last one died. Concurrent callers share one attempt, which
// runs detached from their contexts so one caller giving up does not fail
// the others.
func (s *server) session(ctx context.Context) (Session, error) {
	if s.m.life.Err() != nil {
		return nil, ErrManagerClosed
	}
	s.mu.Lock()
	if s.sess != nil {
		select {
		case <-s.sess.Done():
			old := s.sess
			s.forgetLocked()
			go old.Close() // reaps the process; nothing waits on it
		default:
			sess := s.sess
			s.mu.Unlock()
			return sess, nil
		}
	}
	a := s.pending
	if a == nil {
		a = &connecting{done: make(chan struct{})}
		s.pending = a
		go s.connect(a)
	}
	s.mu.Unlock()
	select {
	case <-a.done:
		return a.sess, a.err
	case <-ctx.Done():
		// Still connecting when the caller's time ran out: a connection
		// failure like any other, with the context's reason.
		return nil, &ConnectError{Server: s.id, Attempts: 1, Err: ctx.Err()}
	}
}

func (s *server) connect(a *connecting) {
	// The session's events count once it is installed, and only while it
	// stays the current one.
	gen := new(uint64)
	*gen = ^uint64(0)
	ev := SessionEvents{ToolsChanged: func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.gen == *gen {
			s.invalidateLocked()
		}
	}}
	sess, cfg, err := s.dial(ev)
	s.mu.Lock()
	if err == nil && s.m.life.Err() != nil {
		_ = sess.Close()
		sess, err = nil, ErrManagerClosed
	}
	if err == nil {
		s.sess = sess
		*gen = s.gen
		if cfg.MaxConcurrentCalls != s.cfg.MaxConcurrentCalls || s.sem == nil && cfg.MaxConcurrentCalls > 0 {
			s.sem = nil
			if cfg.MaxConcurrentCalls > 0 {
				s.sem = make(chan struct{}, cfg.MaxConcurrentCalls)
			}
		}
		s.cfg = cfg
	}
	s.pending = nil
	s.mu.Unlock()
	a.sess, a.err = sess, err
	close(a.done)
}

// dial loads the entry (validating it again) and connects, retrying with
// exponential backoff and jitter. Connecting is always safe to repeat: no
// tool runs.
func (s *server) dial(ev SessionEvents) (Session, ServerConfig, error) {
	life := s.m.life
	cfg, err := s.m.reg.Load(life, s.id)
	if err != nil {
		return nil, cfg, err
	}
	for attempt := 0; ; attempt++ {
		ctx, cancel := life, context.CancelFunc(func() {})
		if d := cfg.EffectiveConnectTimeout(); d > 0 {
			ctx, cancel = context.WithTimeout(life, d)
		}
		sess, err := s.m.conn.Connect(ctx, cfg, ev)
		cancel()
		if err == nil {
			return sess, cfg, nil
		}
		var pe *PermanentError
		if life.Err() != nil || errors.As(err, &pe) || attempt >= cfg.EffectiveMaxRetries() {
			return nil, cfg, connectError(s.id, attempt+1, err)
		}
		if s.m.sleep(life, s.m.backoff(attempt)) != nil {
			return nil, cfg, connectError(s.id, attempt+1, err)
		}
	}
}

func (s *server) invalidateLocked() {
	s.lists = nil
	s.epoch++
}

// forgetLocked drops the current session and what it told us.
func (s *server) forgetLocked() {
	s.sess = nil
	s.gen++
	s.invalidateLocked()
}

// reset closes the session and forgets the tool list.
func (s *server) reset() error {
	s.mu.Lock()
	sess := s.sess
	s.forgetLocked()
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	return sess.Close()
}

// drop forgets sess if it is still the current session.
func (s *server) drop(sess Session) {
	s.mu.Lock()
	cur := s.sess == sess
	if cur {
		s.forgetLocked()
	}
	s.mu.Unlock()
	if cur {
		go sess.Close()
	}
}

// tools returns the tool list for the principal of ctx (WithPrincipal),
// from the cache while it is fresh. Concurrent callers of one principal
// share one listing, which carries the principal's token.
func (s *server) tools(ctx context.Context) ([]ToolInfo, error) { return s.toolsAged(ctx, false) }

// toolsAged is tools; with stale, a cached list past its freshness is
// taken too (a per-call drift check, which would otherwise list again on
// every call of a server that says ttlMs 0).
func (s *server) toolsAged(ctx context.Context, stale bool) ([]ToolInfo, error) {
	p, _ := mcpruntime.PrincipalFrom(ctx)
	s.mu.Lock()
	now := s.m.now()
	for _, key := range []string{"", "p:" + p.ID} {
		if c := s.lists[key]; c != nil && (now.Sub(c.at) < c.ttl || stale && s.m.ttl > 0) {
			s.mu.Unlock()
			return c.tools, nil
		}
	}
	l := s.listing[p.ID]
	if l == nil {
		l = &listing{done: make(chan struct{})}
		if s.listing == nil {
			s.listing = map[string]*listing{}
		}
		s.listing[p.ID] = l
		go s.fetch(l, p)
	}
	s.mu.Unlock()
	select {
	case <-l.done:
		return l.tools, l.err
	case <-ctx.Done():
		return nil, fmt.Errorf("list tools of server %q: %w", s.id, context.Cause(ctx))
	}
}

func (s *server) fetch(l *listing, p mcpruntime.Principal) {
	ctx := s.m.life
	if p.Token != "" {
		// A list may depend on who asks (cacheScope private): it is
		// fetched as the principal.
		ctx = mcpruntime.WithBearerToken(ctx, p.Token)
	}
	s.mu.Lock()
	epoch := s.epoch
	s.mu.Unlock()
	var ts []ToolInfo
	var hints ListHints
	var err error
	// Listing is read-only, so a listing cut off by a reconnect or a dead
	// connection is retried on a new one, like an idempotent tool call.
	// Only that is retried here: connecting has retried already (dial),
	// and retrying its failure would nest the retries.
	for attempt := 0; ; attempt++ {
		var connected bool
		ts, hints, connected, err = s.listOnce(ctx)
		if err == nil || ctx.Err() != nil || !connected || !transportError(err) || attempt >= s.config().EffectiveMaxRetries() {
			break
		}
		if s.m.sleep(ctx, s.m.backoff(attempt)) != nil {
			break
		}
	}
	slices.SortFunc(ts, func(a, b ToolInfo) int { return strings.Compare(a.Name, b.Name) })
	s.mu.Lock()
	// A list_changed that arrived while listing makes this list stale.
	if err == nil && s.epoch == epoch {
		c := &cachedList{tools: ts, at: s.m.now(), ttl: s.m.ttl}
		if hints.Hinted {
			c.ttl = min(c.ttl, hints.TTL)
		}
		key := ""
		if hints.Hinted && hints.Private {
			key = "p:" + p.ID
		}
		if s.lists == nil {
			s.lists = map[string]*cachedList{}
		}
		s.lists[key] = c
	}
	delete(s.listing, p.ID)
	s.mu.Unlock()
	l.tools, l.err = ts, err
	close(l.done)
}

// listOnce lists the tools once on the current session; connected says
// a session was there to ask.
func (s *server) listOnce(ctx context.Context) (_ []ToolInfo, _ ListHints, connected bool, _ error) {
	sess, err := s.session(ctx)
	if err != nil {
		return nil, ListHints{}, false, err
	}
	lctx, cancel := ctx, context.CancelFunc(func() {})
	if d := s.config().EffectiveToolTimeout(); d > 0 {
		lctx, cancel = context.WithTimeout(ctx, d)
	}
	defer cancel()
	var ts []ToolInfo
	var hints ListHints
	if h, ok := sess.(HintedLister); ok {
		ts, hints, err = h.ListToolsHinted(lctx)
	} else {
		ts, err = sess.ListTools(lctx)
	}
	if err != nil {
		s.dropIfDone(sess)
		return nil, hints, true, fmt.Errorf("list tools of server %q: %w", s.id, err)
	}
	return ts, hints, true, nil
}

func (s *server) dropIfDone(sess Session) {
	select {
	case <-sess.Done():
		s.drop(sess)
	default:
	}
}

func (s *server) breakerFor(tool string) *breaker {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.breakers[tool]
	if b == nil {
		b = newBreaker(s.m.breaker, s.m.now, s.id, tool)
		s.breakers[tool] = b
	}
	return b
}

func (s *server) config() ServerConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

func (s *server) semaphore() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sem
}

// connectError reports the last attempt's failure once: a session layer
// that already says which server it could not reach gets the attempts
// added, not another "connect to server" around it.
func connectError(server string, attempts int, err error) error {
	var ce *ConnectError
	if errors.As(err, &ce) {
		ce.Attempts = attempts
		var pe *PermanentError
		if errors.As(err, &pe) && pe.Err == ce {
			return pe
		}
		return err
	}
	return &ConnectError{Server: server, Attempts: attempts, Err: err}
}
