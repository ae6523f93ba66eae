package gen

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayering keeps the pipeline's boundaries: only emit uses jennifer,
// and the IR, naming and identifier packages do no I/O.
func TestLayering(t *testing.T) {
	files, err := filepath.Glob("internal/*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		pkg := filepath.Base(filepath.Dir(f))
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			switch {
			case strings.HasPrefix(path, "github.com/dave/jennifer") && pkg != "emit":
				t.Errorf("%s imports jennifer; only emit may", f)
			case (path == "os" || path == "io/fs" || path == "os/exec" || path == "net/http") && pkg != "emit":
				t.Errorf("%s imports %s; the pipeline stages do no I/O", f, path)
			}
		}
	}
}

// TestGeneratedImports checks that generated code imports only the
// standard library, the runtime and its package for generated code.
func TestGeneratedImports(t *testing.T) {
	for _, c := range loadCases(t) {
		files, err := Generate(c.cfg)
		if err != nil {
			continue
		}
		for n, src := range files {
			af, err := parser.ParseFile(token.NewFileSet(), n, src, parser.ImportsOnly)
			if err != nil {
				t.Fatalf("%s/%s: %v", c.name, n, err)
			}
			for _, im := range af.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				if path != RuntimePath && path != ImplPath && strings.Contains(strings.Split(path, "/")[0], ".") {
					t.Errorf("%s/%s imports %s", c.name, n, path)
				}
			}
		}
	}
}
