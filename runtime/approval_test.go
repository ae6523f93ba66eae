package mcpruntime

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestArgsDigest(t *testing.T) {
	a, err := ArgsDigest(json.RawMessage(`{"b": [1, 2.50, {"y":1,"x":"<&>"}], "a": null}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ArgsDigest(json.RawMessage("{\"a\":null,\n\"b\":[1,2.50,{\"x\":\"\\u003c&>\",\"y\":1}]}"))
	if a != b || !strings.HasPrefix(a, "sha256:") || len(a) != len("sha256:")+64 {
		t.Errorf("equal arguments, different digests: %s %s", a, b)
	}
	// Numbers are kept as written: 2.5 and 2.50 are different arguments
	// to a server that reads them as text.
	for _, other := range []string{`{"a":null,"b":[1,2.5,{"x":"<&>","y":1}]}`, `{"b":[1,2.50,{"y":1,"x":"<&>"}]}`, `{"a":null,"b":[2.50,1,{"y":1,"x":"<&>"}]}`} {
		if d, _ := ArgsDigest(json.RawMessage(other)); d == a {
			t.Errorf("%s has the same digest", other)
		}
	}
	e1, _ := ArgsDigest(nil)
	e2, _ := ArgsDigest(json.RawMessage(" {} "))
	if e1 != e2 {
		t.Errorf("empty arguments: %s != %s", e1, e2)
	}
	if _, err := ArgsDigest(json.RawMessage(`{"a":`)); err == nil {
		t.Error("malformed arguments accepted")
	}
	if _, err := ArgsDigest(json.RawMessage(`{} {}`)); err == nil {
		t.Error("two values accepted")
	}
}

func testApproval(id string, created time.Time) *Approval {
	args := json.RawMessage(`{"deal_id":"D-2001"}`)
	d, _ := ArgsDigest(args)
	return &Approval{ID: id, Tool: "update_deal", Args: args, Digest: d, Principal: "alice", Why: "test",
		State: StatePending, Created: created, Expires: created.Add(time.Hour)}
}

func stores(t *testing.T) map[string]func(t *testing.T) ApprovalStore {
	return map[string]func(t *testing.T) ApprovalStore{
		"memory": func(*testing.T) ApprovalStore { return NewMemoryStore() },
		"file": func(t *testing.T) ApprovalStore {
			skipWithoutFlock(t)
			s, err := OpenFileStore(filepath.Join(t.TempDir(), "approvals"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
}

func TestApprovalStores(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			id1, id2 := randomID(), randomID()
			if err := s.Create(ctx, testApproval(id2, t0.Add(time.Second))); err != nil {
				t.Fatal(err)
			}
			if err := s.Create(ctx, testApproval(id1, t0)); err != nil {
				t.Fatal(err)
			}
			if err := s.Create(ctx, testApproval(id1, t0)); err == nil || !strings.Contains(err.Error(), "already exists") {
				t.Errorf("duplicate create: %v", err)
			}
			got, err := s.Get(ctx, id1)
			if err != nil || got.Principal != "alice" || string(got.Args) != `{"deal_id":"D-2001"}` || !got.Created.Equal(t0) {
				t.Fatalf("get = %+v, %v", got, err)
			}
			got.Args[0] = 'X' // a copy: the store is unaffected
			if again, _ := s.Get(ctx, id1); string(again.Args) != `{"deal_id":"D-2001"}` {
				t.Error("Get returned the stored value, not a copy")
			}
			list, err := s.List(ctx)
			if err != nil || len(list) != 2 || list[0].ID != id1 || list[1].ID != id2 {
				t.Errorf("list = %v, %v", list, err)
			}

			if _, err := s.Get(ctx, randomID()); !errors.Is(err, ErrApprovalNotFound) {
				t.Errorf("missing id: %v", err)
			}
			for _, bad := range []string{"../../etc/passwd", "", strings.Repeat("A", 32)} {
				if _, err := s.Get(ctx, bad); !errors.Is(err, ErrApprovalNotFound) || !strings.Contains(err.Error(), "not an approval id") {
					t.Errorf("id %q: %v", bad, err)
				}
			}

			// An error from fn stores nothing.
			boom := errors.New("boom")
			if _, err := s.Update(ctx, id1, func(a *Approval) error { a.State = StateDenied; return boom }); err != boom {
				t.Errorf("update error = %v", err)
			}
			if a, _ := s.Get(ctx, id1); a.State != StatePending {
				t.Errorf("a failed update was stored: %s", a.State)
			}

			// Compare-and-swap under contention: one winner.
			var wins atomic.Int32
			var wg sync.WaitGroup
			for range 100 {
				wg.Go(func() {
					_, err := s.Update(ctx, id1, func(a *Approval) error {
						if a.State != StatePending {
							return errNoChange
						}
						a.State = StateApproved
						return nil
					})
					if err == nil {
						wins.Add(1)
					} else if err != errNoChange {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if wins.Load() != 1 {
				t.Errorf("%d updates won, want 1", wins.Load())
			}
		})
	}
}

func TestFileStoreDurableAndStrict(t *testing.T) {
	skipWithoutFlock(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "approvals")
	s, err := OpenFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	id := randomID()
	a := testApproval(id, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	a.Outcome = &Outcome{Result: json.RawMessage(`{"content":[]}`), Finished: a.Created}
	if err := s.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, id); err == nil {
		t.Error("closed store still answers")
	}

	s2, err := OpenFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.Get(ctx, id)
	if err != nil || got.Digest != a.Digest || string(got.Outcome.Result) != `{"content":[]}` {
		t.Fatalf("reopened: %+v, %v", got, err)
	}
	path := filepath.Join(dir, id+".json")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode: %v, %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode: %v, %v", fi.Mode(), err)
	}
	// Leftovers of a crash mid-write are not approvals.
	if err := os.WriteFile(filepath.Join(dir, ".tmp-"+id+"-123"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if l, err := s2.List(ctx); err != nil || len(l) != 1 {
		t.Errorf("list with a temp file: %v, %v", l, err)
	}

	orig, _ := os.ReadFile(path)
	for _, tc := range []struct{ name, data, want string }{
		{"syntax", "{\n  \"id\": \"" + id + "\",\n  \"tool\": ,\n}", path + ":3:11: invalid character ','"},
		{"type", "{\n  \"id\": \"" + id + "\",\n  \"state\": 7\n}", path + ":3:12: cannot unmarshal number"},
		{"unknown member", `{"id":"` + id + `","token":"x"}`, `unknown field "token"`},
		{"id", `{"id":"` + randomID() + `","state":"pending"}`, path + ": /id: "},
		{"state", `{"id":"` + id + `","state":"running"}`, path + `: /state: unknown state "running"`},
	} {
		if err := os.WriteFile(path, []byte(tc.data), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := s2.Get(ctx, id)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
		if _, err := s2.List(ctx); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: list err = %v", tc.name, err)
		}
	}
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Get(ctx, id); err != nil {
		t.Error(err)
	}
}

func TestGateDecisions(t *testing.T) {
	ro := &Descriptor{Name: "get", Annotations: Annotations{ReadOnly: true}}
	mut := &Descriptor{Name: "put", Annotations: DefaultAnnotations()}
	harmless := &Descriptor{Name: "note", Annotations: Annotations{Destructive: false}}
	ctx := context.Background()
	g := NewGate(NewMemoryStore(), GateTool("note", func(_ *Descriptor, args json.RawMessage) bool {
		return strings.Contains(string(args), "urgent")
	}))
	for _, tc := range []struct {
		d    *Descriptor
		args string
		want bool
	}{
		{ro, `{}`, false},
		{mut, `{}`, true},
		{harmless, `{"text":"hi"}`, false},
		{harmless, `{"text":"urgent"}`, true},
	} {
		if _, got := g.decide(ctx, &call{desc: tc.d, args: json.RawMessage(tc.args)}); got != tc.want {
			t.Errorf("%s %s: gated = %v", tc.d.Name, tc.args, got)
		}
	}
	if !GateMutations(harmless, nil) || GateMutations(ro, nil) {
		t.Error("GateMutations: not read-only is a mutation, destructive or not")
	}

	// Taint-aware: only after external content, only for mutations, even
	// when a rule says never.
	tg := NewGate(NewMemoryStore(), GateDefault(GateNever), GateTool("put", GateNever), GateAfterTaint())
	run := NewRun("r")
	rctx := WithRun(ctx, run)
	if _, got := tg.decide(rctx, &call{desc: mut}); got {
		t.Error("gated before any content")
	}
	run.Record(Provenance{Tool: "clock", External: false})
	if _, got := tg.decide(rctx, &call{desc: mut}); got {
		t.Error("gated after internal content")
	}
	run.Record(Provenance{Tool: "fetch", External: true})
	if why, got := tg.decide(rctx, &call{desc: mut}); !got || !strings.Contains(why, `external content (from tool "fetch")`) {
		t.Errorf("after external content: %v %q", got, why)
	}
	if _, got := tg.decide(rctx, &call{desc: ro}); got {
		t.Error("read-only call gated by taint")
	}
	if _, got := tg.decide(WithRun(ctx, NewRun("other")), &call{desc: mut}); got {
		t.Error("another run's taint leaked")
	}
}

func skipWithoutFlock(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "lock")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := flock(f); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the file store must work in CI: %v", err)
		}
		t.Skipf("the file store is not available here: %v", err)
	}
	funlock(f)
}

// FileStore's waiting: two stores over one directory; Wait returns the
// outcome once the runner records it, and returns executing at once when
// the runner released without recording (it is gone).
func TestFileStoreWait(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "approvals")
	open := func() *FileStore {
		s, err := OpenFileStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	runner, waiter := open(), open()
	ctx := context.Background()
	now := time.Now()
	claim := func(id string) func() {
		if err := runner.Create(ctx, &Approval{ID: id, State: StateApproved, Created: now, Expires: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		_, release, err := runner.Claim(ctx, id, func(a *Approval) error { a.State = StateExecuting; return nil })
		if err != nil || release == nil {
			t.Fatalf("claim: %v, release %v", err, release != nil)
		}
		return release
	}

	id := strings.Repeat("1", 32)
	release := claim(id)
	got := make(chan *Approval)
	go func() {
		a, err := waiter.Wait(ctx, id)
		if err != nil {
			t.Error(err)
		}
		got <- a
	}()
	if _, err := runner.Update(ctx, id, func(a *Approval) error {
		a.State, a.Outcome = StateDone, &Outcome{Result: json.RawMessage(`{}`), Finished: now}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	release()
	if a := <-got; a == nil || a.State != StateDone {
		t.Errorf("wait returned %+v before the outcome", a)
	}
	if _, err := os.Stat(filepath.Join(dir, id+".run")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the runner's lock file stayed: %v", err)
	}

	gone := strings.Repeat("2", 32)
	claim(gone)() // released without an outcome: the runner is gone
	if a, err := waiter.Wait(ctx, gone); err != nil || a.State != StateExecuting {
		t.Errorf("wait for a runner that is gone: %+v, %v", a, err)
	}

	held := strings.Repeat("3", 32)
	defer claim(held)()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := waiter.Wait(cctx, held); !errors.Is(err, context.Canceled) {
		t.Errorf("wait with an ended context: %v", err)
	}
	// A plain Update to executing marks no runner.
	plain := strings.Repeat("4", 32)
	if err := runner.Create(ctx, &Approval{ID: plain, State: StateApproved, Created: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Update(ctx, plain, func(a *Approval) error { a.State = StateExecuting; return nil }); err != nil {
		t.Fatal(err)
	}
	if a, err := waiter.Wait(ctx, plain); err != nil || a.State != StateExecuting {
		t.Errorf("wait with no runner: %+v, %v", a, err)
	}
}
