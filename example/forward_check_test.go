package example

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckNewerReleaseCompatible runs mcpgen check against a compatible
// later release of the example server (-fault newer-release: closed deal
// outputs gain a member, the output stage enum a value). check calls it
// compatible and exits 0; crmapi's TestNewerServerRelease shows the
// bindings generated from the committed manifest decode that release, so
// check and the decoders agree.
func TestCheckNewerReleaseCompatible(t *testing.T) {
	dir := t.TempDir()
	mcpgen := build(t, dir, "github.com/mcpgen/mcpgen/cmd/mcpgen", "mcpgen")
	server := build(t, dir, "./crm-server", "crm-server")
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
	cfg := filepath.Join(dir, "mcpgen.yaml")
	body := "version: 1\nservers:\n  - id: crm\n    stdio: {command: " + server + ", args: [-fault, newer-release]}\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(mcpgen, "check", "--config", cfg).CombinedOutput()
	if err != nil {
		t.Fatalf("compatible release: %v\n%s", err, out)
	}
	for _, want := range []string{
		"(0 breaking, ",
		"  tool get_deal\n",
		`compatible /outputSchema/properties/probability: output member "probability" added`,
		`compatible /outputSchema/properties/stage/enum: enum value "on_hold" added: the bindings carry it (Valid reports false)`,
		`compatible /outputSchema/properties/deals/items/properties/probability: output member "probability" added`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
