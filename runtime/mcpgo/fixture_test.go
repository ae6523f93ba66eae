package mcpgo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgen/mcpgen/internal/testca"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

var testCA *testca.CA

// The fixture is a real mcp-go server with tools that behave well and badly.
// TestMain re-runs the test binary as that server when MCPGO_FIXTURE is set,
// so stdio tests talk to a real subprocess.
func TestMain(m *testing.M) {
	if os.Getenv("MCPGO_FIXTURE") == "http" {
		// The fixture over streamable HTTP in a process of its own (so a
		// test can measure what the client alone allocates); the address
		// is the first line on stdout.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(ln.Addr().String())
		_ = http.Serve(ln, server.NewStreamableHTTPServer(fixture()))
		os.Exit(0)
	}
	if os.Getenv("MCPGO_FIXTURE") == "reach" {
		os.Exit(reachMain()) // reach_test.go: tasks, caching hints, older versions
	}
	if os.Getenv("MCPGO_FIXTURE") == "reach-pickup" {
		os.Exit(reachPickup())
	}
	if mode := os.Getenv("MCPGO_FIXTURE"); mode != "" && mode != "stdio" {
		os.Exit(guardMain(mode)) // guards_test.go: the recorder server and store clients
	}
	if os.Getenv("MCPGO_FIXTURE") == "stdio" {
		if err := server.ServeStdio(fixture()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Every TLS server of these tests has a certificate of testCA, which
	// the process trusts instead of the system roots.
	caDir, err := os.MkdirTemp("", "mcpgo-ca-")
	if err == nil {
		if testCA, err = testca.New(); err == nil {
			err = testCA.Trust(caDir)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(caDir)
	if crmBuild.path != "" {
		_ = os.RemoveAll(filepath.Dir(crmBuild.path))
	}
	os.Exit(code)
}

const (
	weatherIn  = `{"type":"object","properties":{"city":{"type":"string","enum":["Oslo","Lima"]}},"required":["city"],"additionalProperties":false}`
	weatherOut = `{"type":"object","properties":{"temperature":{"type":"number"},"conditions":{"type":"string","minLength":1}},"required":["temperature","conditions"],"additionalProperties":false}`
	emptyIn    = `{"type":"object","properties":{}}`
)

// bigResource is the size of the fixture's mem://big resource: past the
// default read limit and the default message cap.
const bigResource = 20 << 20

func fixture() *server.MCPServer {
	s := server.NewMCPServer("fixture", "1.0.0", server.WithToolCapabilities(false), server.WithResourceCapabilities(false, false))
	s.AddResource(mcp.NewResource("mem://big", "big", mcp.WithMIMEType("text/plain")),
		func(_ context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "text/plain", Text: strings.Repeat("x", bigResource)}}, nil
		})
	addFileTemplates(s) // readers_attack_test.go
	add := func(name, in, out string, h server.ToolHandlerFunc) {
		t := mcp.NewToolWithRawSchema(name, "fixture tool "+name, json.RawMessage(in))
		if out != "" {
			t.RawOutputSchema = json.RawMessage(out)
		}
		s.AddTool(t, h)
	}
	add("weather", weatherIn, weatherOut, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		w := map[string]any{"Oslo": map[string]any{"temperature": -3.5, "conditions": "snow"}, "Lima": map[string]any{"temperature": 19, "conditions": "fog"}}[req.GetString("city", "")]
		if w == nil {
			return mcp.NewToolResultError("unknown city"), nil
		}
		b, _ := json.Marshal(w)
		res := mcp.NewToolResultStructured(w, string(b))
		res.Meta = mcp.NewMetaFromMap(map[string]any{"io.example/source": "fixture"})
		return res, nil
	})
	// Claims the weather schema but sends a string temperature and no
	// conditions.
	add("bad_output", emptyIn, weatherOut, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultStructured(map[string]any{"temperature": "hot"}, `{"temperature":"hot"}`), nil
	})
	// Structured output only as a JSON text block, as older servers do.
	add("text_json", emptyIn, weatherOut, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`{"temperature": 7, "conditions": "rain"}`), nil
	})
	// Declares an output schema and sends nothing structured at all.
	add("no_structured", emptyIn, weatherOut, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("it is raining"), nil
	})
	add("fails", emptyIn, weatherOut, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("the widget is jammed"), nil
	})
	add("handler_error", emptyIn, "", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("database unavailable")
	})
	// Blocks until the request is cancelled (or a minute passes).
	add("sleep", emptyIn, "", func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return mcp.NewToolResultText("woke up"), nil
		}
	})
	add("kinds", emptyIn, "", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		size := int64(3)
		link := mcp.NewResourceLink("mem://doc", "doc", "a document", "text/plain")
		link.Size = &size
		return &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewTextContent("four kinds follow"),
			mcp.NewImageContent("iVBORw0KGgo=", "image/png"),
			mcp.NewAudioContent("UklGRg==", "audio/wav"),
			link,
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "mem://note", MIMEType: "text/plain", Text: "note"}),
			mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "mem://bin", MIMEType: "application/octet-stream", Blob: "AAEC"}),
		}}, nil
	})
	return s
}

// Hand-written types shaped like generated ones.

type WeatherInput struct {
	City string `json:"city"`
}

func (in *WeatherInput) Validate() error {
	if !slices.Contains([]string{"Oslo", "Lima"}, in.City) {
		return &mcpruntime.ValidationError{Violations: []mcpruntime.Violation{{Pointer: "/city", Message: `must be one of "Oslo", "Lima"`}}}
	}
	return nil
}

type WeatherOutput struct {
	Temperature float64 `json:"temperature"`
	Conditions  string  `json:"conditions"`
}

func (o *WeatherOutput) Validate() error {
	if o.Conditions == "" {
		return &mcpruntime.ValidationError{Subject: "weather output", Violations: []mcpruntime.Violation{{Pointer: "/conditions", Message: "required member missing or empty"}}}
	}
	return nil
}

type EmptyInput struct{}

func (*EmptyInput) Validate() error { return nil }

func desc(name, in, out string) *mcpruntime.Descriptor {
	d := &mcpruntime.Descriptor{Name: name, GoName: name, Annotations: mcpruntime.DefaultAnnotations(), InputSchema: json.RawMessage(in)}
	if out != "" {
		d.OutputSchema = json.RawMessage(out)
	}
	return d
}

var (
	weatherDesc      = desc("weather", weatherIn, weatherOut)
	badOutputDesc    = desc("bad_output", emptyIn, weatherOut)
	textJSONDesc     = desc("text_json", emptyIn, weatherOut)
	noStructuredDesc = desc("no_structured", emptyIn, weatherOut)
	failsDesc        = desc("fails", emptyIn, weatherOut)
	handlerErrDesc   = desc("handler_error", emptyIn, "")
	sleepDesc        = desc("sleep", emptyIn, "")
	kindsDesc        = desc("kinds", emptyIn, "")
	missingDesc      = desc("not_there", emptyIn, "")
)

func newWeather(c mcpruntime.Caller, opts ...mcpruntime.Option) *mcpruntime.Tool[WeatherInput, WeatherOutput] {
	return mcpruntime.NewTool[WeatherInput, WeatherOutput](weatherDesc, c, opts...)
}

func newWeatherLike(d *mcpruntime.Descriptor, c mcpruntime.Caller) *mcpruntime.Tool[EmptyInput, WeatherOutput] {
	return mcpruntime.NewTool[EmptyInput, WeatherOutput](d, c)
}

func newPlain(d *mcpruntime.Descriptor, c mcpruntime.Caller, opts ...mcpruntime.Option) *mcpruntime.Tool[EmptyInput, mcpruntime.NoOutput] {
	return mcpruntime.NewTool[EmptyInput, mcpruntime.NoOutput](d, c, opts...)
}
