package mcpruntime

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGateDenyErrors: Deny refuses what can no longer be denied, says why,
// and leaves the stored approval as it was (or marks it expired), in every
// store.
func TestGateDenyErrors(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			created := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
			now := created
			store := open(t)
			g := NewGate(store, GateClock(func() time.Time { return now }))
			add := func(state ApprovalState) *Approval {
				a := testApproval(randomID(), created)
				a.State = state
				if state == StateExecuting || state == StateDone {
					a.Started = created
				}
				if err := store.Create(ctx, a); err != nil {
					t.Fatal(err)
				}
				return a
			}
			is := func(err, want error) bool {
				var ae *ApprovalError
				return errors.As(err, &ae) && errors.Is(err, want)
			}
			stateOf := func(id string) ApprovalState {
				a, err := store.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				return a.State
			}

			if err := g.Deny(ctx, randomID(), "x"); !is(err, ErrApprovalNotFound) {
				t.Errorf("deny of an unknown approval: %v", err)
			}
			if err := g.Deny(ctx, "../../etc/passwd", "x"); !is(err, ErrApprovalNotFound) || !strings.Contains(err.Error(), "not an approval id") {
				t.Errorf("deny of a malformed id: %v", err)
			}

			// Denying twice is no error, and keeps the first reason.
			d := add(StatePending)
			if err := g.Deny(ctx, d.ID, "first"); err != nil {
				t.Fatal(err)
			}
			if err := g.Deny(ctx, d.ID, "second"); err != nil {
				t.Errorf("second deny: %v", err)
			}
			if a, _ := store.Get(ctx, d.ID); a.State != StateDenied || a.Reason != "first" || !a.Decided.Equal(created) {
				t.Errorf("denied twice: %+v", a)
			}

			// An approved call not yet started can still be denied.
			ap := add(StateApproved)
			if err := g.Deny(ctx, ap.ID, "changed my mind"); err != nil || stateOf(ap.ID) != StateDenied {
				t.Errorf("deny after approval: %v, state %s", err, stateOf(ap.ID))
			}

			// Started or finished calls cannot be taken back.
			for _, st := range []ApprovalState{StateExecuting, StateDone} {
				a := add(st)
				if err := g.Deny(ctx, a.ID, "too late"); !is(err, ErrApprovalStarted) {
					t.Errorf("deny of a %s call: %v", st, err)
				}
				if got := stateOf(a.ID); got != st {
					t.Errorf("deny of a %s call changed it to %s", st, got)
				}
			}

			// Past its expiry a pending approval is expired: the deny fails,
			// and the store records the expiry; a second deny fails the same.
			ex := add(StatePending)
			now = created.Add(2 * time.Hour) // testApproval expires after an hour
			for i := range 2 {
				if err := g.Deny(ctx, ex.ID, "late"); !is(err, ErrApprovalExpired) {
					t.Errorf("deny %d of an expired approval: %v", i+1, err)
				}
				if got := stateOf(ex.ID); got != StateExpired {
					t.Errorf("after deny %d of an expired approval: state %s", i+1, got)
				}
			}
		})
	}
}

// A store that fails is reported by Deny as it is, not taken for a
// decision.
func TestGateDenyStoreFailure(t *testing.T) {
	skipWithoutFlock(t)
	s, err := OpenFileStore(filepath.Join(t.TempDir(), "approvals"))
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
	if err := NewGate(s).Deny(context.Background(), a.ID, "x"); err == nil || !strings.Contains(err.Error(), "approval store: closed") {
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
		s, err := OpenFileStore(dir)
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
		_, err := s.Update(ctx, a.ID, func(x *Approval) error {
			x.State = StateApproved
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
		_, err := s.Update(ctx, a.ID, func(x *Approval) error {
			x.State = StateApproved
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
