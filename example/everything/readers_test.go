package everything_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/example/everything"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// The reference server's two resource templates, made tools by one line of
// config each, read by a model's calls through an agent set.
func TestResourceReaders(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "tools", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	missing := ""
	if err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(script); err != nil {
		missing = "server-everything is not installed (run npm ci --prefix tools/npm)"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(missing)
		}
		t.Skip(missing)
	}
	conn := mcpgo.Stdio(node, []string{script, "stdio"}, mcpgo.WithName("everything"))
	t.Cleanup(func() { _ = conn.Close() })
	ts, err := mcpruntime.NewToolset(everything.Readers(conn)...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := agent.New(agent.DialectJSONSchema, agent.Source{Prefix: "everything", Tools: ts})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Names(), " "); got != "everything__read_dynamic_blob_resource everything__read_dynamic_text_resource" {
		t.Fatalf("names %s", got)
	}
	run := mcpruntime.NewRun("everything")
	ctx := mcpruntime.WithRun(context.Background(), run)
	call := func(name, args string) agent.Result {
		t.Helper()
		r, err := s.Dispatch(ctx, agent.Call{ID: "1", Name: "everything__" + name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	r := call("read_dynamic_text_resource", `{"resourceId":"3"}`)
	if r.IsError || !strings.Contains(r.Text, "3") || r.Model.Result == nil || r.Model.Result.Content[0].Type != mcpruntime.ContentText {
		t.Errorf("text read: %+v", r)
	}
	r = call("read_dynamic_blob_resource", `{"resourceId":"4"}`)
	if r.IsError || !strings.HasPrefix(r.Text, "[embedded resource: demo://resource/dynamic/blob/4 (") || !strings.Contains(r.Text, "blob, ") {
		t.Errorf("blob read: %q", r.Text)
	}
	if l := run.Ledger(); len(l) != 2 || l[0].Resource != "demo://resource/dynamic/text/3" || !l[1].External {
		t.Errorf("ledger %+v", l)
	}

	for args, want := range map[string]string{
		`{}`:                  "- /resourceId: required",
		`{"resourceId":1}`:    "- /resourceId: expected a string",
		`{"resourceId":"."}`:  `"." would change the resource's path`,
		`{"resource_id":"1"}`: "- /resource_id: unknown member",
	} {
		if r := call("read_dynamic_text_resource", args); !r.IsError || !strings.Contains(r.Text, want) {
			t.Errorf("%s: %q, want %q", args, r.Text, want)
		}
	}
	// Encoded, "1 2" is one segment, and not an integer: the server says
	// so. A '/' is refused before it is sent: the server decodes values.
	if r := call("read_dynamic_text_resource", `{"resourceId":"1 2"}`); !r.IsError || !strings.HasPrefix(r.Text, "The server") {
		t.Errorf("reserved characters: %q", r.Text)
	}
	if r := call("read_dynamic_text_resource", `{"resourceId":"1/2"}`); !r.IsError || !strings.Contains(r.Text, `- /resourceId: "1/2" holds a '/'`) {
		t.Errorf("a slash: %q", r.Text)
	}
	if len(run.Ledger()) != 2 {
		t.Errorf("failed reads were recorded: %+v", run.Ledger())
	}

	// Over the size limit.
	small, err := mcpruntime.NewToolset(everything.NewDynamicTextResourceReader(conn, mcpruntime.MaxReadSize(8)))
	if err != nil {
		t.Fatal(err)
	}
	m, err := small.Invoke(ctx, "read_dynamic_text_resource", json.RawMessage(`{"resourceId":"3"}`))
	if err != nil || !m.IsError || !strings.Contains(m.Text, "over the limit of 8 bytes") {
		t.Errorf("over the limit: %+v, %v", m, err)
	}
}
