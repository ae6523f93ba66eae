package gen

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// live heap seen while generating; lines/tool is the generated code's size.
func BenchmarkGenerate(b *testing.B) {
	// Inputs are built when their case runs, so a -bench filter that
	// skips a case skips building it too.
	type input struct {
		name  string
		data  func() []byte
		tools int
	}
	cases := []input{
		{"synthetic-1000", func() []byte { return synth.ToolsList(1000) }, 1000},
		{"synthetic-10000", func() []byte { return synth.ToolsList(10000) }, 10000},
	}
	if data, err := testcorpus.Read(testcorpus.GitHubTools); err == nil {
		cases = append([]input{{"github-corpus", func() []byte { return data }, 117}}, cases...)
	} else {
		b.Logf("github corpus not available (%v): benchmarking synthetic manifests only", err)
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			cfg := Config{Package: "bench", Inputs: []Input{{Name: "bench.json", Data: c.data()}}}
			files, err := Generate(cfg)
			if err != nil {
				b.Fatal(err)
			}
			lines := 0
			for _, src := range files {
				lines += bytes.Count(src, []byte("\n"))
			}
			peak := watchHeap()
			b.ReportAllocs()
			cpu0, cpuOK := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				if _, err := Generate(cfg); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.tools), "ns/tool")
			if cpu1, ok := cpuTime(); ok && cpuOK {
				// All cores together, garbage collection included.
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N)/float64(c.tools), "cpu-ns/tool")
			}
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(lines)/float64(c.tools), "lines/tool")
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

// BenchmarkCompileGenerated is the incremental build of the generated
// github package after a change, what a developer waits for: the package
// is built once in a scratch module (the runtime and the standard library
// are then cached), and each op edits one file of it and builds again.
func BenchmarkCompileGenerated(b *testing.B) {
	data, err := testcorpus.Read(testcorpus.GitHubTools)
	if err != nil {
		b.Skipf("github corpus not available (%v)", err)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command on PATH")
	}
	files, err := Generate(Config{Package: "github", Inputs: []Input{{Name: "github.json", Data: data}}})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	root, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	write := func(name string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("go.mod", []byte("module mcpgenbench\n\ngo 1.26.0\n\nrequire github.com/mcpgen/mcpgen v0.0.0\n\nreplace github.com/mcpgen/mcpgen => "+root+"\n"))
	if sum, err := os.ReadFile(filepath.Join(root, "go.sum")); err == nil {
		write("go.sum", sum)
	}
	for name, src := range files {
		write("github/"+name, src)
	}
	build := func() {
		cmd := exec.Command(goCmd, "build", "-o", "github.a", "./github")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	}
	write("github/edit.go", []byte("package github\n"))
	build()
	n := 0
	for b.Loop() {
		// A new constant changes the package's source, so it is compiled
		// again; everything it imports comes from the build cache.
		n++
		write("github/edit.go", fmt.Appendf(nil, "package github\n\nconst edit = %d\n", n))
		build()
	}
	// The compiled package's size follows the amount of code the compiler
	// had to build, the steadier evidence on a busy machine.
	if fi, err := os.Stat(filepath.Join(dir, "github.a")); err == nil {
		b.ReportMetric(float64(fi.Size())/(1<<20), "archive-MB")
	}
}
