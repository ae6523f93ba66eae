package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/filestore"
)

// instant answers every call at once, so the benchmark measures the
// stores, not a server.
type instant struct{}

func (instant) CallTool(context.Context, string, json.RawMessage) (*mcpruntime.Result, error) {
	return &mcpruntime.Result{StructuredContent: json.RawMessage(`{"id":"D-2001","notes":[]}`)}, nil
}

// BenchmarkApprovals runs whole approvals (gated call, approve, resume,
// outcome recorded) against each durable store, from 1, 4 and 16
// goroutines sharing one Gate: approvals/s, and the mean latency of the
// resume alone. The PostgreSQL store has the default pool (4 connections
// on up to 4 cores).
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
		for _, workers := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("%s/workers=%d", name, workers), func(b *testing.B) {
				g := mcpruntime.NewGate(stores[name](b))
				tool := updateDeal(instant{}, g)
				ctx := context.Background()
				var (
					next   atomic.Int64
					resume atomic.Int64 // ns
					wg     sync.WaitGroup
				)
				b.ResetTimer()
				start := time.Now()
				for range workers {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							_, err := tool.Call(alice, NoteInput{DealID: "D-2001", Note: "bench"})
							are, ok := err.(*mcpruntime.ApprovalRequiredError)
							if !ok {
								b.Errorf("not gated: %v", err)
								return
							}
							if err := g.Approve(ctx, are.Approval.ID, are.Approval.Digest); err != nil {
								b.Error(err)
								return
							}
							t0 := time.Now()
							if _, err := tool.Resume(alice, are.Approval.ID); err != nil {
								b.Error(err)
								return
							}
							resume.Add(int64(time.Since(t0)))
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "approvals/s")
				b.ReportMetric(float64(resume.Load())/1e3/float64(b.N), "resume-µs")
			})
		}
	}
}
