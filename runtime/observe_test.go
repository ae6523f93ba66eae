package mcpruntime

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestRootModuleHasNoOpenTelemetry: the Observer seam is all the root
// module has of tracing; OpenTelemetry is adapters/otel's, a module of its
// own, and none of its modules is in the root module's build list.
func TestRootModuleHasNoOpenTelemetry(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cmd := exec.Command("go", "list", "-m", "all")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m all: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "go.opentelemetry.io/") {
			t.Errorf("the root module requires %s", line)
		}
	}
}
