package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// dbName is the database a test DSN names.
func dbName(dsn string) string {
	_, rest, _ := strings.Cut(dsn, "dbname=")
	name, _, _ := strings.Cut(rest, " ")
	return name
}

// during is the CRM connection with a fault injected: once armed, fn runs
// after update_deal was answered and before the answer reaches the gate,
// so the outcome is recorded after the fault.
type during struct {
	*mcpgo.Conn
	fn atomic.Pointer[func()]
}

func (d *during) arm(fn func()) { d.fn.Store(&fn) }

func (d *during) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpruntime.Result, error) {
	res, err := d.Conn.CallTool(ctx, name, args)
	if fn := d.fn.Swap(nil); fn != nil && name == "update_deal" {
		(*fn)()
	}
	return res, err
}

// The store's idle connections (the pool's and the runners') are cut
// while an approved call runs, the database staying up: the outcome is
// recorded on fresh ones, the resumer gets the result and so does every
// later resume.
func TestOutcomeRecordedAfterConnectionsCut(t *testing.T) {
	dsn := newDatabase(t)
	db := openDB(t, dsn)
	crm := mcpgo.StreamableHTTP(crmHTTP(t))
	defer crm.Close()
	c := &during{Conn: crm}
	g := mcpruntime.NewGate(db.Approvals())
	a := approved(t, c, g, "cut during the call")
	cut := 0
	c.arm(func() { cut = pg.terminate(t, dbName(dsn), "state = 'idle'") })
	r, err := updateDeal(c, g).Resume(alice, a.ID)
	if cut == 0 {
		t.Fatal("no idle connection was cut")
	}
	if err != nil {
		t.Fatalf("resume after %d connections were cut: %v", cut, err)
	}
	if n := countNotes(t, c, "cut during the call"); n != 1 {
		t.Fatalf("ran %d times", n)
	}
	b, _ := json.Marshal(r.Output)
	if later := resumeOnce(alice, c, g, a.ID); later.Err != "" || later.Out != string(b) {
		t.Errorf("a later resume: %+v, the runner got %s", later, b)
	}
}

// stormCaller counts the executions of each note and takes a while, so
// that connections are cut while calls run.
type stormCaller struct {
	mu sync.Mutex
	n  map[string]int
}

func (s *stormCaller) CallTool(_ context.Context, _ string, args json.RawMessage) (*mcpruntime.Result, error) {
	var in NoteInput
	_ = json.Unmarshal(args, &in)
	s.mu.Lock()
	s.n[in.Note]++
	s.mu.Unlock()
	time.Sleep(40 * time.Millisecond)
	return &mcpruntime.Result{StructuredContent: json.RawMessage(fmt.Sprintf(`{"id":"D-2001","notes":[%q]}`, in.Note))}, nil
}

// For 1.5 s, two replicas make and resume approvals, three resumers each,
// while every connection to the database is cut every 40 ms. No
// call runs twice, and no call that ran ends unknown: every one has its
// outcome recorded.
func TestKillStorm(t *testing.T) {
	dsn := newDatabase(t)
	one, two := openDB(t, dsn, WithMaxConns(4)), openDB(t, dsn, WithMaxConns(4))
	calls := &stormCaller{n: map[string]int{}}
	g1, g2 := mcpruntime.NewGate(one.Approvals()), mcpruntime.NewGate(two.Approvals())
	ctx := context.Background()

	stop := make(chan struct{})
	var storm sync.WaitGroup
	cuts := 0
	storm.Go(func() {
		c, err := pgx.Connect(ctx, dsnFor("postgres"))
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(ctx)
		for {
			select {
			case <-stop:
				return
			case <-time.After(40 * time.Millisecond):
			}
			var n int
			if err := c.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1`, dbName(dsn)).Scan(&n); err != nil {
				t.Error(err)
				return
			}
			cuts += n
		}
	})
	type got struct {
		id string
		o  outcome
	}
	var (
		mu      sync.Mutex
		all     []got
		ids     []string
		notes   = map[string]string{}
		workers sync.WaitGroup
		seq     atomic.Int32
	)
	end := time.Now().Add(1500 * time.Millisecond)
	for range 4 {
		workers.Go(func() {
			for time.Now().Before(end) {
				note := fmt.Sprint("storm ", seq.Add(1))
				_, err := updateDeal(calls, g1).Call(alice, NoteInput{DealID: "D-2001", Note: note})
				var are *mcpruntime.ApprovalRequiredError
				if !errors.As(err, &are) {
					t.Errorf("not gated: %v", err)
					return
				}
				id := are.Approval.ID
				if err := g1.Approve(ctx, id, are.Approval.Digest); err != nil {
					t.Errorf("approve: %v", err)
					return
				}
				mu.Lock()
				ids, notes[id] = append(ids, id), note
				mu.Unlock()
				var wg sync.WaitGroup
				for _, g := range []*mcpruntime.Gate{g1, g2, g2} {
					wg.Go(func() {
						o := resumeOnce(alice, calls, g, id)
						mu.Lock()
						all = append(all, got{id, o})
						mu.Unlock()
					})
				}
				wg.Wait()
			}
		})
	}
	workers.Wait()
	close(stop)
	storm.Wait()
	if cuts < 50 {
		t.Fatalf("the storm cut only %d connections", cuts)
	}
	final := map[string]outcome{}
	unknown := 0
	for _, id := range ids {
		// A resume whose claim was not stored left the approval approved:
		// this one makes the call.
		final[id] = resumeOnce(alice, calls, g1, id)
		ran := calls.n[notes[id]]
		switch {
		case ran > 1:
			t.Errorf("%s ran %d times", notes[id], ran)
		case ran == 1 && final[id].Err != "":
			t.Errorf("%s ran and its outcome is not recorded: %+v", notes[id], final[id])
		case ran == 0 && !final[id].Unknown:
			t.Errorf("%s never ran: %+v", notes[id], final[id])
		case ran == 0:
			unknown++ // a claim stored as its connection was cut: not run
		}
	}
	for _, r := range all {
		if r.o.Err == "" && r.o != final[r.id] {
			t.Errorf("resumer of %s got %+v, recorded %+v", r.id, r.o, final[r.id])
		}
		if n := strings.Count(r.o.Err, "approval "+r.id); n > 1 {
			t.Errorf("the error names the approval %d times: %s", n, r.o.Err)
		}
	}
	t.Logf("%d connections cut, %d approvals, %d resumes, %d claims cut off and not run", cuts, len(ids), len(all), unknown)
}

// The server restarts (stopped fast or immediately, then started) while an
// approved call runs: the recording begins while it is down, and the
// outcome is recorded once it is back.
func TestOutcomeRecordedAcrossRestart(t *testing.T) {
	crm := mcpgo.StreamableHTTP(crmHTTP(t))
	defer crm.Close()
	c := &during{Conn: crm}
	for _, mode := range []string{"fast", "immediate"} {
		t.Run(mode, func(t *testing.T) {
			db := openDB(t, faultPG.newDatabase(t))
			g := mcpruntime.NewGate(db.Approvals())
			note := "restart " + mode
			a := approved(t, c, g, note)
			var up func() error
			c.arm(func() { up = faultPG.bounce(t, mode) })
			o := resumeOnce(alice, c, g, a.ID)
			if err := up(); err != nil {
				t.Fatal(err)
			}
			if o.Err != "" {
				t.Fatalf("resume across a restart: %+v", o)
			}
			if later := resumeOnce(alice, c, g, a.ID); later != o {
				t.Errorf("a later resume: %+v, the runner got %+v", later, o)
			}
			if n := countNotes(t, c, note); n != 1 {
				t.Errorf("ran %d times", n)
			}
		})
	}
}

// The server stays down past the retry window while an approved call
// runs: the resumer gets the result with an error saying it was not
// recorded, and later resumes report the outcome unknown.
func TestOutcomeReturnedWhenNotRecorded(t *testing.T) {
	crm := mcpgo.StreamableHTTP(crmHTTP(t))
	defer crm.Close()
	c := &during{Conn: crm}
	db := openDB(t, faultPG.newDatabase(t), WithRetryFor(300*time.Millisecond))
	g := mcpruntime.NewGate(db.Approvals())
	a := approved(t, c, g, "not recorded")
	c.arm(func() {
		if out, err := faultPG.ctl("-m", "fast", "stop"); err != nil {
			t.Fatalf("pg_ctl stop: %v\n%s", err, out)
		}
	})
	r, err := updateDeal(c, g).Resume(alice, a.ID)
	if out, uerr := faultPG.up(); uerr != nil {
		t.Fatalf("pg_ctl start: %v\n%s", uerr, out)
	}
	if !errors.Is(err, mcpruntime.ErrOutcomeNotRecorded) || r == nil {
		t.Fatalf("resume with the server down: %v, %v", r, err)
	}
	if !strings.Contains(err.Error(), "300ms") || strings.Count(err.Error(), a.ID) != 1 {
		t.Errorf("error: %v", err)
	}
	found := false
	for _, n := range r.Output.Notes {
		found = found || n == "alice: not recorded"
	}
	if !found {
		t.Errorf("the result the runner held was not returned: %+v", r.Output)
	}
	if later := resumeOnce(alice, c, g, a.ID); !later.Unknown {
		t.Errorf("a later resume: %+v", later)
	}
	if n := countNotes(t, c, "not recorded"); n != 1 {
		t.Errorf("ran %d times", n)
	}
}

// Resumers waiting for a runner in another process have every connection
// of their store cut, pool and LISTEN: they reconnect, go on waiting, and
// get the runner's result.
func TestWaiterSurvivesCut(t *testing.T) {
	dsn := newDatabase(t)
	db := openDB(t, dsn+" application_name=waiter", WithMaxConns(2))
	endpoint := crmHTTP(t)
	c := mcpgo.StreamableHTTP(endpoint)
	defer c.Close()
	g := mcpruntime.NewGate(db.Approvals())
	a := approved(t, c, g, "waiters cut")
	winner := startHelper(t, dsn, a.ID, endpoint, 1, "claim-committed")
	winner.at(t, "claim-committed")
	const n = 5
	done := make(chan outcome, n)
	for range n {
		go func() { done <- resumeOnce(alice, c, g, a.ID) }()
	}
	for i := 0; pg.terminate(t, dbName(dsn), "application_name = 'waiter' AND query = 'LISTEN mcpgen_approvals'") == 0; i++ {
		if i > 500 {
			t.Fatal("the waiters never listened")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Cut again once they have looked on the cut pool, and once more.
	for range 2 {
		time.Sleep(100 * time.Millisecond)
		pg.terminate(t, dbName(dsn), "application_name = 'waiter'")
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
}

// A store opened before the server restarts is used right after it, and
// while it is restarting: the first operations wait for it.
func TestUseAfterRestart(t *testing.T) {
	dsn := faultPG.newDatabase(t)
	db := openDB(t, dsn)
	ctx := context.Background()
	reg := manager.NewRegistry(db.Servers(), manager.Policy{})
	entry := manager.ServerConfig{ID: "crm", Transport: manager.Transport{Kind: manager.TransportHTTP, URL: "https://mcp.example.com/mcp"}}
	if _, err := reg.Save(ctx, entry); err != nil {
		t.Fatal(err)
	}
	run := mcpruntime.NewRun("")
	run.Record(mcpruntime.Provenance{Tool: "get_deal", Digest: "sha256:00", External: true})
	if err := db.Runs().Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	use := func(t *testing.T) {
		t.Helper()
		if _, err := reg.Load(ctx, "crm"); err != nil {
			t.Errorf("registry load: %v", err)
		}
		if list, err := reg.List(ctx); err != nil || len(list) != 1 {
			t.Errorf("registry list: %v, %v", list, err)
		}
		if r, err := db.Runs().Load(ctx, run.ID()); err != nil || len(r.Ledger()) != 1 {
			t.Errorf("ledger load: %v, %v", r, err)
		}
		if _, err := db.Approvals().Get(ctx, strings.Repeat("a", 32)); !errors.Is(err, mcpruntime.ErrApprovalNotFound) {
			t.Errorf("approval get: %v", err)
		}
	}
	use(t)
	t.Run("after a fast restart", func(t *testing.T) {
		faultPG.restart(t, "fast")
		use(t)
	})
	t.Run("during an immediate restart", func(t *testing.T) {
		up := faultPG.bounce(t, "immediate")
		use(t)
		if err := up(); err != nil {
			t.Fatal(err)
		}
	})
}

// A frozen server holds every connection of the pool: the next operation
// says that the pool's limit was hit, not only that its context ended.
func TestPoolExhaustedSaysWhichLimit(t *testing.T) {
	db := openDB(t, faultPG.newDatabase(t), WithMaxConns(2))
	s := db.Approvals()
	ctx := context.Background()
	id := strings.Repeat("b", 32)
	if _, err := s.Get(ctx, id); !errors.Is(err, mcpruntime.ErrApprovalNotFound) {
		t.Fatal(err)
	}
	// Two idle connections, used just now (so not pinged on acquiring).
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { _, _ = db.Pool().Exec(ctx, `SELECT pg_sleep(0.05)`) })
	}
	wg.Wait()
	thaw := faultPG.freeze(t)
	for range 2 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			_, _ = s.Get(ctx, id)
		})
	}
	for deadline := time.Now().Add(time.Second); db.Pool().Stat().AcquiredConns() < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the frozen gets hold %d connections", db.Pool().Stat().AcquiredConns())
		}
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err := s.Get(short, id)
	thaw()
	wg.Wait()
	if !errors.Is(err, ErrPoolExhausted) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "all 2 were in use (WithMaxConns)") {
		t.Errorf("get with the pool held: %v", err)
	}
	if _, err := s.Get(ctx, id); !errors.Is(err, mcpruntime.ErrApprovalNotFound) {
		t.Errorf("after the freeze: %v", err)
	}
}

// holdCaller blocks every call until released, counting those in flight.
type holdCaller struct {
	in      atomic.Int32
	release chan struct{}
}

func (h *holdCaller) CallTool(context.Context, string, json.RawMessage) (*mcpruntime.Result, error) {
	h.in.Add(1)
	<-h.release
	return &mcpruntime.Result{StructuredContent: json.RawMessage(`{"id":"D-2001","notes":[]}`)}, nil
}

// 40 approved calls running at once cost one connection besides the pool,
// not one each; with the role's connection limit reached, the error says
// which limit it is.
func TestRunningCallsShareOneConnection(t *testing.T) {
	dsn := newDatabase(t)
	db := openDB(t, dsn, WithMaxConns(4))
	h := &holdCaller{release: make(chan struct{})}
	g := mcpruntime.NewGate(db.Approvals())
	ctx := context.Background()
	const n = 40
	var ids []string
	for i := range n {
		_, err := updateDeal(h, g).Call(alice, NoteInput{DealID: "D-2001", Note: fmt.Sprint(i)})
		var are *mcpruntime.ApprovalRequiredError
		if !errors.As(err, &are) {
			t.Fatal(err)
		}
		if err := g.Approve(ctx, are.Approval.ID, are.Approval.Digest); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, are.Approval.ID)
	}
	errs := make(chan error, n)
	for _, id := range ids {
		go func() { _, err := updateDeal(h, g).Resume(alice, id); errs <- err }()
	}
	for h.in.Load() < n {
		time.Sleep(5 * time.Millisecond)
	}
	var conns int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()`).Scan(&conns); err != nil {
		t.Fatal(err)
	}
	close(h.release)
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if conns > 4+1 {
		t.Errorf("%d calls running hold %d connections to the database (pool of 4)", n, conns)
	}

	role := fmt.Sprintf("limited%d", dbSeq.Add(1))
	admin(t, "CREATE ROLE "+role+" LOGIN CONNECTION LIMIT 1") // goes with the server
	admin(t, "GRANT mcpgen TO "+role)
	limited := openDB(t, strings.Replace(dsn, "user=mcpgen", "user="+role, 1), WithMaxConns(1))
	g = mcpruntime.NewGate(limited.Approvals())
	_, err := updateDeal(h, g).Call(alice, NoteInput{DealID: "D-2001", Note: "limited"})
	var are *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &are) {
		t.Fatal(err)
	}
	if err := g.Approve(ctx, are.Approval.ID, are.Approval.Digest); err != nil {
		t.Fatal(err)
	}
	_, err = updateDeal(h, g).Resume(alice, are.Approval.ID)
	if err == nil || !strings.Contains(err.Error(), "connection limit is reached") || !strings.Contains(err.Error(), "53300") {
		t.Errorf("resume past the role's connection limit: %v", err)
	}
	if a, _ := limited.Approvals().Get(ctx, are.Approval.ID); a.State != mcpruntime.StateApproved {
		t.Errorf("after the refused claim the approval is %s", a.State)
	}
}
