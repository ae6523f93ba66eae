package crmeino_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

// A tool that runs only as a task, through an eino agent: waited for
// within its timeout, or, with WithTaskHandoff, handed to the model, which
// checks on it with the task poller and gets the result.
func TestTaskTool(t *testing.T) {
	for _, handoff := range []bool{false, true} {
		t.Run(map[bool]string{false: "wait", true: "handoff"}[handoff], func(t *testing.T) {
			call := func(*testing.T, *request) reply {
				return reply{calls: [][3]string{{"c1", "slow", `{"text":"done later","ms":100}`}}}
			}
			done := func(id string) step {
				return func(t *testing.T, req *request) reply {
					if r := toolResult(t, req, id); !strings.Contains(r, "slow: done later") {
						t.Errorf("the task's result did not reach the model: %q", r)
					}
					return reply{text: "finished"}
				}
			}
			steps := []step{call, done("c1")}
			if handoff {
				steps = []step{call, func(t *testing.T, req *request) reply {
					args := crmtest.PollArgs(toolResult(t, req, "c1"))
					if args == "" {
						t.Fatalf("no task to check on: %q", toolResult(t, req, "c1"))
					}
					time.Sleep(500 * time.Millisecond) // the task ends meanwhile
					return reply{calls: [][3]string{{"c2", "check_task", args}}}
				}, done("c2")}
			}
			h := newHarness(t, steps...)
			r := h.runner(newSet(t, agent.Source{Tools: crmtest.TaskTools(t, handoff)}), &memStore{M: map[string][]byte{}})
			if o := drain(t, r.Query(crmtest.Alice(), "run it", adk.WithCheckPointID("task-run"))); o.final != "finished" {
				t.Fatalf("outcome %+v", o)
			}
		})
	}
}
