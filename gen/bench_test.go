package gen

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/gen/internal/synth"

	"github.com/mcpgen/mcpgen/internal/testcorpus"
)

// BenchmarkGenerate measures the whole pipeline (parse, IR, names, emit,
// gofmt) per run; ns/tool makes sizes comparable, and the 10,000/1,000
// ratio shows whether cost grows linearly. peak-heap-MB is the largest
// live heap seen while generating.
func BenchmarkGenerate(b *testing.B) {
	cases := []struct {
		name  string
		data  []byte
		tools int
	}{
		{"synthetic-1000", synth.ToolsList(1000), 1000},
		{"synthetic-10000", synth.ToolsList(10000), 10000},
	}
	if data, err := testcorpus.Read(testcorpus.GitHubTools); err == nil {
		cases = append([]struct {
			name  string
			data  []byte
			tools int
		}{{"github-corpus", data, 117}}, cases...)
	} else {
		b.Logf("github corpus not available (%v): benchmarking synthetic manifests only", err)
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			cfg := Config{Package: "bench", Inputs: []Input{{Name: "bench.json", Data: c.data}}}
			if _, err := Generate(cfg); err != nil {
				b.Fatal(err)
			}
			peak := watchHeap()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := Generate(cfg); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.tools), "ns/tool")
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
		})
	}
}

// watchHeap samples the live heap every millisecond until the returned
// function is called, which reports the largest value seen. It reads
// runtime/metrics, which unlike runtime.ReadMemStats does not stop the
// world, so sampling does not slow down what it watches.
func watchHeap() func() uint64 {
	runtime.GC()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-t.C:
				metrics.Read(sample)
				if v := sample[0].Value; v.Kind() == metrics.KindUint64 && v.Uint64() > peak.Load() {
					peak.Store(v.Uint64())
				}
			}
		}
	}()
	return func() uint64 { close(done); <-stopped; return peak.Load() }
}

// TestSyntheticGenerates keeps the benchmark input honest: the synthetic
// manifest must generate without errors.
func TestSyntheticGenerates(t *testing.T) {
	if _, err := Generate(Config{Package: "bench", Inputs: []Input{{Name: "bench.json", Data: synth.ToolsList(50)}}}); err != nil {
		t.Fatal(err)
	}
}
