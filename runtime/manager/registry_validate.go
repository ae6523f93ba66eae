package manager

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// DefaultStdioCommands are the programs a stdio server may be started with
// unless the operator adds others.
var DefaultStdioCommands = []string{"npx", "node", "python3", "python", "uvx"}

// Environment switches read by PolicyFromEnv.
const (
	// EnvDisableStdio=1 refuses every stdio server.
	EnvDisableStdio = "MCPGEN_DISABLE_STDIO"
	// EnvAllowPrivateNetworks=1 lets http and sse servers live on loopback,
	// private, link-local, unique-local and CGNAT addresses: for local
	// development and tests. Cloud metadata addresses stay blocked.
	EnvAllowPrivateNetworks = "MCPGEN_ALLOW_PRIVATE_NETWORKS"
	// EnvStdioCommands is a comma-separated list of further bare program
	// names allowed for stdio servers.
	EnvStdioCommands = "MCPGEN_STDIO_COMMANDS"
)

// Resolver resolves host names; *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Policy is what registry entries must satisfy.
type Policy struct {
	// StdioCommands are allowed in addition to DefaultStdioCommands. Each is
	// a bare program name, looked up in the PATH.
	StdioCommands []string
	// DisableStdio refuses every stdio server.
	DisableStdio bool
	// AllowPrivateNetworks permits non-public addresses for http and sse
	// servers (never cloud metadata addresses).
	AllowPrivateNetworks bool
	// Resolver, when set, also resolves http and sse hosts when entries are
	// saved and loaded and rejects names that point at blocked addresses,
	// for an early error. It is not the protection: a name can resolve
	// differently later (DNS rebinding), so connections check the addresses
	// they dial again (see the mcpgo adapter's dialer).
	Resolver Resolver
}

// PolicyFromEnv reads the environment switches (EnvDisableStdio,
// EnvAllowPrivateNetworks, EnvStdioCommands). A switch that is not a
// boolean is an error rather than silently off.
func PolicyFromEnv() (Policy, error) {
	var p Policy
	var err error
	if p.DisableStdio, err = envBool(EnvDisableStdio); err != nil {
		return Policy{}, err
	}
	if p.AllowPrivateNetworks, err = envBool(EnvAllowPrivateNetworks); err != nil {
		return Policy{}, err
	}
	for c := range strings.SplitSeq(os.Getenv(EnvStdioCommands), ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		if msg := commandProblem(c); msg != "" {
			return Policy{}, fmt.Errorf("%s: %q: %s", EnvStdioCommands, c, msg)
		}
		p.StdioCommands = append(p.StdioCommands, c)
	}
	return p, nil
}

func envBool(name string) (bool, error) {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want 1, true, 0 or false", name, v)
	}
	return b, nil
}

// AllowedCommands returns the stdio allowlist, sorted.
func (p Policy) AllowedCommands() []string {
	cs := slices.Concat(DefaultStdioCommands, p.StdioCommands)
	slices.Sort(cs)
	return slices.Compact(cs)
}

var (
	serverIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	// A bare program name: no path separators, no shell syntax, not "." or
	// "..", so the allowlist cannot be walked around.
	commandPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)
	envKeyPattern  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerPattern  = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// Environment variables a stdio entry may not set: they change which
// program runs or what it loads, which would turn the command allowlist
// into decoration.
func forbiddenEnv(key string) bool {
	k := strings.ToUpper(key)
	return k == "PATH" || k == "NODE_OPTIONS" || strings.HasPrefix(k, "LD_") || strings.HasPrefix(k, "DYLD_")
}

func commandProblem(c string) string {
	switch {
	case c == "":
		return "empty"
	case strings.ContainsAny(c, `/\`):
		return "must be a bare program name looked up in the PATH, not a path"
	case !commandPattern.MatchString(c):
		return "must be a bare program name (letters, digits, '.', '_', '+', '-'), without shell syntax"
	}
	return ""
}

// Validate checks cfg and returns it with defaults filled in. Every problem
// is listed in one *ConfigError. Validate never quotes environment values,
// header values or URLs.
func (p Policy) Validate(ctx context.Context, cfg ServerConfig) (ServerConfig, error) {
	cfg = cfg.clone()
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if !serverIDPattern.MatchString(cfg.ID) {
		add("id must be 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	if hasControl(cfg.Name) || hasControl(cfg.Description) {
		add("name and description must not contain control characters")
	}
	for i, a := range cfg.AllowedAgents {
		if a == "" || hasControl(a) || strings.TrimSpace(a) != a {
			add("allowedAgents[%d]: an agent id must be non-empty, without control characters or surrounding space", i)
		}
	}
	for name, v := range map[string]int64{
		"connectTimeout": int64(cfg.ConnectTimeout), "toolTimeout": int64(cfg.ToolTimeout),
		"maxRetries": int64(cfg.MaxRetries), "maxConcurrentCalls": int64(cfg.MaxConcurrentCalls),
	} {
		min := int64(-1)
		if name == "maxConcurrentCalls" {
			min = 0
		}
		if v < min {
			add("%s must not be negative (0 is the default; use NoTimeout or NoRetries to disable)", name)
		}
	}
	if cfg.MaxRetries > 10 {
		add("maxRetries %d is more than 10", cfg.MaxRetries)
	}
	t := cfg.Transport
	switch t.Kind {
	case TransportStdio:
		probs = append(probs, p.stdioProblems(t)...)
	case TransportHTTP, TransportSSE:
		probs = append(probs, p.urlProblems(ctx, t)...)
	default:
		add("transport.kind %q: want stdio, http or sse", string(t.Kind))
	}
	if len(probs) > 0 {
		slices.Sort(probs)
		return ServerConfig{}, &ConfigError{Server: printableID(cfg.ID), Problems: probs}
	}
	// Defaults, written out so the stored entry says what applies.
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.ToolTimeout == 0 {
		cfg.ToolTimeout = DefaultToolTimeout
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	}
	return cfg, nil
}

func printableID(id string) string {
	if len(id) > 64 {
		id = id[:64] + "..."
	}
	return strings.ToValidUTF8(id, "?")
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' })
}

func (p Policy) stdioProblems(t Transport) []string {
	var probs []string
	if p.DisableStdio {
		return []string{fmt.Sprintf("stdio servers are disabled (%s)", EnvDisableStdio)}
	}
	if msg := commandProblem(t.Command); msg != "" {
		probs = append(probs, fmt.Sprintf("transport.command %q: %s", printableID(t.Command), msg))
	} else if !slices.Contains(p.AllowedCommands(), t.Command) {
		probs = append(probs, fmt.Sprintf("transport.command %q is not allowed; allowed: %s (the operator can add more with %s)",
			t.Command, strings.Join(p.AllowedCommands(), ", "), EnvStdioCommands))
	}
	for i, a := range t.Args {
		if strings.ContainsRune(a, 0) {
			probs = append(probs, fmt.Sprintf("transport.args[%d] contains a NUL byte", i))
		}
	}
	for _, k := range sortedKeys(t.Env) {
		switch {
		case !envKeyPattern.MatchString(k):
			probs = append(probs, fmt.Sprintf("transport.env: %q is not a valid variable name", printableID(k)))
		case forbiddenEnv(k):
			probs = append(probs, fmt.Sprintf("transport.env: %s may not be set (it changes which program runs or what it loads)", k))
		case strings.ContainsRune(t.Env[k], 0):
			probs = append(probs, fmt.Sprintf("transport.env: the value of %s contains a NUL byte", k))
		}
	}
	if t.URL != "" || len(t.Headers) > 0 {
		probs = append(probs, "transport: url and headers are for http and sse servers")
	}
	return probs
}

func (p Policy) urlProblems(ctx context.Context, t Transport) []string {
	var probs []string
	if t.Command != "" || len(t.Args) > 0 || len(t.Env) > 0 {
		probs = append(probs, "transport: command, args and env are for stdio servers")
	}
	for _, k := range sortedKeys(t.Headers) {
		if !headerPattern.MatchString(k) {
			probs = append(probs, fmt.Sprintf("transport.headers: %q is not a valid header name", printableID(k)))
		} else if strings.ContainsAny(t.Headers[k], "\r\n\x00") {
			probs = append(probs, fmt.Sprintf("transport.headers: the value of %s contains a line break or NUL", k))
		}
	}
	u, err := url.Parse(t.URL)
	if err != nil || t.URL == "" {
		// The URL itself is not quoted: it may carry a token.
		return append(probs, "transport.url is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return append(probs, fmt.Sprintf("transport.url: scheme %q: want http or https", u.Scheme))
	}
	host := u.Hostname()
	if host == "" {
		return append(probs, "transport.url has no host")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			probs = append(probs, "transport.url: the port must be 1 to 65535")
		}
	}
	if err := checkHost(ctx, host, p.AllowPrivateNetworks, p.Resolver); err != nil {
		probs = append(probs, "transport.url: "+err.Error())
	}
	return probs
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
