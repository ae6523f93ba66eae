package snapshot

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// Sentinel errors, matched with errors.Is on what Capture returns.
var (
	// ErrTimeout: the server did not finish answering within Options.Timeout.
	ErrTimeout = errors.New("no reply within the timeout")
	// ErrExited: the server process ended before the capture finished.
	ErrExited = errors.New("server process exited")
	// ErrNotMCP: the server's output is not MCP JSON-RPC.
	ErrNotMCP = errors.New("not an MCP server")
	// ErrNoTools: the server lists no tools (after filtering) and
	// Options.AllowEmpty is false.
	ErrNoTools = errors.New("no tools")
	// ErrRepeatedCursor: a list's pagination cursor came back a second time,
	// so following it would loop forever.
	ErrRepeatedCursor = errors.New("pagination cursor repeated")
	// ErrSecretInOutput: a resolved secret appears in what the server sent;
	// writing it to a manifest would leak it.
	ErrSecretInOutput = errors.New("secret value in server output")
	// ErrInvalidSource: the Source itself is unusable.
	ErrInvalidSource = errors.New("invalid source")
)

// Error is what Capture returns on failure. Its message is already
// redacted of every secret in the Source.
type Error struct {
	ID  string // server id
	Err error  // cause; wraps one of the sentinels when it applies
	// Stderr is the redacted tail of a stdio server's stderr ("" if none).
	Stderr string
	msg    string
	// session is the session layer's error (already redacted), kept so
	// errors.As finds its *mcpruntime.ConnectError and causes.
	session error
}

func (e *Error) Error() string { return e.msg }

func (e *Error) Unwrap() []error {
	if e.session != nil {
		return []error{e.Err, e.session}
	}
	return []error{e.Err}
}

// redactor hides secret values in text. Longer secrets are replaced first
// so that a secret containing another is hidden whole.
type redactor struct {
	values []string // sorted longest first
	names  map[string]string
	// live, when set, adds the secrets that appeared since (Source.LiveSecrets),
	// named "" (shown as [redacted]).
	live func() []string
}

func newRedactor(src *Source) *redactor {
	r := &redactor{names: map[string]string{}, live: src.LiveSecrets}
	seen := map[string]bool{}
	for i, v := range src.Secrets {
		if v == "" {
			continue
		}
		name := "secret"
		if i < len(src.SecretNames) && src.SecretNames[i] != "" {
			name = "${" + src.SecretNames[i] + "}"
		}
		// A secret can reach an error message in encoded form (a URL in a
		// net/http error is re-encoded), so hide those forms too.
		for _, f := range secretForms(v) {
			if !seen[f] {
				seen[f] = true
				r.values = append(r.values, f)
				r.names[f] = name
			}
		}
	}
	sort.SliceStable(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	return r
}

func secretForms(v string) []string {
	var out []string
	for _, f := range []string{v, url.QueryEscape(v), url.PathEscape(v), jsonEscape(v)} {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// current returns the values to hide now, longest first, and their names.
func (r *redactor) current() ([]string, map[string]string) {
	if r.live == nil {
		return r.values, r.names
	}
	values, names := slices.Clone(r.values), maps.Clone(r.names)
	for _, v := range r.live() {
		for _, f := range secretForms(v) {
			if _, ok := names[f]; !ok {
				values = append(values, f)
				names[f] = ""
			}
		}
	}
	sort.SliceStable(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	return values, names
}

// redact replaces every secret in s with a marker naming its variable.
func (r *redactor) redact(s string) string {
	values, names := r.current()
	for _, v := range values {
		if strings.Contains(s, v) {
			marker := "[redacted]"
			if names[v] != "" {
				marker = "[redacted " + names[v] + "]"
			}
			s = strings.ReplaceAll(s, v, marker)
		}
	}
	return s
}

// find returns the variable name of the first secret contained in b ("" for
// a live secret).
func (r *redactor) find(b []byte) (string, bool) {
	values, names := r.current()
	for _, v := range values {
		if strings.Contains(string(b), v) {
			return names[v], true
		}
	}
	return "", false
}

// jsonEscape returns v as it appears inside a JSON string.
func jsonEscape(v string) string {
	var b strings.Builder
	for _, c := range v {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}
