package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// ApprovalStore keeps approvals in the mcpgen_approvals table. It is an
// mcpruntime.ApprovalWaiter: any number of Gates in any number of
// processes share it, exactly one resumer runs an approved call, and the
// others wait for its outcome.
//
//   - Every change is a transaction that locks the row (SELECT … FOR
//     UPDATE), applies the Gate's decision and writes it back with one
//     conditional UPDATE (WHERE version = the version read), so the move
//     from approved to executing is stored at most once.
//   - The winner of a resume holds a session advisory lock, keyed by the
//     approval, on a connection of its own from before its move to
//     executing is committed until the outcome is recorded. PostgreSQL
//     drops the lock when that connection ends (the process died, or the
//     connection was terminated), so a waiter tells a running call from one
//     whose runner is gone.
//   - Waiters LISTEN on the mcpgen_approvals channel, which a trigger
//     notifies on every change of state. A runner that dies sends nothing,
//     so a waiter also re-checks the lock at growing intervals (up to a
//     second).
//   - A connection lost while a change is committed leaves it unknown
//     whether it was stored. A resume then reports ErrOutcomeUnknown and
//     does not make the call; other changes return an error matching
//     ErrCommitUnknown.
type ApprovalStore struct {
	db *DB

	mu        sync.Mutex
	idle      []*pgx.Conn // runners' lock connections, kept for reuse
	subs      map[string]map[chan struct{}]struct{}
	listening bool
	closed    bool
	stopCtx   context.Context
	stopFn    context.CancelFunc
	wg        sync.WaitGroup
}

var _ mcpruntime.ApprovalWaiter = (*ApprovalStore)(nil)

// ErrCommitUnknown: the connection broke while a change was committed, so
// it may or may not be stored.
var ErrCommitUnknown = errors.New("the connection was lost while the change was committed; it may or may not be stored")

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
	_, err = s.db.pool.Exec(ctx, `INSERT INTO mcpgen_approvals (id, state, created, expires, doc) VALUES ($1, $2, $3, $4, $5)`,
		a.ID, string(a.State), a.Created, a.Expires, string(doc))
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
	var state, doc string
	err := s.db.pool.QueryRow(ctx, `SELECT state, doc FROM mcpgen_approvals WHERE id = $1`, id).Scan(&state, &doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &mcpruntime.ApprovalError{ID: id, Err: mcpruntime.ErrApprovalNotFound}
	}
	if err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	return decode(id, state, doc)
}

// List implements mcpruntime.ApprovalStore. An unreadable row fails the
// whole list, naming the row: a store silently missing approvals would
// hide them from the people who must decide.
func (s *ApprovalStore) List(ctx context.Context) ([]*mcpruntime.Approval, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT id, state, doc FROM mcpgen_approvals ORDER BY created, id`)
	if err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	defer rows.Close()
	var out []*mcpruntime.Approval
	for rows.Next() {
		var id, state, doc string
		if err := rows.Scan(&id, &state, &doc); err != nil {
			return nil, fmt.Errorf("approval store: %w", err)
		}
		a, err := decode(id, state, doc)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("approval store: %w", err)
	}
	return out, nil
}

// decode reads a row strictly: a document that does not decode, names
// another approval or disagrees with the row's state column was written
// around the store and is refused.
func decode(id, state, doc string) (*mcpruntime.Approval, error) {
	var a mcpruntime.Approval
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("approval store: row %s: %w", id, err)
	}
	switch a.State {
	case mcpruntime.StatePending, mcpruntime.StateApproved, mcpruntime.StateDenied, mcpruntime.StateExpired, mcpruntime.StateExecuting, mcpruntime.StateDone:
	default:
		return nil, fmt.Errorf("approval store: row %s: /state: unknown state %q", id, a.State)
	}
	switch {
	case a.ID != id:
		return nil, fmt.Errorf("approval store: row %s: /id: %q does not match the row", id, a.ID)
	case string(a.State) != state:
		return nil, fmt.Errorf("approval store: row %s: /state: %q does not match the row's state %q", id, a.State, state)
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

func (s *ApprovalStore) update(ctx context.Context, id string, claim bool, fn func(*mcpruntime.Approval) error) (*mcpruntime.Approval, func(), error) {
	if err := checkID(id); err != nil {
		return nil, nil, err
	}
	tx, err := s.db.pool.Begin(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("approval store: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after Commit, a no-op
	pid := tx.Conn().PgConn().PID()
	var (
		state, doc string
		version    int64
	)
	err = tx.QueryRow(ctx, `SELECT state, version, doc FROM mcpgen_approvals WHERE id = $1 FOR UPDATE`, id).Scan(&state, &version, &doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, &mcpruntime.ApprovalError{ID: id, Err: mcpruntime.ErrApprovalNotFound}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("approval store: %w", err)
	}
	a, err := decode(id, state, doc)
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
	tag, err := tx.Exec(ctx, `UPDATE mcpgen_approvals SET state = $2, expires = $3, doc = $4, version = version + 1 WHERE id = $1 AND version = $5`,
		id, string(a.State), a.Expires, string(after), version)
	if err == nil && tag.RowsAffected() != 1 {
		err = errors.New("the row changed under its lock")
	}
	if err != nil {
		h.release()
		return nil, nil, fmt.Errorf("approval store: %w", err)
	}
	switch {
	case claimed:
		hook("claim-updated", pid)
	case recording:
		hook("record-updated", pid)
	}
	if err := tx.Commit(ctx); err != nil {
		h.release()
		if !commitUncertain(err) {
			return nil, nil, fmt.Errorf("approval store: commit: %w", err)
		}
		if claimed {
			return nil, nil, &mcpruntime.ApprovalError{ID: id, Tool: a.Tool, Err: mcpruntime.ErrOutcomeUnknown,
				Detail: "the connection to PostgreSQL was lost while this resume was claiming the call, so it does not make it: " + err.Error()}
		}
		return nil, nil, fmt.Errorf("approval %s: %w: %v", id, ErrCommitUnknown, err)
	}
	switch {
	case claimed:
		hook("claim-committed", h.pid)
		return a, h.release, nil
	case recording:
		hook("record-committed", pid)
	}
	return a, nil, nil
}

// commitUncertain reports whether a failed COMMIT may have been applied:
// only an error the server sent (other than for a connection it was
// terminating) proves it was not.
func commitUncertain(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code[:2] == "57" || pe.Code[:2] == "08"
	}
	return !errors.Is(err, pgx.ErrTxCommitRollback)
}

// runnerLock is the advisory lock a resumer holds while it runs an
// approved call, on a connection outside the pool (a pool full of waiting
// resumers cannot starve it).
type runnerLock struct {
	s    *ApprovalStore
	conn *pgx.Conn
	id   string
	pid  uint32
	once sync.Once
}

// maxIdleRunners is how many lock connections are kept for reuse.
const maxIdleRunners = 4

func (s *ApprovalStore) lockRunner(ctx context.Context, id string) (*runnerLock, error) {
	var conn *pgx.Conn
	s.mu.Lock()
	if n := len(s.idle); n > 0 {
		conn, s.idle = s.idle[n-1], s.idle[:n-1]
	}
	s.mu.Unlock()
	for {
		reused := conn != nil
		if !reused {
			var err error
			if conn, err = pgx.ConnectConfig(ctx, s.db.pool.Config().ConnConfig.Copy()); err != nil {
				return nil, fmt.Errorf("approval store: connect the runner's lock: %w", err)
			}
		}
		// Blocking, not try: a waiter's check never takes the lock, so
		// only a runner could hold it, and there is none while the row is
		// approved.
		_, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockKey(id))
		if err == nil {
			return &runnerLock{s: s, conn: conn, id: id, pid: conn.PgConn().PID()}, nil
		}
		_ = conn.Close(context.WithoutCancel(ctx))
		conn = nil
		if !reused || ctx.Err() != nil {
			return nil, fmt.Errorf("approval store: take the runner's lock: %w", err)
		}
		// A kept connection may have been cut meanwhile: one fresh try.
	}
}

// release ends the runner's mark and tells waiters, unlocking first so
// that a waiter woken by the notification finds the lock free.
func (h *runnerLock) release() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var unlocked bool
		err := h.conn.QueryRow(ctx, `SELECT pg_advisory_unlock($1), pg_notify($2, $3) IS NULL`, lockKey(h.id), notifyChannel, h.id).Scan(&unlocked, new(bool))
		s := h.s
		s.mu.Lock()
		if err == nil && unlocked && len(s.idle) < maxIdleRunners && !s.closed {
			s.idle = append(s.idle, h.conn)
			h.conn = nil
		}
		s.mu.Unlock()
		if h.conn != nil {
			_ = h.conn.Close(ctx) // ends the session, and its lock, anyway
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
		t := time.NewTimer(pause)
		select {
		case <-ch:
		case <-t.C:
			pause = min(2*pause, time.Second)
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		t.Stop()
	}
}

// check reads the approval and whether a runner holds its lock. The lock
// is taken before executing is committed and released after the outcome
// is, so executing without the lock, read twice (see Wait), means the
// runner is gone.
func (s *ApprovalStore) check(ctx context.Context, id string) (*mcpruntime.Approval, bool, error) {
	k := uint64(lockKey(id))
	var (
		state, doc string
		running    bool
	)
	err := s.db.pool.QueryRow(ctx, `SELECT state, doc, EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND classid = $2::bigint::oid AND objid = $3::bigint::oid AND objsubid = 1)
		FROM mcpgen_approvals WHERE id = $1`, id, int64(k>>32), int64(k&0xffffffff)).Scan(&state, &doc, &running)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, &mcpruntime.ApprovalError{ID: id, Err: mcpruntime.ErrApprovalNotFound}
	}
	if err != nil {
		return nil, false, fmt.Errorf("approval store: %w", err)
	}
	a, err := decode(id, state, doc)
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
	s.listening, s.closed = false, true
	idle := s.idle
	s.idle = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	s.wg.Wait()
	for _, c := range idle {
		_ = c.Close(context.Background())
	}
}

// Purge deletes the approvals that expired before `before` and that no
// resume can still need: pending (so expired), expired, denied and done.
// Approved and executing approvals are kept whatever their age: deleting
// one would lose the record that keeps its call from being made twice.
// It returns the number deleted.
func (s *ApprovalStore) Purge(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.db.pool.Exec(ctx, `DELETE FROM mcpgen_approvals WHERE expires < $1 AND state IN ('pending', 'expired', 'denied', 'done')`, before)
	if err != nil {
		return 0, fmt.Errorf("approval store: purge: %w", err)
	}
	return tag.RowsAffected(), nil
}
