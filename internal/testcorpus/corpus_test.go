package testcorpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindsCorpusBesideTheRepository(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "clone")
	sub := filepath.Join(repo, "gen", "internal")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// A nested module (like example/) is not the root.
	for dir, mod := range map[string]string{repo: "module github.com/mcpgen/mcpgen\n\ngo 1.26\n", filepath.Join(repo, "gen"): "module github.com/mcpgen/mcpgen/example\n"} {
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(sub)
	if _, err := Read("a/b.json"); err == nil || !strings.Contains(err.Error(), "a/b.json is not available") {
		t.Fatalf("missing corpus: %v", err)
	}
	p := filepath.Join(base, "shared", "corpus", "a", "b.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := Read("a/b.json"); err != nil || string(data) != "{}" {
		t.Fatalf("Read = %q, %v", data, err)
	}
	t.Chdir(base)
	if _, err := Path("a/b.json"); err == nil {
		t.Error("found a repository root outside the repository")
	}
}
