package bindings_test

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// The committed packages are what mcpgen generates from the committed
// manifests: regenerating changes, adds and removes nothing.
func TestGeneratedUpToDate(t *testing.T) {
	mcpgen := filepath.Join(t.TempDir(), "mcpgen")
	if out, err := exec.Command("go", "build", "-o", mcpgen, "github.com/mcpgen/mcpgen/cmd/mcpgen").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command(mcpgen, "generate", "--config", "mcpgen.yaml", "--check").CombinedOutput(); err != nil {
		t.Fatalf("the bindings are out of date (run make generate): %v\n%s", err, out)
	}
}
