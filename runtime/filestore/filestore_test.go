package filestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

var errNoChange = errors.New("no change")

func openStore(t *testing.T) mcpruntime.ApprovalStore {
	skipWithoutFlock(t)
	s, err := Open(filepath.Join(t.TempDir(), "approvals"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func testApproval(id string, created time.Time) *mcpruntime.Approval {
	args := json.RawMessage(`{"deal_id":"D-2001"}`)
	d, _ := mcpruntime.ArgsDigest(args)
	return &mcpruntime.Approval{ID: id, Tool: "update_deal", Args: args, Digest: d, Principal: "alice", Why: "test",
		State: mcpruntime.StatePending, Created: created, Expires: created.Add(time.Hour)}
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

func TestApprovalStores(t *testing.T) {
	ctx := context.Background()
	for name, open := range map[string]func(*testing.T) mcpruntime.ApprovalStore{"file": openStore} {
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

			if _, err := s.Get(ctx, randomID()); !errors.Is(err, mcpruntime.ErrApprovalNotFound) {
				t.Errorf("missing id: %v", err)
			}
			for _, bad := range []string{"../../etc/passwd", "", strings.Repeat("A", 32)} {
				if _, err := s.Get(ctx, bad); !errors.Is(err, mcpruntime.ErrApprovalNotFound) || !strings.Contains(err.Error(), "not an approval id") {
					t.Errorf("id %q: %v", bad, err)
				}
			}

			// An error from fn stores nothing.
			boom := errors.New("boom")
			if _, err := s.Update(ctx, id1, func(a *mcpruntime.Approval) error { a.State = mcpruntime.StateDenied; return boom }); err != boom {
				t.Errorf("update error = %v", err)
			}
			if a, _ := s.Get(ctx, id1); a.State != mcpruntime.StatePending {
				t.Errorf("a failed update was stored: %s", a.State)
			}

			// Compare-and-swap under contention: one winner.
			var wins atomic.Int32
			var wg sync.WaitGroup
			for range 100 {
				wg.Go(func() {
					_, err := s.Update(ctx, id1, func(a *mcpruntime.Approval) error {
						if a.State != mcpruntime.StatePending {
							return errNoChange
						}
						a.State = mcpruntime.StateApproved
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
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	id := randomID()
	a := testApproval(id, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	a.Outcome = &mcpruntime.Outcome{Result: json.RawMessage(`{"content":[]}`), Finished: a.Created}
	if err := s.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, id); err == nil {
		t.Error("closed store still answers")
	}

	s2, err := Open(dir)
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

// FileStore's waiting: two stores over one directory; Wait returns the
// outcome once the runner records it, and returns executing at once when
// the runner released without recording (it is gone).
func TestFileStoreWait(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "approvals")
	open := func() *FileStore {
		s, err := Open(dir)
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
		if err := runner.Create(ctx, &mcpruntime.Approval{ID: id, State: mcpruntime.StateApproved, Created: now, Expires: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		_, release, err := runner.Claim(ctx, id, func(a *mcpruntime.Approval) error { a.State = mcpruntime.StateExecuting; return nil })
		if err != nil || release == nil {
			t.Fatalf("claim: %v, release %v", err, release != nil)
		}
		return release
	}

	id := strings.Repeat("1", 32)
	release := claim(id)
	got := make(chan *mcpruntime.Approval)
	go func() {
		a, err := waiter.Wait(ctx, id)
		if err != nil {
			t.Error(err)
		}
		got <- a
	}()
	if _, err := runner.Update(ctx, id, func(a *mcpruntime.Approval) error {
		a.State, a.Outcome = mcpruntime.StateDone, &mcpruntime.Outcome{Result: json.RawMessage(`{}`), Finished: now}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	release()
	if a := <-got; a == nil || a.State != mcpruntime.StateDone {
		t.Errorf("wait returned %+v before the outcome", a)
	}
	if _, err := os.Stat(filepath.Join(dir, id+".run")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the runner's lock file stayed: %v", err)
	}

	gone := strings.Repeat("2", 32)
	claim(gone)() // released without an outcome: the runner is gone
	if a, err := waiter.Wait(ctx, gone); err != nil || a.State != mcpruntime.StateExecuting {
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
	if err := runner.Create(ctx, &mcpruntime.Approval{ID: plain, State: mcpruntime.StateApproved, Created: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Update(ctx, plain, func(a *mcpruntime.Approval) error { a.State = mcpruntime.StateExecuting; return nil }); err != nil {
		t.Fatal(err)
	}
	if a, err := waiter.Wait(ctx, plain); err != nil || a.State != mcpruntime.StateExecuting {
		t.Errorf("wait with no runner: %+v, %v", a, err)
	}
}

// A store that fails is reported by Deny as it is, not taken for a
// decision.
func TestGateDenyStoreFailure(t *testing.T) {
	skipWithoutFlock(t)
	s, err := Open(filepath.Join(t.TempDir(), "approvals"))
	if err != nil {
		t.Fatal(err)
	}
	a := testApproval(randomID(), time.Now())
	if err := s.Create(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mcpruntime.NewGate(s).Deny(context.Background(), a.ID, "x"); err == nil || !strings.Contains(err.Error(), "approval store: closed") {
		t.Errorf("deny through a closed store: %v", err)
	}
}

// TestFileStoreWriteErrors: a write that fails leaves no temporary file
// behind, names what failed, and leaves the store usable.
func TestFileStoreWriteErrors(t *testing.T) {
	skipWithoutFlock(t)
	ctx := context.Background()
	newStore := func(t *testing.T) (*FileStore, string) {
		dir := filepath.Join(t.TempDir(), "approvals")
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s, dir
	}
	leftovers := func(t *testing.T, dir string) {
		t.Helper()
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".tmp-") {
				t.Errorf("temporary file left behind: %s", e.Name())
			}
		}
	}

	t.Run("encode", func(t *testing.T) {
		s, dir := newStore(t)
		a := testApproval(randomID(), time.Now())
		a.Args = json.RawMessage(`{"deal_id":`) // cannot be encoded
		err := s.Create(ctx, a)
		if err == nil || !strings.Contains(err.Error(), "approval "+a.ID+": encode: ") {
			t.Fatalf("create with unencodable arguments: %v", err)
		}
		if _, err := os.Lstat(filepath.Join(dir, a.ID+".json")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a file was written: %v", err)
		}
		leftovers(t, dir)
	})

	t.Run("temporary file", func(t *testing.T) {
		s, dir := newStore(t)
		a := testApproval(randomID(), time.Now())
		if err := s.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		// The directory disappears under the store (a cleanup job, an
		// unmounted volume) between the read and the write.
		_, err := s.Update(ctx, a.ID, func(x *mcpruntime.Approval) error {
			x.State = mcpruntime.StateApproved
			return os.RemoveAll(dir)
		})
		if err == nil || !strings.HasPrefix(err.Error(), "approval store: ") || !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("update into a removed directory: %v", err)
		}
	})

	t.Run("rename", func(t *testing.T) {
		s, dir := newStore(t)
		a := testApproval(randomID(), time.Now())
		if err := s.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, a.ID+".json")
		// Something else takes the approval's name: a directory, which the
		// new file cannot replace.
		_, err := s.Update(ctx, a.ID, func(x *mcpruntime.Approval) error {
			x.State = mcpruntime.StateApproved
			if err := os.Remove(path); err != nil {
				return err
			}
			if err := os.Mkdir(path, 0o700); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(path, "x"), nil, 0o600)
		})
		if err == nil || !strings.HasPrefix(err.Error(), "approval store: ") || !strings.Contains(err.Error(), a.ID+".json") {
			t.Fatalf("update over a directory: %v", err)
		}
		leftovers(t, dir)
		// The store still works for other approvals.
		b := testApproval(randomID(), time.Now())
		if err := s.Create(ctx, b); err != nil {
			t.Errorf("create after a failed write: %v", err)
		}
		if got, err := s.Get(ctx, b.ID); err != nil || got.ID != b.ID {
			t.Errorf("get after a failed write: %+v, %v", got, err)
		}
	})
}

// WaitDecision on one store sees a decision made through another over the
// same directory, and an expiry.
func TestFileStoreWaitDecision(t *testing.T) {
	skipWithoutFlock(t)
	dir := filepath.Join(t.TempDir(), "approvals")
	var stores []*FileStore
	for range 2 {
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores = append(stores, s)
	}
	waiter, decider := stores[0], stores[1]
	ctx := context.Background()
	a := testApproval(randomID(), time.Now())
	if err := decider.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	got := make(chan *mcpruntime.Approval, 1)
	go func() {
		w, err := waiter.WaitDecision(ctx, a.ID)
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	time.Sleep(20 * time.Millisecond)
	if err := mcpruntime.NewGate(decider).Deny(ctx, a.ID, "no"); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-got:
		if w == nil || w.State != mcpruntime.StateDenied || w.Reason != "no" {
			t.Errorf("after the denial: %+v", w)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the denial was not seen")
	}
	e := testApproval(randomID(), time.Now())
	e.Expires = time.Now().Add(50 * time.Millisecond)
	if err := decider.Create(ctx, e); err != nil {
		t.Fatal(err)
	}
	if w, err := waiter.WaitDecision(ctx, e.ID); err != nil || w.State != mcpruntime.StateExpired {
		t.Errorf("at the expiry: %+v, %v", w, err)
	}
	p := testApproval(randomID(), time.Now())
	if err := decider.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if _, err := waiter.WaitDecision(cctx, p.ID); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("with an ending context: %v", err)
	}
}

// closing is a server that closes the store while the approved call runs,
// so that its outcome cannot be recorded.
type closing struct{ s *FileStore }

func (c closing) CallTool(context.Context, string, json.RawMessage) (*mcpruntime.Result, error) {
	_ = c.s.Close()
	return &mcpruntime.Result{StructuredContent: json.RawMessage(`{"ok":true}`)}, nil
}

type noteIn struct {
	Note string `json:"note"`
}

func (*noteIn) Validate() error { return nil }

type okOut struct {
	OK bool `json:"ok"`
}

func (*okOut) Validate() error { return nil }

// A result whose outcome the store could not record is returned to the
// resumer with an error saying so, not thrown away.
func TestOutcomeNotRecordedKeepsResult(t *testing.T) {
	skipWithoutFlock(t)
	dir := filepath.Join(t.TempDir(), "approvals")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := mcpruntime.NewGate(s)
	d := &mcpruntime.Descriptor{Name: "note", GoName: "Note", Annotations: mcpruntime.DefaultAnnotations(),
		InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`)}
	tool := mcpruntime.NewTool[noteIn, okOut](d, closing{s}, mcpruntime.WithGate(g))
	ctx := context.Background()
	_, err = tool.Call(ctx, noteIn{Note: "x"})
	var are *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &are) {
		t.Fatal(err)
	}
	if err := g.Approve(ctx, are.Approval.ID, are.Approval.Digest); err != nil {
		t.Fatal(err)
	}
	r, err := tool.Resume(ctx, are.Approval.ID)
	if !errors.Is(err, mcpruntime.ErrOutcomeNotRecorded) || r == nil || !r.Output.OK {
		t.Fatalf("resume: %+v, %v", r, err)
	}
	if strings.Count(err.Error(), are.Approval.ID) != 1 || !strings.Contains(err.Error(), "approval store: closed") {
		t.Errorf("error: %v", err)
	}
	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if a, _ := again.Get(ctx, are.Approval.ID); a.State != mcpruntime.StateExecuting {
		t.Errorf("state %s", a.State)
	}
}
