package gen

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpgen/mcpgen/internal/testcorpus"
)

// TestSplit lowers the split size so the GitHub corpus's output (about a
// megabyte) becomes several files: the parts are named in order, none
// passes the budget by more than one declaration, the same input splits the
// same way twice, the parts declare exactly what the single file declares,
// and together they build. It lowers the package's split size, so it must
// not run in parallel with other tests that generate.
func TestSplit(t *testing.T) {
	data, err := testcorpus.Read(testcorpus.GitHubTools)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("github corpus not available: %v", err)
	}
	cfg := Config{Package: "split", Inputs: []Input{{Name: "github.json", Data: data}}}
	whole, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != 1 {
		t.Fatalf("default split: %d files, want 1", len(whole))
	}
	const budget = 128 << 10
	old := splitBytes
	splitBytes = budget
	defer func() { splitBytes = old }()
	parts, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Generate(cfg)
	if len(parts) < 4 {
		t.Fatalf("%d parts of a %d-byte output at %d bytes each", len(parts), len(whole["github.mcp.go"]), budget)
	}
	for name, src := range parts {
		if !bytes.Equal(src, again[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
	var names []string
	for i := range len(parts) {
		name := PartName("github.mcp.go", i)
		src, ok := parts[name]
		if !ok {
			t.Fatalf("part %d: no %s among %v", i, name, slices.Sorted(maps.Keys(parts)))
		}
		if i > 0 && !IsPart("github.mcp.go", name) {
			t.Errorf("IsPart(github.mcp.go, %s) = false", name)
		}
		// One declaration group is far below 64 KiB here.
		if len(src) > budget+64<<10 {
			t.Errorf("%s: %d bytes, budget %d", name, len(src), budget)
		}
		names = append(names, decls(t, name, src)...)
	}
	slices.Sort(names)
	want := decls(t, "github.mcp.go", whole["github.mcp.go"])
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("the parts declare %d names, the single file %d", len(names), len(want))
	}
	for _, bad := range []string{"github.mcp.go", "github_1.mcp.go", "github_02.mcp.go", "github_x.mcp.go", "other_2.mcp.go", "github_2.go"} {
		if IsPart("github.mcp.go", bad) {
			t.Errorf("IsPart(github.mcp.go, %s) = true", bad)
		}
	}

	if testing.Short() {
		return
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	dir, err := os.MkdirTemp(".", "splittest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for name, src := range parts {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goCmd, "vet", ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the parts: %v\n%s", err, out)
	}
}

// decls lists the top-level names a file declares (methods as Type.Method).
func decls(t *testing.T, name string, src []byte) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out []string
	for _, d := range f.Decls {
		out = append(out, declNames(d)...)
	}
	return out
}

func declNames(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		n := d.Name.Name
		if d.Recv != nil && len(d.Recv.List) > 0 {
			n = types.ExprString(d.Recv.List[0].Type) + "." + n
		}
		out = append(out, n)
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.Name != "_" {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	return out
}
