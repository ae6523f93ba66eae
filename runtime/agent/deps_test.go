package agent

import (
	"os/exec"
	"strings"
	"testing"
)

// The adapters carry the SDKs; this package stays provider-neutral.
func TestStandardLibraryAndRuntimeOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/mcpgen/mcpgen/runtime/agent" && p != "github.com/mcpgen/mcpgen/runtime" && !strings.HasPrefix(p, "github.com/mcpgen/mcpgen/runtime/internal/") {
			t.Errorf("runtime/agent depends on %s", p)
		}
	}
}
