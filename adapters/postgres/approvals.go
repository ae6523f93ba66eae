package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// ApprovalStore keeps approvals in the mcpgen_approvals table. It is an
// mcpruntime.ApprovalWaiter: any number of Gates in any number of
// processes share it, exactly one resumer runs an approved call, and the
// others wait for its outcome. It is an mcpruntime.DecisionWaiter too.
//
//   - Every change is a transaction that locks the row (SELECT … FOR
//     UPDATE), applies the Gate's decision and writes it back with one
//     conditional UPDATE (WHERE version = the version read), so the move
//     from approved to executing is stored at most once.
//   - The winner of a resume holds a session advisory lock, keyed by the
//     approval, from before its move to executing is committed until the
//     outcome is recorded, on the store's one runner connection (outside
//     the pool). PostgreSQL drops the lock when that connection ends (the
//     process died, or the connection was terminated), so a waiter tells a
//     running call from one whose runner is gone.
//   - Waiters LISTEN on the mcpgen_approvals channel, which a trigger
//     notifies on every change of state (decisions included). A runner
//     that dies sends nothing, so a waiter also re-checks at growing
//     intervals.
//   - A connection lost before anything was decided is replaced and the
//     operation retried (see WithRetryFor). A change other than a resume's
//     claim that was decided but provably not stored, or whose commit was
//     cut off, is stored again on a fresh connection if the row is still as
//     it was read: writer tells whether the cut-off commit was stored.
//   - A connection lost while a resume's claim is committed leaves it
//     unknown whether it was stored: that resume reports ErrOutcomeUnknown
//     and does not make the call. Other changes whose fate stays unknown
//     return an error matching ErrCommitUnknown.
type ApprovalStore struct {
	db     *DB
	runner runnerConn

	mu        sync.Mutex
	subs      map[string]map[chan struct{}]struct{}
	listening bool
	stopCtx   context.Context
	stopFn    context.CancelFunc
	wg        sync.WaitGroup
}

var (
	_ mcpruntime.ApprovalWaiter = (*ApprovalStore)(nil)
	_ mcpruntime.DecisionWaiter = (*ApprovalStore)(nil)
)

func newApprovalStore(db *DB) *ApprovalStore {
	return &ApprovalStore{db: db, subs: map[string]map[chan struct{}]struct{}{},
		runner: runnerConn{sem: make(chan struct{}, 1), held: map[int64]int{}}}
}

// ErrCommitUnknown: the connection broke while a change was committed, so
// it may or may not be stored.
var ErrCommitUnknown = errors.New("the connection was lost while the change was committed; it may or may not be stored")

// docVersion is the newest format of the approval document this build
// reads. Each row records the format it was written in, the oldest that
// holds its members, so that older builds read what they can:
//
//	1: the members of the first builds, which did not record formats
//	2: adds schemaHash, continued and outcome.delivery
//	3: adds serverIdentity and trace
//
// A member added to mcpruntime.Approval (or its Outcome) needs a new
// format here (TestDocumentFormats fails until it has one).
const docVersion = 3

// ErrNewerDocument: the row was written by a newer build, in a format of
// the document this build does not read.
var ErrNewerDocument = errors.New("written by a newer build in a format this build does not read")

// formatOf is the oldest format that holds a.
func formatOf(a *mcpruntime.Approval) int {
	if a.ServerIdentity != "" || len(a.Trace) > 0 {
		return 3
	}
	if a.SchemaHash != "" || !a.Continued.IsZero() || (a.Outcome != nil && a.Outcome.Delivery != "") {
		return 2
	}
	return 1
}

// notifyChannel is the channel the trigger notifies, with the approval's
// id as payload.
const notifyChannel = "mcpgen_approvals"

var idPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func checkID(id string) error {
	if !idPattern.MatchString(id) {
		return &mcpruntime.ApprovalError{ID: fmt.Sprintf("%q", id), Err: mcpruntime.ErrApprovalNotFound, Detail: "not an approval id (32 lowercase hex digits)"}
	}
	return nil
}

// lockKey is the advisory lock key of an approval: the id's first 64 bits.
func lockKey(id string) int64 {
	b, _ := hex.DecodeString(id[:16])
	return int64(binary.BigEndian.Uint64(b))
}

// hook is called at the points tests stop or kill a resumer at, with the
// backend pid of the connection in use. It does nothing in programs.
var hook = func(point string, pid uint32) {}

// Create implements mcpruntime.ApprovalStore.
func (s *ApprovalStore) Create(ctx context.Context, a *mcpruntime.Approval) error {
	if err := checkID(a.ID); err != nil {
		return err
	}
	doc, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("approval %s: encode: %w", a.ID, err)
	}
	again := false
	err = s.db.repeatable(ctx, func(c *pgxpool.Conn) error {
		_, err := c.Exec(ctx, `INSERT INTO mcpgen_approvals (id, state, created, expires, docv, doc) VALUES ($1, $2, $3, $4, $5, $6)`,
			a.ID, string(a.State), a.Created, a.Expires, formatOf(a), string(doc))
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" && again {
			// An attempt whose connection was lost may have stored it.
			var stored string
			if err := c.QueryRow(ctx, `SELECT doc FROM mcpgen_approvals WHERE id = $1`, a.ID).Scan(&stored); err == nil && stored == string(doc) {
				return nil
			}
		}
		again = true
		return err
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return fmt.Errorf("approval %s already exists", a.ID)
	}
	if err != nil {
		return fmt.Errorf("approval store: %w", err)
	}
	return nil
}

// Get implements mcpruntime.ApprovalStore.
func (s *ApprovalStore) Get(ctx context.Context, id string) (*mcpruntime.Approval, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	var (
		state, doc string
		docv       int
	)
	err := s.db.repeatable(ctx, func(c *pgxpool.Conn) error {
		return c.QueryRow(ctx, `SELECT state, docv, doc FROM mcpgen_approvals WHERE id = $1`, id).Scan(&state, &docv, &doc)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &mcpruntime.ApprovalError{ID: id, Err: mcpruntime.ErrApprovalNotFound}
	}
	if err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	return decode(id, state, docv, doc)
}

// List implements mcpruntime.ApprovalStore. An unreadable row fails the
// whole list, naming the row: a store silently missing approvals would
// hide them from the people who must decide.
func (s *ApprovalStore) List(ctx context.Context) ([]*mcpruntime.Approval, error) {
	var out []*mcpruntime.Approval
	err := s.db.repeatable(ctx, func(c *pgxpool.Conn) error {
		out = out[:0]
		rows, err := c.Query(ctx, `SELECT id, state, docv, doc FROM mcpgen_approvals ORDER BY created, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id, state, doc string
				docv           int
			)
			if err := rows.Scan(&id, &state, &docv, &doc); err != nil {
				return err
			}
			a, err := decode(id, state, docv, doc)
			if err != nil {
				return err
			}
			out = append(out, a)
		}
		return rows.Err()
	})
	var de *decodeError
	if errors.As(err, &de) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	return out, nil
}

// decodeError is a row the store refuses to read.
type decodeError struct {
	id  string
	err error
}

func (e *decodeError) Error() string { return "approval store: row " + e.id + ": " + e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

// decode reads a row strictly: a document that does not decode, names
// another approval or disagrees with the row's state column was written
// around the store and is refused; one in a newer format than this build
// reads is refused as such.
func decode(id, state string, docv int, doc string) (*mcpruntime.Approval, error) {
	if docv > docVersion {
		return nil, &decodeError{id, fmt.Errorf("%w (format %d; this build reads formats up to %d): upgrade this program, or leave the approval to upgraded ones", ErrNewerDocument, docv, docVersion)}
	}
	var a mcpruntime.Approval
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, &decodeError{id, err}
	}
	switch {
	case !a.State.Valid():
		return nil, &decodeError{id, fmt.Errorf("/state: unknown state %q", a.State)}
	case a.ID != id:
		return nil, &decodeError{id, fmt.Errorf("/id: %q does not match the row", a.ID)}
	case string(a.State) != state:
		return nil, &decodeError{id, fmt.Errorf("/state: %q does not match the row's state %q", a.State, state)}
	}
	return &a, nil
}

// Update implements mcpruntime.ApprovalStore.
func (s *ApprovalStore) Update(ctx context.Context, id string, fn func(*mcpruntime.Approval) error) (*mcpruntime.Approval, error) {
	a, _, err := s.update(ctx, id, false, fn)
	return a, err
}

// Claim implements mcpruntime.ApprovalWaiter.
func (s *ApprovalStore) Claim(ctx context.Context, id string, fn func(*mcpruntime.Approval) error) (*mcpruntime.Approval, func(), error) {
	return s.update(ctx, id, true, fn)
}

// write is a change decided on the row at version.
type write struct {
	id, state, doc, writer string
	version                int64
	expires                time.Time
	docv                   int
}

func (w *write) exec(ctx context.Context, tx pgx.Tx) error {
	tag, err := tx.Exec(ctx, `UPDATE mcpgen_approvals SET state = $2, expires = $3, docv = $4, doc = $5, writer = $6, version = version + 1
		WHERE id = $1 AND version = $7`, w.id, w.state, w.expires, w.docv, w.doc, w.writer, w.version)
	if err == nil && tag.RowsAffected() != 1 {
		err = errors.New("the row changed under its lock")
	}
	return err
}

// errChanged: a change could not be stored again because the row changed
// meanwhile.
var errChanged = errors.New("the approval changed while this change was being stored again after its connection was lost; it was not stored")

func (s *ApprovalStore) update(ctx context.Context, id string, claim bool, fn func(*mcpruntime.Approval) error) (*mcpruntime.Approval, func(), error) {
	if err := checkID(id); err != nil {
		return nil, nil, err
	}
	var (
		tx         *txn
		state, doc string
		version    int64
		docv       int
	)
	// Nothing is decided before the row is read, so losing the
	// connection until then is retried.
	err := s.db.retry(ctx, func(attempt int) error {
		var err error
		if tx, err = s.db.begin(ctx); err != nil {
			return err
		}
		if attempt > 0 {
			err = s.lockTimeout(ctx, tx)
		}
		if err == nil {
			err = tx.QueryRow(ctx, `SELECT state, version, docv, doc FROM mcpgen_approvals WHERE id = $1 FOR UPDATE`, id).Scan(&state, &version, &docv, &doc)
		}
		if err != nil {
			tx.end()
			tx = nil
		}
		return stillLocked(err)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, &mcpruntime.ApprovalError{ID: id, Err: mcpruntime.ErrApprovalNotFound}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("approval store: %w", err)
	}
	defer tx.end()
	pid := tx.pid()
	a, err := decode(id, state, docv, doc)
	if err != nil {
		return nil, nil, err
	}
	was := a.State
	switch {
	case claim && was == mcpruntime.StateApproved:
		hook("claim-locked", pid)
	case !claim && was == mcpruntime.StateExecuting:
		hook("record-locked", pid)
	}
	if err := fn(a); err != nil {
		return nil, nil, err
	}
	a.ID = id
	after, err := json.Marshal(a)
	if err != nil {
		return nil, nil, fmt.Errorf("approval %s: encode: %w", id, err)
	}
	if string(after) == doc {
		return a, nil, nil
	}
	claimed := claim && was == mcpruntime.StateApproved && a.State == mcpruntime.StateExecuting
	recording := was == mcpruntime.StateExecuting && a.State == mcpruntime.StateDone
	var h *runnerLock
	if claimed {
		// Locked before the move is committed: whoever sees executing
		// also sees the lock, until the runner is done or gone.
		if h, err = s.lockRunner(ctx, id); err != nil {
			return nil, nil, err
		}
	}
	w := &write{id: id, state: string(a.State), doc: string(after), writer: token(), version: version, expires: a.Expires, docv: formatOf(a)}
	inCommit := false
	err = w.exec(ctx, tx)
	if err == nil {
		switch {
		case claimed:
			hook("claim-updated", pid)
		case recording:
			hook("record-updated", pid)
		}
		inCommit = true
		err = tx.Commit(ctx)
	}
	if err == nil {
		switch {
		case claimed:
			hook("claim-committed", h.pid)
			return a, h.release, nil
		case recording:
			hook("record-committed", pid)
		}
		return a, nil, nil
	}
	uncertain := inCommit && commitUncertain(err)
	if claimed {
		// A claim is not stored again: the resume reports what is known
		// and makes no call.
		h.release()
		if uncertain {
			return nil, nil, &mcpruntime.ApprovalError{ID: id, Tool: a.Tool, Err: mcpruntime.ErrOutcomeUnknown,
				Detail: "the connection to PostgreSQL was lost while this resume was claiming the call, so it does not make it: " + err.Error()}
		}
		return nil, nil, fmt.Errorf("approval store: the claim was not stored: %w", err)
	}
	if !uncertain && !lost(err) || s.db.retryFor <= 0 {
		if uncertain {
			return nil, nil, fmt.Errorf("approval store: %w: %v", ErrCommitUnknown, err)
		}
		return nil, nil, fmt.Errorf("approval store: %w", err)
	}
	// Decided on version, not stored or not known to be: store it on a
	// fresh connection if the row is still at version, or find that the
	// cut-off commit stored it.
	tx.end()
	rerr := s.db.retry(ctx, func(int) error { return s.rewrite(ctx, w) })
	switch {
	case rerr == nil:
		if recording {
			hook("record-committed", 0)
		}
		return a, nil, nil
	case uncertain && (lost(rerr) || errors.Is(rerr, errChanged)):
		// Changed since: by others after this commit, or instead of it.
		return nil, nil, fmt.Errorf("approval store: %w: %v; storing it again: %v", ErrCommitUnknown, err, rerr)
	}
	return nil, nil, fmt.Errorf("approval store: %w", rerr)
}

// rewrite stores w if the row is still at w.version; it succeeds without
// writing when the row is at the next version by w's own writer.
func (s *ApprovalStore) rewrite(ctx context.Context, w *write) error {
	tx, err := s.db.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.end()
	if err := s.lockTimeout(ctx, tx); err != nil {
		return err
	}
	var (
		version int64
		writer  *string
	)
	if err := tx.QueryRow(ctx, `SELECT version, writer FROM mcpgen_approvals WHERE id = $1 FOR UPDATE`, w.id).Scan(&version, &writer); err != nil {
		return stillLocked(err)
	}
	switch {
	case version == w.version+1 && writer != nil && *writer == w.writer:
		return nil
	case version != w.version:
		return errChanged
	}
	if err := w.exec(ctx, tx); err != nil {
		return err
	}
	return tx.Commit(ctx) // cut off again: the next try finds out
}

// lockTimeout bounds a retry's wait for the row: the transaction whose
// connection was lost holds its lock until the server notices.
func (s *ApprovalStore) lockTimeout(ctx context.Context, tx *txn) error {
	ms := min(max(s.db.retryFor, time.Second), 5*time.Second).Milliseconds()
	_, err := tx.Exec(ctx, `SET LOCAL lock_timeout = `+strconv.FormatInt(ms, 10))
	return err
}

// stillLocked turns a lock timeout into errStillLocked, which is retried.
func stillLocked(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "55P03" {
		return fmt.Errorf("%w: %w", errStillLocked, err)
	}
	return err
}

// token is a random writer mark.
func token() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// commitUncertain reports whether a failed COMMIT may have been applied:
// only an error the server sent (other than for a connection it was
// terminating), or a COMMIT that provably never left, proves it was not.
func commitUncertain(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code[:2] == "57" || pe.Code[:2] == "08"
	}
	return !errors.Is(err, pgx.ErrTxCommitRollback) && !pgconn.SafeToRetry(err)
}

// runnerConn is the one connection, outside the pool, on which a store
// holds the advisory locks of the calls it runs: a pool full of waiting
// resumers cannot starve it, and any number of running calls costs one
// connection. held counts the runners per key, so that the locks are
// taken again when the connection is replaced.
type runnerConn struct {
	sem  chan struct{} // one user at a time, honouring contexts
	conn *pgx.Conn
	held map[int64]int
}

// runnerLock is one running call's mark.
type runnerLock struct {
	s    *ApprovalStore
	id   string
	key  int64
	pid  uint32
	once sync.Once
}

// lockStatement bounds a statement on the runner connection. It does not
// follow the caller's context: a statement cut off by a context closes the
// connection, and with it every running call's lock.
func lockStatement() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 10*time.Second)
}

func (s *ApprovalStore) lockRunner(ctx context.Context, id string) (*runnerLock, error) {
	k := lockKey(id)
	// Tried until free: a claim whose commit failed holds the lock until
	// it notices, while the row is approved again. No waiter's check ever
	// takes it. Tried, not waited for, so the connection is not held.
	for pause := 2 * time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		h, err := s.tryLockRunner(ctx, k, id)
		if h != nil || err != nil {
			return h, err
		}
		if err := sleep(ctx, nil, pause); err != nil {
			return nil, fmt.Errorf("approval store: take the runner's lock: another session holds it: %w", err)
		}
	}
}

func (s *ApprovalStore) tryLockRunner(ctx context.Context, k int64, id string) (*runnerLock, error) {
	r := &s.runner
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("approval store: take the runner's lock: %w", ctx.Err())
	}
	defer func() { <-r.sem }()
	for {
		fresh := r.conn == nil
		if fresh {
			if err := s.connectRunner(ctx); err != nil {
				return nil, err
			}
		}
		sctx, cancel := lockStatement()
		var got bool
		err := r.conn.QueryRow(sctx, `SELECT pg_try_advisory_lock($1)`, k).Scan(&got)
		cancel()
		switch {
		case err == nil && got:
			r.held[k]++
			return &runnerLock{s: s, id: id, key: k, pid: r.conn.PgConn().PID()}, nil
		case err == nil:
			return nil, nil
		}
		s.dropRunner()
		if fresh || ctx.Err() != nil {
			return nil, fmt.Errorf("approval store: take the runner's lock: %w", err)
		}
		// The connection was cut since its last use: one fresh try.
	}
}

// connectRunner opens the runner connection and takes again the locks of
// the calls still running; r.sem is held.
func (s *ApprovalStore) connectRunner(ctx context.Context) error {
	r := &s.runner
	conn, err := pgx.ConnectConfig(ctx, s.db.pool.Config().ConnConfig.Copy())
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "53300" {
			return fmt.Errorf("approval store: connect the runners' connection: %w: the server's connection limit is reached (max_connections, or the role's or database's CONNECTION LIMIT); each DB holds its pool (WithMaxConns) plus two connections", err)
		}
		return fmt.Errorf("approval store: connect the runners' connection: %w", err)
	}
	for k := range r.held {
		sctx, cancel := lockStatement()
		_, err = conn.Exec(sctx, `SELECT pg_try_advisory_lock($1)`, k)
		cancel()
		if err != nil {
			_ = conn.Close(context.Background())
			return fmt.Errorf("approval store: connect the runners' connection: %w", err)
		}
	}
	r.conn = conn
	return nil
}

// dropRunner closes the runner connection; r.sem is held.
func (s *ApprovalStore) dropRunner() {
	if c := s.runner.conn; c != nil {
		s.runner.conn = nil
		ctx, cancel := lockStatement()
		_ = c.Close(ctx)
		cancel()
	}
}

// release ends the runner's mark and tells waiters, unlocking first so
// that a waiter woken by the notification finds the lock free.
func (h *runnerLock) release() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		s, r := h.s, &h.s.runner
		r.sem <- struct{}{}
		defer func() { <-r.sem }()
		if r.held[h.key]--; r.held[h.key] <= 0 {
			delete(r.held, h.key)
		}
		if r.conn == nil {
			return // the lock went with the connection
		}
		ctx, cancel := lockStatement()
		defer cancel()
		if _, err := r.conn.Exec(ctx, `SELECT pg_advisory_unlock($1), pg_notify($2, $3) IS NULL`, h.key, notifyChannel, h.id); err != nil {
			// Cut: the other running calls' locks went with it; take
			// them again on a new connection.
			s.dropRunner()
			if len(r.held) > 0 {
				_ = s.connectRunner(ctx)
			}
		}
	})
}

// Wait implements mcpruntime.ApprovalWaiter.
func (s *ApprovalStore) Wait(ctx context.Context, id string) (*mcpruntime.Approval, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	ch, unsubscribe := s.subscribe(id)
	defer unsubscribe()
	pause := 10 * time.Millisecond
	for {
		a, running, err := s.check(ctx, id)
		if err == nil && a.State == mcpruntime.StateExecuting && !running {
			// The row came from the statement's snapshot, pg_locks is read
			// live: the runner may have committed its outcome and released
			// its lock in between. It releases only after committing, so a
			// fresh read now sees the outcome if there is one.
			a, running, err = s.check(ctx, id)
		}
		if err != nil || a.State != mcpruntime.StateExecuting || !running {
			return a, err
		}
		if err := sleep(ctx, ch, pause); err != nil {
			return nil, err
		}
		pause = min(2*pause, time.Second)
	}
}

// WaitDecision implements mcpruntime.DecisionWaiter: it is woken by the
// notification of the decision, and re-reads the approval at growing
// intervals (up to 5 s) in case one was missed.
func (s *ApprovalStore) WaitDecision(ctx context.Context, id string) (*mcpruntime.Approval, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	ch, unsubscribe := s.subscribe(id)
	defer unsubscribe()
	pause := 50 * time.Millisecond
	for {
		a, err := s.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if a.State != mcpruntime.StatePending {
			return a, nil
		}
		left := time.Until(a.Expires)
		if left <= 0 {
			a.State = mcpruntime.StateExpired // as a Gate sees it
			return a, nil
		}
		if err := sleep(ctx, ch, min(pause, left)); err != nil {
			return nil, err
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// sleep waits for a notification, d or the end of ctx.
func sleep(ctx context.Context, ch <-chan struct{}, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// check reads the approval and whether a runner holds its lock. The lock
// is taken before executing is committed and released after the outcome
// is, so executing without the lock, read twice (see Wait), means the
// runner is gone.
func (s *ApprovalStore) check(ctx context.Context, id string) (*mcpruntime.Approval, bool, error) {
	k := uint64(lockKey(id))
	var (
		state, doc string
		docv       int
		running    bool
	)
	err := s.db.repeatable(ctx, func(c *pgxpool.Conn) error {
		return c.QueryRow(ctx, `SELECT state, docv, doc, EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND classid = $2::bigint::oid AND objid = $3::bigint::oid AND objsubid = 1)
		FROM mcpgen_approvals WHERE id = $1`, id, int64(k>>32), int64(k&0xffffffff)).Scan(&state, &docv, &doc, &running)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, &mcpruntime.ApprovalError{ID: id, Err: mcpruntime.ErrApprovalNotFound}
	}
	if err != nil {
		return nil, false, fmt.Errorf("approval store: %w", err)
	}
	a, err := decode(id, state, docv, doc)
	return a, running, err
}

// subscribe registers for notifications about id, starting the listener
// if needed. The channel also fires whenever the listener (re)starts
// listening, as notifications may have been missed before.
func (s *ApprovalStore) subscribe(id string) (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs[id] == nil {
		s.subs[id] = map[chan struct{}]struct{}{}
	}
	s.subs[id][ch] = struct{}{}
	if !s.listening {
		s.listening = true
		s.stopCtx, s.stopFn = context.WithCancel(context.Background())
		s.wg.Add(1)
		go s.listen(s.stopCtx)
	}
	return ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.subs[id], ch)
		if len(s.subs[id]) == 0 {
			delete(s.subs, id)
		}
	}
}

// poke wakes the waiters of id, or every waiter when all is true.
func (s *ApprovalStore) poke(id string, all bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sid, chs := range s.subs {
		if !all && sid != id {
			continue
		}
		for ch := range chs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// listen holds one connection per store in LISTEN, reconnecting with
// backoff when it breaks, until the store is closed.
func (s *ApprovalStore) listen(ctx context.Context) {
	defer s.wg.Done()
	pause := 50 * time.Millisecond
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, s.db.pool.Config().ConnConfig.Copy())
		if err == nil {
			if _, err = conn.Exec(ctx, `LISTEN `+notifyChannel); err == nil {
				pause = 50 * time.Millisecond
				s.poke("", true)
				for {
					n, err := conn.WaitForNotification(ctx)
					if err != nil {
						break
					}
					s.poke(n.Payload, false)
				}
			}
			_ = conn.Close(context.Background())
		}
		// Waiters fall back on their own re-checks meanwhile.
		select {
		case <-ctx.Done():
		case <-time.After(pause):
			pause = min(2*pause, 2*time.Second)
		}
	}
}

func (s *ApprovalStore) stop() {
	s.mu.Lock()
	stop := s.stopFn
	s.listening = false
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	s.wg.Wait()
	s.runner.sem <- struct{}{}
	s.dropRunner()
	<-s.runner.sem
}

// Purge deletes the approvals that expired before `before` and that no
// resume can still need: pending (so expired), expired, denied and done.
// Approved and executing approvals are kept whatever their age: deleting
// one would lose the record that keeps its call from being made twice.
// It returns the number deleted.
func (s *ApprovalStore) Purge(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.db.repeatable(ctx, func(c *pgxpool.Conn) error {
		tag, err := c.Exec(ctx, `DELETE FROM mcpgen_approvals WHERE expires < $1 AND state IN ('pending', 'expired', 'denied', 'done')`, before)
		n += tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("approval store: purge: %w", err)
	}
	return n, nil
}
