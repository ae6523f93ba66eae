package example

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// build compiles a command of this workspace into dir, with the race
// detector when this test binary has it: the commands run sessions and
// handlers concurrently.
func build(t *testing.T, dir, pkg, name string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	if b, err := exec.Command("go", append(append([]string{"build"}, raceFlag()...), "-o", out, pkg)...).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// raceFlag is the go build flag that builds a command the way this test
// binary was built: with the race detector or without.
func raceFlag() []string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return []string{"-race"}
			}
		}
	}
	return nil
}

// The committed bindings are what mcpgen generates from the committed
// manifests: regenerating changes nothing.
func TestGeneratedUpToDate(t *testing.T) {
	mcpgen := build(t, t.TempDir(), "github.com/mcpgen/mcpgen/cmd/mcpgen", "mcpgen")
	out, err := exec.Command(mcpgen, "generate", "--config", "mcpgen.yaml", "--check").CombinedOutput()
	if err != nil {
		t.Fatalf("generated code is out of date (run make generate): %v\n%s", err, out)
	}
}

// The committed CRM manifest is what a snapshot of the server gives now:
// the server and the manifest have not drifted apart, and snapshots are
// deterministic.
func TestCRMManifestUpToDate(t *testing.T) {
	dir := t.TempDir()
	mcpgen := build(t, dir, "github.com/mcpgen/mcpgen/cmd/mcpgen", "mcpgen")
	server := build(t, dir, "./crm-server", "crm-server")
	want, err := os.ReadFile("mcp/crm.json")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := exec.Command(mcpgen, "snapshot", "--stdio", server, "--id", "crm", "-o", "-", "--quiet").Output()
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("a snapshot of crm-server differs from mcp/crm.json (run make demo):\n%s", got)
		}
	}
}
