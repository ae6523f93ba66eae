package postgres

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// gated makes a gated call to update_deal through g and returns its
// approval, undecided.
func gated(t *testing.T, c mcpruntime.Caller, g *mcpruntime.Gate, note string) *mcpruntime.Approval {
	t.Helper()
	_, err := updateDeal(c, g).Call(alice, NoteInput{DealID: "D-2001", Note: note})
	var are *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &are) {
		t.Fatalf("not gated: %v", err)
	}
	return are.Approval
}

// A replica waits for a person's decision taken through another: it is
// woken by the notification of the decision (well before its next look at
// the row), also after all its connections, pool and LISTEN, were cut
// while it waited. Denials, expiry and the context end the wait too.
func TestWaitDecision(t *testing.T) {
	dsn := newDatabase(t)
	waiter := openDB(t, dsn+" application_name=decision_waiter", WithMaxConns(2))
	decider := openDB(t, dsn)
	gd := mcpruntime.NewGate(decider.Approvals())
	ctx := context.Background()
	s := waiter.Approvals()

	a := gated(t, instant{}, gd, "decide")
	type res struct {
		a   *mcpruntime.Approval
		err error
		at  time.Time
	}
	got := make(chan res, 1)
	go func() {
		w, err := s.WaitDecision(ctx, a.ID)
		got <- res{w, err, time.Now()}
	}()
	for i := 0; pg.terminate(t, dbName(dsn), "application_name = 'decision_waiter' AND query = 'LISTEN mcpgen_approvals'") == 0; i++ {
		if i > 500 {
			t.Fatal("the waiter never listened")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	pg.terminate(t, dbName(dsn), "application_name = 'decision_waiter'")
	// By now the waiter looks at the row only every 1.6 s or more.
	time.Sleep(1600 * time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("returned before the decision: %+v, %v", r.a, r.err)
	default:
	}
	approvedAt := time.Now()
	if err := gd.Approve(ctx, a.ID, a.Digest); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || r.a.State != mcpruntime.StateApproved {
		t.Fatalf("after the approval: %+v, %v", r.a, r.err)
	}
	if d := r.at.Sub(approvedAt); d > 800*time.Millisecond {
		t.Errorf("the decision was seen %s after it was made: not notified", d)
	}
	// The waiting replica resumes it.
	if o := resumeOnce(alice, instant{}, mcpruntime.NewGate(s), a.ID); o.Err != "" {
		t.Errorf("resume after the wait: %+v", o)
	}
	if w, err := s.WaitDecision(ctx, a.ID); err != nil || w.State != mcpruntime.StateDone {
		t.Errorf("decided long ago: %+v, %v", w, err)
	}

	d := gated(t, instant{}, gd, "deny")
	go func() {
		time.Sleep(50 * time.Millisecond)
		_ = gd.Deny(ctx, d.ID, "not now")
	}()
	if w, err := s.WaitDecision(ctx, d.ID); err != nil || w.State != mcpruntime.StateDenied || w.Reason != "not now" {
		t.Errorf("after a denial: %+v, %v", w, err)
	}

	short := mcpruntime.NewGate(decider.Approvals(), mcpruntime.GateTTL(200*time.Millisecond))
	e := gated(t, instant{}, short, "expire")
	if w, err := s.WaitDecision(ctx, e.ID); err != nil || w.State != mcpruntime.StateExpired {
		t.Errorf("at the expiry: %+v, %v", w, err)
	}

	p := gated(t, instant{}, gd, "undecided")
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := s.WaitDecision(cctx, p.ID); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("with an ending context: %v", err)
	}
	if _, err := s.WaitDecision(ctx, strings.Repeat("c", 32)); !errors.Is(err, mcpruntime.ErrApprovalNotFound) {
		t.Errorf("a missing approval: %v", err)
	}
}

// jsonMembers lists the JSON member names of a struct type.
func jsonMembers(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Each row records the oldest document format that holds it; a row in a
// format newer than this build reads is refused, naming the format, and
// nothing is done with it. A member added to the runtime's approval needs
// a new format (this test lists every member of each).
func TestDocumentFormats(t *testing.T) {
	formats := map[string][]string{
		"Approval":   {"args", "continued", "created", "decided", "digest", "expires", "id", "outcome", "principal", "reason", "schemaHash", "server", "serverIdentity", "started", "state", "tool", "trace", "why"},
		"Outcome":    {"delivery", "error", "finished", "provenance", "result"},
		"Provenance": {"digest", "external", "isError", "prompt", "resource", "server", "time", "tool"},
	}
	for name, typ := range map[string]reflect.Type{"Approval": reflect.TypeFor[mcpruntime.Approval](), "Outcome": reflect.TypeFor[mcpruntime.Outcome](), "Provenance": reflect.TypeFor[mcpruntime.Provenance]()} {
		if got := jsonMembers(typ); !slices.Equal(got, formats[name]) {
			t.Errorf("mcpruntime.%s has members %v, format %d lists %v: add a format (docVersion, formatOf) for the new ones", name, got, docVersion, formats[name])
		}
	}

	db := openDB(t, newDatabase(t))
	s := db.Approvals()
	ctx := context.Background()
	g := mcpruntime.NewGate(s)
	docv := func(id string) int {
		var v int
		if err := db.Pool().QueryRow(ctx, `SELECT docv FROM mcpgen_approvals WHERE id = $1`, id).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	plain := gated(t, instant{}, g, "format 1")
	if v := docv(plain.ID); v != 1 {
		t.Errorf("an approval with no newer member is written in format %d", v)
	}
	if _, err := s.Update(ctx, plain.ID, func(a *mcpruntime.Approval) error { a.SchemaHash = "sha256:ab"; return nil }); err != nil {
		t.Fatal(err)
	}
	if v := docv(plain.ID); v != 2 {
		t.Errorf("an approval with a schema hash is written in format %d", v)
	}
	if _, err := s.Update(ctx, plain.ID, func(a *mcpruntime.Approval) error { a.ServerIdentity = "crm/crm"; return nil }); err != nil {
		t.Fatal(err)
	}
	if v := docv(plain.ID); v != 3 {
		t.Errorf("an approval with a server identity is written in format %d", v)
	}

	newer := gated(t, instant{}, g, "newer")
	if err := g.Approve(ctx, newer.ID, newer.Digest); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE mcpgen_approvals SET docv = 4, doc = replace(doc, '"tool"', '"future":1,"tool"') WHERE id = $1`, newer.ID); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("row %s: written by a newer build in a format this build does not read (format 4; this build reads formats up to 3)", newer.ID)
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNewerDocument) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", what, err)
		}
	}
	_, err := s.Get(ctx, newer.ID)
	check("get", err)
	_, err = s.Update(ctx, newer.ID, func(*mcpruntime.Approval) error { return nil })
	check("update", err)
	_, err = s.List(ctx)
	check("list", err)
	_, err = updateDeal(instant{}, g).Resume(alice, newer.ID)
	check("resume", err)
	var state string
	if err := db.Pool().QueryRow(ctx, `SELECT state FROM mcpgen_approvals WHERE id = $1`, newer.ID).Scan(&state); err != nil || state != "approved" {
		t.Errorf("the newer row was changed: %s, %v", state, err)
	}
}
