package crmanthropic_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	"github.com/mcpgen/mcpgen/adapters/internal/crmtest/githubtest"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

// shownOf is what the model reads of a request: the request as sent,
// without the deferred tools no search of the conversation has loaded
// (the API keeps those from the model; the loaded ones it shows).
func shownOf(req *request) string {
	var body map[string]any
	if json.Unmarshal(req.raw, &body) != nil {
		return string(req.raw)
	}
	_, deferred, loaded := deferredOf(req)
	tools, _ := body["tools"].([]any)
	var kept []any
	for _, tl := range tools {
		name, _ := tl.(map[string]any)["name"].(string)
		if !deferred[name] || loaded[name] {
			kept = append(kept, tl)
		}
	}
	body["tools"] = kept
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(body)
	return b.String()
}

// githubTask is a three-tool task over the GitHub server's 117 tools: list
// the issues, read one, comment on it, then answer. With deferred, the
// first turn searches first (the API's regex search, in the same
// response).
func githubTask(deferred bool) []step {
	first := []block{toolUse("tu_1", "github__list_issues", `{"owner":"octo","repo":"app"}`)}
	return []step{
		func(t *testing.T, req *request) []block {
			if deferred {
				found := search(t, req, "srvtoolu_1", "list_issues|issue_read|add_issue_comment")
				return append(found, first...)
			}
			return first
		},
		func(t *testing.T, req *request) []block {
			return []block{toolUse("tu_2", "github__issue_read", `{"method":"get","owner":"octo","repo":"app","issue_number":7}`)}
		},
		func(t *testing.T, req *request) []block {
			return []block{toolUse("tu_3", "github__add_issue_comment", `{"owner":"octo","repo":"app","issue_number":7,"body":"Looking into it."}`)}
		},
		func(t *testing.T, req *request) []block {
			if r := result(t, req, "tu_3"); r.IsError {
				t.Errorf("add_issue_comment: %+v", r)
			}
			return text("Commented on issue 7.")
		},
	}
}

// TestDeferredTokens measures what the model is shown over the GitHub
// server's 117 tools, all loaded and deferred (only get_me loaded from the
// start), in the Messages API's format: the first request, and the
// three-tool task's requests together. docs/benchmarks.md has the table
// it logs (go test -run DeferredTokens -v).
func TestDeferredTokens(t *testing.T) {
	ts := githubtest.Toolset(t)
	s := set(t, agent.Source{Prefix: "github", Tools: ts, Description: githubtest.Description})
	var rows []string
	measure := func(label string, l *agent.Loading) (first, task int) {
		m, svc := newModel(t, githubTask(l != nil)...)
		loop := newLoop(t, svc, s, false)
		loop.Defer = l
		o, err := loop.Run(crmtest.Alice(), ask("Comment on the newest issue of octo/app."))
		if err != nil || finalText(o) != "Commented on issue 7." {
			t.Fatalf("%s: %+v, %v", label, o, err)
		}
		for _, n := range m.shown {
			task += n
		}
		rows = append(rows, fmt.Sprintf("| Anthropic Messages | %s | %d | %d | %d |", label, m.shown[0], task, len(m.shown)))
		return m.shown[0], task
	}
	allFirst, allTask := measure("all 117 loaded", nil)
	defFirst, defTask := measure("deferred, tool search tool", &agent.Loading{Always: agent.AlwaysNamed("github__get_me")})
	t.Logf("\n%s", strings.Join(rows, "\n"))
	if defFirst*10 > allFirst || defTask*3 > allTask {
		t.Errorf("deferred: first request %d, task %d tokens; all loaded: %d, %d", defFirst, defTask, allFirst, allTask)
	}
}
