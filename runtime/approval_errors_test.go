package mcpruntime

import (
	"context"
	"encoding/json"
	"errors"
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

// stores are the approval stores of this package; the file store has its
// own tests in package filestore.
func stores(*testing.T) map[string]func(t *testing.T) ApprovalStore {
	return map[string]func(t *testing.T) ApprovalStore{
		"memory": func(*testing.T) ApprovalStore { return NewMemoryStore() },
	}
}

// uncertainStore stores a resume's claim and then reports, as a shared
// store does when its connection is lost during the commit, that it cannot
// tell whether it did.
type uncertainStore struct{ *MemoryStore }

func (s uncertainStore) Claim(ctx context.Context, id string, fn func(*Approval) error) (*Approval, func(), error) {
	a, err := s.Update(ctx, id, fn)
	if err != nil || a.State != StateExecuting {
		return a, nil, err
	}
	return nil, nil, &ApprovalError{ID: id, Tool: a.Tool, Err: ErrOutcomeUnknown, Detail: "the connection was lost while claiming"}
}

func (s uncertainStore) Wait(ctx context.Context, id string) (*Approval, error) {
	return s.Get(ctx, id)
}

// A store's error that already names the approval is passed on as it is:
// the approval is named once.
func TestClaimErrorNamesTheApprovalOnce(t *testing.T) {
	store := uncertainStore{NewMemoryStore()}
	g := NewGate(store)
	srv := &argsCaller{}
	tool := NewTool[sendInput, NoOutput](&Descriptor{Name: "send", Annotations: DefaultAnnotations(), InputSchema: json.RawMessage(`{"type":"object"}`)}, srv, WithGate(g))
	ctx := context.Background()
	_, err := tool.Call(ctx, sendInput{To: "bob"})
	var are *ApprovalRequiredError
	if !errors.As(err, &are) {
		t.Fatal(err)
	}
	if err := g.Approve(ctx, are.Approval.ID, are.Approval.Digest); err != nil {
		t.Fatal(err)
	}
	_, err = tool.Resume(ctx, are.Approval.ID)
	if !errors.Is(err, ErrOutcomeUnknown) || strings.Count(err.Error(), are.Approval.ID) != 1 {
		t.Errorf("resume: %v", err)
	}
	if len(srv.args) != 0 {
		t.Errorf("the call was made: %v", srv.args)
	}
}
