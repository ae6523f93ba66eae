package mcpgo_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgen/mcpgen/runtime/filestore"
	"github.com/mcpgen/mcpgen/runtime/mcpimpl"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/server/servertest"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// The recorder is a real MCP server that records the identity each call
// reached it with: the caller_token argument and the Authorization header.
// Over stdio it runs as a subprocess (this test binary) appending one JSON
// line per call to a file; over HTTP it runs in this process.

type seen struct {
	Tool   string `json:"tool"`
	Run    string `json:"run"`
	Arg    string `json:"arg"`
	Header string `json:"header"`
}

type recorder struct {
	mu   sync.Mutex
	seen []seen
	file string
}

func (r *recorder) add(s seen) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.file == "" {
		r.seen = append(r.seen, s)
		return nil
	}
	b, _ := json.Marshal(s)
	f, err := os.OpenFile(r.file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (r *recorder) entries(t *testing.T) []seen {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.file == "" {
		return append([]seen(nil), r.seen...)
	}
	b, err := os.ReadFile(r.file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []seen
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var s seen
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("recorder log: %v", err)
		}
		out = append(out, s)
	}
	return out
}

type authKey struct{}

func withAuth(ctx context.Context, r *http.Request) context.Context {
	return context.WithValue(ctx, authKey{}, r.Header.Get("Authorization"))
}

// recorderIn is the tools' schema as the server declares it, identity
// argument included.
const recorderIn = `{"type":"object","properties":{"caller_token":{"type":"string"},"run":{"type":"string"}},"additionalProperties":false}`

func (r *recorder) server() *server.MCPServer {
	s := server.NewMCPServer("recorder", "1.0.0", server.WithToolCapabilities(false))
	add := func(name string, h func(req mcp.CallToolRequest, echo string) (*mcp.CallToolResult, error)) {
		s.AddTool(mcp.NewToolWithRawSchema(name, "recorder tool "+name, json.RawMessage(recorderIn)),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				hdr, _ := ctx.Value(authKey{}).(string)
				e := seen{Tool: name, Run: req.GetString("run", ""), Arg: req.GetString("caller_token", ""), Header: hdr}
				if err := r.add(e); err != nil {
					return nil, err
				}
				return h(req, fmt.Sprintf("arguments %v, authorization %q", req.GetArguments(), hdr))
			})
	}
	add("whoami", func(req mcp.CallToolRequest, _ string) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("seen " + req.GetString("run", "")), nil
	})
	// The leaky tools echo everything they received, as careless servers
	// do in results and error messages.
	add("leaky", func(_ mcp.CallToolRequest, echo string) (*mcp.CallToolResult, error) {
		res := mcp.NewToolResultStructured(map[string]any{"echo": echo}, "echo: "+echo)
		res.Meta = mcp.NewMetaFromMap(map[string]any{"io.example/echo": echo})
		return res, nil
	})
	add("leaky_fail", func(_ mcp.CallToolRequest, echo string) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("rejected " + echo), nil
	})
	add("leaky_rpc", func(_ mcp.CallToolRequest, echo string) (*mcp.CallToolResult, error) {
		return nil, errors.New("handler failed on " + echo)
	})
	return s
}

type recorderConn struct {
	conn *mcpgo.Conn
	rec  *recorder
	arg  string // identity argument, "" for a bearer header
}

// recorderTransports connects to a fresh recorder over each transport, with
// the identity in an argument (stdio needs one) or in a bearer header.
func recorderTransports() map[string]func(t *testing.T) recorderConn {
	return map[string]func(t *testing.T) recorderConn{
		"stdio/argument": func(t *testing.T) recorderConn {
			r := &recorder{file: filepath.Join(t.TempDir(), "seen.jsonl")}
			c := mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv("MCPGO_FIXTURE=recorder", "RECORDER_LOG="+r.file), mcpgo.WithName("recorder"))
			return recorderConn{c, r, "caller_token"}
		},
		"http/bearer": func(t *testing.T) recorderConn {
			r := &recorder{}
			ts := servertest.NewTestStreamableHTTPServer(r.server(), server.WithHTTPContextFunc(withAuth))
			t.Cleanup(ts.Close)
			return recorderConn{mcpgo.StreamableHTTP(ts.URL+"/mcp", mcpgo.WithName("recorder")), r, ""}
		},
		"http/argument": func(t *testing.T) recorderConn {
			r := &recorder{}
			ts := servertest.NewTestStreamableHTTPServer(r.server(), server.WithHTTPContextFunc(withAuth))
			t.Cleanup(ts.Close)
			return recorderConn{mcpgo.StreamableHTTP(ts.URL+"/mcp", mcpgo.WithName("recorder")), r, "caller_token"}
		},
		"sse/bearer": func(t *testing.T) recorderConn {
			r := &recorder{}
			ts := servertest.NewTestServer(r.server(), server.WithSSEContextFunc(withAuth))
			t.Cleanup(ts.Close)
			return recorderConn{mcpgo.SSE(ts.URL+"/sse", mcpgo.WithName("recorder")), r, ""}
		},
	}
}

// RunInput is what the generator emits for recorderIn: the identity
// argument is gone.
type RunInput struct {
	Run string `json:"run,omitempty"`
}

func (*RunInput) Validate() error { return nil }

func recorderDesc(t *testing.T, name string, readOnly bool) *mcpruntime.Descriptor {
	schema, found, err := mcpimpl.StripProperty(json.RawMessage(recorderIn), "caller_token")
	if err != nil || !found {
		t.Fatalf("strip: %v %v", found, err)
	}
	d := desc(name, string(schema), "")
	d.Annotations.ReadOnly = readOnly
	return d
}

func (rc recorderConn) tool(t *testing.T, name string, readOnly bool, opts ...mcpruntime.Option) *mcpruntime.Tool[RunInput, mcpruntime.NoOutput] {
	opts = append([]mcpruntime.Option{mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)}, opts...)
	if rc.arg != "" {
		opts = append(opts, mcpruntime.WithIdentityArgument(rc.arg))
	}
	return mcpruntime.NewTool[RunInput, mcpruntime.NoOutput](recorderDesc(t, name, readOnly), rc.conn, opts...)
}

func token(prefix string) mcpruntime.Secret {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return mcpruntime.Secret(prefix + hex.EncodeToString(b[:]))
}

func TestIdentityPerRun(t *testing.T) {
	for name, dial := range recorderTransports() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rc := dial(t)
			closeConn(t, rc.conn)
			whoami := rc.tool(t, "whoami", true)
			tokens := map[string]mcpruntime.Secret{"alice": token("tok-alice-"), "bob": token("tok-bob-")}

			// Two runs of the same binding, concurrently, as two principals.
			var wg sync.WaitGroup
			for who, tok := range tokens {
				ctx := mcpruntime.WithPrincipal(context.Background(), who, tok)
				for i := range 10 {
					wg.Go(func() {
						if _, err := whoami.Call(ctx, RunInput{Run: fmt.Sprintf("%s/%d", who, i)}); err != nil {
							t.Error(err)
						}
					})
				}
			}
			wg.Wait()
			got := rc.rec.entries(t)
			if len(got) != 20 {
				t.Fatalf("the server saw %d calls, want 20", len(got))
			}
			for _, s := range got {
				who, _, _ := strings.Cut(s.Run, "/")
				want := string(tokens[who])
				if rc.arg != "" {
					if s.Arg != want || s.Header != "" {
						t.Errorf("%s: argument %q, header %q; want argument %q only", s.Run, s.Arg, s.Header, want)
					}
				} else if s.Header != "Bearer "+want || s.Arg != "" {
					t.Errorf("%s: header %q, argument %q; want header for %s only", s.Run, s.Header, s.Arg, who)
				}
			}

			// A model cannot set the identity: in argument mode its value is
			// replaced, otherwise the closed schema has no such member.
			alice := mcpruntime.WithPrincipal(context.Background(), "alice", tokens["alice"])
			m, err := whoami.Invoke(alice, json.RawMessage(`{"run":"model","caller_token":"tok-evil"}`))
			if err != nil {
				t.Fatal(err)
			}
			got = rc.rec.entries(t)
			if rc.arg != "" {
				if m.IsError || len(got) != 21 || got[20].Run != "model" || got[20].Arg != string(tokens["alice"]) {
					t.Errorf("model-supplied identity: %+v; server saw %+v", m, got[len(got)-1])
				}
			} else if !m.IsError || !strings.Contains(m.Text, "/caller_token: unknown member") || len(got) != 20 {
				t.Errorf("model-supplied identity over a bearer transport: %+v", m)
			}

			// No principal: nothing is sent.
			before := len(got)
			_, err = whoami.Call(context.Background(), RunInput{Run: "anonymous"})
			if !errors.Is(err, mcpruntime.ErrNoPrincipal) {
				t.Errorf("call without a principal: %v", err)
			}
			if n := len(rc.rec.entries(t)); n != before {
				t.Errorf("a call without a principal reached the server")
			}
		})
	}
}

// TestCanaryToken runs every path a token could leak through with a canary
// token and a server that echoes what it receives, then searches every
// output, error, ledger record, approval file and log line for it.
func TestCanaryToken(t *testing.T) {
	var logs bytes.Buffer
	oldLog, oldSlog := log.Writer(), slog.Default()
	log.SetOutput(&logs)
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { log.SetOutput(oldLog); slog.SetDefault(oldSlog) })

	for _, name := range []string{"stdio/argument", "http/bearer"} {
		t.Run(name, func(t *testing.T) {
			rc := recorderTransports()[name](t)
			closeConn(t, rc.conn)
			canary := token("canary-")
			run := mcpruntime.NewRun("")
			ctx := mcpruntime.WithRun(mcpruntime.WithPrincipal(context.Background(), "alice", canary), run)
			dir := filepath.Join(t.TempDir(), "approvals")
			store, err := filestore.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			gate := mcpruntime.NewGate(store, mcpruntime.GateDefault(mcpruntime.GateNever), mcpruntime.GateTool("leaky", mcpruntime.GateAlways))

			var outputs []string
			note := func(v ...any) {
				for _, x := range v {
					switch x := x.(type) {
					case error:
						if x != nil {
							outputs = append(outputs, printed(x)...) // every verb, the whole chain
						}
					case string:
						outputs = append(outputs, x)
					default:
						b, err := json.Marshal(x)
						if err != nil {
							t.Fatal(err)
						}
						outputs = append(outputs, string(b))
						outputs = append(outputs, printed(x)...)
					}
				}
			}

			leaky := rc.tool(t, "leaky", false, mcpruntime.WithGate(gate))
			args := `{"run":"gated"}`
			if rc.arg != "" {
				args = `{"run":"gated","caller_token":"` + string(canary) + `"}` // dropped, never stored
			}
			m, err := leaky.Invoke(ctx, json.RawMessage(args))
			if err != nil || m.Pending == nil {
				t.Fatalf("leaky not gated: %+v, %v", m, err)
			}
			a := m.Pending
			note(m, m.Text, a)
			if err := gate.Approve(ctx, a.ID, a.Digest); err != nil {
				t.Fatal(err)
			}
			m, err = leaky.ResumeInvoke(ctx, a.ID)
			note(m, m.Text, err)
			if err != nil || !strings.Contains(m.Text, mcpruntime.Secret("").String()) {
				t.Fatalf("the server did not echo (so this test would prove nothing): %+v, %v", m, err)
			}
			r, err := leaky.Resume(ctx, a.ID)
			note(r, err)

			for _, tool := range []string{"leaky_fail", "leaky_rpc"} {
				tl := rc.tool(t, tool, true)
				m, err := tl.Invoke(ctx, json.RawMessage(`{"run":"`+tool+`"}`))
				note(m, m.Text, err)
				if !m.IsError {
					t.Errorf("%s: %+v, %v", tool, m, err)
				}
				_, err = tl.Call(ctx, RunInput{Run: tool})
				note(err)
				if err == nil {
					t.Errorf("%s: no error", tool)
				}
			}
			note(run.Ledger())
			files, _ := os.ReadDir(dir)
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(dir, f.Name()))
				if err != nil {
					t.Fatal(err)
				}
				note(string(b))
			}
			note(logs.String())

			// The server did get the canary on every call.
			seenCanary := 0
			for _, s := range rc.rec.entries(t) {
				if s.Arg == string(canary) || s.Header == "Bearer "+string(canary) {
					seenCanary++
				}
			}
			if seenCanary != 5 {
				t.Errorf("the server saw the canary on %d calls, want 5", seenCanary)
			}
			for _, o := range outputs {
				if strings.Contains(o, string(canary)) {
					t.Errorf("canary leaked: %s", o)
				}
			}
		})
	}
}
