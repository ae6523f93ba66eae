package mcpruntime

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Generated code imports this package and the standard library only, so
// this package must not pull in anything but the standard library and its
// own internal packages.
func TestStandardLibraryOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, pkg := range []string{".", "./mcpimpl"} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for _, p := range strings.Fields(string(out)) {
			if p != "github.com/mcpgen/mcpgen/runtime" && !strings.HasPrefix(p, "github.com/mcpgen/mcpgen/runtime/internal/") &&
				p != "github.com/mcpgen/mcpgen/runtime/mcpimpl" {
				t.Errorf("%s depends on non-standard package %s", pkg, p)
			}
		}
	}
}

type listedPackage struct {
	ImportPath string
	Imports    []string
	GoFiles    []string
	Dir        string
}

func listModule(t *testing.T) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "github.com/mcpgen/mcpgen/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// The layers: runtime is the user's API, mcpimpl and manager build on it,
// never the reverse; nothing below the CLI imports the generator; exactly
// one package starts server processes.
func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/mcpgen/mcpgen/"
	for _, p := range listModule(t) {
		rel := strings.TrimPrefix(p.ImportPath, mod)
		for _, im := range p.Imports {
			imRel, ours := strings.CutPrefix(im, mod)
			if !ours {
				// The tests' own server launchers (internal/testserver,
				// adapters/internal/crmtest) start processes; nothing a user
				// runs does but mcpgo.
				helper := rel == "internal/testserver" || strings.HasPrefix(rel, "adapters/internal/")
				if im == "os/exec" && rel != "runtime/mcpgo" && !helper {
					t.Errorf("%s starts processes (imports os/exec); only runtime/mcpgo may", rel)
				}
				continue
			}
			if strings.HasPrefix(imRel, "gen") && !strings.HasPrefix(rel, "cmd/") && !strings.HasPrefix(rel, "gen") && !strings.HasPrefix(rel, "internal/") {
				t.Errorf("%s imports the generator (%s)", rel, imRel)
			}
			if strings.HasPrefix(rel, "runtime") && !strings.HasPrefix(imRel, "runtime") {
				t.Errorf("%s imports %s: the runtime stands alone", rel, imRel)
			}
			if rel == "runtime" && imRel != "runtime" && !strings.HasPrefix(imRel, "runtime/internal/") {
				t.Errorf("runtime imports %s", imRel)
			}
		}
	}
}

// The runtime stays slim: what a program imports to call tools. The
// generated-code helpers, the manager and the session layer live in
// packages of their own. The bound is a tripwire for code that belongs
// elsewhere, not a budget to squeeze lines into: the security rules the
// runtime enforces (template values, gated reads, scrubbing) and the
// observer seam took it past 5,000, tasks (a start through the same
// guards, its handle and polls) past 6,000.
func TestRuntimeIsSlim(t *testing.T) {
	lines := 0
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(b), "\n")
	}
	if lines > 6500 {
		t.Errorf("runtime has %d lines of non-test code, over the 6,500 its design allows", lines)
	}
	t.Logf("runtime: %d lines of non-test code", lines)
}
