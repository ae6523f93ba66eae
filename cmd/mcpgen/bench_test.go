package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcpgen/mcpgen/internal/testcorpus"
)

// BenchmarkGenerateCommand is the wall time of the mcpgen process
// generating bindings for the github corpus (117 tools), start to exit.
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
	out := filepath.Join(dir, "out")
	for b.Loop() {
		os.RemoveAll(out) // every run writes the file
		if o, err := exec.Command(bin, "generate", "--manifest", corpus, "--package", "github", "--out", out).CombinedOutput(); err != nil {
			b.Fatalf("mcpgen generate: %v\n%s", err, o)
		}
	}
}
