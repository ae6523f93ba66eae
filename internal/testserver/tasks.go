package testserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// NewTasks builds a server with tools that run as tasks: "slow" runs only
// as one (it waits ms milliseconds, 300 by default, and echoes text),
// "doomed" runs only as one and fails, "quick" is a plain tool. When
// version is not "", the server speaks that one older protocol version
// only (no server/discover, its own version in every initialize answer).
func NewTasks(version string) *server.MCPServer {
	hooks := &server.Hooks{}
	if version != "" {
		hooks.AddOnRequestInitialization(func(_ context.Context, _ any, message any) error {
			if b, ok := message.(json.RawMessage); ok && strings.Contains(string(b), mcp.MetaKeyProtocolVersion) {
				return errors.New("unknown method")
			}
			return nil
		})
		hooks.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, r *mcp.InitializeResult) {
			r.ProtocolVersion = version
		})
	}
	s := server.NewMCPServer("tasks", "1.0.0", server.WithToolCapabilities(false), server.WithTaskCapabilities(true, true, true), server.WithHooks(hooks))
	tool := func(name string, ts mcp.TaskSupport) mcp.Tool {
		t := mcp.NewToolWithRawSchema(name, "task tool "+name, json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"},"text":{"type":"string"}}}`))
		t.Execution = &mcp.ToolExecution{TaskSupport: ts}
		t.Annotations.ReadOnlyHint = mcp.ToBoolPtr(true)
		return t
	}
	s.AddTaskTool(tool("slow", mcp.TaskSupportRequired), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		// mcp-go runs a task on the request's context, which ends when
		// the start is answered; the work goes on without it.
		time.Sleep(time.Duration(req.GetInt("ms", 300)) * time.Millisecond)
		r := &mcp.CreateTaskResult{}
		r.Content = []mcp.Content{mcp.NewTextContent("slow: " + req.GetString("text", ""))}
		return r, nil
	})
	s.AddTaskTool(tool("doomed", mcp.TaskSupportRequired), func(context.Context, mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		time.Sleep(50 * time.Millisecond)
		return nil, errors.New("the reactor is out of fuel")
	})
	s.AddTool(tool("quick", mcp.TaskSupportForbidden), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("quick: " + req.GetString("text", "")), nil
	})
	return s
}
