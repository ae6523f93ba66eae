package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// RunStore keeps runs' taint ledgers (mcpruntime.Run) in the
// mcpgen_run_ledger table, so that a run continued by another replica, say
// after an approval, is still tainted by what it took in before. It stores
// provenance only (server, tool, time, digest), never content or tokens.
type RunStore struct {
	db *DB
}

// Runs returns the store of runs' ledgers.
func (db *DB) Runs() *RunStore { return &RunStore{db: db} }

// Save appends the records of r that are not stored yet. A ledger only
// grows: when the stored records are not the first records of r (another
// replica went on with the run), nothing is stored and Save fails.
func (s *RunStore) Save(ctx context.Context, r *mcpruntime.Run) error {
	ledger := r.Ledger()
	// A save repeated stores nothing twice, so a lost connection is
	// retried, even one lost while committing.
	err := s.db.retry(ctx, func(int) error { return s.save(ctx, r.ID(), ledger) })
	if err != nil {
		return fmt.Errorf("run store: save run %q: %w", r.ID(), err)
	}
	return nil
}

func (s *RunStore) save(ctx context.Context, id string, ledger []mcpruntime.Provenance) error {
	tx, err := s.db.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.end()
	err = func() error {
		stored, err := s.records(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if len(stored) > len(ledger) {
			return fmt.Errorf("the stored ledger has %d records, this run %d", len(stored), len(ledger))
		}
		for i, p := range ledger {
			b, err := json.Marshal(p)
			if err != nil {
				return err
			}
			if i < len(stored) {
				if !bytes.Equal(b, stored[i]) {
					return fmt.Errorf("record %d differs from the stored one", i)
				}
				continue
			}
			if _, err := tx.Exec(ctx, `INSERT INTO mcpgen_run_ledger (run_id, seq, record) VALUES ($1, $2, $3)`, id, i, string(b)); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Load returns the run with the stored ledger; a run never saved has an
// empty one.
func (s *RunStore) Load(ctx context.Context, id string) (*mcpruntime.Run, error) {
	var recs [][]byte
	err := s.db.repeatable(ctx, func(c *pgxpool.Conn) error {
		var err error
		recs, err = s.records(ctx, c, id, false)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("run store: load run %q: %w", id, err)
	}
	r := mcpruntime.NewRun(id)
	for i, b := range recs {
		var p mcpruntime.Provenance
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("run store: run %q record %d: %w", id, i, err)
		}
		r.Record(p)
	}
	return r, nil
}

type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// records returns the stored records in order, locking them for update
// when lock is set; a gap in the sequence is an error.
func (s *RunStore) records(ctx context.Context, q querier, id string, lock bool) ([][]byte, error) {
	sql := `SELECT seq, record FROM mcpgen_run_ledger WHERE run_id = $1 ORDER BY seq`
	if lock {
		// Serializes savers of one run, also when it has no rows yet.
		if _, err := q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "mcpgen run "+id); err != nil {
			return nil, err
		}
	}
	rows, err := q.Query(ctx, sql, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var seq int
		var rec string
		if err := rows.Scan(&seq, &rec); err != nil {
			return nil, err
		}
		if seq != len(out) {
			return nil, fmt.Errorf("record %d is missing", len(out))
		}
		out = append(out, []byte(rec))
	}
	return out, rows.Err()
}
