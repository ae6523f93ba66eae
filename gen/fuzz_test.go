package gen

import (
	"errors"
	"flag"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgen/mcpgen/manifest"
)

var (
	typeCheckOnce sync.Once
	typeCheckImp  types.Importer
)

// FuzzGenerate feeds arbitrary schemas to the generator: it must never
// panic, and it either returns code that parses (and, for the seed corpus,
// type-checks) or errors that are positioned.
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
	fuzzing := flag.Lookup("test.fuzz") != nil && flag.Lookup("test.fuzz").Value.String() != ""
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
		if fuzzing || testing.Short() {
			return
		}
		typeCheckOnce.Do(func() { typeCheckImp = importer.ForCompiler(token.NewFileSet(), "source", nil) })
		conf := types.Config{Importer: typeCheckImp}
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
