package gen

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/gen/internal/par"
	"github.com/mcpgen/mcpgen/gen/internal/synth"
	"github.com/mcpgen/mcpgen/internal/testcorpus"
	"github.com/mcpgen/mcpgen/manifest"
)

// A tool's exported identifiers depend only on its own schemas and on the
// config: adding, removing or changing another tool leaves each of them as
// it was, naming the same kind of thing of the same shape. For every corpus
// the tests have and each of its tools T (every seventh of GitHub's 117,
// half of them in the copy in bindings/mcp, half in the shared corpus's),
// three generations are compared by their declarations, aliases resolved:
//
//   - without T: every identifier is in the full output, the same (adding
//     T back removes and changes nothing);
//   - what the full output has beyond that is T's own: T generated with
//     none of the other tools of its input has it;
//   - that output's identifiers are in the full output, the same (T's
//     names do not depend on which other tools exist).
func TestNamesDoNotDependOnOtherTools(t *testing.T) {
	type corpus struct {
		name   string
		cfg    Config
		sample int // every sample-th tool is removed, from offset
		offset int
	}
	var corpora []corpus
	for _, c := range loadCases(t) {
		if _, err := Generate(c.cfg); err == nil {
			corpora = append(corpora, corpus{"golden/" + c.name, c.cfg, 1, 0})
		}
	}
	manifests := map[string]string{
		"snapshot/notion":     "testdata/snapshots/notion-mcp-server.json",
		"snapshot/memory":     "testdata/snapshots/server-memory.json",
		"usecases/github":     "internal/usecases/github/github.json",
		"usecases/notion":     "internal/usecases/notion/notion.json",
		"example/crm":         "../example/mcp/crm.json",
		"example/everything":  "../example/mcp/everything.json",
		"bindings/everything": "../bindings/mcp/everything.json",
		"bindings/filesystem": "../bindings/mcp/filesystem.json",
		"bindings/github":     "../bindings/mcp/github.json",
		"bindings/memory":     "../bindings/mcp/memory.json",
		"bindings/sequential": "../bindings/mcp/sequentialthinking.json",
		"benchdata":           "../internal/benchdata/bench.json",
		"cmd/list":            "../cmd/mcpgen/testdata/list/crm.json",
	}
	for _, name := range slices.Sorted(maps.Keys(manifests)) {
		data, err := os.ReadFile(manifests[name])
		if err != nil {
			t.Fatal(err)
		}
		c := corpus{name, Config{Package: "p", Inputs: []Input{{Name: filepath.Base(manifests[name]), Data: data}}}, 1, 0}
		if len(toolsOf(t, data)) > 50 {
			// GitHub's server, which the shared corpus has too: each copy
			// removes every fourteenth tool, together every seventh.
			c.sample, c.offset = 14, 7
		}
		corpora = append(corpora, c)
	}
	corpora = append(corpora, corpus{"synthetic-40", Config{Package: "p", Inputs: []Input{{Name: "synth.json", Data: synth.ToolsList(40)}}}, 8, 0})
	t.Run("corpus/github", func(t *testing.T) {
		data := testcorpus.Require(t, testcorpus.GitHubTools)
		corpora = append(corpora, corpus{"corpus/github", Config{Package: "p", Inputs: []Input{{Name: "github.json", Data: data}}}, 14, 0})
	})
	type job struct {
		c       *corpus
		full    *genDecls
		in, idx int // the input and tool removed
	}
	var jobs []job
	for i := range corpora {
		c := &corpora[i]
		full := mustDecls(t, c.name, c.cfg)
		for in := range c.cfg.Inputs {
			n := len(toolsOf(t, c.cfg.Inputs[in].Data))
			if n < 2 {
				continue // removing it would leave an input without tools
			}
			for k := c.offset; k < n; k += c.sample {
				jobs = append(jobs, job{c, full, in, k})
			}
		}
	}
	problems := make([][]string, len(jobs))
	par.Do(len(jobs), func(j int) {
		jb := jobs[j]
		name := toolName(t, toolsOf(t, jb.c.cfg.Inputs[jb.in].Data)[jb.idx])
		without, alone := withoutTool(t, jb.c.cfg, jb.in, jb.idx), onlyTool(t, jb.c.cfg, jb.in, jb.idx)
		s, err1 := declsOf(without)
		a, err2 := declsOf(alone)
		if err := cmpOr(err1, err2); err != nil {
			problems[j] = []string{fmt.Sprintf("tool %q: %v", name, err)}
			return
		}
		for _, id := range s.ids() {
			if why := sameDecl(s, jb.full, id); why != "" {
				problems[j] = append(problems[j], fmt.Sprintf("without tool %q, %s %s", name, id, why))
			}
		}
		for _, id := range jb.full.ids() {
			if !s.has(id) && !a.has(id) {
				problems[j] = append(problems[j], fmt.Sprintf("removing tool %q removes %s, which the tool alone does not declare", name, id))
			}
		}
		for _, id := range a.ids() {
			if why := sameDecl(a, jb.full, id); why != "" {
				problems[j] = append(problems[j], fmt.Sprintf("tool %q alone: %s %s", name, id, why))
			}
		}
	})
	n := 0
	for j, ps := range problems {
		for _, p := range ps {
			if n++; n <= 40 {
				t.Errorf("%s: %s", jobs[j].c.name, p)
			}
		}
	}
	t.Logf("%d corpora, %d tools removed and generated alone, %d problems", len(corpora), len(jobs), n)
}

func cmpOr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func toolsOf(t *testing.T, data []byte) []json.RawMessage {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil || top["tools"] == nil {
		return []json.RawMessage{data} // a single tool
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(top["tools"], &tools); err != nil {
		t.Fatal(err)
	}
	return tools
}

func toolName(t *testing.T, tool json.RawMessage) string {
	var v struct{ Name string }
	if err := json.Unmarshal(tool, &v); err != nil {
		t.Error(err)
	}
	return v.Name
}

// withTools returns data with its tools replaced by keep (members and the
// tools' own JSON otherwise as they were).
func withTools(t *testing.T, data []byte, keep []json.RawMessage) []byte {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Error(err)
	}
	top["tools"], _ = json.Marshal(keep)
	out, err := json.Marshal(top)
	if err != nil {
		t.Error(err)
	}
	return out
}

// withoutTool is cfg without tool idx of input in, and without the config
// entries that name it.
func withoutTool(t *testing.T, cfg Config, in, idx int) Config {
	tools := toolsOf(t, cfg.Inputs[in].Data)
	name := toolName(t, tools[idx])
	keep := slices.Delete(slices.Clone(tools), idx, idx+1)
	return restrict(t, cfg, in, keep, func(tool string) bool { return tool != name })
}

// onlyTool is cfg with input in holding only tool idx.
func onlyTool(t *testing.T, cfg Config, in, idx int) Config {
	tools := toolsOf(t, cfg.Inputs[in].Data)
	name := toolName(t, tools[idx])
	return restrict(t, cfg, in, tools[idx:idx+1], func(tool string) bool { return tool == name })
}

// restrict gives input in the tools keep, and keeps the config entries of
// that input's tools for which kept is true; a "*#" names key stays when a
// remaining tool has its pointer.
func restrict(t *testing.T, cfg Config, in int, keep []json.RawMessage, kept func(string) bool) Config {
	out := cfg
	out.Inputs = slices.Clone(cfg.Inputs)
	out.Inputs[in].Data = withTools(t, cfg.Inputs[in].Data, keep)
	mine := map[string]bool{}
	for _, tool := range toolsOf(t, cfg.Inputs[in].Data) {
		mine[toolName(t, tool)] = true
	}
	stays := func(tool string) bool { return !mine[tool] || kept(tool) }
	out.Renames = filterKeys(cfg.Renames, stays)
	out.Overrides = filterKeys(cfg.Overrides, stays)
	out.StripArgs = filterKeys(cfg.StripArgs, stays)
	if cfg.Gate != nil {
		g := *cfg.Gate
		g.Tools = filterKeys(g.Tools, stays)
		out.Gate = &g
	}
	var all []json.RawMessage
	for _, inp := range out.Inputs {
		all = append(all, toolsOf(t, inp.Data)...)
	}
	out.GoNames = filterKeys(cfg.GoNames, func(k string) bool {
		tool, ptr, _ := strings.Cut(k, "#")
		if tool != "*" {
			return stays(tool)
		}
		for _, raw := range all {
			if hasPointer(raw, ptr) {
				return true
			}
		}
		return false
	})
	return out
}

func filterKeys[V any](m map[string]V, keep func(string) bool) map[string]V {
	if m == nil {
		return nil
	}
	out := map[string]V{}
	for k, v := range m {
		if keep(k) {
			out[k] = v
		}
	}
	return out
}

// hasPointer reports whether the JSON Pointer ptr names a value in raw.
func hasPointer(raw json.RawMessage, ptr string) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	for _, tok := range strings.Split(ptr, "/")[1:] {
		tok = manifest.UnescapePointer(tok)
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return false
			}
			v = x[i]
		default:
			return false
		}
	}
	return true
}

// genDecls are the package-level declarations of generated files.
type genDecls struct {
	types   map[string]*ast.TypeSpec
	funcs   map[string]*ast.FuncDecl
	methods map[string]map[string]*ast.FuncDecl // receiver's type → name → method
	values  map[string]value
}

type value struct {
	kind string // const or var
	typ  ast.Expr
	val  ast.Expr
}

func mustDecls(t *testing.T, name string, cfg Config) *genDecls {
	d, err := declsOf(cfg)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

func declsOf(cfg Config) (*genDecls, error) {
	files, err := Generate(cfg)
	if err != nil {
		return nil, err
	}
	d := &genDecls{types: map[string]*ast.TypeSpec{}, funcs: map[string]*ast.FuncDecl{}, methods: map[string]map[string]*ast.FuncDecl{}, values: map[string]value{}}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		f, err := parser.ParseFile(token.NewFileSet(), name, files[name], parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					d.funcs[decl.Name.Name] = decl
					continue
				}
				recv := decl.Recv.List[0].Type
				if s, ok := recv.(*ast.StarExpr); ok {
					recv = s.X
				}
				r := recv.(*ast.Ident).Name
				if d.methods[r] == nil {
					d.methods[r] = map[string]*ast.FuncDecl{}
				}
				d.methods[r][decl.Name.Name] = decl
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						d.types[spec.Name.Name] = spec
					case *ast.ValueSpec:
						for i, n := range spec.Names {
							v := value{kind: decl.Tok.String(), typ: spec.Type}
							if i < len(spec.Values) {
								v.val = spec.Values[i]
							}
							d.values[n.Name] = v
						}
					}
				}
			}
		}
	}
	return d, nil
}

// resolve follows aliases to the defined type a type name denotes.
func (d *genDecls) resolve(name string) string {
	for range 100 {
		ts, ok := d.types[name]
		if !ok || !ts.Assign.IsValid() {
			return name
		}
		id, ok := ts.Type.(*ast.Ident)
		if !ok {
			return name
		}
		name = id.Name
	}
	return name
}

// ids lists the exported identifiers: types, functions, constants and
// variables by name, methods as Type.Method (of every type name, aliases
// too, since they carry the methods of what they denote).
func (d *genDecls) ids() []string {
	var out []string
	for n := range d.types {
		if !ast.IsExported(n) {
			continue
		}
		out = append(out, "type "+n)
		for m := range d.methods[d.resolve(n)] {
			if ast.IsExported(m) {
				out = append(out, "method "+n+"."+m)
			}
		}
	}
	for n := range d.funcs {
		if ast.IsExported(n) {
			out = append(out, "func "+n)
		}
	}
	for n, v := range d.values {
		if ast.IsExported(n) {
			out = append(out, v.kind+" "+n)
		}
	}
	slices.Sort(out)
	return out
}

func (d *genDecls) has(id string) bool {
	kind, name, _ := strings.Cut(id, " ")
	switch kind {
	case "type":
		return d.types[name] != nil
	case "func":
		return d.funcs[name] != nil
	case "method":
		typ, m, _ := strings.Cut(name, ".")
		return d.types[typ] != nil && d.methods[d.resolve(typ)][m] != nil
	}
	v, ok := d.values[name]
	return ok && v.kind == kind
}

// sameDecl says how identifier id of a differs in b ("" when it does not).
func sameDecl(a, b *genDecls, id string) string {
	if !b.has(id) {
		return "is missing from the full output"
	}
	kind, name, _ := strings.Cut(id, " ")
	eq := &shapes{a: a, b: b, seen: map[[2]string]bool{}}
	switch kind {
	case "type":
		if !eq.expr(&ast.Ident{Name: name}, &ast.Ident{Name: name}) {
			return "has another shape in the full output"
		}
	case "func":
		if !eq.expr(a.funcs[name].Type, b.funcs[name].Type) {
			return "has another signature in the full output"
		}
	case "method":
		typ, m, _ := strings.Cut(name, ".")
		if !eq.expr(a.methods[a.resolve(typ)][m].Type, b.methods[b.resolve(typ)][m].Type) {
			return "has another signature in the full output"
		}
	case "const":
		va, vb := a.constant(name), b.constant(name)
		if va != vb {
			return fmt.Sprintf("is %s, %s in the full output", va, vb)
		}
		ta, tb := a.constType(name), b.constType(name)
		if (ta == nil) != (tb == nil) || ta != nil && !eq.expr(ta, tb) {
			return "has another type in the full output"
		}
	}
	return ""
}

// constant is the literal a constant has, through the constants it is
// defined as.
func (d *genDecls) constant(name string) string {
	for range 100 {
		v := d.values[name]
		if id, ok := v.val.(*ast.Ident); ok && d.values[id.Name].kind == "const" {
			name = id.Name
			continue
		}
		if l, ok := v.val.(*ast.BasicLit); ok {
			return l.Value
		}
		return fmt.Sprintf("%T", v.val)
	}
	return ""
}

func (d *genDecls) constType(name string) ast.Expr {
	for range 100 {
		v := d.values[name]
		if v.typ != nil {
			return v.typ
		}
		id, ok := v.val.(*ast.Ident)
		if !ok || d.values[id.Name].kind != "const" {
			return nil
		}
		name = id.Name
	}
	return nil
}

// shapes compares type expressions of two outputs structurally: a named
// type of the package by the shape of the type it denotes (aliases
// followed), the rest as written.
type shapes struct {
	a, b *genDecls
	seen map[[2]string]bool // pairs of defined types assumed equal
}

func (s *shapes) expr(x, y ast.Expr) bool {
	switch x := x.(type) {
	case *ast.Ident:
		y, ok := y.(*ast.Ident)
		if !ok {
			return false
		}
		_, inA := s.a.types[x.Name]
		_, inB := s.b.types[y.Name]
		if !inA || !inB {
			return !inA && !inB && x.Name == y.Name
		}
		da, db := s.a.resolve(x.Name), s.b.resolve(y.Name)
		k := [2]string{da, db}
		if s.seen[k] {
			return true
		}
		s.seen[k] = true
		ta, tb := s.a.types[da], s.b.types[db]
		if ta == nil || tb == nil {
			return false
		}
		return s.expr(ta.Type, tb.Type)
	case *ast.SelectorExpr:
		y, ok := y.(*ast.SelectorExpr)
		return ok && x.Sel.Name == y.Sel.Name && s.expr(x.X, y.X)
	case *ast.StarExpr:
		y, ok := y.(*ast.StarExpr)
		return ok && s.expr(x.X, y.X)
	case *ast.ArrayType:
		y, ok := y.(*ast.ArrayType)
		return ok && (x.Len == nil) == (y.Len == nil) && s.expr(x.Elt, y.Elt)
	case *ast.MapType:
		y, ok := y.(*ast.MapType)
		return ok && s.expr(x.Key, y.Key) && s.expr(x.Value, y.Value)
	case *ast.IndexExpr:
		y, ok := y.(*ast.IndexExpr)
		return ok && s.expr(x.X, y.X) && s.expr(x.Index, y.Index)
	case *ast.IndexListExpr:
		y, ok := y.(*ast.IndexListExpr)
		if !ok || len(x.Indices) != len(y.Indices) || !s.expr(x.X, y.X) {
			return false
		}
		for i := range x.Indices {
			if !s.expr(x.Indices[i], y.Indices[i]) {
				return false
			}
		}
		return true
	case *ast.ChanType:
		y, ok := y.(*ast.ChanType)
		return ok && x.Dir == y.Dir && s.expr(x.Value, y.Value)
	case *ast.Ellipsis:
		y, ok := y.(*ast.Ellipsis)
		return ok && s.expr(x.Elt, y.Elt)
	case *ast.StructType:
		y, ok := y.(*ast.StructType)
		if ok && isClient(x) && isClient(y) {
			return true // its fields are one per tool; its methods are compared as identifiers
		}
		return ok && s.fields(x.Fields, y.Fields, true)
	case *ast.FuncType:
		y, ok := y.(*ast.FuncType)
		return ok && s.fields(x.Params, y.Params, false) && s.fields(x.Results, y.Results, false)
	case *ast.InterfaceType:
		y, ok := y.(*ast.InterfaceType)
		return ok && s.fields(x.Methods, y.Methods, true)
	}
	return false
}

// isClient reports whether st is a server's Client, the struct whose first
// field is its caller.
func isClient(st *ast.StructType) bool {
	l := st.Fields.List
	return len(l) > 0 && len(l[0].Names) == 1 && l[0].Names[0].Name == "caller"
}

// fields compares field lists, with their names and tags when named
// (struct fields and interface methods, not parameters).
func (s *shapes) fields(x, y *ast.FieldList, named bool) bool {
	flat := func(l *ast.FieldList) []*ast.Field {
		var out []*ast.Field
		if l == nil {
			return nil
		}
		for _, f := range l.List {
			if len(f.Names) <= 1 {
				out = append(out, f)
				continue
			}
			for _, n := range f.Names {
				out = append(out, &ast.Field{Names: []*ast.Ident{n}, Type: f.Type, Tag: f.Tag})
			}
		}
		return out
	}
	fx, fy := flat(x), flat(y)
	if len(fx) != len(fy) {
		return false
	}
	for i := range fx {
		a, b := fx[i], fy[i]
		if named {
			if len(a.Names) != len(b.Names) || len(a.Names) == 1 && a.Names[0].Name != b.Names[0].Name {
				return false
			}
			if (a.Tag == nil) != (b.Tag == nil) || a.Tag != nil && a.Tag.Value != b.Tag.Value {
				return false
			}
		}
		if !s.expr(a.Type, b.Type) {
			return false
		}
	}
	return true
}
