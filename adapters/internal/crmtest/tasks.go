package crmtest

import (
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgen/mcpgen/internal/testserver"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// SlowInput is the input of TaskTools' tool.
type SlowInput struct {
	MS   int    `json:"ms,omitempty"`
	Text string `json:"text,omitempty"`
}

func (*SlowInput) Validate() error { return nil }

// SlowDescriptor is the tool "slow" of testserver.NewTasks, which runs
// only as a task.
var SlowDescriptor = mcpruntime.Descriptor{Name: "slow", GoName: "Slow", Description: "Echoes text after ms milliseconds, as a task.",
	Annotations: mcpruntime.Annotations{ReadOnly: true},
	InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"},"text":{"type":"string"}},"additionalProperties":false}`),
	TaskSupport: mcpruntime.TaskRequired}

// TaskTools serves testserver.NewTasks over streamable HTTP on a loopback
// listener (on 2026-07-28, the task's outcome sent with its status) and
// returns a toolset with its tool "slow", acting for the context's
// principal: waited for within its timeout, or, with handoff, handed to the
// model with the task poller beside it.
func TaskTools(t testing.TB, handoff bool) *mcpruntime.Toolset {
	t.Helper()
	s := testserver.NewTasks("")
	srv := httptest.NewServer(testserver.InliningHandler(s, server.NewStreamableHTTPServer(s)))
	t.Cleanup(srv.Close)
	c := mcpgo.StreamableHTTP(srv.URL+"/mcp", mcpgo.WithName("tasks"))
	t.Cleanup(func() { _ = c.Close() })
	opts := []mcpruntime.Option{mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)}
	if handoff {
		opts = append(opts, mcpruntime.WithTaskHandoff())
	}
	slow := mcpruntime.NewTool[SlowInput, mcpruntime.NoOutput](&SlowDescriptor, c, opts...)
	tools := []mcpruntime.Invoker{slow}
	if handoff {
		tools = append(tools, mcpruntime.NewTaskPoller(slow))
	}
	ts, err := mcpruntime.NewToolset(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

var taskArgs = regexp.MustCompile(`\{"tool":"[^"]+","task":"[^"]+"\}`)

// PollArgs are the task poller's arguments a handed-off task's text gives
// the model ("" when it gives none).
func PollArgs(text string) string { return taskArgs.FindString(text) }
