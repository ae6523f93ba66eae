package everything_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/example/everything"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// server starts the reference server over stdio through the generated
// bindings. Without node or the npm package the test is skipped, except in
// CI, where that is a failure.
func server(t *testing.T) *everything.Client {
	t.Helper()
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
	// The capabilities the committed manifest was captured with (the
	// server offers some tools only to clients that have them).
	conn := mcpgo.Stdio(node, []string{script, "stdio"}, mcpgo.WithName("everything"),
		mcpgo.WithElicitation(mcpgo.ElicitDefaults, true), mcpgo.WithRoots(mcpgo.Root{URI: "file:///tmp", Name: "tmp"}),
		mcpgo.WithSampling(func(context.Context, mcpgo.SamplingRequest) (mcpgo.SamplingResponse, error) {
			return mcpgo.SamplingResponse{Content: mcpruntime.Content{Type: "text", Text: "sampled"}, Model: "test"}, nil
		}))
	t.Cleanup(func() { _ = conn.Close() })
	return everything.NewClient(conn)
}

func TestEverythingLive(t *testing.T) {
	c := server(t)
	ctx := context.Background()

	// The committed manifest still matches the server the tests run.
	if err := c.CheckTools(ctx); err != nil {
		t.Fatal(err)
	}

	t.Run("typed output", func(t *testing.T) {
		r, err := c.GetStructuredContent(ctx, everything.GetStructuredContentInput{Location: everything.GetStructuredContentInputLocationChicago})
		if err != nil {
			t.Fatal(err)
		}
		want := everything.GetStructuredContentOutput{Temperature: 36, Conditions: "Light rain / drizzle", Humidity: 82}
		if !reflect.DeepEqual(r.Output, want) || r.Source != mcpruntime.FromStructuredContent {
			t.Errorf("output %+v from %v, want %+v from structuredContent", r.Output, r.Source, want)
		}
	})

	t.Run("image", func(t *testing.T) {
		r, err := c.GetTinyImage(ctx, everything.GetTinyImageInput{})
		if err != nil {
			t.Fatal(err)
		}
		var img *mcpruntime.Content
		for i := range r.Content {
			if r.Content[i].Type == mcpruntime.ContentImage {
				img = &r.Content[i]
			}
		}
		if img == nil || img.MIMEType != "image/png" {
			t.Fatalf("no PNG image block in %+v", r.Content)
		}
		data, err := base64.StdEncoding.DecodeString(img.Data)
		if err != nil || !strings.HasPrefix(string(data), "\x89PNG") {
			t.Errorf("image data is not a base64 PNG: %v", err)
		}
	})

	t.Run("resource links", func(t *testing.T) {
		n := 2.0
		r, err := c.GetResourceLinks(ctx, everything.GetResourceLinksInput{Count: &n})
		if err != nil {
			t.Fatal(err)
		}
		var links []mcpruntime.Content
		for _, b := range r.Content {
			if b.Type == mcpruntime.ContentResourceLink {
				links = append(links, b)
			}
		}
		if len(links) != 2 {
			t.Fatalf("got %d resource links, want 2: %+v", len(links), r.Content)
		}
		for _, l := range links {
			if !strings.HasPrefix(l.URI, "demo://resource/") || l.Name == "" || len(l.Raw) == 0 {
				t.Errorf("resource link %+v", l)
			}
		}
	})

	t.Run("model", func(t *testing.T) {
		tools, err := c.Toolset(everything.ToolGetStructuredContent, everything.ToolEcho)
		if err != nil {
			t.Fatal(err)
		}
		m, err := tools.Invoke(ctx, "get-structured-content", json.RawMessage(`{"location": "Paris"}`))
		if err != nil || !m.IsError || m.Result != nil || !strings.Contains(m.Text, "/location") {
			t.Errorf("invalid location: %+v, %v", m, err)
		}
		m, err = tools.Invoke(ctx, "echo", json.RawMessage(`{"message": "hi"}`))
		if err != nil || m.IsError || m.Text != "Echo: hi" {
			t.Errorf("echo: %+v, %v", m, err)
		}
		m, err = tools.Invoke(ctx, "get-env", json.RawMessage(`{}`))
		if err != nil || !m.IsError || !strings.Contains(m.Text, `no tool "get-env"`) {
			t.Errorf("a tool outside the set: %+v, %v", m, err)
		}
	})
}
