package gen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgen/mcpgen/manifest"
)

var typeCheck struct {
	once sync.Once
	imp  types.Importer
	err  error
}

// typeCheckImporter returns an importer of compiled export data for the
// packages generated code may import (the runtime, its support package and
// the standard library), found once with go list -export. It caches what
// it imports, so type-checking an output costs milliseconds, fuzzing too.
func typeCheckImporter() (types.Importer, error) {
	typeCheck.once.Do(func() {
		out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{if .Export}}{{.ImportPath}}={{.Export}}{{end}}",
			"github.com/mcpgen/mcpgen/runtime", "github.com/mcpgen/mcpgen/runtime/mcpimpl").Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				err = fmt.Errorf("%w: %s", err, ee.Stderr)
			}
			typeCheck.err = fmt.Errorf("go list -export: %w", err)
			return
		}
		exports := map[string]string{}
		for line := range strings.Lines(string(out)) {
			if path, file, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
				exports[path] = file
			}
		}
		typeCheck.imp = importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
			file, ok := exports[path]
			if !ok {
				return nil, fmt.Errorf("generated code imports %q, which is neither the runtime, its support package nor the standard library", path)
			}
			return os.Open(file)
		})
	})
	return typeCheck.imp, typeCheck.err
}

// FuzzGenerate feeds arbitrary schemas to the generator: it must never
// panic, and it either returns code that parses and type-checks, or errors
// that are positioned. (With -short, the output is only parsed.)
func FuzzGenerate(f *testing.F) {
	seeds := []string{
		`{}`, `true`, `false`, `{"type":"object"}`, `{"type":["string","null"]}`,
		`{"type":"object","properties":{"a":{"$ref":"#"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"array","items":{"$ref":"#/$defs/x"}}}}`,
		`{"oneOf":[{"type":"string"},{"type":"integer"}]}`,
		`{"anyOf":[{"type":"object","properties":{"k":{"const":1}},"required":["k"]},{"type":"object","properties":{"k":{"const":2}},"required":["k"]}]}`,
		`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"properties":{"a":{"maxLength":2}}}]}`,
		`{"enum":["", " ", "a-b", "a_b", 1, null, true]}`,
		`{"type":"object","properties":{"user_id":{},"userId":{}}}`,
		`{"type":"integer","minimum":-1e300,"maximum":1e300,"multipleOf":0.5}`,
		`{"type":"string","pattern":"(?<=a)b"}`,
		`{"type":"object","additionalProperties":{"type":["object","null"],"properties":{"x":{"type":"number"}}}}`,
		`{"type":"array","items":{"type":"array","items":{"enum":[1.5,2.5]}},"uniqueItems":true}`,
		`{"type":"object","properties":{"*/":{"description":"*/ ` + "`" + ` \n //go:build x"}}}`,
		`{"$ref":"#/nope"}`, `{"type":"wat"}`, `{"type":[]}`, `[]`, `{"properties":[]}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		tool := `{"name":"t","inputSchema":` + schema + `,"outputSchema":` + schema + `}`
		files, err := Generate(Config{Package: "p", Inputs: []Input{{Name: "f.json", Data: []byte(tool)}}})
		if err != nil {
			for _, e := range unwrapAll(err) {
				var me *manifest.Error
				if !errors.As(e, &me) && !strings.HasPrefix(e.Error(), "mcpgen: ") {
					t.Fatalf("unpositioned error: %v", e)
				}
				if strings.Contains(e.Error(), "formatting generated code") {
					t.Fatalf("generated code does not parse: %v", e)
				}
			}
			return
		}
		src := files["f.mcp.go"]
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, "f.mcp.go", src, parser.ParseComments)
		if err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, src)
		}
		if testing.Short() {
			return
		}
		imp, err := typeCheckImporter()
		if err != nil {
			t.Fatal(err)
		}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check("p", fset, []*ast.File{file}, nil); err != nil {
			t.Fatalf("output does not type-check: %v\n%s", err, src)
		}
	})
}

func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
