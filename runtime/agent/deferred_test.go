package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/bindings/github"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// githubSet is the GitHub server's 117 tools (no connection: nothing is
// called).
func githubSet(t *testing.T, d Dialect) *Set {
	t.Helper()
	s, err := New(d, Source{Prefix: "github", Tools: toolset(t, github.Invokers(nil)...), Description: "GitHub: repositories, issues, pull requests."})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func names(ts []Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// The fallback search finds tools by the words of their names, titles,
// descriptions and argument names, best first, bounded, deferred ones only.
func TestDeferredSearch(t *testing.T) {
	s := githubSet(t, DialectStrict)
	d, err := s.Defer(Loading{Always: AlwaysNamed("github__get_me")})
	if err != nil {
		t.Fatal(err)
	}
	for query, want := range map[string]string{
		"add a comment to an issue":  "github__add_issue_comment",
		"add_issue_comment":          "github__add_issue_comment",
		"github__list_pull_requests": "github__list_pull_requests",
		"list pull requests":         "github__list_pull_requests",
		"ListPullRequests":           "github__list_pull_requests",
		"star a repository":          "github__star_repository",
		"dependabot alerts":          "github__list_dependabot_alerts",
	} {
		got := names(d.Search(query))
		if len(got) == 0 || got[0] != want || len(got) > DefaultMaxResults {
			t.Errorf("Search(%q) = %v, want %s first", query, got, want)
		}
	}
	// Argument names count: no name or title holds "path", and every
	// tool found takes one.
	for _, tool := range d.Search("path") {
		if !strings.Contains(string(tool.InputSchema), `"path"`) {
			t.Errorf("Search(path) found %s, which takes no path", tool.Name)
		}
	}
	if got := d.Search("get me"); slices.Contains(names(got), "github__get_me") {
		t.Errorf("an always-loaded tool was found: %v", names(got))
	}
	if got := d.Search("the of and"); len(got) != 0 {
		t.Errorf("stop words found %v", names(got))
	}
	if got := d.Search("xyzzy"); len(got) != 0 {
		t.Errorf("nonsense found %v", names(got))
	}

	// The search tool's own definition, and a turn's tools.
	st := d.SearchTool()
	var schema map[string]any
	if err := json.Unmarshal(st.InputSchema, &schema); err != nil || !st.Strict || st.Name != DefaultSearchName ||
		!strings.Contains(st.Description, "116 more") || !strings.Contains(st.Description, "github__*: GitHub: repositories") {
		t.Errorf("search tool %+v, %v", st, err)
	}
	if got := names(d.Tools([]string{"github__list_issues", "nope"})); strings.Join(got, " ") != "search_tools github__get_me github__list_issues" {
		t.Errorf("Tools = %v", got)
	}
	if got := names(d.Tools(nil)); len(got) != 2 {
		t.Errorf("Tools(nil) = %v", got)
	}

	// Dispatch answers with the definitions, as JSON lines, and says what
	// it found; Found replays it.
	call := Call{ID: "s1", Name: "search_tools", Arguments: json.RawMessage(`{"query":"issue comment"}`)}
	r, found, err := d.Dispatch(context.Background(), call)
	if err != nil || r.IsError || len(found) == 0 || found[0] != "github__add_issue_comment" {
		t.Fatalf("Dispatch = %+v, %v, %v", r, found, err)
	}
	lines := strings.Split(r.Text, "\n")
	if len(lines) != len(found)+1 {
		t.Fatalf("result: %s", r.Text)
	}
	for i, l := range lines[1:] {
		var def struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		}
		if err := json.Unmarshal([]byte(l), &def); err != nil || def.Name != found[i] || def.InputSchema["additionalProperties"] != false {
			t.Errorf("line %d: %s (%v)", i, l, err)
		}
	}
	if again := d.Found([]Call{{Name: "github__get_me"}, call, call}); !slices.Equal(again, found) {
		t.Errorf("Found = %v, want %v", again, found)
	}
	for _, args := range []string{`{}`, `{"query":7}`, `nope`} {
		r, found, err := d.Dispatch(context.Background(), Call{ID: "s2", Name: "search_tools", Arguments: json.RawMessage(args)})
		if err != nil || !r.IsError || found != nil || !strings.Contains(r.Text, `"query"`) {
			t.Errorf("Dispatch(%s) = %+v, %v, %v", args, r, found, err)
		}
	}
	r, _, _ = d.Dispatch(context.Background(), Call{ID: "s3", Name: "search_tools", Arguments: json.RawMessage(`{"query":"xyzzy"}`)})
	if r.IsError || !strings.HasPrefix(r.Text, `No tool matches "xyzzy". 116 tools can be found`) {
		t.Errorf("no match: %+v", r)
	}

	// Loading by annotation; a search name that is taken or invalid.
	ro, err := s.Defer(Loading{Always: AlwaysAnnotated(func(a mcpruntime.Annotations) bool { return a.ReadOnly })})
	if err != nil || !ro.Always("github__get_me") || ro.Always("github__delete_repository") {
		t.Errorf("AlwaysAnnotated: %v", err)
	}
	for _, name := range []string{"github__get_me", "bad name"} {
		if _, err := s.Defer(Loading{SearchName: name}); err == nil {
			t.Errorf("search name %q accepted", name)
		}
	}
}

// A search and a gated call in one turn: the pause holds the search's
// result with the others, and the call is gated as any other.
func TestDeferredDispatchAllPauses(t *testing.T) {
	a, b := &server{}, &server{}
	p := newProcess(t, mcpruntime.NewMemoryStore(), a, b, nil)
	d, err := p.set.Defer(Loading{})
	if err != nil {
		t.Fatal(err)
	}
	res, pause, found, err := d.DispatchAll(alice, []Call{
		{ID: "s", Name: "search_tools", Arguments: json.RawMessage(`{"query":"move"}`)},
		{ID: "m", Name: "a__move", Arguments: json.RawMessage(`{"amount":3}`)},
	})
	if err != nil || res != nil || pause == nil || !slices.Equal(found, []string{"a__move", "b__move"}) {
		t.Fatalf("DispatchAll = %v, %+v, %v, %v", res, pause, found, err)
	}
	if r := pause.Results[0]; r.Name != "search_tools" || r.Pending != nil || !strings.Contains(r.Text, `"name":"a__move"`) {
		t.Errorf("search result in the pause: %+v", r)
	}
	if len(a.made()) != 0 || pause.Results[1].Pending == nil {
		t.Errorf("the gated call ran or did not wait: %q", a.made())
	}
}
