package mcpgo_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/server/servertest"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// logRecords collects the records of one message.
type logRecords struct {
	mu   sync.Mutex
	msg  string
	recs []slog.Record
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, h.msg) {
		h.mu.Lock()
		h.recs = append(h.recs, r)
		h.mu.Unlock()
	}
	return nil
}
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecords) WithGroup(string) slog.Handler      { return h }

func (h *logRecords) attrs() []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]string
	for _, r := range h.recs {
		m := map[string]string{}
		r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
		out = append(out, m)
	}
	return out
}

// TestIdentityUnsentLogged: a tool with an identity but no identity
// argument, on a connection without headers (stdio), is called without
// the token, by design, and the runtime says so once per server; over HTTP
// the token goes as a header and nothing is logged.
func TestIdentityUnsentLogged(t *testing.T) {
	h := &logRecords{msg: "mcpruntime: the caller's identity was not sent"}
	prev := slog.Default()
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() { slog.SetDefault(prev) })

	r := &recorder{file: filepath.Join(t.TempDir(), "seen.jsonl")}
	stdio := mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv("MCPGO_FIXTURE=recorder", "RECORDER_LOG="+r.file), mcpgo.WithName("recorder-unsent-stdio"))
	closeConn(t, stdio)
	whoami := mcpruntime.NewTool[RunInput, mcpruntime.NoOutput](recorderDesc(t, "whoami", true), stdio, mcpruntime.WithIdentity(mcpruntime.ContextPrincipal))
	ctx := mcpruntime.WithPrincipal(context.Background(), "alice", token("tok-alice-"))
	for range 2 {
		if _, err := whoami.Call(ctx, RunInput{Run: "stdio"}); err != nil {
			t.Fatal(err)
		}
	}
	// Another tool of the same server: already said.
	other := mcpruntime.NewTool[RunInput, mcpruntime.NoOutput](recorderDesc(t, "leaky", true), stdio, mcpruntime.WithIdentity(mcpruntime.ContextPrincipal))
	if _, err := other.Call(ctx, RunInput{Run: "stdio"}); err != nil {
		t.Fatal(err)
	}
	if got := r.entries(t); len(got) != 3 || got[0].Arg != "" || got[0].Header != "" {
		t.Fatalf("the server saw %+v, want three calls without a token", got)
	}
	logged := h.attrs()
	if len(logged) != 1 || logged[0]["server"] != "recorder-unsent-stdio" || logged[0]["call"] != "tool whoami" || !strings.Contains(logged[0]["hint"], "identity.argument") {
		t.Errorf("logged %v, want one record naming the server, the tool and identity.argument", logged)
	} else if lv := h.recs[0].Level; lv != slog.LevelDebug {
		t.Errorf("logged at %v, want debug (a stdio call without the token is the common case)", lv)
	}
	for _, rec := range logged {
		for _, v := range rec {
			if strings.Contains(v, "tok-alice-") {
				t.Error("the log carries the token")
			}
		}
	}

	hr := &recorder{}
	ts := servertest.NewTestStreamableHTTPServer(hr.server(), server.WithHTTPContextFunc(withAuth))
	t.Cleanup(ts.Close)
	web := mcpgo.StreamableHTTP(ts.URL+"/mcp", mcpgo.WithName("recorder-unsent-http"))
	closeConn(t, web)
	webWho := mcpruntime.NewTool[RunInput, mcpruntime.NoOutput](recorderDesc(t, "whoami", true), web, mcpruntime.WithIdentity(mcpruntime.ContextPrincipal))
	if _, err := webWho.Call(ctx, RunInput{Run: "http"}); err != nil {
		t.Fatal(err)
	}
	if got := hr.entries(t); len(got) != 1 || !strings.HasPrefix(got[0].Header, "Bearer tok-alice-") {
		t.Fatalf("over HTTP the server saw %+v, want the bearer header", got)
	}
	if n := len(h.attrs()); n != 1 {
		t.Errorf("a call whose token was sent was logged as unsent (%d records)", n)
	}
}
