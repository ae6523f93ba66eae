package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// What a server sends on its own (notifications, and requests such as
// elicitation and sampling) reaches user code through the Conn: loggers,
// progress callbacks, handlers. A server may echo there what it was given,
// so all of it is scrubbed of the tokens the Conn's calls carried and of
// every secret the Conn knows of (WithSecrets, WithNamedSecret, header and
// environment values, the endpoint URL), as written and as JSON escapes
// them.

// maxRememberedTokens bounds the tokens a Conn remembers for scrubbing: the
// most recently used ones, and any of a call still under way.
const maxRememberedTokens = 256

// tokenMemory is the tokens a Conn's calls carried (mcpruntime.CallToken).
type tokenMemory struct {
	mu    sync.Mutex
	clock uint64
	toks  map[mcpruntime.Secret]*tokenUse
	list  scrubber // hide and tokens, longest first; nil when stale
}

type tokenUse struct {
	last uint64 // clock at the last use
	held int    // calls under way with it
}

// hold remembers the token of the call ctx belongs to, if it has one, and
// keeps it while the call is under way: release when it is over.
func (m *tokenMemory) hold(ctx context.Context) (release func()) {
	tok, ok := mcpruntime.CallToken(ctx)
	if !ok {
		return func() {}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.toks == nil {
		m.toks = map[mcpruntime.Secret]*tokenUse{}
	}
	m.clock++
	u := m.toks[tok]
	if u == nil {
		u = &tokenUse{}
		m.toks[tok] = u
		m.list = nil
		m.evict()
	}
	u.last = m.clock
	u.held++
	return func() {
		m.mu.Lock()
		u.held--
		m.mu.Unlock()
	}
}

// evict forgets the least recently used tokens past the bound, never one
// a call under way holds.
func (m *tokenMemory) evict() {
	for len(m.toks) > maxRememberedTokens {
		var oldest mcpruntime.Secret
		var at uint64
		found := false
		for t, u := range m.toks {
			if u.held == 0 && (!found || u.last < at) {
				oldest, at, found = t, u.last, true
			}
		}
		if !found {
			return
		}
		delete(m.toks, oldest)
	}
}

// scrubPair is one value scrubbed, the forms it is found in (as written,
// and as JSON escapes it with and without escaping <, > and &), and what
// replaces it.
type scrubPair struct {
	value, marker string
	forms         []string
}

// scrubber replaces its values, longest first.
type scrubber []scrubPair

// scrubber returns the Conn's scrubber as of now: its declared secrets,
// the tokens its calls carried, and what its secret sources
// (WithSecretSource: an OAuth client's renewed tokens) hold at this moment.
func (c *Conn) scrubber() scrubber {
	s := c.fixedScrubber()
	if len(c.cfg.live) == 0 {
		return s
	}
	s = slices.Clone(s)
	seen := map[string]bool{}
	for _, f := range c.cfg.live {
		for _, v := range f() {
			// Two sources may name the same value (an OAuth client given
			// both through WithOAuth and a caller's own source).
			if v != "" && !seen[v] {
				seen[v] = true
				s = append(s, scrubPair{value: v, marker: "[redacted]", forms: jsonForms(v)})
			}
		}
	}
	slices.SortStableFunc(s, func(a, b scrubPair) int { return len(b.value) - len(a.value) })
	return s
}

// fixedScrubber is the cached part of the scrubber, rebuilt when a call
// carries a token not seen before.
func (c *Conn) fixedScrubber() scrubber {
	m := &c.tokens
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.list != nil || (len(c.cfg.hide) == 0 && len(m.toks) == 0) {
		return m.list
	}
	var s scrubber
	add := func(value, marker string) {
		if value != "" {
			s = append(s, scrubPair{value: value, marker: marker, forms: jsonForms(value)})
		}
	}
	for _, h := range c.cfg.hide {
		add(h.value, h.marker)
	}
	for t := range m.toks {
		add(string(t), "[redacted]")
	}
	slices.SortStableFunc(s, func(a, b scrubPair) int { return len(b.value) - len(a.value) })
	m.list = s
	return s
}

// jsonForms returns v as written and as JSON encoders escape it inside a
// string, each once, longest first.
func jsonForms(v string) []string {
	forms := []string{v}
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(v)
		e := strings.TrimSuffix(b.String(), "\n")
		e = e[1 : len(e)-1]
		if !slices.Contains(forms, e) {
			forms = append(forms, e)
		}
	}
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	return forms
}

// text scrubs a string of every value in every form.
func (s scrubber) text(v string) string {
	for _, p := range s {
		for _, f := range p.forms {
			if strings.Contains(v, f) {
				v = strings.ReplaceAll(v, f, p.marker)
			}
		}
	}
	return v
}

// value scrubs every string in a decoded JSON value (object keys too) and
// reports whether anything changed; v itself is not modified.
func (s scrubber) value(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		t := s.text(x)
		return t, t != x
	case map[string]any:
		out := make(map[string]any, len(x))
		changed := false
		for k, e := range x {
			sk := s.text(k)
			se, ch := s.value(e)
			out[sk] = se
			changed = changed || ch || sk != k
		}
		if !changed {
			return v, false
		}
		return out, true
	case []any:
		out := make([]any, len(x))
		changed := false
		for i, e := range x {
			var ch bool
			out[i], ch = s.value(e)
			changed = changed || ch
		}
		if !changed {
			return v, false
		}
		return out, true
	}
	return v, false
}

// json scrubs raw JSON: b itself when nothing in it needs it.
func (s scrubber) json(b []byte) []byte {
	if len(s) == 0 || len(b) == 0 {
		return b
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		// Not JSON: scrubbed as text, which finds the escaped forms too.
		return []byte(s.text(string(b)))
	}
	sv, changed := s.value(v)
	if !changed {
		return b
	}
	out, err := json.Marshal(sv)
	if err != nil {
		return []byte(s.text(string(b)))
	}
	return out
}

// notification returns n scrubbed: its method and every string of its
// params, _meta included.
func (s scrubber) notification(n mcp.JSONRPCNotification) mcp.JSONRPCNotification {
	if len(s) == 0 {
		return n
	}
	n.Method = s.text(n.Method)
	if v, ch := s.value(n.Params.AdditionalFields); ch {
		n.Params.AdditionalFields = v.(map[string]any)
	}
	if v, ch := s.value(n.Params.Meta); ch {
		n.Params.Meta = v.(map[string]any)
	}
	return n
}
