package mcpruntime

import (
	"os/exec"
	"strings"
	"testing"
)

// Generated code imports this package and the standard library only, so
// this package must not pull in anything else.
func TestStandardLibraryOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/mcpgen/mcpgen/runtime" {
			t.Errorf("runtime depends on non-standard package %s", p)
		}
	}
}
