package postgres

import (
	"context"
	"encoding/json"
	"github.com/mcpgen/mcpgen/runtime/filestore"
	"path/filepath"
	"testing"
	"time"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// instant answers every call at once, so the benchmark measures the
// stores, not a server.
type instant struct{}

func (instant) CallTool(context.Context, string, json.RawMessage) (*mcpruntime.Result, error) {
	return &mcpruntime.Result{StructuredContent: json.RawMessage(`{"id":"D-2001","notes":[]}`)}, nil
}

// BenchmarkApprovals runs whole approvals (gated call, approve, resume,
// outcome recorded) against each durable store: approvals/s, and the
// latency of the resume alone.
func BenchmarkApprovals(b *testing.B) {
	stores := map[string]func(b *testing.B) mcpruntime.ApprovalStore{
		"file": func(b *testing.B) mcpruntime.ApprovalStore {
			s, err := filestore.Open(filepath.Join(b.TempDir(), "approvals"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		},
		"postgres": func(b *testing.B) mcpruntime.ApprovalStore {
			return openDB(b, newDatabase(b)).Approvals()
		},
	}
	for _, name := range []string{"file", "postgres"} {
		b.Run(name, func(b *testing.B) {
			g := mcpruntime.NewGate(stores[name](b))
			tool := updateDeal(instant{}, g)
			ctx := context.Background()
			var resume time.Duration
			start := time.Now()
			for b.Loop() {
				_, err := tool.Call(alice, NoteInput{DealID: "D-2001", Note: "bench"})
				are, ok := err.(*mcpruntime.ApprovalRequiredError)
				if !ok {
					b.Fatalf("not gated: %v", err)
				}
				if err := g.Approve(ctx, are.Approval.ID, are.Approval.Digest); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if _, err := tool.Resume(alice, are.Approval.ID); err != nil {
					b.Fatal(err)
				}
				resume += time.Since(t0)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "approvals/s")
			b.ReportMetric(float64(resume.Microseconds())/float64(b.N), "resume-µs")
		})
	}
}
