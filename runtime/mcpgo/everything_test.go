package mcpgo_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// everythingServer returns the command line of the npm reference server,
// skipping when node or the package is absent, except in CI where that is a
// failure.
func everythingServer(t *testing.T) (string, []string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "tools", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not installed"
	default:
		if _, err := os.Stat(script); err != nil {
			missing = "server-everything is not installed (run npm ci --prefix tools/npm)"
		}
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(missing)
		}
		t.Skip(missing)
	}
	return node, []string{script, "stdio"}
}

type StructuredInput struct {
	Location string `json:"location"`
}

func (*StructuredInput) Validate() error { return nil }

type StructuredOutput struct {
	Temperature float64 `json:"temperature"`
	Conditions  string  `json:"conditions"`
	Humidity    float64 `json:"humidity"`
}

func (*StructuredOutput) Validate() error { return nil }

type LinksInput struct {
	Count int `json:"count"`
}

func (*LinksInput) Validate() error { return nil }

func TestEverythingServer(t *testing.T) {
	node, args := everythingServer(t)
	c := mcpgo.Stdio(node, args, mcpgo.WithName("everything"))
	closeConn(t, c)
	ctx := context.Background()

	structured := desc("get-structured-content", `{"type":"object"}`, `{"type":"object"}`)
	r, err := mcpruntime.NewTool[StructuredInput, StructuredOutput](structured, c).Call(ctx, StructuredInput{Location: "Chicago"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Output != (StructuredOutput{Temperature: 36, Conditions: "Light rain / drizzle", Humidity: 82}) || r.Source != mcpruntime.FromStructuredContent {
		t.Errorf("get-structured-content = %+v from %v", r.Output, r.Source)
	}
	m, err := mcpruntime.NewTool[StructuredInput, StructuredOutput](structured, c).Invoke(ctx, json.RawMessage(`{}`))
	if err != nil || !m.IsError {
		// The server validates too: a missing location comes back as a
		// failure for the model, not a Go error.
		t.Errorf("missing location: %+v, %v", m, err)
	}

	img, err := newPlain(desc("get-tiny-image", `{"type":"object"}`, ""), c).Call(ctx, EmptyInput{})
	if err != nil {
		t.Fatal(err)
	}
	var sawImage bool
	for _, b := range img.Content {
		sawImage = sawImage || (b.Type == mcpruntime.ContentImage && b.MIMEType == "image/png" && b.Data != "")
	}
	if !sawImage {
		t.Errorf("get-tiny-image content: %+v", img.Content)
	}

	links, err := mcpruntime.NewTool[LinksInput, mcpruntime.NoOutput](desc("get-resource-links", `{"type":"object"}`, ""), c).Call(ctx, LinksInput{Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, b := range links.Content {
		if b.Type == mcpruntime.ContentResourceLink && b.URI != "" && b.Name != "" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("get-resource-links: %d links in %+v", n, links.Content)
	}
}
