package main

import (
	"context"
	"github.com/mcpgen/mcpgen/runtime/filestore"
	"os"

	"github.com/mcpgen/mcpgen/adapters/postgres"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// approvalStore is where the demo keeps approvals: PostgreSQL when
// MCPGEN_PG_DSN names a database (what replicas of an agent would share),
// otherwise a file store in a temporary directory.
func approvalStore(ctx context.Context) (mcpruntime.ApprovalStore, func(), error) {
	if dsn := os.Getenv("MCPGEN_PG_DSN"); dsn != "" {
		db, err := postgres.Open(ctx, dsn)
		if err != nil {
			return nil, nil, err
		}
		return db.Approvals(), db.Close, nil
	}
	dir, err := os.MkdirTemp("", "mcpgen-demo-approvals-")
	if err != nil {
		return nil, nil, err
	}
	s, err := filestore.Open(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	return s, func() { _ = s.Close(); _ = os.RemoveAll(dir) }, nil
}
