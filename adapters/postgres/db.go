package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is a connection pool to one PostgreSQL database holding mcpgen's
// tables. It is safe for concurrent use.
type DB struct {
	pool     *pgxpool.Pool
	retryFor time.Duration

	approvals *ApprovalStore
	servers   *ServerStore

	stopPurge context.CancelFunc
	wg        sync.WaitGroup
}

// Option configures Open.
type Option func(*options)

type options struct {
	maxConns         int32
	statementTimeout time.Duration
	noMigrate        bool
	purgeEvery       time.Duration
	purgeKeep        time.Duration
	retryFor         *time.Duration
}

// WithMaxConns caps the pool's connections (default: the DSN's
// pool_max_conns, else pgx's default: the number of CPUs, at least 4).
// Every store operation holds one while it runs; one that finds none free
// before its context ends fails with an error matching ErrPoolExhausted.
// Besides the pool, a DB holds at most two connections: one in LISTEN,
// from the first Wait or WaitDecision on, and one holding the runners'
// locks, from the first resume that makes a call on.
func WithMaxConns(n int32) Option { return func(o *options) { o.maxConns = n } }

// WithStatementTimeout sets PostgreSQL's statement_timeout on every
// connection (default: the server's, usually none). Contexts bound every
// operation too; this also bounds the server's side.
func WithStatementTimeout(d time.Duration) Option {
	return func(o *options) { o.statementTimeout = d }
}

// WithoutMigrate skips applying the embedded migrations on Open, for
// deployments that run Migrate as a separate step (or whose role may not
// change the schema). Open still checks the schema's version.
func WithoutMigrate() Option { return func(o *options) { o.noMigrate = true } }

// WithPurge deletes, every `every`, the finished approvals that expired more
// than keep ago (see ApprovalStore.Purge), in a goroutine that Close stops.
func WithPurge(every, keep time.Duration) Option {
	return func(o *options) { o.purgeEvery, o.purgeKeep = every, keep }
}

// DefaultRetryFor is how long an operation keeps trying to reach the
// database after losing its connection, unless WithRetryFor says otherwise.
const DefaultRetryFor = 10 * time.Second

// WithRetryFor sets how long an operation keeps retrying after it lost its
// connection to the server (the connection was cut, the server restarted
// or is restarting) where retrying is safe: before anything was decided, or
// for a change the server provably did not store (default
// DefaultRetryFor; 0: no retries). The caller's context bounds the retries
// too.
func WithRetryFor(d time.Duration) Option { return func(o *options) { o.retryFor = &d } }

// Open connects to the database named by dsn (a PostgreSQL URL or
// key=value string), applies the embedded migrations the schema lacks and
// checks the schema's version (see SchemaError). The DSN may hold a
// password: it never appears in errors.
func Open(ctx context.Context, dsn string, opts ...Option) (*DB, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors can quote the DSN, password included.
		return nil, errors.New("postgres: the DSN is not valid")
	}
	if o.maxConns > 0 {
		cfg.MaxConns = o.maxConns
	}
	if o.statementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(o.statementTimeout.Milliseconds(), 10)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	db := &DB{pool: pool, retryFor: DefaultRetryFor}
	if o.retryFor != nil {
		db.retryFor = *o.retryFor
	}
	// A bad DSN fails at once; only a server that says it is starting up
	// or shutting down is waited for.
	for pause := 50 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		err = pool.Ping(ctx)
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != "57P03" || sleep(ctx, nil, pause) != nil {
			break
		}
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	db.approvals = newApprovalStore(db)
	db.servers = &ServerStore{db: db}
	if err := db.checkSchema(ctx, !o.noMigrate); err != nil {
		pool.Close()
		return nil, err
	}
	if o.purgeEvery > 0 {
		ctx, stop := context.WithCancel(context.Background())
		db.stopPurge = stop
		db.wg.Go(func() {
			t := time.NewTicker(o.purgeEvery)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					_, _ = db.approvals.Purge(ctx, time.Now().Add(-o.purgeKeep))
				}
			}
		})
	}
	return db, nil
}

// Close stops the listener and the purging and closes the pool.
func (db *DB) Close() {
	if db.stopPurge != nil {
		db.stopPurge()
	}
	db.wg.Wait()
	db.approvals.stop()
	db.pool.Close()
}

// Pool returns the underlying pool, for the program's own queries.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Approvals returns the approval store, an mcpruntime.ApprovalWaiter and
// mcpruntime.DecisionWaiter.
func (db *DB) Approvals() *ApprovalStore { return db.approvals }

// Servers returns the registry's store, a manager.ServerStore.
func (db *DB) Servers() *ServerStore { return db.servers }

// ErrPoolExhausted: no connection of the pool was free before the
// operation's context ended.
var ErrPoolExhausted = errors.New("no connection of the pool was free before the context ended")

// acquire takes a connection from the pool, saying which limit was hit
// when none came in time.
func (db *DB) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	c, err := db.pool.Acquire(ctx)
	if err != nil && ctx.Err() != nil {
		if st := db.pool.Stat(); st.AcquiredConns() >= st.MaxConns() {
			return nil, fmt.Errorf("%w: all %d were in use (WithMaxConns): %w", ErrPoolExhausted, st.MaxConns(), err)
		}
	}
	return c, err
}

// txn is a transaction on a connection of the pool.
type txn struct {
	pgx.Tx
	c *pgxpool.Conn
}

func (db *DB) begin(ctx context.Context) (*txn, error) {
	c, err := db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		c.Release()
		return nil, err
	}
	return &txn{Tx: tx, c: c}, nil
}

func (t *txn) pid() uint32 { return t.c.Conn().PgConn().PID() }

// end rolls back what was not committed and gives the connection back. A
// rollback that does not finish in time closes the connection, which ends
// the transaction on the server as well.
func (t *txn) end() {
	if t == nil || t.c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = t.Rollback(ctx) // after Commit, a no-op
	t.c.Release()
	t.c = nil
}

// errStillLocked: a retry found the row still locked by the transaction
// whose connection was lost; the server ends it once it notices.
var errStillLocked = errors.New("the row is still locked by the transaction whose connection was lost")

// lost reports whether err is the loss of the connection to the server
// (cut, the server restarting or out of reach) rather than an answer from
// the server or the end of the context.
func lost(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, errStillLocked) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Terminated, crash shutdown, starting up or shutting down, and
		// connection exceptions.
		return pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || strings.HasPrefix(pe.Code, "08")
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || pgconn.SafeToRetry(err) {
		return true
	}
	// What is left is the transport failing.
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// retry runs op until it succeeds, fails in a way that is not a lost
// connection, or the connection stays lost for longer than db.retryFor.
// Connections of the pool that were cut are replaced one after the other
// at once; a server that cannot be reached is tried at growing intervals.
func (db *DB) retry(ctx context.Context, op func(attempt int) error) error {
	var since time.Time
	pause := time.Duration(0)
	for attempt := 0; ; attempt++ {
		err := op(attempt)
		if err == nil || !lost(err) || ctx.Err() != nil || db.retryFor <= 0 {
			return err
		}
		if since.IsZero() {
			since = time.Now()
		}
		left := db.retryFor - time.Since(since)
		if left <= 0 {
			return fmt.Errorf("the connection to PostgreSQL was lost and not regained within %s: %w", db.retryFor, err)
		}
		var ce *pgconn.ConnectError
		if errors.As(err, &ce) || attempt > int(db.pool.Config().MaxConns) {
			pause = min(max(2*pause, 20*time.Millisecond), 500*time.Millisecond)
			t := time.NewTimer(min(pause, left))
			select {
			case <-ctx.Done():
				t.Stop()
				return err
			case <-t.C:
			}
		}
	}
}

// repeatable runs fn on a connection of the pool, again on a fresh one
// when the connection is lost: for statements that change nothing, or
// whose repeat is harmless.
func (db *DB) repeatable(ctx context.Context, fn func(c *pgxpool.Conn) error) error {
	return db.retry(ctx, func(int) error {
		c, err := db.acquire(ctx)
		if err != nil {
			return err
		}
		defer c.Release()
		return fn(c)
	})
}

// migrateLock is the advisory lock key migrators serialize on.
const migrateLock int64 = 0x6d637067656e01 // "mcpgen" 1

// migration is an embedded migration file.
type migration struct {
	version int
	name    string
	sql     string
	// compatibleFrom is the oldest schema version whose builds still work
	// on a database with this migration applied: its header line
	// "-- compatible-from: N", else its own version.
	compatibleFrom int
}

func embedded() ([]migration, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []migration
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		v, err := strconv.Atoi(base[:max(strings.IndexByte(base, '_'), 0)])
		if err != nil {
			return nil, fmt.Errorf("migration %s: no version number", base)
		}
		b, err := migrations.ReadFile(name)
		if err != nil {
			return nil, err
		}
		m := migration{version: v, name: base, sql: string(b), compatibleFrom: v}
		if rest, ok := strings.CutPrefix(m.sql, "-- compatible-from: "); ok {
			line, _, _ := strings.Cut(rest, "\n")
			if m.compatibleFrom, err = strconv.Atoi(strings.TrimSpace(line)); err != nil || m.compatibleFrom > v {
				return nil, fmt.Errorf("migration %s: bad compatible-from line", base)
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// SchemaVersionBuilt is the schema version this build's migrations bring a
// database to.
func SchemaVersionBuilt() int {
	ms, err := embedded()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// Migrate applies the embedded migrations not applied yet, in order, in one
// transaction under an advisory lock: any number of processes may migrate
// at once, each migration runs once, and a failed one leaves the schema as
// it was. It needs a role that may create and alter the tables.
func (db *DB) Migrate(ctx context.Context) error {
	ms, err := embedded()
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS mcpgen_schema_version (
			version integer PRIMARY KEY, name text NOT NULL, applied timestamptz NOT NULL DEFAULT now(), compatible_from integer)`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `ALTER TABLE mcpgen_schema_version ADD COLUMN IF NOT EXISTS compatible_from integer`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT version FROM mcpgen_schema_version`)
		if err != nil {
			return err
		}
		have, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			return err
		}
		for _, m := range ms {
			if slices.Contains(have, int32(m.version)) {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO mcpgen_schema_version (version, name, compatible_from) VALUES ($1, $2, $3)`, m.version, m.name, m.compatibleFrom); err != nil {
				return err
			}
		}
		return nil
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" {
		return fmt.Errorf("postgres: migrate: %w: this role may not change the schema; apply the migrations as a role that may (Migrate, or Open without WithoutMigrate), and open this one WithoutMigrate", err)
	}
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	return nil
}

// SchemaError is a database whose schema this build cannot use: it lacks
// migrations this build needs, or has newer ones that need a newer build.
type SchemaError struct {
	Have  int      // the newest migration applied (0: none)
	Built int      // the newest migration this build has
	Lacks []string // this build's migrations not applied
	// Newer are applied migrations this build does not know and cannot
	// work with, and NeedsBuild the schema version a build must have to.
	Newer      []string
	NeedsBuild int
}

func (e *SchemaError) Error() string {
	if len(e.Lacks) > 0 {
		what := fmt.Sprintf("at version %d", e.Have)
		if e.Have == 0 {
			what = "missing (no mcpgen_schema_version table)"
		}
		return fmt.Sprintf("postgres: the database's mcpgen schema is %s and this build needs version %d (%s not applied): run Migrate, or Open without WithoutMigrate, as a role that may change the schema",
			what, e.Built, strings.Join(e.Lacks, ", "))
	}
	return fmt.Sprintf("postgres: the database's mcpgen schema is at version %d, newer than this build's %d, and %s needs builds of schema version %d or later: upgrade this program",
		e.Have, e.Built, strings.Join(e.Newer, ", "), e.NeedsBuild)
}

// checkSchema migrates when allowed and needed, then checks that this
// build can use the schema. A schema that is current needs no change, so a
// role without DDL rights opens it even without WithoutMigrate.
func (db *DB) checkSchema(ctx context.Context, migrate bool) error {
	e, err := db.schema(ctx)
	if err == nil && e != nil && len(e.Lacks) > 0 && migrate {
		if err := db.Migrate(ctx); err != nil {
			return err
		}
		e, err = db.schema(ctx)
	}
	if err != nil {
		return err
	}
	if e != nil {
		return e
	}
	return nil
}

// schema compares the applied migrations with this build's: nil when the
// build can use them.
func (db *DB) schema(ctx context.Context) (*SchemaError, error) {
	ms, err := embedded()
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	type applied struct {
		version, compatibleFrom int
		name                    string
	}
	var have []applied
	err = db.repeatable(ctx, func(c *pgxpool.Conn) error {
		have = have[:0]
		// to_jsonb: schemas migrated before compatible_from existed lack it.
		rows, err := c.Query(ctx, `SELECT version, name, coalesce((to_jsonb(v) ->> 'compatible_from')::int, version) FROM mcpgen_schema_version v ORDER BY version`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a applied
			if err := rows.Scan(&a.version, &a.name, &a.compatibleFrom); err != nil {
				return err
			}
			have = append(have, a)
		}
		return rows.Err()
	})
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "42P01": // no table: nothing applied
		have = nil
	case errors.As(err, &pe) && pe.Code == "42501":
		return nil, fmt.Errorf("postgres: check the schema's version: %w: grant this role SELECT on mcpgen_schema_version (and the rights docs/guards.md lists)", err)
	case err != nil:
		return nil, fmt.Errorf("postgres: check the schema's version: %w", err)
	}
	e := &SchemaError{Built: ms[len(ms)-1].version}
	for _, a := range have {
		e.Have = max(e.Have, a.version)
		if a.version > e.Built && a.compatibleFrom > e.Built {
			e.Newer = append(e.Newer, a.name)
			e.NeedsBuild = max(e.NeedsBuild, a.compatibleFrom)
		}
	}
	for _, m := range ms {
		if !slices.ContainsFunc(have, func(a applied) bool { return a.version == m.version }) {
			e.Lacks = append(e.Lacks, m.name)
		}
	}
	if len(e.Lacks) == 0 && len(e.Newer) == 0 {
		return nil, nil
	}
	return e, nil
}

// SchemaVersion returns the highest migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.repeatable(ctx, func(c *pgxpool.Conn) error {
		return c.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM mcpgen_schema_version`).Scan(&v)
	})
	return v, err
}
