package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mcpgen/mcpgen/internal/testcorpus"
)

// BenchmarkGenerateCommand is the wall time of the mcpgen process
// generating bindings, start to exit: for the github corpus (117 tools)
// and for the corpus a hundred times over (11,700 tools, each copy's tools
// renamed), a gateway federating many servers. peak-RSS-MB is the
// process's maximum resident set (getrusage), max-file-MB the largest
// generated file and files how many there are.
func BenchmarkGenerateCommand(b *testing.B) {
	corpus, err := testcorpus.Path(testcorpus.GitHubTools)
	if err == nil {
		_, err = os.Stat(corpus)
	}
	if err != nil {
		b.Skipf("github corpus not available (%v)", err)
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "mcpgen")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	x100 := filepath.Join(dir, "github-x100.json")
	if err := os.WriteFile(x100, times(b, corpus, 100), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, manifest string }{{"github", corpus}, {"github-x100", x100}} {
		b.Run(c.name, func(b *testing.B) {
			out := filepath.Join(dir, "out-"+c.name)
			var rss int64
			for b.Loop() {
				os.RemoveAll(out) // every run writes the files
				cmd := exec.Command(bin, "generate", "--manifest", c.manifest, "--package", "github", "--out", out)
				if o, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("mcpgen generate: %v\n%s", err, o)
				}
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					rss = max(rss, ru.Maxrss) // kilobytes on Linux
				}
			}
			ents, err := os.ReadDir(out)
			if err != nil {
				b.Fatal(err)
			}
			var biggest int64
			for _, e := range ents {
				if fi, err := e.Info(); err == nil {
					biggest = max(biggest, fi.Size())
				}
			}
			b.ReportMetric(float64(rss)/1024, "peak-RSS-MB")
			b.ReportMetric(float64(biggest)/(1<<20), "max-file-MB")
			b.ReportMetric(float64(len(ents)), "files")
		})
	}
}

// times returns the tools/list at path with its tools repeated n times,
// copy i's names suffixed _i so every tool is distinct.
func times(b *testing.B, path string, n int) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var list struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		b.Fatal(err)
	}
	var all []map[string]json.RawMessage
	for i := range n {
		for _, t := range list.Tools {
			var name string
			_ = json.Unmarshal(t["name"], &name)
			c := map[string]json.RawMessage{}
			for k, v := range t {
				c[k] = v
			}
			c["name"], _ = json.Marshal(fmt.Sprintf("%s_%d", name, i))
			all = append(all, c)
		}
	}
	out, err := json.Marshal(map[string]any{"tools": all})
	if err != nil {
		b.Fatal(err)
	}
	return out
}
