package postgres

import (
	"context"
	"strings"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// A run's taint survives the replica: a ledger saved by one DB handle and
// loaded by another is tainted by the same record, and the taint-aware
// gate holds the next mutation.
func TestRunLedger(t *testing.T) {
	dsn := newDatabase(t)
	one, two := openDB(t, dsn), openDB(t, dsn)
	ctx := context.Background()
	c := mcpgo.StreamableHTTP(crmHTTP(t))
	defer c.Close()

	run := mcpruntime.NewRun("")
	rctx := mcpruntime.WithRun(alice, run)
	if _, err := mcpruntime.NewTool[GetDealInput, Deal](desc("get_deal", `{"type":"object"}`), c).Call(rctx, GetDealInput{DealID: "D-2001"}); err != nil {
		t.Fatal(err)
	}
	if err := one.Runs().Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := one.Runs().Save(ctx, run); err != nil {
		t.Fatalf("saving again: %v", err)
	}
	loaded, err := two.Runs().Load(ctx, run.ID())
	if err != nil {
		t.Fatal(err)
	}
	p, tainted := loaded.Tainted()
	if !tainted || p.Tool != "get_deal" || p != run.Ledger()[0] {
		t.Fatalf("loaded ledger: %+v, %v (saved %+v)", p, tainted, run.Ledger())
	}
	g := mcpruntime.NewGate(two.Approvals(), mcpruntime.GateDefault(mcpruntime.GateNever), mcpruntime.GateAfterTaint())
	if _, err := updateDeal(c, g).Call(mcpruntime.WithRun(alice, loaded), NoteInput{DealID: "D-2001", Note: "after taint"}); err == nil {
		t.Error("the continued run is not tainted: the mutation was not held")
	}
	if countNotes(t, c, "after taint") != 0 {
		t.Error("the mutation ran")
	}

	// The ledger grows; it is never rewritten.
	loaded.Record(mcpruntime.Provenance{Tool: "local", Digest: "sha256:00"})
	if err := two.Runs().Save(ctx, loaded); err != nil {
		t.Fatal(err)
	}
	if err := one.Runs().Save(ctx, run); err == nil || !strings.Contains(err.Error(), "records") {
		t.Errorf("saving a stale copy of the run: %v", err)
	}
	other := mcpruntime.NewRun(run.ID())
	other.Record(mcpruntime.Provenance{Tool: "forged"})
	other.Record(mcpruntime.Provenance{Tool: "forged"})
	other.Record(mcpruntime.Provenance{Tool: "forged"})
	if err := one.Runs().Save(ctx, other); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Errorf("rewriting the ledger: %v", err)
	}
	if r, err := one.Runs().Load(ctx, run.ID()); err != nil || len(r.Ledger()) != len(loaded.Ledger()) {
		t.Errorf("after refused saves: %v, %v", r, err)
	}
	if r, err := one.Runs().Load(ctx, "never saved"); err != nil || len(r.Ledger()) != 0 {
		t.Errorf("a run never saved: %v, %v", r, err)
	}
}
