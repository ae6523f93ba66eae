package benchdata

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// The load benchmarks run loadWorkers goroutines making loadCalls calls
// each over one connection, an agent gateway's shape; one op is the whole
// batch, and ns/call divides it. The baseline is the raw mcp-go client on
// the same transport decoding into map[string]any.
const (
	loadWorkers = 50
	loadCalls   = 2000
)

// load runs call loadWorkers×loadCalls times and reports ns/call.
func load(b *testing.B, call func(context.Context) error) {
	ctx := context.Background()
	if err := call(ctx); err != nil { // connect outside the timing
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		errs := make(chan error, loadWorkers)
		for range loadWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range loadCalls {
					if err := call(ctx); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*loadWorkers*loadCalls), "ns/call")
}

// rawCall is the baseline: mcp-go's client, arguments as a map, the
// structured result decoded into map[string]any.
func rawCall(cl *client.Client) func(context.Context) error {
	var args map[string]any
	_ = json.Unmarshal(validArgs, &args)
	return func(ctx context.Context) error {
		req := mcp.CallToolRequest{}
		req.Params.Name = "get_report"
		req.Params.Arguments = args
		res, err := cl.CallTool(ctx, req)
		if err != nil {
			return err
		}
		var out map[string]any
		if err := json.Unmarshal(res.RawStructuredContent, &out); err != nil || out["region"] != "emea" {
			return err
		}
		return nil
	}
}

func rawClient(b *testing.B, tr transport.Interface) *client.Client {
	cl := client.NewClient(tr)
	b.Cleanup(func() { cl.Close() })
	ctx := context.Background()
	if err := cl.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := cl.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
	return cl
}

// BenchmarkLoad: Toolset.Invoke over stdio (the model-facing path: the
// arguments as a model sends them, the text a model reads) and the
// generated client over Manager.Caller on streamable HTTP (a gateway's
// path: registry, SSRF-guarded dial, breaker, pooled session), each
// against raw mcp-go on the same transport in the same run.
func BenchmarkLoad(b *testing.B) {
	b.Run("toolset-invoke/stdio", func(b *testing.B) {
		conn := mcpgo.Stdio(os.Args[0], []string{"-test.run=^$"}, mcpgo.WithEnv(serveEnv+"=1"))
		defer conn.Close()
		ts, err := mcpruntime.NewToolset(Invokers(conn)...)
		if err != nil {
			b.Fatal(err)
		}
		load(b, func(ctx context.Context) error {
			r, err := ts.Invoke(ctx, "get_report", validArgs)
			if err == nil && r.IsError {
				b.Errorf("tool error: %s", r.Text)
			}
			return err
		})
	})
	b.Run("raw/stdio", func(b *testing.B) {
		load(b, rawCall(rawClient(b, transport.NewStdio(os.Args[0], []string{serveEnv + "=1"}, "-test.run=^$"))))
	})

	srv := httptest.NewServer(server.NewStreamableHTTPServer(newServer()))
	defer srv.Close()
	b.Run("manager-caller/http", func(b *testing.B) {
		p := manager.Policy{AllowPrivateNetworks: true}
		reg := manager.NewRegistry(manager.NewMemoryServerStore(), p)
		ctx := context.Background()
		if _, err := reg.Save(ctx, manager.ServerConfig{ID: "bench", Transport: manager.Transport{Kind: manager.TransportHTTP, URL: srv.URL}}); err != nil {
			b.Fatal(err)
		}
		m := manager.NewManager(reg, mcpgo.NewConnector(p))
		defer m.CloseAll()
		caller, err := m.Caller(ctx, "agent", "bench")
		if err != nil {
			b.Fatal(err)
		}
		c := NewClient(caller)
		in, err := DecodeGetReportInput(validArgs)
		if err != nil {
			b.Fatal(err)
		}
		load(b, func(ctx context.Context) error {
			res, err := c.GetReport(ctx, in)
			if err == nil && res.Output.Region != "emea" {
				b.Errorf("region %q", res.Output.Region)
			}
			return err
		})
	})
	b.Run("raw/http", func(b *testing.B) {
		tr, err := transport.NewStreamableHTTP(srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		load(b, rawCall(rawClient(b, tr)))
	})
}
