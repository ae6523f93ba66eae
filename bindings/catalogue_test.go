package bindings_test

import (
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/bindings"
	"github.com/mcpgen/mcpgen/bindings/everything"
	"github.com/mcpgen/mcpgen/bindings/filesystem"
	"github.com/mcpgen/mcpgen/bindings/github"
	"github.com/mcpgen/mcpgen/bindings/memory"
	"github.com/mcpgen/mcpgen/bindings/sequentialthinking"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// The catalogue in the package documentation names every binding with its
// server, its number of tools and its pin, as the packages have them.
func TestCatalogue(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for line := range strings.SplitSeq(f.Doc.Text(), "\n") {
		if fs := strings.Fields(line); strings.HasPrefix(line, "\t") && len(fs) >= 4 && strings.HasPrefix(fs[0], "bindings/") {
			rows[strings.TrimPrefix(fs[0], "bindings/")] = fs[1:]
		}
	}
	for _, b := range []struct {
		pkg, server, pin string
		descs            []*mcpruntime.Descriptor
	}{
		{"everything", bindings.EverythingPackage.Name, bindings.EverythingPackage.Version, everything.Descriptors()},
		{"filesystem", bindings.FilesystemPackage.Name, bindings.FilesystemPackage.Version, filesystem.Descriptors()},
		{"memory", bindings.MemoryPackage.Name, bindings.MemoryPackage.Version, memory.Descriptors()},
		{"sequentialthinking", bindings.SequentialThinkingPackage.Name, bindings.SequentialThinkingPackage.Version, sequentialthinking.Descriptors()},
		{"github", "github.com/github/github-mcp-server", bindings.GitHubCommit[:8], github.Descriptors()},
	} {
		row, ok := rows[b.pkg]
		switch {
		case !ok:
			t.Errorf("the catalogue has no row for bindings/%s", b.pkg)
		case row[0] != b.server || row[1] != strconv.Itoa(len(b.descs)) || !strings.Contains(strings.Join(row[2:], " "), b.pin):
			t.Errorf("bindings/%s: the catalogue says %q, want %s, %d tools, pinned at %s", b.pkg, row, b.server, len(b.descs), b.pin)
		}
		delete(rows, b.pkg)
	}
	for pkg := range rows {
		t.Errorf("the catalogue lists bindings/%s, which this test does not know", pkg)
	}
}
