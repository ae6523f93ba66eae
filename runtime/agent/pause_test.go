package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/filestore"
)

// A pause is held by the application, in a browser or a queue: these tests
// edit it as an attacker would and check that nothing it says is believed.

// server is a Caller that records the arguments of every call that
// reaches it.
type server struct {
	mu    sync.Mutex
	calls []string
}

func (s *server) CallTool(_ context.Context, name string, args json.RawMessage) (*mcpruntime.Result, error) {
	s.mu.Lock()
	s.calls = append(s.calls, name+" "+string(args))
	s.mu.Unlock()
	return mcpruntime.ParseResult([]byte(`{"content":[{"type":"text","text":"Moved."}]}`))
}

func (s *server) made() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

type moveInput struct {
	Amount json.Number `json:"amount"`
}

func (*moveInput) Validate() error { return nil }

var moveDesc = &mcpruntime.Descriptor{Name: "move", SchemaHash: "sha256:move-v1",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}}}`)}

// bank is one server's gated tools, labelled name, over srv.
func bank(t *testing.T, name string, srv *server, g *mcpruntime.Gate) *mcpruntime.Toolset {
	ro := &mcpruntime.Descriptor{Name: "balance", Annotations: mcpruntime.Annotations{ReadOnly: true}, InputSchema: json.RawMessage(`{"type":"object"}`)}
	opts := []mcpruntime.Option{mcpruntime.WithGate(g), mcpruntime.WithServerName(name), mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)}
	return toolset(t,
		mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](moveDesc, srv, opts...),
		mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](ro, srv, opts...))
}

var alice = mcpruntime.WithPrincipal(context.Background(), "alice", "tok-alice")

// process is one agent process: its own gate over a shared store, two
// bank servers merged under prefixes, and a scripted model whose turns
// are counted (each turn answers "Moved (turn n)").
type process struct {
	set   *Set
	gate  *mcpruntime.Gate
	turns *atomic.Int32
}

func newProcess(t *testing.T, store mcpruntime.ApprovalStore, a, b *server, turns *atomic.Int32) *process {
	t.Helper()
	g := mcpruntime.NewGate(store)
	s, err := New(DialectJSONSchema, Source{Prefix: "a", Tools: bank(t, "bank-a", a, g)}, Source{Prefix: "b", Tools: bank(t, "bank-b", b, g)})
	if err != nil {
		t.Fatal(err)
	}
	return &process{set: s, gate: g, turns: turns}
}

// resume is an adapter's Loop.Resume: once the set hands back results,
// the model is asked again.
func (p *process) resume(ctx context.Context, pause *Pause) (string, *Pause, error) {
	res, still, err := p.set.Resume(ctx, pause)
	if err != nil || still != nil {
		return "", still, err
	}
	for _, r := range res {
		if r.Pending != nil {
			return "", nil, fmt.Errorf("result %s still pending", r.CallID)
		}
	}
	return fmt.Sprintf("Moved (turn %d)", p.turns.Add(1)), nil, nil
}

// gatedTurn is a model turn moving amount on bank a, plus a read: the
// stored pause, as JSON.
func gatedTurn(t *testing.T, p *process, amount string) []byte {
	t.Helper()
	res, pause, err := p.set.DispatchAll(alice, []Call{
		{ID: "tu_1", Name: "a__move", Arguments: json.RawMessage(`{"amount":` + amount + `}`)},
		{ID: "tu_2", Name: "a__balance"},
	})
	if err != nil || res != nil || pause == nil {
		t.Fatalf("DispatchAll = %v, %v, %v", res, pause, err)
	}
	b, err := json.Marshal(pause)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edit changes a stored pause's JSON as an attacker holding it would.
func edit(t *testing.T, b []byte, f func(p map[string]any, pending map[string]any)) []byte {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	r := p["results"].([]any)[0].(map[string]any)
	f(p, r["pending"].(map[string]any))
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func digestOf(args string) string { d, _ := mcpruntime.ArgsDigest(json.RawMessage(args)); return d }

func TestAlteredPauseIsRefused(t *testing.T) {
	other := "0123456789abcdef0123456789abcdef"
	edits := map[string]func(p, a map[string]any){
		// What the person is shown differs from what the store holds,
		// the digest untouched: Approve(id, digest) would pass.
		"args": func(_, a map[string]any) { a["args"] = map[string]any{"amount": 1} },
		"args and digest": func(_, a map[string]any) {
			a["args"], a["digest"] = map[string]any{"amount": 1}, digestOf(`{"amount":1}`)
		},
		"digest":           func(_, a map[string]any) { a["digest"] = digestOf(`{"amount":1}`) },
		"principal":        func(_, a map[string]any) { a["principal"] = "bob" },
		"why":              func(_, a map[string]any) { a["why"] = "a routine read" },
		"expires":          func(_, a map[string]any) { a["expires"] = time.Now().Add(1000 * time.Hour).Format(time.RFC3339Nano) },
		"created":          func(_, a map[string]any) { a["created"] = time.Now().Add(-time.Hour).Format(time.RFC3339Nano) },
		"tool":             func(_, a map[string]any) { a["tool"] = "balance" },
		"server":           func(_, a map[string]any) { a["server"] = "bank-b" },
		"server identity":  func(_, a map[string]any) { a["serverIdentity"] = "bank-b/bank" },
		"schema hash":      func(_, a map[string]any) { a["schemaHash"] = "sha256:move-v2" },
		"unknown id":       func(_, a map[string]any) { a["id"] = other },
		"call to server b": func(p, _ map[string]any) { p["results"].([]any)[0].(map[string]any)["name"] = "b__move" },
		// Server b's copy of the call, every field consistent with it:
		// still server a's approval.
		"copied to server b": func(p, a map[string]any) {
			p["results"].([]any)[0].(map[string]any)["name"] = "b__move"
			a["server"] = "bank-b"
		},
		"no tool":     func(p, _ map[string]any) { p["results"].([]any)[0].(map[string]any)["name"] = "c__move" },
		"twice":       func(p, _ map[string]any) { p["results"] = append(p["results"].([]any), p["results"].([]any)[0]) },
		"not pending": func(p, _ map[string]any) { delete(p["results"].([]any)[0].(map[string]any), "pending") },
	}
	for name, f := range edits {
		t.Run(name, func(t *testing.T) {
			a, b := &server{}, &server{}
			p := newProcess(t, mcpruntime.NewMemoryStore(), a, b, &atomic.Int32{})
			stored := gatedTurn(t, p, "999999")
			tampered, err := ParsePause(edit(t, stored, f))
			if err != nil {
				t.Fatal(err) // the encoding is fine; the content is checked against the store
			}
			// What the application would show a person: refused.
			if as, err := tampered.Approvals(alice, p.set); !errors.Is(err, ErrPauseAltered) || as != nil {
				t.Fatalf("Approvals of the altered pause = %v, %v", as, err)
			}
			// A person approves what the pause said (its id and digest,
			// as the docs say); the resume still refuses it.
			orig, _ := ParsePause(stored)
			pa := orig.Results[0].Pending
			if err := p.gate.Approve(context.Background(), pa.ID, pa.Digest); err != nil {
				t.Fatal(err)
			}
			out, still, err := p.resume(alice, tampered)
			var pe *PauseError
			if !errors.Is(err, ErrPauseAltered) || !errors.As(err, &pe) || out != "" || still != nil {
				t.Fatalf("resume of the altered pause = %q, %v, %v", out, still, err)
			}
			if strings.Contains(err.Error(), "999999") || strings.Contains(err.Error(), "tok-alice") {
				t.Errorf("the error shows arguments or the token: %v", err)
			}
			if got := append(a.made(), b.made()...); len(got) != 1 || got[0] != "balance {}" {
				t.Errorf("calls made: %q, want only the read", got)
			}
			if p.turns.Load() != 0 {
				t.Errorf("the model was asked %d times", p.turns.Load())
			}
			// The pause as stored still resumes, with what was approved.
			if out, _, err := p.resume(alice, orig); err != nil || out != "Moved (turn 1)" {
				t.Fatalf("resume of the stored pause = %q, %v", out, err)
			}
			if got := a.made(); len(got) != 2 || got[1] != `move {"amount":999999}` {
				t.Errorf("calls made on bank a: %q", got)
			}
		})
	}
}

// What a person is shown comes from the store, decisions included.
func TestApprovalsComeFromTheStore(t *testing.T) {
	p := newProcess(t, mcpruntime.NewMemoryStore(), &server{}, &server{}, &atomic.Int32{})
	pause, _ := ParsePause(gatedTurn(t, p, "999999"))
	as, err := pause.Approvals(alice, p.set)
	if err != nil || len(as) != 1 || string(as[0].Args) != `{"amount":999999}` || as[0].State != mcpruntime.StatePending || as[0].Server != "bank-a" {
		t.Fatalf("approvals = %+v, %v", as, err)
	}
	if err := p.gate.Deny(context.Background(), as[0].ID, "too much"); err != nil {
		t.Fatal(err)
	}
	as, err = pause.Approvals(alice, p.set)
	if err != nil || as[0].State != mcpruntime.StateDenied || as[0].Reason != "too much" {
		t.Fatalf("approvals after the denial = %+v, %v", as, err)
	}
	// The resume's still-pause carries the store's copies too.
	p2 := newProcess(t, mcpruntime.NewMemoryStore(), &server{}, &server{}, &atomic.Int32{})
	pause, _ = ParsePause(gatedTurn(t, p2, "5"))
	_, still, err := p2.resume(alice, pause)
	if err != nil || still == nil || still.Results[0].Pending.State != mcpruntime.StatePending {
		t.Fatalf("undecided resume = %+v, %v", still, err)
	}
}

// The gate binds an approval to its server: a tool of the same name and
// schemas on another server cannot spend it, whoever asks.
func TestApprovalBoundToServer(t *testing.T) {
	a, b := &server{}, &server{}
	p := newProcess(t, mcpruntime.NewMemoryStore(), a, b, &atomic.Int32{})
	pause, _ := ParsePause(gatedTurn(t, p, "7"))
	id := pause.Results[0].Pending.ID
	if err := p.gate.Approve(context.Background(), id, pause.Results[0].Pending.Digest); err != nil {
		t.Fatal(err)
	}
	_, wire, _ := p.set.Lookup("b__move")
	tsB := p.set.byName["b__move"].ts
	if _, err := tsB.Resume(alice, wire, id); !errors.Is(err, mcpruntime.ErrApprovalMismatch) || !strings.Contains(err.Error(), `server "bank-a"`) {
		t.Errorf("resume through bank b's tool: %v", err)
	}
	if _, err := tsB.Approval(alice, wire, id); !errors.Is(err, mcpruntime.ErrApprovalMismatch) {
		t.Errorf("bank b's tool reads bank a's approval: %v", err)
	}
	// A regenerated binding (other schemas) on the same server cannot
	// either.
	v2 := *moveDesc
	v2.SchemaHash = "sha256:move-v2"
	ts2 := toolset(t, mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](&v2, a, mcpruntime.WithGate(p.gate), mcpruntime.WithServerName("bank-a"), mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)))
	if _, err := ts2.Resume(alice, "move", id); !errors.Is(err, mcpruntime.ErrApprovalMismatch) {
		t.Errorf("resume through other schemas: %v", err)
	}
	if len(b.made()) != 0 || len(a.made()) != 1 {
		t.Errorf("calls: a %q, b %q", a.made(), b.made())
	}
}

// Two gated tools a gate cannot tell apart (one server label, one name)
// are refused in one set: each would accept the other's approvals.
func TestSetRefusesIndistinctGatedTools(t *testing.T) {
	g := mcpruntime.NewGate(mcpruntime.NewMemoryStore())
	_, err := New(DialectJSONSchema, Source{Prefix: "a", Tools: bank(t, "bank", &server{}, g)}, Source{Prefix: "b", Tools: bank(t, "bank", &server{}, g)})
	if err == nil || !strings.Contains(err.Error(), `both have a gate and are tool "balance" of server "bank"`) || !strings.Contains(err.Error(), "distinct names") {
		t.Errorf("New = %v", err)
	}
	plain := toolset(t, mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](moveDesc, &server{}, mcpruntime.WithServerName("bank")))
	if _, err := New(DialectJSONSchema, Source{Prefix: "a", Tools: bank(t, "bank", &server{}, g)}, Source{Prefix: "b", Tools: plain}); err != nil {
		t.Errorf("an ungated twin refused: %v", err)
	}
	lean, err := bank(t, "bank", &server{}, g).WithRendering(mcpruntime.RenderLean)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(DialectJSONSchema, Source{Prefix: "a", Tools: bank(t, "bank", &server{}, g)}, Source{Prefix: "b", Tools: lean}); err == nil {
		t.Error("a rendered twin was accepted")
	}
}

func fileStore(t *testing.T, dir string) *filestore.FileStore {
	t.Helper()
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// A pause continues the conversation once: a second resume, in this
// process or another sharing the store, asks the model nothing.
func TestPauseResumedOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "approvals")
	a, b := &server{}, &server{}
	turns := &atomic.Int32{}
	p1 := newProcess(t, fileStore(t, dir), a, b, turns)
	p2 := newProcess(t, fileStore(t, dir), a, b, turns)
	stored := gatedTurn(t, p1, "3")
	parse := func() *Pause { p, _ := ParsePause(stored); return p }

	// Undecided: nothing is used up.
	for range 2 {
		if out, still, err := p2.resume(alice, parse()); err != nil || still == nil || out != "" {
			t.Fatalf("undecided resume = %q, %v, %v", out, still, err)
		}
	}
	as, err := parse().Approvals(alice, p1.set)
	if err != nil {
		t.Fatal(err)
	}
	if err := p1.gate.Approve(context.Background(), as[0].ID, as[0].Digest); err != nil {
		t.Fatal(err)
	}
	if out, _, err := p2.resume(alice, parse()); err != nil || out != "Moved (turn 1)" {
		t.Fatalf("resume = %q, %v", out, err)
	}
	for _, p := range []*process{p2, p1} {
		out, still, err := p.resume(alice, parse())
		var pe *PauseError
		if !errors.Is(err, ErrPauseUsed) || !errors.As(err, &pe) || pe.Approval != as[0].ID || out != "" || still != nil {
			t.Fatalf("second resume = %q, %v, %v", out, still, err)
		}
	}
	if n := turns.Load(); n != 1 {
		t.Errorf("the model was asked %d times after the pause, want 1", n)
	}
	if got := a.made(); len(got) != 2 {
		t.Errorf("bank a got %q", got)
	}
	st, _ := p1.gate.Get(context.Background(), as[0].ID)
	if st.Continued.IsZero() || st.State != mcpruntime.StateDone {
		t.Errorf("stored approval %+v", st)
	}
}

// Many resumes of one pause at once, from two processes: one continues.
func TestPauseResumedOnceConcurrently(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "approvals")
	a, b := &server{}, &server{}
	turns := &atomic.Int32{}
	ps := []*process{newProcess(t, fileStore(t, dir), a, b, turns), newProcess(t, fileStore(t, dir), a, b, turns)}
	// Two gated calls in the turn, so that the marks of two resumes can
	// interleave.
	res, pause, err := ps[0].set.DispatchAll(alice, []Call{
		{ID: "tu_1", Name: "a__move", Arguments: json.RawMessage(`{"amount":1}`)},
		{ID: "tu_2", Name: "b__move", Arguments: json.RawMessage(`{"amount":2}`)},
	})
	if err != nil || res != nil {
		t.Fatal(res, err)
	}
	stored, _ := json.Marshal(pause)
	as, err := pause.Approvals(alice, ps[0].set)
	if err != nil || len(as) != 2 {
		t.Fatal(as, err)
	}
	for _, ap := range as {
		if err := ps[0].gate.Approve(context.Background(), ap.ID, ap.Digest); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var won, used atomic.Int32
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _ := ParsePause(stored)
			out, _, err := ps[i%2].resume(alice, p)
			switch {
			case err == nil && strings.HasPrefix(out, "Moved"):
				won.Add(1)
			case errors.Is(err, ErrPauseUsed):
				used.Add(1)
			default:
				t.Errorf("resume %d = %q, %v", i, out, err)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 || used.Load() != 7 || turns.Load() != 1 {
		t.Errorf("%d resumes continued, %d were refused, %d model turns; want 1, 7, 1", won.Load(), used.Load(), turns.Load())
	}
	if len(a.made()) != 1 || len(b.made()) != 1 {
		t.Errorf("calls: a %q, b %q", a.made(), b.made())
	}
	// A pause made of a part of it (one of its approvals) is used too.
	part := edit(t, stored, func(p, _ map[string]any) { p["results"] = p["results"].([]any)[1:] })
	pp, _ := ParsePause(part)
	if _, _, err := ps[1].resume(alice, pp); !errors.Is(err, ErrPauseUsed) {
		t.Errorf("resume of a part = %v", err)
	}
}

var bob = mcpruntime.WithPrincipal(context.Background(), "bob", "tok-bob")

// A pause is bound to its run's principal: another principal's pending
// approval, copied into it exactly, is neither shown to this run's
// approver nor resumed, whether it is undecided, approved or denied, and
// the other principal's own pause is not used up by the attempt.
func TestPauseOfAnotherPrincipalRefused(t *testing.T) {
	for _, decision := range []string{"undecided", "approved", "denied"} {
		t.Run(decision, func(t *testing.T) {
			a, b := &server{}, &server{}
			p := newProcess(t, mcpruntime.NewMemoryStore(), a, b, &atomic.Int32{})
			mine := gatedTurn(t, p, "1")
			_, theirs, err := p.set.DispatchAll(bob, []Call{{ID: "tu_9", Name: "a__move", Arguments: json.RawMessage(`{"amount":500}`)}})
			if err != nil || theirs == nil {
				t.Fatal(theirs, err)
			}
			bobs := theirs.Results[0].Pending
			switch decision {
			case "approved":
				if err := p.gate.Approve(context.Background(), bobs.ID, bobs.Digest); err != nil {
					t.Fatal(err)
				}
			case "denied":
				if err := p.gate.Deny(context.Background(), bobs.ID, "no"); err != nil {
					t.Fatal(err)
				}
			}
			// Bob's approval, exactly as the store holds it, in alice's
			// pause.
			swapped := edit(t, mine, func(_, pa map[string]any) {
				var m map[string]any
				_ = json.Unmarshal(mustJSON(bobs), &m)
				clear(pa)
				maps.Copy(pa, m)
			})
			sp, err := ParsePause(swapped)
			if err != nil {
				t.Fatal(err)
			}
			if as, err := sp.Approvals(alice, p.set); !errors.Is(err, ErrPauseAltered) || !errors.Is(err, mcpruntime.ErrApprovalMismatch) || as != nil {
				t.Fatalf("Approvals for alice of bob's approval = %v, %v", as, err)
			}
			if out, still, err := p.resume(alice, sp); !errors.Is(err, ErrPauseAltered) || out != "" || still != nil {
				t.Fatalf("alice's resume of bob's approval = %q, %v, %v", out, still, err)
			}
			if got := append(a.made(), b.made()...); len(got) != 1 || got[0] != "balance {}" {
				t.Errorf("calls made: %q", got)
			}
			// Bob's own pause is untouched.
			if as, err := theirs.Approvals(bob, p.set); err != nil || len(as) != 1 || as[0].ID != bobs.ID {
				t.Fatalf("bob's Approvals = %v, %v", as, err)
			}
			if decision == "denied" {
				if out, _, err := p.resume(bob, theirs); err != nil || out == "" {
					t.Errorf("bob's resume = %q, %v", out, err)
				}
			}
		})
	}
}

// Approvals are bound to the server the bindings were generated from
// (Descriptor.Server), not only to the runtime's label: two servers'
// bindings of one tool, schema and label, in two sets sharing a store (two
// unnamed stdio servers of one command), do not spend each other's
// approvals.
func TestApprovalBoundToServerIdentity(t *testing.T) {
	store := mcpruntime.NewMemoryStore()
	ledger := func(identity string, srv *server) (*Set, *mcpruntime.Gate) {
		d := *moveDesc
		d.Server = identity
		g := mcpruntime.NewGate(store)
		return mustSet(t, Source{Tools: toolset(t, mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](&d, srv,
			mcpruntime.WithGate(g), mcpruntime.WithServerName("ledger"), mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)))}), g
	}
	a, b := &server{}, &server{}
	sa, ga := ledger("ledger-eu/ledger", a)
	sb, _ := ledger("ledger-us/ledger", b)
	_, pause, err := sa.DispatchAll(alice, []Call{{ID: "tu_1", Name: "move", Arguments: json.RawMessage(`{"amount":3}`)}})
	if err != nil || pause == nil {
		t.Fatal(pause, err)
	}
	pa := pause.Results[0].Pending
	if pa.Server != "ledger" || pa.ServerIdentity != "ledger-eu/ledger" {
		t.Fatalf("approval bound to %q, %q", pa.Server, pa.ServerIdentity)
	}
	if err := ga.Approve(context.Background(), pa.ID, pa.Digest); err != nil {
		t.Fatal(err)
	}
	stored, _ := json.Marshal(pause)
	for name, b := range map[string][]byte{
		"as stored":           stored,
		"identity relabelled": edit(t, stored, func(_, a map[string]any) { a["serverIdentity"] = "ledger-us/ledger" }),
		"identity dropped":    edit(t, stored, func(_, a map[string]any) { delete(a, "serverIdentity") }),
	} {
		p, _ := ParsePause(b)
		if _, err := p.Approvals(alice, sb); !errors.Is(err, ErrPauseAltered) || !errors.Is(err, mcpruntime.ErrApprovalMismatch) {
			t.Errorf("%s: Approvals through the other server's bindings = %v", name, err)
		}
		if _, _, err := sb.Resume(alice, p); !errors.Is(err, ErrPauseAltered) {
			t.Errorf("%s: Resume through the other server's bindings = %v", name, err)
		}
	}
	if _, err := sb.byName["move"].ts.Resume(alice, "move", pa.ID); !errors.Is(err, mcpruntime.ErrApprovalMismatch) || !strings.Contains(err.Error(), `bindings of "ledger-eu/ledger"`) {
		t.Errorf("Toolset.Resume through the other server's bindings = %v", err)
	}
	if len(b.made()) != 0 {
		t.Fatalf("the other server got %q", b.made())
	}
	// Through the bindings it was made with: resumed.
	p, _ := ParsePause(stored)
	if res, _, err := sa.Resume(alice, p); err != nil || len(res) != 1 || res[0].IsError {
		t.Fatalf("resume = %+v, %v", res, err)
	}
	if got := a.made(); len(got) != 1 || got[0] != `move {"amount":3}` {
		t.Errorf("calls made: %q", got)
	}
	// In one set, two such tools are told apart by the gate, so New
	// accepts them; with one identity it refuses them.
	g := mcpruntime.NewGate(store)
	tool := func(identity string) *mcpruntime.Toolset {
		d := *moveDesc
		d.Server = identity
		return toolset(t, mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](&d, &server{}, mcpruntime.WithGate(g), mcpruntime.WithServerName("ledger")))
	}
	if _, err := New(DialectJSONSchema, Source{Prefix: "eu", Tools: tool("ledger-eu/ledger")}, Source{Prefix: "us", Tools: tool("ledger-us/ledger")}); err != nil {
		t.Errorf("New refused tools the gate tells apart: %v", err)
	}
	if _, err := New(DialectJSONSchema, Source{Prefix: "eu", Tools: tool("ledger/ledger")}, Source{Prefix: "us", Tools: tool("ledger/ledger")}); err == nil || !strings.Contains(err.Error(), `(bindings of "ledger/ledger")`) {
		t.Errorf("New = %v", err)
	}
}

func mustSet(t *testing.T, sources ...Source) *Set {
	t.Helper()
	s, err := New(DialectJSONSchema, sources...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
