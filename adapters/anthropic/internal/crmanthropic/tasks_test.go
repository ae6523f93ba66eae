package crmanthropic_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	"github.com/mcpgen/mcpgen/runtime/agent"
)

// A tool that runs only as a task, through the loop: waited for within its
// timeout, or, with WithTaskHandoff, handed to the model, which checks on
// it with the task poller and gets the result.
func TestTaskTool(t *testing.T) {
	for _, handoff := range []bool{false, true} {
		t.Run(map[bool]string{false: "wait", true: "handoff"}[handoff], func(t *testing.T) {
			call := func(*testing.T, *request) []block {
				return []block{toolUse("u1", "slow", `{"text":"done later","ms":100}`)}
			}
			done := func(id string) step {
				return func(t *testing.T, req *request) []block {
					if r := resultText(result(t, req, id)); !strings.Contains(r, "slow: done later") {
						t.Errorf("the task's result did not reach the model: %q", r)
					}
					return text("finished")
				}
			}
			steps := []step{call, done("u1")}
			if handoff {
				steps = []step{call, func(t *testing.T, req *request) []block {
					args := crmtest.PollArgs(resultText(result(t, req, "u1")))
					if args == "" {
						t.Fatalf("no task to check on: %+v", result(t, req, "u1"))
					}
					time.Sleep(500 * time.Millisecond) // the task ends meanwhile
					return []block{toolUse("u2", "check_task", args)}
				}, done("u2")}
			}
			_, svc := newModel(t, steps...)
			o, err := newLoop(t, svc, set(t, agent.Source{Tools: crmtest.TaskTools(t, handoff)}), false).Run(crmtest.Alice(), ask("run it"))
			if err != nil || finalText(o) != "finished" {
				t.Fatalf("%v %+v", err, o)
			}
		})
	}
}
