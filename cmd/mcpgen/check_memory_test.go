package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/internal/testcorpus"
)

// TestMemoryServerToolAdded is the new user's path with the reference
// memory server (the pinned npm release): the committed manifest lacks
// create_relations, check reports one compatible change and exits 0, and
// after check --update and generate every exported identifier of the
// bindings generated before is still there (delete_relations' relation
// item kept its name when create_relations came, which shares its shape).
func TestMemoryServerToolAdded(t *testing.T) {
	script, _ := filepath.Abs("../../tools/npm/node_modules/@modelcontextprotocol/server-memory/dist/index.js")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(script)
	}
	if err != nil {
		testcorpus.Missing(t, fmt.Errorf("server-memory is not available: %v (run npm ci --prefix tools/npm)", err))
	}
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf(`version: 1
servers:
  - id: memory
    stdio: {command: %q, args: [%q], env: {MEMORY_FILE_PATH: %q}}
`, node, script, filepath.Join(dir, "memory.jsonl")))
	if code, _, errOut := mcpgen(t, "snapshot", "--config", cfg, "--quiet"); code != 0 {
		t.Fatalf("snapshot: exit %d:\n%s", code, errOut)
	}
	mpath := filepath.Join(dir, "mcp", "memory.json")
	var m map[string]json.RawMessage
	if err := json.Unmarshal(read(t, mpath), &m); err != nil {
		t.Fatal(err)
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(m["tools"], &tools); err != nil {
		t.Fatal(err)
	}
	var kept []json.RawMessage
	for _, tool := range tools {
		if !strings.Contains(string(tool), `"name": "create_relations"`) {
			kept = append(kept, tool)
		}
	}
	if len(kept) != len(tools)-1 {
		t.Fatalf("create_relations not found among %d tools", len(tools))
	}
	m["tools"], _ = json.Marshal(kept)
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(mpath, b, 0o644); err != nil {
		t.Fatal(err)
	}

	if code, _, errOut := mcpgen(t, "generate", "--config", cfg); code != 0 {
		t.Fatalf("generate: exit %d:\n%s", code, errOut)
	}
	before := exportedNames(t, filepath.Join(dir, "memory", "memory.mcp.go"))
	code, out, errOut := mcpgen(t, "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "(0 breaking, 1 compatible)") || !strings.Contains(out, "tool added") {
		t.Fatalf("check: exit %d:\n%s%s", code, out, errOut)
	}
	if code, out, errOut := mcpgen(t, "check", "--config", cfg, "--update"); code != 0 {
		t.Fatalf("check --update: exit %d:\n%s%s", code, out, errOut)
	}
	if code, _, errOut := mcpgen(t, "generate", "--config", cfg); code != 0 {
		t.Fatalf("generate: exit %d:\n%s", code, errOut)
	}
	after := exportedNames(t, filepath.Join(dir, "memory", "memory.mcp.go"))
	var lost []string
	for n := range before {
		if !after[n] {
			lost = append(lost, n)
		}
	}
	if len(lost) > 0 || !after["DeleteRelationsInputRelationsItem"] || !after["CreateRelationsInputRelationsItem"] {
		t.Errorf("after a compatible change the bindings lost %v (DeleteRelationsInputRelationsItem %v)", lost, after["DeleteRelationsInputRelationsItem"])
	}
}

// exportedNames lists the exported package-level names of a Go file.
func exportedNames(t *testing.T, path string) map[string]bool {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.IsExported() {
				out[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						out[s.Name.Name] = true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							out[n.Name] = true
						}
					}
				}
			}
		}
	}
	return out
}
