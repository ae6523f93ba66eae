package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
)

// sqlAs runs sql on the database of dsn as the server's superuser.
func sqlAs(t *testing.T, dsn string, sql ...string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, q := range sql {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// oldSchema leaves dsn's database as a build with only the first
// migration left it.
func oldSchema(t *testing.T, dsn string) {
	t.Helper()
	first, err := migrations.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	sqlAs(t, dsn, `CREATE TABLE mcpgen_schema_version (version integer PRIMARY KEY, name text NOT NULL, applied timestamptz NOT NULL DEFAULT now())`,
		string(first), `INSERT INTO mcpgen_schema_version (version, name) VALUES (1, '0001_init.sql')`)
}

// Open checks the schema's version: one lacking migrations is refused
// WithoutMigrate (and migrated without it), one with a migration newer
// than the build is refused unless that migration keeps older builds
// working, and each error says what to do.
func TestSchemaVersionChecked(t *testing.T) {
	ctx := context.Background()
	built := SchemaVersionBuilt()
	if built < 3 {
		t.Fatalf("built schema version %d", built)
	}
	var se *SchemaError

	empty := newDatabase(t)
	_, err := Open(ctx, empty, WithoutMigrate())
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "schema is missing (no mcpgen_schema_version table)") || !strings.Contains(err.Error(), "run Migrate, or Open without WithoutMigrate") {
		t.Errorf("an empty database opened WithoutMigrate: %v", err)
	}

	dsn := newDatabase(t)
	oldSchema(t, dsn)
	_, err = Open(ctx, dsn, WithoutMigrate())
	if !errors.As(err, &se) || se.Have != 1 || !strings.Contains(err.Error(), fmt.Sprintf("at version 1 and this build needs version %d (0002_runs.sql, 0003_approval_writes.sql not applied)", built)) {
		t.Errorf("an old schema opened WithoutMigrate: %v", err)
	}
	db := openDB(t, dsn)
	if v, err := db.SchemaVersion(ctx); err != nil || v != built {
		t.Errorf("migrated to %d, %v", v, err)
	}

	sqlAs(t, dsn, fmt.Sprintf(`INSERT INTO mcpgen_schema_version (version, name, compatible_from) VALUES (%d, '%04d_future.sql', %[1]d)`, built+1, built+1))
	for _, opts := range [][]Option{nil, {WithoutMigrate()}} {
		_, err = Open(ctx, dsn, opts...)
		if !errors.As(err, &se) || !strings.Contains(err.Error(), fmt.Sprintf("at version %d, newer than this build's %d, and %04d_future.sql needs builds of schema version %[1]d or later: upgrade this program", built+1, built, built+1)) {
			t.Errorf("a newer schema: %v", err)
		}
	}
	sqlAs(t, dsn, fmt.Sprintf(`UPDATE mcpgen_schema_version SET compatible_from = 1 WHERE version = %d`, built+1))
	openDB(t, dsn, WithoutMigrate())
}

// A role that may only read and write the tables opens a current schema
// without WithoutMigrate (nothing to change) and runs approvals, waits,
// the registry and ledgers, also after its connections are cut; on a
// schema that needs migrating, Open says to migrate as another role and
// open this one WithoutMigrate.
func TestLeastPrivilegeRole(t *testing.T) {
	ctx := context.Background()
	role := fmt.Sprintf("dml%d", dbSeq.Add(1))
	admin(t, "CREATE ROLE "+role+" LOGIN") // goes with the server, as the databases it has rights in do
	grant := []string{
		"GRANT USAGE ON SCHEMA public TO " + role,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + role,
	}
	as := func(dsn string) string { return strings.Replace(dsn, "user=mcpgen", "user="+role, 1) }

	dsn := newDatabase(t)
	openDB(t, dsn) // migrated by the owner
	sqlAs(t, dsn, grant...)
	db := openDB(t, as(dsn))
	g := mcpruntime.NewGate(db.Approvals())
	a := gated(t, instant{}, g, "least privilege")
	if err := g.Approve(ctx, a.ID, a.Digest); err != nil {
		t.Fatal(err)
	}
	if w, err := db.Approvals().WaitDecision(ctx, a.ID); err != nil || w.State != mcpruntime.StateApproved {
		t.Fatalf("wait: %+v, %v", w, err)
	}
	pg.terminate(t, dbName(dsn), "true")
	if o := resumeOnce(alice, instant{}, g, a.ID); o.Err != "" {
		t.Fatalf("resume: %+v", o)
	}
	reg := manager.NewRegistry(db.Servers(), manager.Policy{})
	if _, err := reg.Save(ctx, manager.ServerConfig{ID: "x", Transport: manager.Transport{Kind: manager.TransportStdio, Command: "npx"}}); err != nil {
		t.Fatal(err)
	}
	run := mcpruntime.NewRun("")
	run.Record(mcpruntime.Provenance{Tool: "t", Digest: "sha256:00", Time: time.Now()})
	if err := db.Runs().Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Approvals().Purge(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "this role may not change the schema") {
		t.Errorf("migrate as the role: %v", err)
	}

	old := newDatabase(t)
	oldSchema(t, old)
	sqlAs(t, old, grant...)
	_, err := Open(ctx, as(old))
	if err == nil || !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), "open this one WithoutMigrate") {
		t.Errorf("an old schema opened by the role: %v", err)
	}
	var se *SchemaError
	if _, err := Open(ctx, as(old), WithoutMigrate()); !errors.As(err, &se) {
		t.Errorf("an old schema opened WithoutMigrate by the role: %v", err)
	}
}
