package agent

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
	"github.com/mcpgen/mcpgen/runtime/mcpimpl"
)

// contextPair is a piece of an error's context: a word and the quoted
// name after it, said as a label (before a colon), as in `tool "move":`,
// `server "bank":`, `(tool "move"):`. A name in a sentence ("it is for
// tool "move" of server ...") is not context.
var contextPair = regexp.MustCompile(`\b(\w+) ("(?:[^"\\]|\\.)*")\)?:`)

// repeated returns the first context pair that appears twice in msg.
func repeated(msg string) string {
	seen := map[string]bool{}
	for _, m := range contextPair.FindAllStringSubmatch(msg, -1) {
		k := m[1] + " " + m[2]
		if seen[k] {
			return k
		}
		seen[k] = true
	}
	return ""
}

// deadEndpoint is a streamable HTTP endpoint nothing listens on.
func deadEndpoint(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr + "/mcp"
}

// TestErrorsSayContextOnce: every Go error of the agent's paths says each
// piece of its context once (`tool "x": tool "x":` is the bug), whichever
// layer adds it.
func TestErrorsSayContextOnce(t *testing.T) {
	dead := mcpgo.StreamableHTTP(deadEndpoint(t), mcpgo.WithName("bank"))
	t.Cleanup(func() { _ = dead.Close() })
	dir := filepath.Join(t.TempDir(), "approvals")
	closed := fileStore(t, dir)
	_ = closed.Close()
	ident := mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)
	reader := func(c mcpruntime.Caller, opts ...mcpruntime.ReadOption) mcpruntime.Invoker {
		return mcpimpl.NewResourceReader(docDesc, &mcpruntime.ResourceDescriptor{URITemplate: "doc:///{name}", Name: "doc"}, c,
			append(opts, mcpruntime.ReadIdentity(mcpruntime.ContextPrincipal))...)
	}
	sets := map[string]*Set{
		"one source": mustSet(t, Source{Tools: toolset(t,
			mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](moveDesc, dead, ident),
			reader(dead))}),
		"prefixed": mustSet(t, Source{Prefix: "a", Tools: toolset(t,
			mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](moveDesc, dead, ident),
			reader(dead))}),
		"closed store": mustSet(t, Source{Prefix: "a", Tools: toolset(t,
			mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](moveDesc, dead, ident, mcpruntime.WithGate(mcpruntime.NewGate(closed))),
			reader(dead, mcpruntime.WithToolOptions(mcpruntime.WithGate(mcpruntime.NewGate(closed, mcpruntime.GateTool("read_doc", mcpruntime.GateAlways))))))}),
	}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, s := range sets {
		for _, name := range s.Names() {
			args := json.RawMessage(`{"amount":1}`)
			if name == "read_doc" || name == "a__read_doc" {
				args = json.RawMessage(`{"name":"x"}`)
			}
			for _, ctx := range []context.Context{context.Background(), alice} {
				_, err := s.Dispatch(ctx, Call{ID: "c", Name: name, Arguments: args})
				add(err)
			}
		}
	}

	// Pauses: read and resumed without the principal, through a store
	// that fails, and altered.
	a, b := &server{}, &server{}
	p := newProcess(t, mcpruntime.NewMemoryStore(), a, b, nil)
	stored := gatedTurn(t, p, "1")
	pause, _ := ParsePause(stored)
	_, err := pause.Approvals(context.Background(), p.set)
	add(err)
	_, _, err = p.set.Resume(context.Background(), pause)
	add(err)
	renamed, _ := ParsePause(edit(t, stored, func(p, _ map[string]any) { p["results"].([]any)[0].(map[string]any)["name"] = "b__move" }))
	_, _, err = p.set.Resume(alice, renamed)
	add(err)
	other, _ := ParsePause(edit(t, stored, func(_, a map[string]any) { a["args"] = map[string]any{"amount": 2} }))
	_, _, err = p.set.Resume(alice, other)
	add(err)
	_, pause2, _ := sets["closed store"].DispatchAll(alice, []Call{{ID: "c", Name: "a__move"}})
	if pause2 != nil {
		t.Fatalf("a gate over a closed store paused: %+v", pause2)
	}

	// A call the caller cancels while the server holds it.
	held := make(chan struct{}, 1)
	srv := mcpserver.NewMCPServer("bank", "1", mcpserver.WithToolCapabilities(false))
	srv.AddTool(mcp.NewTool("move"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		held <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	live := mcpgo.InProcess(srv, mcpgo.WithName("bank"))
	t.Cleanup(func() { _ = live.Close() })
	for _, prefix := range []string{"", "a"} {
		s := mustSet(t, Source{Prefix: prefix, Tools: toolset(t, mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](moveDesc, live, ident))})
		ctx, cancel := context.WithCancel(alice)
		go func() { <-held; cancel() }()
		_, err := s.Dispatch(ctx, Call{ID: "c", Name: s.Names()[0], Arguments: json.RawMessage(`{"amount":1}`)})
		if err == nil {
			t.Fatal("a cancelled call gave no error")
		}
		add(err)
	}

	if len(errs) < 10 {
		t.Fatalf("only %d errors collected", len(errs))
	}
	for _, err := range errs {
		if r := repeated(err.Error()); r != "" {
			t.Errorf("%s repeated in: %v", r, err)
		}
	}
}
