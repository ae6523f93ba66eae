package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

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
	_, err = s.db.pool.Exec(ctx, `INSERT INTO mcpgen_servers (id, config) VALUES ($1, $2::jsonb)
		ON CONFLICT (id) DO UPDATE SET config = EXCLUDED.config, updated = now()`, cfg.ID, string(b))
	if err != nil {
		return fmt.Errorf("server store: %w", err)
	}
	return nil
}

// Get implements manager.ServerStore.
func (s *ServerStore) Get(ctx context.Context, id string) (manager.ServerConfig, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT id, config::text FROM mcpgen_servers WHERE id = $1`, id)
	if err != nil {
		return manager.ServerConfig{}, fmt.Errorf("server store: %w", err)
	}
	all, err := collect(rows)
	if err != nil {
		return manager.ServerConfig{}, err
	}
	if len(all) == 0 {
		return manager.ServerConfig{}, fmt.Errorf("server %q: %w", id, manager.ErrServerNotFound)
	}
	return all[0], nil
}

// List implements manager.ServerStore; entries come sorted by id. A row
// that does not decode fails the list, naming the row.
func (s *ServerStore) List(ctx context.Context) ([]manager.ServerConfig, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT id, config::text FROM mcpgen_servers ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("server store: %w", err)
	}
	return collect(rows)
}

// Delete implements manager.ServerStore.
func (s *ServerStore) Delete(ctx context.Context, id string) error {
	tag, err := s.db.pool.Exec(ctx, `DELETE FROM mcpgen_servers WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("server store: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("server %q: %w", id, manager.ErrServerNotFound)
	}
	return nil
}

type rowsLike interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close()
}

// collect decodes rows strictly: unknown members are refused, not
// dropped, and the id column must be the entry's own (the Registry checks
// it again against the id asked for).
func collect(rows rowsLike) ([]manager.ServerConfig, error) {
	defer rows.Close()
	var out []manager.ServerConfig
	for rows.Next() {
		var id, doc string
		if err := rows.Scan(&id, &doc); err != nil {
			return nil, fmt.Errorf("server store: %w", err)
		}
		var c manager.ServerConfig
		dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("server store: row %q: %w", id, err)
		}
		if c.ID != id {
			return nil, fmt.Errorf("server store: row %q: /id: %q does not match the row", id, c.ID)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("server store: %w", err)
	}
	return out, nil
}
