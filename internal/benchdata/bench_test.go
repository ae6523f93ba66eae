package benchdata

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// serveEnv makes the test binary serve get_report over stdio, so the
// stdio benchmarks talk to a real subprocess.
const serveEnv = "MCPGEN_BENCH_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) != "" {
		if err := server.ServeStdio(newServer()); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// report is a ~1 KiB structuredContent, valid under the output schema.
var report = []byte(`{"region":"emea","quarter":"2026-Q3","currency":"EUR","total":184250.5,"next_cursor":null,"deals":[` +
	`{"id":"D-1001","title":"Acme rollout, phase two","amount":42000,"stage":"won","owner":{"login":"ada","id":7},"tags":["renewal","priority"]},` +
	`{"id":"D-1002","title":"Globex pilot","amount":12500.5,"stage":"qualified","owner":{"login":"grace","id":11},"tags":["pilot"]},` +
	`{"id":"D-1003","title":"Initech migration","amount":87750,"stage":"lead","owner":{"login":"linus","id":3},"tags":[]},` +
	`{"id":"D-1004","title":"Umbrella support contract","amount":42000,"stage":"won","owner":{"login":"ada","id":7},"tags":["support","multi-year"]},` +
	`{"id":"D-1005","title":"Hooli expansion","amount":0,"stage":"lost","owner":{"login":"barbara","id":5},"tags":["churn-risk"]}]}`)

// invalidReport breaks five constraints at once.
// An unknown stage would not count: output enums carry values they do not
// list (forward compatibility), so one amount breaks its bound instead.
var invalidReport = strings.NewReplacer(`"EUR"`, `"EURO"`, `"D-1002"`, `"X-1002"`, `"amount":87750`, `"amount":-1`,
	`"title":"Hooli expansion"`, `"title":""`, `"total":184250.5`, `"total":-1`).Replace(string(report))

var validArgs = json.RawMessage(`{"region":"emea","quarter":"2026-Q3","limit":20,"owners":["ada","grace"]}`)

func newServer() *server.MCPServer {
	s := server.NewMCPServer("bench", "1.0", server.WithToolCapabilities(false))
	var tool struct {
		Tools []json.RawMessage `json:"tools"`
	}
	data, _ := os.ReadFile("bench.json")
	_ = json.Unmarshal(data, &tool)
	t := mcp.NewToolWithRawSchema("get_report", "report", mustInputSchema(tool.Tools[0]))
	t.RawOutputSchema = mustOutputSchema(tool.Tools[0])
	s.AddTool(t, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{
			Content:              []mcp.Content{mcp.NewTextContent(string(report))},
			StructuredContent:    json.RawMessage(report),
			RawStructuredContent: report,
		}, nil
	})
	return s
}

func member(raw json.RawMessage, k string) json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m[k]
}

func mustInputSchema(raw json.RawMessage) json.RawMessage  { return member(raw, "inputSchema") }
func mustOutputSchema(raw json.RawMessage) json.RawMessage { return member(raw, "outputSchema") }

// plainReport mirrors GetReportOutput without generated methods: what
// encoding/json does on its own.
type plainReport struct {
	Region     string  `json:"region"`
	Quarter    string  `json:"quarter"`
	Currency   *string `json:"currency,omitempty"`
	Total      float64 `json:"total"`
	NextCursor *string `json:"next_cursor"`
	Deals      []struct {
		ID     string  `json:"id"`
		Title  string  `json:"title"`
		Amount float64 `json:"amount"`
		Stage  string  `json:"stage"`
		Owner  *struct {
			Login string `json:"login"`
			ID    int64  `json:"id"`
		} `json:"owner,omitempty"`
		Tags []string `json:"tags,omitempty"`
	} `json:"deals"`
}

// BenchmarkRehydrate decodes the ~1 KiB structuredContent.
func BenchmarkRehydrate(b *testing.B) {
	b.Logf("structuredContent is %d bytes", len(report))
	b.Run("generated-decode+validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeGetReportOutput(report); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generated-decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var out GetReportOutput
			if err := json.Unmarshal(report, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json-map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var out map[string]any
			if err := json.Unmarshal(report, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json-struct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var out plainReport
			if err := json.Unmarshal(report, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func compiledOutputSchema(tb testing.TB) *jsonschema.Schema {
	data, err := os.ReadFile("bench.json")
	if err != nil {
		tb.Fatal(err)
	}
	var tl struct{ Tools []json.RawMessage }
	if err := json.Unmarshal(data, &tl); err != nil {
		tb.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(mustOutputSchema(tl.Tools[0])))
	if err != nil {
		tb.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("bench:///out.json", doc); err != nil {
		tb.Fatal(err)
	}
	s, err := c.Compile("bench:///out.json")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestBenchInstances keeps the validation benchmark honest: both
// validators agree that report is valid and invalidReport is not, and the
// generated one finds every broken constraint.
func TestBenchInstances(t *testing.T) {
	s := compiledOutputSchema(t)
	for _, c := range []struct {
		data  string
		valid bool
	}{{string(report), true}, {invalidReport, false}} {
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(c.data)))
		if err := s.Validate(inst); (err == nil) != c.valid {
			t.Errorf("jsonschema on valid=%v instance: %v", c.valid, err)
		}
		var out GetReportOutput
		if err := json.Unmarshal([]byte(c.data), &out); err != nil {
			t.Fatal(err)
		}
		err := out.Validate()
		if (err == nil) != c.valid {
			t.Errorf("generated validator on valid=%v instance: %v", c.valid, err)
		}
		if ve, ok := err.(*mcpruntime.ValidationError); !c.valid && (!ok || len(ve.Violations) != 5) {
			t.Errorf("want 5 violations, got %v", err)
		} else if !c.valid {
			// The pointers of array elements are built after the fact
			// (Violations.Under): each must still name its element.
			var got []string
			for _, v := range ve.Violations {
				got = append(got, v.Pointer)
			}
			if want := []string{"/currency", "/total", "/deals/1/id", "/deals/2/amount", "/deals/4/title"}; !slices.Equal(got, want) {
				t.Errorf("violations at %q, want %q", got, want)
			}
		}
	}
}

// BenchmarkValidate compares the generated validator with
// santhosh-tekuri/jsonschema (compiled once) on the same decoded instances.
func BenchmarkValidate(b *testing.B) {
	s := compiledOutputSchema(b)
	for _, c := range []struct {
		name string
		data string
	}{{"valid", string(report)}, {"invalid", invalidReport}} {
		var typed GetReportOutput
		if err := json.Unmarshal([]byte(c.data), &typed); err != nil {
			b.Fatal(err)
		}
		generic, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(c.data)))
		b.Run("generated/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = typed.Validate()
			}
		})
		b.Run("jsonschema/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = s.Validate(generic)
			}
		})
	}
}

// BenchmarkCall compares a typed call through the generated client with
// the whole runtime stack (identity, a gate that allows, taint record,
// argument validation, rehydration) against the raw mcp-go client calling
// the same tool and decoding into map[string]any, on the same transport.
//
// raw-listed is the raw client after one tools/list, as the typed client
// does to check that the tool exists: once mcp-go has the tool's schema it
// derives x-mcp-header parameter headers from it on every call, which is
// part of the gap between typed and raw.
func BenchmarkCall(b *testing.B) {
	for _, tr := range []string{"inprocess", "stdio"} {
		b.Run("typed/"+tr, func(b *testing.B) {
			var conn *mcpgo.Conn
			if tr == "inprocess" {
				conn = mcpgo.InProcess(newServer())
			} else {
				conn = mcpgo.Stdio(os.Args[0], []string{"-test.run=^$"}, mcpgo.WithEnv(serveEnv+"=1"))
			}
			defer conn.Close()
			gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore())
			c := NewClient(conn, mcpruntime.WithGate(gate), mcpruntime.WithIdentity(mcpruntime.ContextPrincipal))
			ctx := mcpruntime.WithPrincipal(context.Background(), "bench-user", mcpruntime.Secret("token"))
			ctx = mcpruntime.WithRun(ctx, mcpruntime.NewRun("bench"))
			in, err := DecodeGetReportInput(validArgs)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.GetReport(ctx, in); err != nil { // connect outside the timing
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := c.GetReport(ctx, in)
				if err != nil || res.Output.Region != "emea" {
					b.Fatal(err)
				}
			}
		})
		for _, variant := range []string{"raw", "raw-listed"} {
			b.Run(variant+"/"+tr, func(b *testing.B) {
				var cl *client.Client
				var err error
				if tr == "inprocess" {
					cl, err = client.NewInProcessClient(newServer())
				} else {
					cl = client.NewClient(transport.NewStdio(os.Args[0], []string{serveEnv + "=1"}, "-test.run=^$"))
				}
				if err != nil {
					b.Fatal(err)
				}
				defer cl.Close()
				ctx := context.Background()
				if err := cl.Start(ctx); err != nil {
					b.Fatal(err)
				}
				if _, err := cl.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
					b.Fatal(err)
				}
				if variant == "raw-listed" {
					if _, err := cl.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
						b.Fatal(err)
					}
				}
				var args map[string]any
				_ = json.Unmarshal(validArgs, &args)
				req := mcp.CallToolRequest{}
				req.Params.Name = "get_report"
				req.Params.Arguments = args
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					res, err := cl.CallTool(ctx, req)
					if err != nil {
						b.Fatal(err)
					}
					var out map[string]any
					if err := json.Unmarshal(res.RawStructuredContent, &out); err != nil || out["region"] != "emea" {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkModelArgs compares the two ways the runtime can decode a
// model's arguments into a generated Input: through encoding/json's
// Decoder (which calls the generated UnmarshalJSON after scanning the
// arguments itself, the path hand-written types take) and by calling the
// generated decoder directly (the path generated types take).
func BenchmarkModelArgs(b *testing.B) {
	b.Run("via-encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in GetReportInput
			if !json.Valid(validArgs) {
				b.Fatal("invalid")
			}
			dec := json.NewDecoder(bytes.NewReader(validArgs))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generated-direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in GetReportInput
			if err := in.UnmarshalJSON(validArgs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
