package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

func TestApprovalStore(t *testing.T) {
	db := openDB(t, newDatabase(t))
	s := db.Approvals()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	mk := func(id string, state mcpruntime.ApprovalState, expires time.Time) *mcpruntime.Approval {
		a := &mcpruntime.Approval{ID: id, Tool: "t", Args: []byte(`{"n":1.50,"b":2}`), Digest: "sha256:x", State: state, Created: now, Expires: expires}
		if err := s.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	id := strings.Repeat("a", 32)
	mk(id, mcpruntime.StatePending, now.Add(time.Hour))
	if err := s.Create(ctx, &mcpruntime.Approval{ID: id, State: mcpruntime.StatePending}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second create: %v", err)
	}
	a, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if string(a.Args) != `{"n":1.50,"b":2}` {
		t.Errorf("arguments changed on the way: %s", a.Args)
	}
	if _, err := s.Get(ctx, strings.Repeat("b", 32)); !errors.Is(err, mcpruntime.ErrApprovalNotFound) {
		t.Errorf("get of a missing approval: %v", err)
	}
	if _, err := s.Get(ctx, "../etc"); !errors.Is(err, mcpruntime.ErrApprovalNotFound) {
		t.Errorf("get of a bad id: %v", err)
	}
	wantErr := errors.New("refused")
	if _, err := s.Update(ctx, id, func(a *mcpruntime.Approval) error { a.State = mcpruntime.StateDenied; return wantErr }); err != wantErr {
		t.Errorf("update whose fn fails: %v", err)
	}
	if a, _ := s.Get(ctx, id); a.State != mcpruntime.StatePending {
		t.Errorf("a failed update was stored: %s", a.State)
	}
	if _, err := s.Update(ctx, id, func(a *mcpruntime.Approval) error { a.State = mcpruntime.StateApproved; return nil }); err != nil {
		t.Fatal(err)
	}
	if a, _ := s.Get(ctx, id); a.State != mcpruntime.StateApproved {
		t.Errorf("update not stored: %s", a.State)
	}

	// Rows written around the store are refused, naming the row.
	for name, sql := range map[string]string{
		"state column":    `UPDATE mcpgen_approvals SET state = 'done' WHERE id = $1`,
		"unknown member":  `UPDATE mcpgen_approvals SET doc = replace(doc, '"tool"', '"extra":1,"tool"') WHERE id = $1`,
		"other id":        `UPDATE mcpgen_approvals SET doc = replace(doc, '"id":"', '"id":"f') WHERE id = $1`,
		"not json at all": `UPDATE mcpgen_approvals SET doc = 'x' WHERE id = $1`,
	} {
		t.Run("tampered "+name, func(t *testing.T) {
			id := fmt.Sprintf("%032x", len(name)+1000)
			mk(id, mcpruntime.StateApproved, now.Add(time.Hour))
			if _, err := db.Pool().Exec(ctx, sql, id); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, id); err == nil || !strings.Contains(err.Error(), "row "+id) {
				t.Errorf("tampered row read: %v", err)
			}
			if _, err := s.Update(ctx, id, func(*mcpruntime.Approval) error { return nil }); err == nil {
				t.Error("tampered row updated")
			}
			if _, err := s.List(ctx); err == nil {
				t.Error("tampered row listed")
			}
			if _, err := db.Pool().Exec(ctx, `DELETE FROM mcpgen_approvals WHERE id = $1`, id); err != nil {
				t.Fatal(err)
			}
		})
	}

	// Purge: finished and expired approvals go, approved and executing
	// ones stay whatever their age.
	old := now.Add(-48 * time.Hour)
	for i, st := range []mcpruntime.ApprovalState{mcpruntime.StatePending, mcpruntime.StateExpired, mcpruntime.StateDenied, mcpruntime.StateDone, mcpruntime.StateApproved, mcpruntime.StateExecuting} {
		mk(fmt.Sprintf("%032x", i+1), st, old)
	}
	mk(fmt.Sprintf("%032x", 99), mcpruntime.StatePending, now.Add(time.Hour))
	n, err := s.Purge(ctx, now.Add(-24*time.Hour))
	if err != nil || n != 4 {
		t.Errorf("purge deleted %d (%v), want 4", n, err)
	}
	all, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, a := range all {
		states = append(states, string(a.State))
	}
	if got := strings.Join(states, ","); got != "approved,executing,pending,approved" {
		t.Errorf("after purge: %s", got)
	}
}

// A Gate's expiry works through the store, and purging removes what
// expired.
func TestApprovalExpiry(t *testing.T) {
	db := openDB(t, newDatabase(t))
	c := mcpgo.StreamableHTTP(crmHTTP(t))
	defer c.Close()
	clock := time.Now()
	var mu sync.Mutex
	g := mcpruntime.NewGate(db.Approvals(), mcpruntime.GateTTL(time.Minute), mcpruntime.GateClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }))
	if _, err := updateDeal(c, g).Call(alice, NoteInput{DealID: "D-2001", Note: "expiry"}); err == nil {
		t.Fatal("not gated")
	}
	p, err := g.Pending(context.Background())
	if err != nil || len(p) != 1 {
		t.Fatalf("pending: %v, %v", p, err)
	}
	mu.Lock()
	clock = clock.Add(2 * time.Minute)
	mu.Unlock()
	if err := g.Approve(context.Background(), p[0].ID, p[0].Digest); !errors.Is(err, mcpruntime.ErrApprovalExpired) {
		t.Errorf("approve after the TTL: %v", err)
	}
	if _, err := updateDeal(c, g).Resume(alice, p[0].ID); !errors.Is(err, mcpruntime.ErrApprovalExpired) {
		t.Errorf("resume after the TTL: %v", err)
	}
	if n, err := db.Approvals().Purge(context.Background(), time.Now().Add(2*time.Minute)); err != nil || n != 1 {
		t.Errorf("purge: %d, %v", n, err)
	}
	if countNotes(t, c, "expiry") != 0 {
		t.Error("an expired approval ran")
	}
}

// 100 goroutines in each of 4 processes resume one approval: the CRM
// server counts one execution, and every resumer gets its result.
func TestExactlyOnceAcrossProcesses(t *testing.T) {
	dsn := newDatabase(t)
	db := openDB(t, dsn)
	endpoint := crmHTTP(t)
	c := mcpgo.StreamableHTTP(endpoint)
	defer c.Close()
	g := mcpruntime.NewGate(db.Approvals())
	a := approved(t, c, g, "four processes")
	var hs []*helper
	for range 4 {
		hs = append(hs, startHelper(t, dsn, a.ID, endpoint, 100, ""))
	}
	var all []outcome
	for _, h := range hs {
		all = append(all, h.results(t)...)
	}
	if n := countNotes(t, c, "four processes"); n != 1 {
		t.Fatalf("the approved call ran %d times", n)
	}
	if len(all) != 400 {
		t.Fatalf("%d outcomes, want 400", len(all))
	}
	want := resumeOnce(alice, c, g, a.ID)
	if want.Err != "" {
		t.Fatal(want.Err)
	}
	for i, o := range all {
		if o != want {
			t.Fatalf("resumer %d: %+v, recorded %+v", i, o, want)
		}
	}
}

// The winning resumer dies (SIGKILL) or loses its connection
// (pg_terminate_backend) at each point of a resume, while resumers in
// another process wait. The call is never made twice, and every resumer is
// told what is known: the result, or that the outcome is unknown.
func TestWinnerLost(t *testing.T) {
	type want struct {
		runs    int  // executions the server counts
		result  bool // later resumers get the result (else: unknown)
		winner  string
		waiters string // "result", "unknown" or "either"
	}
	cases := []struct {
		point  string
		how    string // kill or terminate
		expect want
	}{
		// Before the claim is committed: nothing is stored, a waiter wins.
		{"claim-locked", "kill", want{1, true, "", "result"}},
		{"claim-updated", "kill", want{1, true, "", "result"}},
		{"claim-locked", "terminate", want{1, true, "error", "result"}},
		// COMMIT on a dead connection: the winner knows it was not stored
		// (it never left) or cannot know, says so, and does not call; the
		// rolled-back claim goes to a waiter.
		{"claim-updated", "terminate", want{1, true, "error|unknown", "result"}},
		// Claimed, not called yet: nobody can tell, so nobody calls.
		{"claim-committed", "kill", want{0, false, "", "unknown"}},
		// The runner's own lock connection is cut: it goes on and records
		// the outcome; waiters that looked meanwhile were told unknown.
		{"claim-committed", "terminate", want{1, true, "result", "either"}},
		// Called, outcome not recorded: the runner is gone.
		{"record-locked", "kill", want{1, false, "", "unknown"}},
		{"record-updated", "kill", want{1, false, "", "unknown"}},
		// Called, and the connection recording the outcome is cut before
		// its commit reached the server: the outcome is recorded on a
		// fresh one, and everyone gets it.
		{"record-locked", "terminate", want{1, true, "result", "result"}},
		{"record-updated", "terminate", want{1, true, "result", "result"}},
		// Recorded: everyone gets it.
		{"record-committed", "kill", want{1, true, "", "result"}},
	}
	dsn := newDatabase(t)
	db := openDB(t, dsn)
	endpoint := crmHTTP(t)
	c := mcpgo.StreamableHTTP(endpoint)
	defer c.Close()
	g := mcpruntime.NewGate(db.Approvals())
	for _, tc := range cases {
		t.Run(tc.how+" at "+tc.point, func(t *testing.T) {
			note := tc.how + " " + tc.point
			a := approved(t, c, g, note)
			winner := startHelper(t, dsn, a.ID, endpoint, 1, tc.point)
			pid := winner.at(t, tc.point)
			waiters := startHelper(t, dsn, a.ID, endpoint, 20, "")
			switch tc.how {
			case "kill":
				if err := winner.cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				_ = winner.cmd.Wait()
			case "terminate":
				var ok bool
				if err := db.Pool().QueryRow(context.Background(), `SELECT pg_terminate_backend($1, 10000)`, int32(pid)).Scan(&ok); err != nil || !ok {
					t.Fatalf("pg_terminate_backend(%d): %v %v", pid, ok, err)
				}
				if _, err := winner.stdin.Write([]byte("\n")); err != nil {
					t.Fatal(err)
				}
				w := winner.results(t)
				if len(w) != 1 {
					t.Fatalf("winner: %+v", w)
				}
				got := "result"
				if w[0].Unknown {
					got = "unknown"
				} else if w[0].Err != "" {
					got = "error"
				}
				if !slices.Contains(strings.Split(tc.expect.winner, "|"), got) {
					t.Errorf("the winner got %s (%+v), want %s", got, w[0], tc.expect.winner)
				}
			}
			ws := waiters.results(t)
			if n := countNotes(t, c, note); n != tc.expect.runs {
				t.Fatalf("the approved call ran %d times, want %d", n, tc.expect.runs)
			}
			final := resumeOnce(alice, c, g, a.ID)
			if tc.expect.result != (final.Err == "") || (!tc.expect.result && !final.Unknown) {
				t.Fatalf("a later resume: %+v", final)
			}
			for _, o := range append(ws, final) {
				if n := strings.Count(o.Err, a.ID); n > 1 {
					t.Errorf("the error names the approval %d times: %s", n, o.Err)
				}
				if strings.Contains(o.Err, "gone") {
					t.Errorf("the error says the runner is gone, which the store cannot know: %s", o.Err)
				}
			}
			for i, o := range ws {
				ok := false
				switch tc.expect.waiters {
				case "result":
					ok = o == final
				case "unknown":
					ok = o.Unknown
				case "either":
					ok = o == final || o.Unknown
				}
				if !ok {
					t.Errorf("waiter %d: %+v (a later resume: %+v)", i, o, final)
				}
			}
			if n := countNotes(t, c, note); n != tc.expect.runs {
				t.Fatalf("after the later resumes the call ran %d times, want %d", n, tc.expect.runs)
			}
		})
	}
}

// A resumer waiting for a runner in another process honours its context.
func TestWaitCancelled(t *testing.T) {
	dsn := newDatabase(t)
	db := openDB(t, dsn)
	endpoint := crmHTTP(t)
	c := mcpgo.StreamableHTTP(endpoint)
	defer c.Close()
	g := mcpruntime.NewGate(db.Approvals())
	a := approved(t, c, g, "cancelled wait")
	winner := startHelper(t, dsn, a.ID, endpoint, 1, "claim-committed")
	winner.at(t, "claim-committed")
	ctx, cancel := context.WithCancel(alice)
	done := make(chan outcome)
	go func() { done <- resumeOnce(ctx, c, g, a.ID) }()
	// The waiter is parked until the runner moves; only cancellation can
	// end it now.
	cancel()
	if o := <-done; !strings.Contains(o.Err, context.Canceled.Error()) {
		t.Errorf("cancelled waiter: %+v", o)
	}
	if _, err := winner.stdin.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	if w := winner.results(t); len(w) != 1 || w[0].Err != "" {
		t.Errorf("winner: %+v", w)
	}
	if n := countNotes(t, c, "cancelled wait"); n != 1 {
		t.Errorf("ran %d times", n)
	}
}

func TestStatementTimeoutAndPoolSize(t *testing.T) {
	db := openDB(t, newDatabase(t), WithMaxConns(3), WithStatementTimeout(1500*time.Millisecond))
	var v string
	if err := db.Pool().QueryRow(context.Background(), `SHOW statement_timeout`).Scan(&v); err != nil || v != "1500ms" {
		t.Errorf("statement_timeout %q, %v", v, err)
	}
	if got := db.Pool().Config().MaxConns; got != 3 {
		t.Errorf("MaxConns %d", got)
	}
	if _, err := Open(context.Background(), "host=/nonexistent password=hunter2 user=x"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("open of a bad DSN: %v", err)
	}
}

func TestMigrateConcurrently(t *testing.T) {
	dsn := newDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range 4 {
		wg.Go(func() { errs[i] = migrateProcess(dsn, 4) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("migrating process %d: %v", i, err)
		}
	}
	db := openDB(t, dsn)
	var n int
	if err := db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM mcpgen_schema_version`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	names, _ := migrations.ReadDir("migrations")
	if n != len(names) {
		t.Errorf("%d migrations recorded, %d embedded", n, len(names))
	}
	if v, err := db.SchemaVersion(context.Background()); err != nil || v != len(names) {
		t.Errorf("schema version %d, %v", v, err)
	}
}

// Waiters whose LISTEN connection is cut still get the outcome: the
// listener reconnects and wakes them to look again.
func TestListenerLost(t *testing.T) {
	dsn := newDatabase(t)
	db := openDB(t, dsn)
	endpoint := crmHTTP(t)
	c := mcpgo.StreamableHTTP(endpoint)
	defer c.Close()
	g := mcpruntime.NewGate(db.Approvals())
	a := approved(t, c, g, "listener lost")
	winner := startHelper(t, dsn, a.ID, endpoint, 1, "claim-committed")
	winner.at(t, "claim-committed")
	// Waiters in this process, which has no runner of its own.
	const n = 10
	done := make(chan outcome, n)
	for range n {
		go func() { done <- resumeOnce(alice, c, g, a.ID) }()
	}
	ctx := context.Background()
	// The listeners of this process and of the winner's (it listens only
	// when it waits, so there may be one or none).
	var cut int
	for ; cut == 0; time.Sleep(10 * time.Millisecond) {
		if err := db.Pool().QueryRow(ctx, `SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN mcpgen_approvals'`).Scan(&cut); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := winner.stdin.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	w := winner.results(t)
	if len(w) != 1 || w[0].Err != "" {
		t.Fatalf("winner: %+v", w)
	}
	for range n {
		if o := <-done; o != w[0] {
			t.Errorf("waiter: %+v, winner %+v", o, w[0])
		}
	}
	if got := countNotes(t, c, "listener lost"); got != 1 {
		t.Errorf("ran %d times", got)
	}
}

// A kept runner-lock connection cut while idle does not fail the next
// resume.
func TestIdleRunnerConnCut(t *testing.T) {
	db := openDB(t, newDatabase(t))
	c := mcpgo.StreamableHTTP(crmHTTP(t))
	defer c.Close()
	g := mcpruntime.NewGate(db.Approvals())
	ctx := context.Background()
	for i := range 2 {
		a := approved(t, c, g, fmt.Sprint("idle cut ", i))
		if o := resumeOnce(alice, c, g, a.ID); o.Err != "" {
			t.Fatalf("resume %d: %s", i, o.Err)
		}
		var cut int
		if err := db.Pool().QueryRow(ctx, `SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE 'SELECT pg_advisory_unlock%'`).Scan(&cut); err != nil || cut != 1 {
			t.Fatalf("cut %d kept connections: %v", cut, err)
		}
	}
	for i := range 2 {
		if n := countNotes(t, c, fmt.Sprint("idle cut ", i)); n != 1 {
			t.Errorf("approval %d ran %d times", i, n)
		}
	}
}

// A resume blocked on the row of a claim in progress gives up with its
// context, or at the statement timeout, and makes no call.
func TestBlockedResumeHonoursLimits(t *testing.T) {
	dsn := newDatabase(t)
	db := openDB(t, dsn)
	timed := openDB(t, dsn, WithStatementTimeout(300*time.Millisecond))
	endpoint := crmHTTP(t)
	c := mcpgo.StreamableHTTP(endpoint)
	defer c.Close()
	g := mcpruntime.NewGate(db.Approvals())
	a := approved(t, c, g, "blocked")
	winner := startHelper(t, dsn, a.ID, endpoint, 1, "claim-locked")
	winner.at(t, "claim-locked")

	o := resumeOnce(alice, c, mcpruntime.NewGate(timed.Approvals()), a.ID)
	if !strings.Contains(o.Err, "57014") {
		t.Errorf("resume past the statement timeout: %+v", o)
	}

	ctx, cancel := context.WithCancel(alice)
	done := make(chan outcome)
	go func() { done <- resumeOnce(ctx, c, g, a.ID) }()
	for blocked := false; !blocked; time.Sleep(10 * time.Millisecond) {
		if err := db.Pool().QueryRow(context.Background(), `SELECT count(*) > 0 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'SELECT state, version, doc%'`).Scan(&blocked); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if o := <-done; !strings.Contains(o.Err, context.Canceled.Error()) {
		t.Errorf("cancelled resume: %+v", o)
	}
	if _, err := winner.stdin.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	if w := winner.results(t); len(w) != 1 || w[0].Err != "" {
		t.Errorf("winner: %+v", w)
	}
	if n := countNotes(t, c, "blocked"); n != 1 {
		t.Errorf("ran %d times", n)
	}
}
