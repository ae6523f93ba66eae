package crmapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// End-to-end tests of the generated bindings against the example CRM
// server run as a real process, over stdio and streamable HTTP.

var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "crmapi-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "crm-server")
	// Raced along with the tests when they are: its handlers run
	// concurrently, over a mutex-guarded store.
	cmd := exec.Command("go", append(append([]string{"build"}, raceFlag()...), "-o", serverBin, "../crm-server")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ../crm-server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// raceFlag is the go build flag that builds the server the way this test
// binary was built: with the race detector or without.
func raceFlag() []string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return []string{"-race"}
			}
		}
	}
	return nil
}

// transports connects to a fresh server, started with faults, over each
// transport.
var transports = []transport{
	{"stdio", stdio},
	{"http", streamableHTTP},
}

type transport struct {
	name string
	// start connects and returns the calls the server starts holding (the
	// hang faults) as it announces them: tool name and id arguments,
	// "get_contact contact_id=C-1001".
	start func(t *testing.T, faults ...string) (*mcpgo.Conn, <-chan string)
}

func (tr transport) connect(t *testing.T, faults ...string) *mcpgo.Conn {
	c, _ := tr.start(t, faults...)
	return c
}

func stdio(t *testing.T, faults ...string) (*mcpgo.Conn, <-chan string) {
	var args []string
	for _, f := range faults {
		args = append(args, "-fault", f)
	}
	hangs := make(chan string, 64)
	c := mcpgo.Stdio(serverBin, args, mcpgo.WithName("crm"), mcpgo.WithStderr(&stderrLines{hangs: hangs}))
	t.Cleanup(func() { _ = c.Close() })
	return c, hangs
}

func streamableHTTP(t *testing.T, faults ...string) (*mcpgo.Conn, <-chan string) {
	args := []string{"-http", "127.0.0.1:0"}
	for _, f := range faults {
		args = append(args, "-fault", f)
	}
	hangs := make(chan string, 64)
	cmd := exec.Command(serverBin, args...)
	cmd.Stderr = &stderrLines{hangs: hangs}
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
	c := mcpgo.StreamableHTTP(strings.TrimSpace(line), mcpgo.WithName("crm"))
	t.Cleanup(func() { _ = c.Close() })
	return c, hangs
}

// stderrLines passes the server's stderr on, line by line, and reports the
// lines that say a call is hanging.
type stderrLines struct {
	mu    sync.Mutex
	buf   []byte
	hangs chan string
}

func (w *stderrLines) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		if tool, ok := strings.CutSuffix(strings.TrimPrefix(line, "crm-server: "), ": hanging until cancelled"); ok {
			select {
			case w.hangs <- tool:
			default:
			}
			continue
		}
		os.Stderr.WriteString(line + "\n")
	}
}

func as(user string) context.Context {
	return mcpruntime.WithPrincipal(context.Background(), user, mcpruntime.Secret("tok-"+user))
}

var identity = mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)

func TestTyped(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			crm := crmapi.NewClient(tr.connect(t), identity)
			ctx := as("alice")
			if err := crm.CheckTools(ctx); err != nil {
				t.Fatal(err)
			}

			deal, err := crm.GetDeal(ctx, crmapi.GetDealInput{DealID: "D-2001"})
			if err != nil {
				t.Fatal(err)
			}
			want := crmapi.GetDealOutput{ID: "D-2001", Title: "Difference engine retrofit", ContactID: "C-1001",
				Stage: crmapi.GetDealOutputStageProposal, Amount: 48000, Currency: crmapi.GetDealOutputCurrencyEur,
				Owner: "alice", Notes: []string{"Wants a pilot first."}}
			if !equalJSON(deal.Output, want) || deal.Source != mcpruntime.FromStructuredContent {
				t.Errorf("get_deal = %+v from %v", deal.Output, deal.Source)
			}
			// Everything else the server sent comes along: the text block
			// and the contract's resource link.
			if !slices.ContainsFunc(deal.Content, func(c mcpruntime.Content) bool {
				return c.Type == mcpruntime.ContentResourceLink && c.URI == "crm://deals/D-2001/contract"
			}) {
				t.Errorf("no resource link in %+v", deal.Content)
			}

			found, err := crm.SearchDeals(ctx, crmapi.SearchDealsInput{Query: ptr("compiler")})
			if err != nil {
				t.Fatal(err)
			}
			if found.Output.Total != 2 || len(found.Output.Deals) != 2 || found.Output.Deals[0].ID != "D-2002" {
				t.Errorf("search_deals = %+v", found.Output)
			}

			// The identity argument is set from the principal: alice may
			// change her deal, bob may not.
			stage := crmapi.UpdateDealInputStageNegotiation
			up, err := crm.UpdateDeal(ctx, crmapi.UpdateDealInput{DealID: "D-2001", Stage: &stage})
			if err != nil || up.Output.Stage != crmapi.UpdateDealOutputStageNegotiation {
				t.Fatalf("update_deal as alice: %+v, %v", up, err)
			}
			_, err = crm.UpdateDeal(as("bob"), crmapi.UpdateDealInput{DealID: "D-2001", Note: ptr("mine")})
			var te *mcpruntime.ToolError
			if !errors.As(err, &te) || !strings.Contains(te.Message, "permission denied: bob") {
				t.Errorf("update_deal as bob: %v", err)
			}
			// Without a principal nothing is sent.
			if _, err := crm.UpdateDeal(context.Background(), crmapi.UpdateDealInput{DealID: "D-2001", Note: ptr("x")}); err == nil || !errors.Is(err, mcpruntime.ErrNoPrincipal) {
				t.Errorf("update_deal without a principal: %v", err)
			}

			// Tools without an output schema keep every block.
			chart, err := crm.PipelineChart(ctx, crmapi.PipelineChartInput{})
			if err != nil || len(chart.Content) != 2 || chart.Content[1].Type != mcpruntime.ContentImage || chart.Content[1].MIMEType != "image/png" {
				t.Errorf("pipeline_chart: %+v, %v", chart, err)
			}
			exp, err := crm.ExportContacts(ctx, crmapi.ExportContactsInput{})
			if err != nil || len(exp.Content) != 2 || exp.Content[1].Resource == nil || !strings.HasPrefix(exp.Content[1].Resource.Text, "id,name,email") {
				t.Errorf("export_contacts: %+v, %v", exp, err)
			}
		})
	}
}

func TestModel(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			crm := crmapi.NewClient(tr.connect(t), identity)
			ctx := as("carol")
			tools, err := crm.Toolset(crmapi.ToolSearchDeals, crmapi.ToolGetDeal, crmapi.ToolUpdateDeal)
			if err != nil {
				t.Fatal(err)
			}
			// The model is never shown the identity argument.
			for _, d := range tools.Descriptors() {
				if strings.Contains(string(d.InputSchema), "caller_token") {
					t.Errorf("%s: the model-facing schema mentions caller_token", d.Name)
				}
			}
			for _, tc := range []struct {
				tool, args string
				isError    bool
				sent       bool
				text       []string
			}{
				{"get_deal", `{"deal_id": "D-2003"}`, false, true, []string{`"id":"D-2003"`, `"stage":"won"`}},
				{"get_deal", `{"deal_id": 2003}`, true, false, []string{"/deal_id", "string"}},
				{"search_deals", `{"stage": "closed", "limit": 500, "colour": "red"}`, true, false, []string{"(3 problems)", "/stage", "/limit: must be at most 50", `/colour: unknown member "colour"`}},
				{"search_deals", `[1]`, true, false, []string{"must be a JSON object"}},
				{"search_deals", `{"query": `, true, false, []string{"Invalid arguments"}},
				// A model that sets the token itself is ignored: the
				// runtime's principal (carol, a manager) is used.
				{"update_deal", `{"deal_id": "D-2002", "note": "ok", "caller_token": "tok-bob"}`, false, true, []string{`"owner":"bob"`, "carol: ok"}},
				{"update_deal", `{"deal_id": "D-9999", "note": "x"}`, true, true, []string{`no deal with id "D-9999"`}},
				{"send_email", `{"contact_id": "C-1001"}`, true, false, []string{`no tool "send_email"`, "get_deal, search_deals, update_deal"}},
			} {
				m, err := tools.Invoke(ctx, tc.tool, json.RawMessage(tc.args))
				if err != nil {
					t.Errorf("%s %s: Go error %v", tc.tool, tc.args, err)
					continue
				}
				if m.IsError != tc.isError || (m.Result != nil) != tc.sent {
					t.Errorf("%s %s: IsError %v, sent %v; want %v, %v\n%s", tc.tool, tc.args, m.IsError, m.Result != nil, tc.isError, tc.sent, m.Text)
				}
				for _, s := range tc.text {
					if !strings.Contains(m.Text, s) {
						t.Errorf("%s %s: text lacks %q:\n%s", tc.tool, tc.args, s, m.Text)
					}
				}
				if strings.Contains(m.Text, "tok-") {
					t.Errorf("%s %s: a token reached the model:\n%s", tc.tool, tc.args, m.Text)
				}
			}
		})
	}
}

// A server whose structuredContent does not match the declared schema:
// the typed call fails with every violation and keeps the raw bytes; the
// model is told the output was not used.
func TestMalformedOutput(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			crm := crmapi.NewClient(tr.connect(t, "malformed-output"), identity)
			ctx := as("alice")
			_, err := crm.GetDeal(ctx, crmapi.GetDealInput{DealID: "D-2001"})
			var oe *mcpruntime.OutputError
			if !errors.As(err, &oe) {
				t.Fatalf("want *OutputError, got %v", err)
			}
			var ptrs []string
			for _, v := range oe.Violations {
				ptrs = append(ptrs, v.Pointer)
			}
			slices.Sort(ptrs)
			if !slices.Equal(ptrs, []string{"", "/amount"}) || !strings.Contains(oe.Error(), `missing required member "notes"`) {
				t.Errorf("violations %+v", oe.Violations)
			}
			if !strings.Contains(string(oe.Raw), `"amount":"a lot"`) || oe.Result == nil || oe.Source != mcpruntime.FromStructuredContent {
				t.Errorf("raw %s, source %v", oe.Raw, oe.Source)
			}
			tools, _ := crm.Toolset(crmapi.ToolGetDeal)
			m, err := tools.Invoke(ctx, "get_deal", json.RawMessage(`{"deal_id": "D-2001"}`))
			if err != nil || !m.IsError || !strings.Contains(m.Text, "does not match its declared schema") || !strings.Contains(m.Text, "/amount") {
				t.Errorf("model: %+v, %v", m, err)
			}
		})
	}
}

// A server without a tool the bindings declare: CheckTools and the call
// both say so, listing what the server has.
func TestMissingTool(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			crm := crmapi.NewClient(tr.connect(t, "without=update_deal"), identity)
			ctx := as("alice")
			var me *mcpruntime.MissingToolError
			if err := crm.CheckTools(ctx); !errors.As(err, &me) || !slices.Equal(me.Tools, []string{"update_deal"}) || !slices.Contains(me.Available, "get_deal") {
				t.Errorf("CheckTools: %v", err)
			}
			_, err := crm.UpdateDeal(ctx, crmapi.UpdateDealInput{DealID: "D-2001", Note: ptr("x")})
			if !errors.As(err, &me) || !strings.Contains(err.Error(), `has no tool "update_deal"`) || !strings.Contains(err.Error(), `"search_deals"`) {
				t.Errorf("update_deal: %v", err)
			}
			// The model cannot fix this: it is a Go error, not a tool result.
			tools, _ := crm.Toolset(crmapi.ToolUpdateDeal)
			if _, err := tools.Invoke(ctx, "update_deal", json.RawMessage(`{"deal_id": "D-2001", "note": "x"}`)); !errors.As(err, &me) {
				t.Errorf("Invoke: %v", err)
			}
			// The other tools still work.
			if _, err := crm.GetDeal(ctx, crmapi.GetDealInput{DealID: "D-2001"}); err != nil {
				t.Error(err)
			}
		})
	}
}

// A server that never answers: the per-call timeout ends the call with a
// *TimeoutError (a model is told to try later), and cancelling the
// context ends it with the context's error.
func TestTimeoutAndCancel(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			conn, hangs := tr.start(t, "hang")
			ctx := as("alice")
			slow := crmapi.NewGetContact(conn, identity, mcpruntime.WithTimeout(100*time.Millisecond))
			_, err := slow.Call(ctx, crmapi.GetContactInput{ContactID: "C-1001"})
			var te *mcpruntime.TimeoutError
			if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Call: %v", err)
			}
			m, err := slow.Invoke(ctx, json.RawMessage(`{"contact_id": "C-1001"}`))
			if err != nil || !m.IsError || !strings.Contains(m.Text, "did not answer within") {
				t.Errorf("Invoke: %+v, %v", m, err)
			}

			// No timeout, so only the context ends the call.
			crm := crmapi.NewClient(conn, identity, mcpruntime.WithTimeout(0))
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := crm.GetContact(cctx, crmapi.GetContactInput{ContactID: "C-1003"})
				done <- err
			}()
			// Cancel only once the server holds the call, so that what is
			// cut off is a call in flight, not one never sent. (The
			// timed-out calls above asked for another contact.)
			for held := ""; held != "get_contact contact_id=C-1003"; {
				select {
				case held = <-hangs:
				case err := <-done:
					t.Fatalf("the call ended before the server held it: %v", err)
				case <-time.After(2 * time.Minute): // a bound against hanging, far beyond the wait
					t.Fatal("the server never got the call")
				}
			}
			// The hanging call does not hold up the session.
			if _, err := crm.GetDeal(ctx, crmapi.GetDealInput{DealID: "D-2001"}); err != nil {
				t.Error(err)
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call: %v", err)
			}
			tools, _ := crm.Toolset(crmapi.ToolGetContact)
			if _, err := tools.Invoke(cctx, "get_contact", json.RawMessage(`{"contact_id": "C-1001"}`)); !errors.Is(err, context.Canceled) {
				t.Errorf("Invoke with a cancelled context: %v", err)
			}
		})
	}
}

// Building bindings touches nothing: a Client over a server that cannot
// start fails on the first call, not before.
func TestLazy(t *testing.T) {
	conn := mcpgo.Stdio(filepath.Join(t.TempDir(), "no-such-server"), nil, mcpgo.WithName("crm"))
	defer conn.Close()
	crm := crmapi.NewClient(conn, identity)
	tools, err := crm.Toolset(crmapi.ToolGetDeal)
	if err != nil || len(tools.Names()) != 1 {
		t.Fatalf("Toolset: %v", err)
	}
	if _, err := crm.GetDeal(as("alice"), crmapi.GetDealInput{DealID: "D-2001"}); err == nil {
		t.Error("a call to a server that cannot start succeeded")
	}
	if _, err := crm.Toolset("delete_everything"); err == nil || !strings.Contains(err.Error(), `no tool "delete_everything"`) {
		t.Errorf("Toolset with an unknown name: %v", err)
	}
	if _, err := crm.Toolset(crmapi.ToolGetDeal, crmapi.ToolGetDeal); err == nil {
		t.Error("Toolset with a tool twice succeeded")
	}
}

func TestDescriptors(t *testing.T) {
	ds := crmapi.Descriptors()
	var names []string
	for _, d := range ds {
		names = append(names, d.Name)
	}
	if !slices.IsSorted(names) || len(ds) != 8 {
		t.Errorf("Descriptors: %v", names)
	}
	u := crmapi.UpdateDealDescriptor
	if u.Annotations.ReadOnly || !u.Annotations.Destructive || u.Annotations.OpenWorld || !u.HasOutputSchema() || !strings.HasPrefix(u.SchemaHash, "sha256:") {
		t.Errorf("update_deal descriptor: %+v", u)
	}
	// export_contacts sends no hints: the specification's defaults.
	if a := crmapi.ExportContactsDescriptor.Annotations; a != mcpruntime.DefaultAnnotations() {
		t.Errorf("export_contacts annotations %+v", a)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func ptr[T any](v T) *T { return &v }
