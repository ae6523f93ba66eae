package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is a connection pool to one PostgreSQL database holding mcpgen's
// tables. It is safe for concurrent use.
type DB struct {
	pool *pgxpool.Pool

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
}

// WithMaxConns caps the pool's connections (default: the DSN's
// pool_max_conns, else pgx's default of 4 or the number of CPUs). A
// resumer running an approved call also holds a connection of its own,
// outside the pool, for the call's duration.
func WithMaxConns(n int32) Option { return func(o *options) { o.maxConns = n } }

// WithStatementTimeout sets PostgreSQL's statement_timeout on every
// connection (default: the server's, usually none). Contexts bound every
// operation too; this also bounds the server's side.
func WithStatementTimeout(d time.Duration) Option {
	return func(o *options) { o.statementTimeout = d }
}

// WithoutMigrate skips applying the embedded migrations on Open, for
// deployments that run Migrate as a separate step.
func WithoutMigrate() Option { return func(o *options) { o.noMigrate = true } }

// WithPurge deletes, every `every`, the finished approvals that expired more
// than keep ago (see ApprovalStore.Purge), in a goroutine that Close stops.
func WithPurge(every, keep time.Duration) Option {
	return func(o *options) { o.purgeEvery, o.purgeKeep = every, keep }
}

// Open connects to the database named by dsn (a PostgreSQL URL or
// key=value string) and applies the embedded migrations. The DSN may hold a
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
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	db := &DB{pool: pool}
	db.approvals = &ApprovalStore{db: db, subs: map[string]map[chan struct{}]struct{}{}}
	db.servers = &ServerStore{db: db}
	if !o.noMigrate {
		if err := db.Migrate(ctx); err != nil {
			pool.Close()
			return nil, err
		}
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

// Approvals returns the approval store, an mcpruntime.ApprovalWaiter.
func (db *DB) Approvals() *ApprovalStore { return db.approvals }

// Servers returns the registry's store, a manager.ServerStore.
func (db *DB) Servers() *ServerStore { return db.servers }

// migrateLock is the advisory lock key migrators serialize on.
const migrateLock int64 = 0x6d637067656e01 // "mcpgen" 1

// Migrate applies the embedded migrations not applied yet, in order, in one
// transaction under an advisory lock: any number of processes may migrate
// at once, each migration runs once, and a failed one leaves the schema as
// it was.
func (db *DB) Migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(names)
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS mcpgen_schema_version (
			version integer PRIMARY KEY, name text NOT NULL, applied timestamptz NOT NULL DEFAULT now())`); err != nil {
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
		for _, name := range names {
			base := strings.TrimPrefix(name, "migrations/")
			v, err := strconv.Atoi(base[:strings.IndexByte(base, '_')])
			if err != nil {
				return fmt.Errorf("migration %s: no version number", base)
			}
			if slices.Contains(have, int32(v)) {
				continue
			}
			sql, err := migrations.ReadFile(name)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, string(sql)); err != nil {
				return fmt.Errorf("migration %s: %w", base, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO mcpgen_schema_version (version, name) VALUES ($1, $2)`, v, base); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	return nil
}

// SchemaVersion returns the highest migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM mcpgen_schema_version`).Scan(&v)
	return v, err
}
