package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcpgen/mcpgen/runtime/manager"
)

// ServerStore keeps the server registry in the mcpgen_servers table, one
// entry per row as JSON. Like every manager.ServerStore it does not
// validate: the manager.Registry over it validates each entry it saves and
// each entry it loads, so a row changed by plain SQL, a migration or
// another program that breaks the allowlist or the SSRF rules is refused
// on load. Rows hold the entries' environment and headers, which may be
// secrets: grant the table like a credential.
type ServerStore struct {
	db *DB
}

var _ manager.ServerStore = (*ServerStore)(nil)

// Put implements manager.ServerStore, replacing an entry with the same id.
func (s *ServerStore) Put(ctx context.Context, cfg manager.ServerConfig) error {
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("server %q: encode: %w", cfg.ID, err)
	}
	// Writing the same entry twice is harmless, so a lost connection is
	// retried.
	err = s.db.repeatable(ctx, func(c *pgxpool.Conn) error {
		_, err := c.Exec(ctx, `INSERT INTO mcpgen_servers (id, config) VALUES ($1, $2::jsonb)
			ON CONFLICT (id) DO UPDATE SET config = EXCLUDED.config, updated = now()`, cfg.ID, string(b))
		return err
	})
	if err != nil {
		return fmt.Errorf("server store: %w", err)
	}
	return nil
}

// Get implements manager.ServerStore. A row that does not decode is an
// error naming it.
func (s *ServerStore) Get(ctx context.Context, id string) (manager.ServerConfig, error) {
	all, err := s.query(ctx, `SELECT id, config::text FROM mcpgen_servers WHERE id = $1`, id)
	if err != nil {
		return manager.ServerConfig{}, err
	}
	if len(all) == 0 {
		return manager.ServerConfig{}, fmt.Errorf("server %q: %w", id, manager.ErrServerNotFound)
	}
	return all[0], nil
}

// List implements manager.ServerStore; entries come sorted by id. Rows
// that do not decode are left out and reported together in the error,
// each by its id, with the entries that do.
func (s *ServerStore) List(ctx context.Context) ([]manager.ServerConfig, error) {
	return s.query(ctx, `SELECT id, config::text FROM mcpgen_servers ORDER BY id`)
}

// Delete implements manager.ServerStore.
func (s *ServerStore) Delete(ctx context.Context, id string) error {
	var n int64
	err := s.db.repeatable(ctx, func(c *pgxpool.Conn) error {
		tag, err := c.Exec(ctx, `DELETE FROM mcpgen_servers WHERE id = $1`, id)
		n += tag.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("server store: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("server %q: %w", id, manager.ErrServerNotFound)
	}
	return nil
}

// query reads entries strictly: unknown members are refused, not dropped,
// and the id column must be the entry's own (the Registry checks it again
// against the id asked for). The entries that decode come back with an
// error joining one per row that does not.
func (s *ServerStore) query(ctx context.Context, sql string, args ...any) ([]manager.ServerConfig, error) {
	var (
		out []manager.ServerConfig
		bad []error
	)
	err := s.db.repeatable(ctx, func(c *pgxpool.Conn) error {
		out, bad = out[:0], bad[:0]
		rows, err := c.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, doc string
			if err := rows.Scan(&id, &doc); err != nil {
				return err
			}
			var cfg manager.ServerConfig
			dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&cfg); err != nil {
				bad = append(bad, fmt.Errorf("server store: row %q: %w", id, err))
				continue
			}
			if cfg.ID != id {
				bad = append(bad, fmt.Errorf("server store: row %q: /id: %q does not match the row", id, cfg.ID))
				continue
			}
			out = append(out, cfg)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("server store: %w", err)
	}
	return out, errors.Join(bad...)
}
