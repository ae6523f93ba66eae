package example

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckSeesServerChange changes the example server (a release that
// drops update_deal) and runs mcpgen check against the committed manifest:
// the removal is breaking, the exit status 1, and --fail-on any with the
// unchanged server exits 0.
func TestCheckSeesServerChange(t *testing.T) {
	dir := t.TempDir()
	mcpgen := build(t, dir, "github.com/mcpgen/mcpgen/cmd/mcpgen", "mcpgen")
	server := build(t, dir, "./crm-server", "crm-server")
	// The committed manifest, as a user's repository would hold it.
	data, err := os.ReadFile(filepath.Join("mcp", "crm.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "mcp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcp", "crm.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := func(args string) string {
		p := filepath.Join(dir, "mcpgen.yaml")
		body := "version: 1\nservers:\n  - id: crm\n    stdio: {command: " + server + ", args: [" + args + "]}\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	out, err := exec.Command(mcpgen, "check", "--config", cfg(""), "--fail-on", "any").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "crm: no drift from ") {
		t.Fatalf("unchanged server: %v\n%s", err, out)
	}

	cmd := exec.Command(mcpgen, "check", "--config", cfg("-fault, without=update_deal"))
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("changed server: want exit 1, got %v\n%s", err, out)
	}
	for _, want := range []string{"(1 breaking, 0 compatible)", "  tool update_deal\n    breaking   tool removed\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
