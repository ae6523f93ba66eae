package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgen/mcpgen/internal/testserver"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// The client side of the protocol against the reference server, which
// exercises each part of it: progress, logging, sampling, elicitation,
// roots and resource subscriptions, over stdio and streamable HTTP.
func TestEverythingClientCapabilities(t *testing.T) {
	node, script, preload, err := testserver.Everything()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dial := map[string]func(t *testing.T, opts ...mcpgo.Option) *mcpgo.Conn{
		"stdio": func(t *testing.T, opts ...mcpgo.Option) *mcpgo.Conn {
			return mcpgo.Stdio(node, []string{script, "stdio"}, opts...)
		},
		"http": func(t *testing.T, opts ...mcpgo.Option) *mcpgo.Conn {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := l.Addr().(*net.TCPAddr).Port
			l.Close()
			cmd := exec.Command(node, "--require", preload, script, "streamableHttp")
			cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			addr := "127.0.0.1:" + strconv.Itoa(port)
			deadline := time.Now().Add(60 * time.Second)
			for {
				c, err := net.DialTimeout("tcp", addr, time.Second)
				if err == nil {
					c.Close()
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("server-everything never listened: %s", stderr.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			return mcpgo.StreamableHTTP("http://"+addr+"/mcp", opts...)
		},
	}
	for name, d := range dial {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var asked []mcpgo.ElicitationRequest
			var sampled []mcpgo.SamplingRequest
			logs := make(chan slog.Record, 64)
			c := d(t, mcpgo.WithName("everything"),
				mcpgo.WithElicitation(func(_ context.Context, r mcpgo.ElicitationRequest) (mcpgo.ElicitationResponse, error) {
					mu.Lock()
					asked = append(asked, r)
					mu.Unlock()
					return mcpgo.ElicitationResponse{Action: mcpgo.ElicitAccept, Content: map[string]any{"name": "Ada Lovelace", "check": true}}, nil
				}, true),
				mcpgo.WithSampling(func(_ context.Context, r mcpgo.SamplingRequest) (mcpgo.SamplingResponse, error) {
					mu.Lock()
					sampled = append(sampled, r)
					mu.Unlock()
					return mcpgo.SamplingResponse{Content: mcpruntime.Content{Type: "text", Text: "a sampled haiku"}, Model: "test-model", StopReason: "endTurn"}, nil
				}),
				mcpgo.WithRoots(mcpgo.Root{URI: "file:///srv/project", Name: "project"}),
				mcpgo.WithLogger(slog.New(recordHandler{logs})),
			)
			t.Cleanup(func() { _ = c.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			text := func(t *testing.T, tool, args string) string {
				t.Helper()
				r, err := c.CallTool(ctx, tool, json.RawMessage(args))
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				if r.IsError {
					t.Fatalf("%s failed: %s", tool, r.Text())
				}
				return r.Text()
			}

			t.Run("progress", func(t *testing.T) {
				var got []mcpruntime.Progress
				pctx := mcpruntime.WithProgress(ctx, func(p mcpruntime.Progress) {
					mu.Lock()
					got = append(got, p)
					mu.Unlock()
				})
				r, err := c.CallTool(pctx, "trigger-long-running-operation", json.RawMessage(`{"duration":1,"steps":3}`))
				if err != nil || r.IsError {
					t.Fatalf("long-running operation: %v %+v", err, r)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(got) != 3 || got[2].Progress != 3 || got[2].Total != 3 {
					t.Errorf("progress notifications %+v, want 3 reaching 3 of 3", got)
				}
			})
			t.Run("sampling", func(t *testing.T) {
				out := text(t, "trigger-sampling-request", `{"prompt":"Write a haiku","maxTokens":50}`)
				mu.Lock()
				defer mu.Unlock()
				if !strings.Contains(out, "a sampled haiku") || len(sampled) != 1 || len(sampled[0].Messages) == 0 ||
					!strings.Contains(sampled[0].Messages[0].Content[0].Text, "Write a haiku") || sampled[0].MaxTokens != 50 {
					t.Errorf("sampling: result %q, requests %+v", out, sampled)
				}
			})
			t.Run("elicitation", func(t *testing.T) {
				out := text(t, "trigger-elicitation-request", `{}`)
				mu.Lock()
				defer mu.Unlock()
				if len(asked) != 1 || asked[0].Mode != "form" || !bytes.Contains(asked[0].Schema, []byte(`"name"`)) {
					t.Fatalf("elicitation requests %+v", asked)
				}
				if !strings.Contains(out, "Ada Lovelace") {
					t.Errorf("the server did not get the answer: %s", out)
				}
			})
			t.Run("roots", func(t *testing.T) {
				if out := text(t, "get-roots-list", `{}`); !strings.Contains(out, "file:///srv/project") {
					t.Errorf("roots: %s", out)
				}
			})
			t.Run("logging", func(t *testing.T) {
				text(t, "toggle-simulated-logging", `{}`)
				// The server logs other things too (roots it received);
				// wait for a simulated message, at one of its levels.
				for {
					select {
					case r := <-logs:
						if strings.Contains(r.Message, "evel message") || strings.Contains(r.Message, "level-message") {
							if srv := attr(r, "server"); srv != "everything" {
								t.Errorf("record names server %q", srv)
							}
							return
						}
					case <-ctx.Done():
						t.Fatal("no simulated log message from the server")
					}
				}
			})
			t.Run("subscriptions", func(t *testing.T) {
				var uri string
				if err := c.Do(ctx, "resources/list", func(ctx context.Context, cli *client.Client) error {
					res, err := cli.ListResources(ctx, mcp.ListResourcesRequest{})
					if err == nil && len(res.Resources) > 0 {
						uri = res.Resources[0].URI
					}
					return err
				}); err != nil || uri == "" {
					t.Fatalf("resources/list: %v", err)
				}
				updated := make(chan string, 8)
				unsubscribe, err := c.Subscribe(ctx, uri, func(u string) { updated <- u })
				if err != nil {
					t.Fatal(err)
				}
				text(t, "toggle-subscriber-updates", `{}`)
				select {
				case u := <-updated:
					if u != uri {
						t.Errorf("update for %q, subscribed to %q", u, uri)
					}
				case <-ctx.Done():
					t.Fatal("no resources/updated")
				}
				if err := unsubscribe(ctx); err != nil {
					t.Errorf("unsubscribe: %v", err)
				}
			})
		})
	}
}

// recordHandler sends every record to a channel (dropping when full).
type recordHandler struct{ ch chan slog.Record }

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.ch <- r:
	default:
	}
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }

func attr(r slog.Record, key string) string {
	v := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
			return false
		}
		return true
	})
	return v
}
