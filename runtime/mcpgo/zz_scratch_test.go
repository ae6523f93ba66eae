package mcpgo_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/server/servertest"
)

func TestScratchTasks(t *testing.T) {
	s := server.NewMCPServer("x", "1", server.WithToolCapabilities(false), server.WithTaskCapabilities(true, true, true))
	tool := mcp.NewToolWithRawSchema("slow", "slow", json.RawMessage(`{"type":"object"}`))
	tool.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}
	s.AddTaskTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		r := &mcp.CreateTaskResult{}
		r.Content = []mcp.Content{mcp.NewTextContent("done " + req.Header.Get("Authorization"))}
		return r, nil
	})
	for _, v := range []string{"", mcp.ProtocolVersion20251125} {
		ts := servertest.NewTestStreamableHTTPServer(s)
		var opts []client.ClientOption
		if v != "" {
			opts = append(opts, client.WithProtocolVersion(v))
		}
		c, err := client.NewStreamableHttpClient(ts.URL + "/mcp")
		if err != nil {
			t.Fatal(err)
		}
		cl := c
		_ = opts
		ctx := context.Background()
		if err := cl.Start(ctx); err != nil {
			t.Fatal(err)
		}
		for _, o := range opts {
			o(cl)
		}
		if _, err := cl.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
			t.Fatal(err)
		}
		t.Logf("version %s caps %+v", cl.ProtocolVersion(), cl.GetServerCapabilities().Tasks)
		res, err := cl.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "slow", Task: &mcp.TaskParams{}}})
		t.Logf("call: %+v %v", res, err)
		_, err = cl.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "slow"}})
		t.Logf("plain call: %v", err)
		tasks, err := cl.ListTasks(ctx, mcp.ListTasksRequest{})
		t.Logf("list: %+v %v", tasks, err)
		if err == nil && len(tasks.Tasks) > 0 {
			id := tasks.Tasks[0].TaskId
			g, err := cl.WaitForTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}}, 50*time.Millisecond)
			t.Logf("wait: %+v %v", g, err)
			r, err := cl.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: id}})
			t.Logf("result: %+v %v", r, err)
		}
		cl.Close()
		ts.Close()
	}
}
