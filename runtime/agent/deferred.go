package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// DefaultSearchName is the name of the fallback search tool.
const DefaultSearchName = "search_tools"

// DefaultMaxResults bounds the tools one search returns.
const DefaultMaxResults = 5

// Loading says which of a set's tools a model is shown from its first
// turn. The others are deferred: the model finds them by searching, and a
// tool it found is loaded, its definition shown, from then on. Deferral is
// about what the model reads (tokens, and the choice among fewer tools),
// not about what it may call: every call, of a loaded tool or not, goes
// through the set with the same gating, identity, validation and taint.
type Loading struct {
	// Always reports whether a tool is loaded from the start (see
	// AlwaysNamed, AlwaysAnnotated). With nil, none is: the model starts
	// with the search tool alone.
	Always func(Tool) bool
	// MaxResults bounds the tools one search of the fallback returns
	// (default DefaultMaxResults).
	MaxResults int
	// SearchName names the fallback search tool (default
	// DefaultSearchName). It must be a valid name that no tool of the set
	// has.
	SearchName string
}

// AlwaysNamed loads the tools of these model-facing names from the start.
func AlwaysNamed(names ...string) func(Tool) bool {
	return func(t Tool) bool { return slices.Contains(names, t.Name) }
}

// AlwaysAnnotated loads the tools whose annotations f accepts from the
// start, e.g. the read-only ones.
func AlwaysAnnotated(f func(a mcpruntime.Annotations) bool) func(Tool) bool {
	return func(t Tool) bool { return t.Descriptor != nil && f(t.Descriptor.Annotations) }
}

// Deferred is a Set shown to a model a few tools at a time (see Loading).
// Where a provider loads deferred tools itself (Anthropic's tool search
// tool, OpenAI Responses' tool search over namespaces) an adapter marks
// the deferred ones for it (Deferred.Always tells them apart); elsewhere
// the adapter offers the fallback: SearchTool, a search over the tools'
// names, titles, descriptions and argument names that answers with the
// matching definitions, which the loop adds to the tools of the next
// turns (Tools). It is immutable and safe for concurrent use.
type Deferred struct {
	set    *Set
	always map[string]bool
	search string
	max    int
	index  map[string]*terms // by name, deferred tools only
}

// terms are a tool's words, by where they come from.
type terms struct {
	name, title, args, desc []string
}

// Defer returns the set shown a few tools at a time, as l says.
func (s *Set) Defer(l Loading) (*Deferred, error) {
	d := &Deferred{set: s, always: map[string]bool{}, search: l.SearchName, max: l.MaxResults, index: map[string]*terms{}}
	if d.search == "" {
		d.search = DefaultSearchName
	}
	if !ValidName(d.search) {
		return nil, fmt.Errorf("agent: search tool name %q: want ^[a-zA-Z0-9_-]{1,64}$", d.search)
	}
	if _, dup := s.byName[d.search]; dup {
		return nil, fmt.Errorf("agent: search tool name %q is a tool of the set", d.search)
	}
	if d.max <= 0 {
		d.max = DefaultMaxResults
	}
	for _, t := range s.Tools() {
		if l.Always != nil && l.Always(t) {
			d.always[t.Name] = true
			continue
		}
		d.index[t.Name] = indexTool(t)
	}
	return d, nil
}

// Set returns the set the calls go to.
func (d *Deferred) Set() *Set { return d.set }

// Always reports whether the named tool is loaded from the start.
func (d *Deferred) Always(name string) bool { return d.always[name] }

// SearchName is the fallback search tool's name.
func (d *Deferred) SearchName() string { return d.search }

// SearchTool is the fallback search tool's definition, in the set's
// dialect (its schema is valid in strict mode).
func (d *Deferred) SearchTool() Tool {
	var b strings.Builder
	fmt.Fprintf(&b, "Find tools to use. Only some of your tools are loaded; %d more can be found by the words of their names, titles, descriptions and argument names. Returns the definitions of at most %d matching tools, which you can call from then on.", len(d.index), d.max)
	var about []string
	for i := range d.set.Sources() {
		if prefix, desc := d.set.SourceInfo(i); desc != "" {
			if prefix != "" {
				desc = prefix + "__*: " + desc
			}
			about = append(about, desc)
		}
	}
	if len(about) > 0 {
		b.WriteString(" The tools: " + strings.Join(about, "; ") + ".")
	}
	return Tool{
		Name: d.search, Description: b.String(), Strict: d.set.dialect == DialectStrict,
		InputSchema: []byte(`{"type":"object","properties":{"query":{"type":"string","description":"Words a matching tool's name, title, description or arguments hold."}},"required":["query"],"additionalProperties":false}`),
		Source:      -1, Local: d.search,
	}
}

// Tools is what a loop using the fallback offers a turn: the search tool,
// then the tools loaded from the start and those found (by name; other
// names are ignored), sorted by name.
func (d *Deferred) Tools(found []string) []Tool {
	out := []Tool{d.SearchTool()}
	for _, t := range d.set.Tools() {
		if d.always[t.Name] || slices.Contains(found, t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// Search returns the deferred tools matching query, best first, at most
// Loading.MaxResults. Each word of the query (split at spaces,
// punctuation, underscores and case changes; small words such as "the"
// dropped) counts where a tool has it, as a word or the start of one: most
// in its name, then its title and argument names, then its description; a
// query that is a tool's whole name finds it first.
func (d *Deferred) Search(query string) []Tool {
	words := queryWords(query)
	q := strings.ToLower(strings.TrimSpace(query))
	type hit struct {
		t     Tool
		score int
	}
	var hits []hit
	for _, t := range d.set.Tools() {
		ts := d.index[t.Name]
		if ts == nil {
			continue
		}
		score := 0
		if q == strings.ToLower(t.Name) || q == strings.ToLower(t.Local) || t.Descriptor != nil && q == strings.ToLower(t.Descriptor.Name) {
			score += 100
		}
		for _, w := range words {
			score += max(match(ts.name, w, 6, 4), match(ts.title, w, 3, 2), match(ts.args, w, 3, 2), match(ts.desc, w, 2, 1))
		}
		if score > 0 {
			hits = append(hits, hit{t, score})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.t.Name, b.t.Name)
	})
	out := make([]Tool, 0, min(len(hits), d.max))
	for _, h := range hits[:min(len(hits), d.max)] {
		out = append(out, h.t)
	}
	return out
}

// match scores word w against words: exact for an equal word, prefix for
// a word w starts (w of three letters or more).
func match(words []string, w string, exact, prefix int) int {
	best := 0
	for _, x := range words {
		switch {
		case x == w:
			return exact
		case len(w) >= 3 && strings.HasPrefix(x, w):
			best = prefix
		}
	}
	return best
}

// Dispatch runs one call: the search tool's is answered with what it
// found, whose names are returned as found; any other goes to the set
// (Set.Dispatch).
func (d *Deferred) Dispatch(ctx context.Context, c Call) (r Result, found []string, err error) {
	if c.Name != d.search {
		r, err := d.set.Dispatch(ctx, c)
		return r, nil, err
	}
	query, ok := searchQuery(c.Arguments)
	if !ok {
		text := fmt.Sprintf("Invalid arguments for tool %q: want {\"query\": \"words to look for\"}.", d.search)
		return Result{CallID: c.ID, Name: c.Name, IsError: true, Text: text, Parts: []Part{{Kind: PartText, Text: text}}}, nil, nil
	}
	ts := d.Search(query)
	var b bytes.Buffer
	if len(ts) == 0 {
		fmt.Fprintf(&b, "No tool matches %q. %d tools can be found; try other words (what a tool does, the things it works on, its arguments).", query, len(d.index))
	} else {
		fmt.Fprintf(&b, "%d tools found, and loaded: call them by name. Their definitions:", len(ts))
	}
	for _, t := range ts {
		found = append(found, t.Name)
		line, _ := encode(struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			InputSchema json.RawMessage `json:"input_schema"`
		}{t.Name, t.Description, t.InputSchema})
		b.WriteByte('\n')
		b.Write(line)
	}
	text := b.String()
	return Result{CallID: c.ID, Name: c.Name, Text: text, Parts: []Part{{Kind: PartText, Text: text}}}, found, nil
}

// DispatchAll is Set.DispatchAll with the search tool answered too; found
// are the names the turn's searches found, to load from the next turn on.
// A pause holds the searches' results with the others'.
func (d *Deferred) DispatchAll(ctx context.Context, calls []Call) (results []Result, pause *Pause, found []string, err error) {
	out := make([]Result, 0, len(calls))
	pending := false
	for _, c := range calls {
		r, f, err := d.Dispatch(ctx, c)
		if err != nil {
			return nil, nil, nil, err
		}
		found = append(found, f...)
		pending = pending || r.Pending != nil
		out = append(out, r)
	}
	if pending {
		return nil, &Pause{Version: PauseVersion, Results: out}, found, nil
	}
	return out, nil, found, nil
}

// Found replays the search calls among calls (a conversation's, e.g. one
// resumed from a pause) and returns the names they found: a search gives
// the same answer for the same set, so a loop need store nothing but the
// conversation.
func (d *Deferred) Found(calls []Call) []string {
	var out []string
	for _, c := range calls {
		if c.Name != d.search {
			continue
		}
		if q, ok := searchQuery(c.Arguments); ok {
			for _, t := range d.Search(q) {
				if !slices.Contains(out, t.Name) {
					out = append(out, t.Name)
				}
			}
		}
	}
	return out
}

func searchQuery(args json.RawMessage) (string, bool) {
	var a struct {
		Query *string `json:"query"`
	}
	if json.Unmarshal(args, &a) != nil || a.Query == nil {
		return "", false
	}
	return *a.Query, true
}

func indexTool(t Tool) *terms {
	ts := &terms{name: words(t.Name)}
	if t.Descriptor != nil {
		ts.name = append(ts.name, words(t.Descriptor.Name)...)
		ts.title = words(t.Descriptor.Title)
		ts.desc = words(t.Descriptor.Description)
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(t.Descriptor.InputSchema, &schema) == nil {
			for name := range schema.Properties {
				ts.args = append(ts.args, words(name)...)
			}
		}
	}
	return ts
}

// words splits s into lower-case words at anything but letters and
// digits, and where a lower-case letter is followed by an upper-case one.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// stopWords carry no meaning in a query.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "for": true, "and": true, "or": true,
	"in": true, "on": true, "with": true, "by": true, "from": true, "is": true, "it": true, "my": true,
	"tool": true, "tools": true,
}

func queryWords(q string) []string {
	var out []string
	for _, w := range words(q) {
		if !stopWords[w] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
