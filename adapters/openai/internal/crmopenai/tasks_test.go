package crmopenai_test

import (
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/responses"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	mcpopenai "github.com/mcpgen/mcpgen/adapters/openai"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

// A tool that runs only as a task, through the loop: waited for within its
// timeout, or, with WithTaskHandoff, handed to the model, which checks on
// it with the task poller and gets the result.
func TestTaskTool(t *testing.T) {
	for _, handoff := range []bool{false, true} {
		name := map[bool]string{false: "wait", true: "handoff"}[handoff]
		t.Run(name, func(t *testing.T) {
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
			_, svc := newModel(t, steps...)
			o, err := newLoop(svc, newSet(t, agent.DialectStrict, agent.Source{Tools: crmtest.TaskTools(t, handoff)}), false).Run(crmtest.Alice(), ask("run it"))
			if err != nil || final(o) != "finished" {
				t.Fatalf("%v %+v", err, o)
			}
		})
	}
}

// The same through the Responses API loop.
func TestResponsesTaskTool(t *testing.T) {
	for _, handoff := range []bool{false, true} {
		t.Run(map[bool]string{false: "wait", true: "handoff"}[handoff], func(t *testing.T) {
			call := func(*testing.T, *respRequest) reply {
				return reply{calls: [][3]string{{"c1", "slow", `{"text":"done later","ms":100}`}}}
			}
			done := func(id string) respStep {
				return func(t *testing.T, req *respRequest) reply {
					if r, _ := req.output(t, id); !strings.Contains(r, "slow: done later") {
						t.Errorf("the task's result did not reach the model: %q", r)
					}
					return reply{text: "finished"}
				}
			}
			steps := []respStep{call, done("c1")}
			if handoff {
				steps = []respStep{call, func(t *testing.T, req *respRequest) reply {
					r, _ := req.output(t, "c1")
					args := crmtest.PollArgs(r)
					if args == "" {
						t.Fatalf("no task to check on: %q", r)
					}
					time.Sleep(500 * time.Millisecond) // the task ends meanwhile
					return reply{calls: [][3]string{{"c2", "check_task", args}}}
				}, done("c2")}
			}
			_, svc := newResponses(t, steps...)
			loop := &mcpopenai.ResponsesLoop{Client: svc, Params: responses.ResponseNewParams{Model: "gpt-test"},
				Tools: newSet(t, agent.DialectStrict, agent.Source{Tools: crmtest.TaskTools(t, handoff)})}
			o, err := loop.Run(crmtest.Alice(), userInput("run it"))
			if err != nil || o.Final == nil || !strings.Contains(o.Final.OutputText(), "finished") {
				t.Fatalf("%v %+v", err, o)
			}
		})
	}
}
