package crmapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// The resource templates the config makes tools, read by a model's calls
// through a toolset and an agent set (what every adapter goes through),
// against the CRM server as a real process over stdio and HTTP.

func readerSet(t *testing.T, conn *mcpgo.Conn, rendering mcpruntime.Rendering, opts ...mcpruntime.ReadOption) *agent.Set {
	t.Helper()
	ts, err := mcpruntime.NewToolset(append(crmapi.Invokers(conn), crmapi.Readers(conn, opts...)...)...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := agent.New(agent.DialectStrict, agent.Source{Tools: ts, Rendering: rendering})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func dispatch(t *testing.T, ctx context.Context, s *agent.Set, name, args string) agent.Result {
	t.Helper()
	r, err := s.Dispatch(ctx, agent.Call{ID: "call-1", Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	return r
}

func TestResourceReaders(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			conn := tr.connect(t)
			s := readerSet(t, conn, "")
			ctx := context.Background()

			// The model is offered the readers beside the tools, with a
			// schema a strict provider enforces.
			var contract *agent.Tool
			for _, tool := range s.Tools() {
				if tool.Name == "read_deal_contract" {
					contract = &tool
				}
			}
			if contract == nil || !contract.Strict || !strings.Contains(contract.Description, "The contract text of a deal.") ||
				!strings.Contains(string(contract.InputSchema), `"deal_id"`) || !contract.Descriptor.Annotations.ReadOnly {
				t.Fatalf("read_deal_contract as offered: %+v (names %v)", contract, s.Names())
			}

			// A valid read: the contract's text.
			r := dispatch(t, ctx, s, "read_deal_contract", `{"deal_id":"D-2001"}`)
			if r.IsError || !strings.HasPrefix(r.Text, "# Contract D-2001\n") || len(r.Parts) != 1 || r.Parts[0].Kind != agent.PartText {
				t.Errorf("valid read: %+v", r)
			}
			if p := r.Model.Provenance; p == nil || p.Resource != "crm://deals/D-2001/contract" || !p.External || p.Server != "crm" {
				t.Errorf("provenance %+v", p)
			}

			// Invalid variables go back to the model with their pointers,
			// and nothing is read.
			for args, want := range map[string]string{
				`{}`:                               "- /deal_id: required: the template needs this variable",
				`{"deal_id":""}`:                   "- /deal_id: must not be empty",
				`{"deal_id":".."}`:                 `- /deal_id: ".." would change the resource's path`,
				`{"deal_id":7}`:                    "- /deal_id: expected a string",
				`{"deal_id":"D-2001","stage":"x"}`: "- /stage: unknown member: not a variable of the template (they are deal_id)",
				`["D-2001"]`:                       "arguments must be a JSON object",
			} {
				r := dispatch(t, ctx, s, "read_deal_contract", args)
				if !r.IsError || !strings.Contains(r.Text, want) || r.Model.Result != nil {
					t.Errorf("%s: %q, want %q", args, r.Text, want)
				}
			}
			// Reserved characters are percent-encoded: the value stays one
			// path segment, which names no deal, rather than reaching
			// another deal's contract. A '/' is refused before anything is
			// sent, since the server decodes the value it gets.
			for _, v := range []string{"D-2001?x=1", "D-2001#frag"} {
				args, _ := json.Marshal(map[string]string{"deal_id": v})
				r := dispatch(t, ctx, s, "read_deal_contract", string(args))
				if !r.IsError || strings.Contains(r.Text, "# Contract") || !strings.Contains(r.Text, "The server") {
					t.Errorf("%s: %+v", v, r)
				}
			}
			for _, v := range []string{"D-2002/../../D-2001", "D-2001/contract", "D-2002%2F..%2F..%2FD-2001"} {
				args, _ := json.Marshal(map[string]string{"deal_id": v})
				r := dispatch(t, ctx, s, "read_deal_contract", string(args))
				if !r.IsError || strings.Contains(r.Text, "# Contract") || !strings.Contains(r.Text, "- /deal_id: ") || !strings.Contains(r.Text, "holds a '/'") {
					t.Errorf("%s: %+v", v, r)
				}
			}

			// A typed read: the bound schema decodes and validates the
			// JSON, and the model reads it as structured output, lean when
			// the source says so.
			r = dispatch(t, ctx, s, "deal_summary", `{"deal_id":"D-2001"}`)
			if r.IsError || !json.Valid([]byte(r.Text)) || !strings.Contains(r.Text, `"id":"D-2001"`) || !r.Model.Result.HasStructuredContent() {
				t.Errorf("typed read: %+v", r)
			}
			lean := readerSet(t, conn, mcpruntime.RenderLean)
			r = dispatch(t, ctx, lean, "deal_summary", `{"deal_id":"D-2001"}`)
			if r.IsError || !strings.Contains(r.Text, "id: D-2001\n") || strings.Contains(r.Text, "{") {
				t.Errorf("lean typed read: %q", r.Text)
			}
			// The untyped accessor's result and the Go typed one agree.
			typed, err := crmapi.ReadDealSummary(ctx, conn, "D-2001")
			if err != nil || typed.Content.ID != "D-2001" || !strings.Contains(r.Text, "title: "+typed.Content.Title) {
				t.Errorf("ReadDealSummary: %+v, %v", typed, err)
			}

			// A blob: an image part for providers that show images, and a
			// one-line description with its size and type as the text.
			r = dispatch(t, ctx, s, "read_pipeline_chart", `{}`)
			if r.IsError || !strings.HasPrefix(r.Text, "[embedded resource: crm://charts/pipeline.png (image/png, blob, ") ||
				len(r.Parts) != 1 || r.Parts[0].Kind != agent.PartImage || r.Parts[0].MIMEType != "image/png" {
				t.Errorf("blob read: %q, parts %d", r.Text, len(r.Parts))
			}
			if r := dispatch(t, ctx, s, "read_pipeline_chart", `{"x":1}`); !r.IsError || !strings.Contains(r.Text, "/x: unknown member: not a variable of the template (it has none)") {
				t.Errorf("argument to a concrete resource: %q", r.Text)
			}

			// Over the size limit: refused, and the model told so.
			small := readerSet(t, conn, "", mcpruntime.MaxReadSize(16))
			r = dispatch(t, ctx, small, "read_deal_contract", `{"deal_id":"D-2001"}`)
			if !r.IsError || !strings.Contains(r.Text, "over the limit of 16 bytes") || strings.Contains(r.Text, "Contract") {
				t.Errorf("over the limit: %q", r.Text)
			}

			// The run's ledger records the read as external content.
			run := mcpruntime.NewRun("reader")
			if _, tainted := run.Tainted(); tainted {
				t.Fatal("a new run is tainted")
			}
			r = dispatch(t, mcpruntime.WithRun(ctx, run), s, "read_deal_contract", `{"deal_id":"D-2002"}`)
			p, tainted := run.Tainted()
			if r.IsError || !tainted || p.Resource != "crm://deals/D-2002/contract" || p.Digest == "" || len(run.Ledger()) != 1 {
				t.Errorf("ledger after a read: %+v (tainted %v)", run.Ledger(), tainted)
			}
		})
	}
}

// TestResourceReaderIdentity: over HTTP the reader sends the principal's
// token as a bearer header on resources/read; without a principal nothing
// is sent.
func TestResourceReaderIdentity(t *testing.T) {
	var mu sync.Mutex
	var seen []string // Authorization of each resources/read request
	record := func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Body != nil {
				body, err := io.ReadAll(req.Body)
				if err != nil {
					return nil, err
				}
				req.Body = io.NopCloser(strings.NewReader(string(body)))
				if strings.Contains(string(body), `"resources/read"`) {
					mu.Lock()
					seen = append(seen, req.Header.Get("Authorization"))
					mu.Unlock()
				}
			}
			return next.RoundTrip(req)
		})
	}
	conn := httpConn(t, mcpgo.WithRoundTripper(record))
	s := readerSet(t, conn, "", mcpruntime.ReadIdentity(mcpruntime.ContextPrincipal))

	r := dispatch(t, as("alice"), s, "read_deal_contract", `{"deal_id":"D-2001"}`)
	if r.IsError || !strings.HasPrefix(r.Text, "# Contract D-2001") {
		t.Fatalf("read as alice: %+v", r)
	}
	_, err := s.Dispatch(context.Background(), agent.Call{ID: "2", Name: "read_deal_contract", Arguments: json.RawMessage(`{"deal_id":"D-2001"}`)})
	if err == nil || !strings.Contains(err.Error(), "no principal") {
		t.Errorf("read without a principal: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "Bearer tok-alice" {
		t.Errorf("Authorization on resources/read: %q", seen)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// httpConn starts the server on HTTP and connects with opts.
func httpConn(t *testing.T, opts ...mcpgo.Option) *mcpgo.Conn {
	t.Helper()
	cmd := exec.Command(serverBin, "-http", "127.0.0.1:0")
	cmd.Stderr = &stderrLines{hangs: make(chan string, 64)}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("crm-server did not print its endpoint: %v", err)
	}
	c := mcpgo.StreamableHTTP(strings.TrimSpace(line), append([]mcpgo.Option{mcpgo.WithName("crm")}, opts...)...)
	t.Cleanup(func() { _ = c.Close() })
	return c
}
