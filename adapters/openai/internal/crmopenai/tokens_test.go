package crmopenai_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	"github.com/mcpgen/mcpgen/adapters/internal/crmtest/githubtest"
	mcpopenai "github.com/mcpgen/mcpgen/adapters/openai"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

// The three-tool task over the GitHub server's 117 tools: list the
// issues, read one, comment on it, then answer.
var githubCalls = [][3]string{
	{"call_1", "github__list_issues", `{"owner":"octo","repo":"app"}`},
	{"call_2", "github__issue_read", `{"method":"get","owner":"octo","repo":"app","issue_number":7}`},
	{"call_3", "github__add_issue_comment", `{"owner":"octo","repo":"app","issue_number":7,"body":"Looking into it."}`},
}

// TestDeferredTokens measures what the model is shown over the GitHub
// server's 117 tools, all loaded and deferred (only get_me loaded from the
// start): the first request, and the three-tool task's requests together,
// in Chat Completions' format (deferred: the fallback search, a request
// of its own) and the Responses API's (deferred: the hosted search over a
// namespace, in the first response). docs/benchmarks.md has the table it
// logs (go test -run DeferredTokens -v).
func TestDeferredTokens(t *testing.T) {
	ts := githubtest.Toolset(t)
	s := newSet(t, agent.DialectJSONSchema, agent.Source{Prefix: "github", Tools: ts, Description: githubtest.Description})
	loading := &agent.Loading{Always: agent.AlwaysNamed("github__get_me")}
	var rows []string
	row := func(format, label string, shown []int) (first, task int) {
		for _, n := range shown {
			task += n
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %d | %d | %d |", format, label, shown[0], task, len(shown)))
		return shown[0], task
	}

	chat := func(l *agent.Loading) []int {
		var steps []step
		if l != nil {
			steps = append(steps, func(t *testing.T, req *request) reply {
				return reply{calls: [][3]string{{"call_0", "search_tools", `{"query":"list issues, read an issue, comment on an issue"}`}}}
			})
		}
		for _, c := range githubCalls {
			steps = append(steps, func(t *testing.T, req *request) reply { return reply{calls: [][3]string{c}} })
		}
		steps = append(steps, func(t *testing.T, req *request) reply {
			if r := toolResult(t, req, "call_3"); r != "ok add_issue_comment" {
				t.Errorf("add_issue_comment: %s", r)
			}
			return reply{text: "Commented on issue 7."}
		})
		m, svc := newModel(t, steps...)
		loop := newLoop(svc, s, false)
		loop.Defer = l
		if o, err := loop.Run(crmtest.Alice(), ask("Comment on the newest issue of octo/app.")); err != nil || final(o) != "Commented on issue 7." {
			t.Fatalf("chat: %+v, %v", o, err)
		}
		return m.shown
	}
	allFirst, allTask := row("OpenAI Chat Completions", "all 117 loaded", chat(nil))
	defFirst, defTask := row("OpenAI Chat Completions", "deferred, fallback search", chat(loading))
	if defFirst*10 > allFirst || defTask*3 > allTask {
		t.Errorf("Chat Completions deferred: %d, %d tokens; all loaded: %d, %d", defFirst, defTask, allFirst, allTask)
	}

	resp := func(l *agent.Loading) []int {
		var steps []respStep
		for i, c := range githubCalls {
			if l != nil {
				c[1] = strings.Replace(c[1], "github__", "github.", 1)
			}
			steps = append(steps, func(t *testing.T, req *respRequest) reply {
				r := reply{calls: [][3]string{c}}
				if i == 0 && l != nil {
					r.search = "list_issues issue_read add_issue_comment"
				}
				return r
			})
		}
		steps = append(steps, func(t *testing.T, req *respRequest) reply {
			if text, _ := req.output(t, "call_3"); text != "ok add_issue_comment" {
				t.Errorf("add_issue_comment: %s", text)
			}
			return reply{text: "Commented on issue 7."}
		})
		m, svc := newResponses(t, steps...)
		loop := &mcpopenai.ResponsesLoop{Client: svc, Params: responses.ResponseNewParams{Model: "gpt-test"}, Tools: s, Defer: l}
		if o, err := loop.Run(crmtest.Alice(), userInput("Comment on the newest issue of octo/app.")); err != nil || o.Final == nil {
			t.Fatalf("responses: %+v, %v", o, err)
		}
		return m.shown
	}
	allFirst, allTask = row("OpenAI Responses", "all 117 loaded", resp(nil))
	defFirst, defTask = row("OpenAI Responses", "deferred, tool search over a namespace", resp(loading))
	if defFirst*10 > allFirst || defTask*3 > allTask {
		t.Errorf("Responses deferred: %d, %d tokens; all loaded: %d, %d", defFirst, defTask, allFirst, allTask)
	}
	t.Logf("\n%s", strings.Join(rows, "\n"))
}
