package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
	"github.com/mcpgen/mcpgen/runtime/filestore"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
	"github.com/mcpgen/mcpgen/runtime/mcpimpl"
)

// countReader reads the fixture's count:///{name}, which answers
// "read #N" with the number of reads the server has served.
func countReader(c mcpruntime.Caller, opts ...mcpruntime.ReadOption) mcpruntime.Invoker {
	d := &mcpruntime.Descriptor{Name: "read_count", Annotations: mcpruntime.Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}}
	return mcpimpl.NewResourceReader(d, &mcpruntime.ResourceDescriptor{URITemplate: "count:///{name}", Name: "count"}, c, opts...)
}

func invokeOK(t *testing.T, ctx context.Context, r mcpruntime.Invoker, args string) mcpruntime.ModelResult {
	t.Helper()
	m, err := r.Invoke(ctx, json.RawMessage(args))
	if err != nil || m.IsError {
		t.Fatalf("%s %s: %q, %v", r.Descriptor().Name, args, m.Text, err)
	}
	return m
}

func readNumber(t *testing.T, text string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscanf(text, "read #%d", &n); err != nil {
		t.Fatalf("not a count: %q", text)
	}
	return n
}

// A gate given to a reader (WithToolOptions(WithGate(g))) holds its calls
// as it holds a tool's, by the gate's policies; an approved read is made
// exactly once, however many resume it and however, and later resumes get
// the recorded result.
func TestReaderGate(t *testing.T) {
	ctx := context.Background()
	c := mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv("MCPGO_FIXTURE=stdio"), mcpgo.WithName("fixture"))
	closeConn(t, c)
	free := countReader(c)
	count := func() int { return readNumber(t, invokeOK(t, ctx, free, `{"name":"n"}`).Text) }
	gated := func(opts ...mcpruntime.GateOption) (*mcpruntime.Gate, mcpruntime.Invoker) {
		g := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), opts...)
		return g, countReader(c, mcpruntime.WithToolOptions(mcpruntime.WithGate(g)))
	}

	t.Run("default policy", func(t *testing.T) {
		// A reader is read-only: GateMutations lets it through.
		_, r := gated()
		if m := invokeOK(t, ctx, r, `{"name":"a"}`); m.Pending != nil || !strings.HasPrefix(m.Text, "read #") {
			t.Errorf("held by the default policy: %+v", m)
		}
	})

	t.Run("always, resumed once", func(t *testing.T) {
		g, r := gated(mcpruntime.GateDefault(mcpruntime.GateAlways))
		before := count()
		m := invokeOK(t, ctx, r, `{"name":"a"}`)
		a := m.Pending
		if a == nil || m.Result != nil || !strings.Contains(m.Text, "needs a person's approval") {
			t.Fatalf("not held: %+v", m)
		}
		if a.Tool != "read_count" || string(a.Args) != `{"name":"a"}` || a.Server != "fixture" {
			t.Errorf("approval: %+v", a)
		}
		if _, err := r.(mcpruntime.Resumer).ResumeInvoke(ctx, a.ID); !errors.Is(err, mcpruntime.ErrApprovalPending) {
			t.Errorf("resume before a decision: %v", err)
		}
		if err := g.Approve(ctx, a.ID, a.Digest); err != nil {
			t.Fatal(err)
		}
		if n := count(); n != before+1 {
			t.Fatalf("the held call was read: %d then %d", before, n)
		}
		// Resumed from several goroutines, directly and through toolsets
		// (one of them rendering): one read, one result for all.
		ts, _ := mcpruntime.NewToolset(r)
		lean, _ := ts.WithRendering(mcpruntime.RenderLean)
		texts := make([]string, 6)
		var wg sync.WaitGroup
		for i := range texts {
			wg.Go(func() {
				var res mcpruntime.ModelResult
				var err error
				switch i % 3 {
				case 0:
					res, err = r.(mcpruntime.Resumer).ResumeInvoke(ctx, a.ID)
				case 1:
					res, err = ts.Resume(ctx, a.Tool, a.ID)
				default:
					res, err = lean.Resume(ctx, a.Tool, a.ID)
				}
				if err != nil || res.IsError || res.Pending != nil {
					t.Errorf("resume %d: %+v, %v", i, res, err)
				}
				texts[i] = res.Text
			})
		}
		wg.Wait()
		want := fmt.Sprintf("read #%d", before+2)
		for i, text := range texts {
			if text != want {
				t.Errorf("resume %d: %q, want %q", i, text, want)
			}
		}
		if n := count(); n != before+3 {
			t.Errorf("%d reads for one approval", n-before-2)
		}
		if st, _ := g.Get(ctx, a.ID); st.State != mcpruntime.StateDone {
			t.Errorf("approval state %s", st.State)
		}
	})

	t.Run("predicate and denial", func(t *testing.T) {
		g, r := gated(mcpruntime.GateTool("read_count", func(_ *mcpruntime.Descriptor, args json.RawMessage) bool {
			return strings.Contains(string(args), "payroll")
		}))
		if m := invokeOK(t, ctx, r, `{"name":"lunch"}`); m.Pending != nil {
			t.Errorf("held without the rule: %+v", m)
		}
		before := count()
		m := invokeOK(t, ctx, r, `{"name":"payroll"}`)
		if m.Pending == nil {
			t.Fatalf("not held by the rule: %+v", m)
		}
		if err := g.Deny(ctx, m.Pending.ID, "not today"); err != nil {
			t.Fatal(err)
		}
		res, err := r.(mcpruntime.Resumer).ResumeInvoke(ctx, m.Pending.ID)
		if err != nil || !res.IsError || !strings.Contains(res.Text, "denied it") || !strings.Contains(res.Text, "not today") {
			t.Errorf("denied: %+v, %v", res, err)
		}
		if n := count(); n != before+1 {
			t.Errorf("a denied read was made")
		}
	})

	t.Run("taint", func(t *testing.T) {
		// A read taints the run; a taint-aware gate then holds a tool that
		// may change state, not another read.
		g := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), mcpruntime.GateDefault(mcpruntime.GateNever), mcpruntime.GateAfterTaint())
		r := countReader(c, mcpruntime.WithToolOptions(mcpruntime.WithGate(g)))
		tool := newWeather(c, mcpruntime.WithGate(g))
		if m := invokeOK(t, mcpruntime.WithRun(ctx, mcpruntime.NewRun("")), tool, `{"city":"Oslo"}`); m.Pending != nil {
			t.Fatalf("held before any taint: %+v", m)
		}
		run := mcpruntime.NewRun("")
		rctx := mcpruntime.WithRun(ctx, run)
		m := invokeOK(t, rctx, r, `{"name":"a"}`)
		if m.Pending != nil || m.Provenance == nil || !m.Provenance.External || m.Provenance.Resource != "count:///a" {
			t.Fatalf("read: %+v", m)
		}
		if p, ok := run.Tainted(); !ok || p.Resource != "count:///a" {
			t.Fatalf("the read did not taint the run: %+v", p)
		}
		if m := invokeOK(t, rctx, r, `{"name":"b"}`); m.Pending != nil {
			t.Errorf("a read held after taint: %+v", m)
		}
		if m := invokeOK(t, rctx, tool, `{"city":"Oslo"}`); m.Pending == nil || !strings.Contains(m.Pending.Why, "count:///a") {
			t.Errorf("a mutation not held after the read's taint: %+v", m)
		}
	})

	t.Run("no gate", func(t *testing.T) {
		if _, err := free.(mcpruntime.Resumer).ResumeInvoke(ctx, "x"); err == nil || !strings.Contains(err.Error(), "has no gate") {
			t.Errorf("resume without a gate: %v", err)
		}
	})
}

// A gated read in an agent loop over a real server process: the loop
// pauses, the pause shows the store's approval, an edited pause is
// refused, and once approved the pause resumes to one read, however many
// resume it from two agent processes sharing the store.
func TestReaderPauseOverServerProcess(t *testing.T) {
	url := fixtureProcess(t)
	dir := filepath.Join(t.TempDir(), "approvals")
	type process struct {
		set  *agent.Set
		gate *mcpruntime.Gate
		conn *mcpgo.Conn
	}
	start := func() *process {
		store, err := filestore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		p := &process{gate: mcpruntime.NewGate(store, mcpruntime.GateTool("read_count", mcpruntime.GateAlways)), conn: mcpgo.StreamableHTTP(url, mcpgo.WithName("fixture"))}
		closeConn(t, p.conn)
		ts, err := mcpruntime.NewToolset(countReader(p.conn, mcpruntime.WithToolOptions(mcpruntime.WithGate(p.gate)), mcpruntime.ReadIdentity(mcpruntime.ContextPrincipal)))
		if err != nil {
			t.Fatal(err)
		}
		if p.set, err = agent.New(agent.DialectJSONSchema, agent.Source{Tools: ts, Rendering: mcpruntime.RenderLean}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p1, p2 := start(), start()
	free := countReader(p1.conn)
	count := func() int { return readNumber(t, invokeOK(t, alice, free, `{"name":"n"}`).Text) }

	before := count()
	res, pause, err := p1.set.DispatchAll(alice, []agent.Call{{ID: "tu_1", Name: "read_count", Arguments: json.RawMessage(`{"name":"payroll"}`)}})
	if err != nil || res != nil || pause == nil {
		t.Fatalf("DispatchAll = %v, %v, %v", res, pause, err)
	}
	stored, _ := json.Marshal(pause)
	parse := func(b []byte) *agent.Pause {
		p, err := agent.ParsePause(b)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	as, err := parse(stored).Approvals(alice, p2.set)
	if err != nil || len(as) != 1 || as[0].Tool != "read_count" || as[0].Server != "fixture" || string(as[0].Args) != `{"name":"payroll"}` || as[0].Principal != "alice" {
		t.Fatalf("Approvals = %+v, %v", as, err)
	}
	if res, still, err := p2.set.Resume(alice, parse(stored)); err != nil || res != nil || still == nil {
		t.Fatalf("undecided resume = %v, %v, %v", res, still, err)
	}
	edited := reshape(t, stored, func(_, a map[string]any) { a["args"] = map[string]any{"name": "lunch"} })
	if _, err := edited.Approvals(alice, p2.set); !errors.Is(err, agent.ErrPauseAltered) {
		t.Fatalf("Approvals of an edited pause = %v", err)
	}
	if err := p1.gate.Approve(context.Background(), as[0].ID, as[0].Digest); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p2.set.Resume(alice, edited); !errors.Is(err, agent.ErrPauseAltered) {
		t.Fatalf("resume of an edited pause = %v", err)
	}
	if n := count(); n != before+1 {
		t.Fatalf("%d reads before the resume", n-before-1)
	}

	var wg sync.WaitGroup
	var won, used atomic.Int32
	texts := make(chan string, 6)
	for i := range 6 {
		wg.Go(func() {
			res, still, err := []*process{p1, p2}[i%2].set.Resume(alice, parse(stored))
			switch {
			case err == nil && still == nil && len(res) == 1 && !res[0].IsError:
				won.Add(1)
				texts <- res[0].Text
			case errors.Is(err, agent.ErrPauseUsed):
				used.Add(1)
			default:
				t.Errorf("resume %d = %+v, %v, %v", i, res, still, err)
			}
		})
	}
	wg.Wait()
	close(texts)
	if won.Load() != 1 || used.Load() != 5 {
		t.Errorf("%d resumes continued and %d were refused; want 1 and 5", won.Load(), used.Load())
	}
	for text := range texts {
		if want := fmt.Sprintf("read #%d", before+2); text != want {
			t.Errorf("the model got %q, want %q", text, want)
		}
	}
	if n := count(); n != before+3 {
		t.Errorf("%d reads for one approval", n-before-2)
	}
}
