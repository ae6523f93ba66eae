package gen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"slices"

	"github.com/mcpgen/mcpgen/gen/internal/emit"
	"github.com/mcpgen/mcpgen/gen/internal/ir"
)

// Owner says what an exported identifier of a generated package belongs
// to.
type Owner struct {
	// Tool is the wire name of the tool whose schemas or bindings declare
	// it, or "" for the package's own declarations (Client, ToolName,
	// resources and prompts).
	Tool string
	// Type is the type it belongs to: a method's receiver, a union's
	// constructor's union, an enum constant's type; "" for a type itself
	// and for the rest.
	Type string
}

// Identifiers generates the package cfg describes and returns its exported
// identifiers, each with what it belongs to: types, functions, constants
// and variables by name, methods as "Type.Method" (for every type name,
// aliases too, since they carry the methods of the type they denote).
// mcpgen check compares two of these sets: an identifier that would
// disappear breaks code that uses it.
func Identifiers(cfg Config) (map[string]Owner, error) {
	p, err := plan(cfg)
	if err != nil {
		return nil, err
	}
	owners := map[string]Owner{}
	own := func(name, tool, typ string) {
		// A name several tools give (a pin shared on purpose) belongs to
		// the first of them.
		if o, ok := owners[name]; !ok || o.Tool > tool {
			owners[name] = Owner{Tool: tool, Type: typ}
		}
	}
	for _, s := range p.inputs {
		seen := map[*ir.Type]bool{}
		for _, r := range s.roots {
			for _, t := range ir.Named(r.Type, seen) {
				tool := t.Loc.Schema.Tool
				if t.Loc.Schema.Resource {
					tool = ""
				}
				own(t.GoName, tool, "")
				for _, v := range t.Values {
					own(v.GoName, tool, t.GoName)
				}
				for _, v := range t.Variants {
					own(t.GoName+"Of"+v.GoName, tool, t.GoName)
				}
				if t.Root != nil {
					own("Decode"+t.GoName, tool, t.GoName)
				}
			}
		}
		for _, t := range s.tools {
			own(emit.Factory(t.GoName), t.Name, "")
			own(emit.DescriptorVar(t.GoName), t.Name, "")
			own(emit.ToolConst(t.GoName), t.Name, s.server.ToolNameType())
			for _, m := range emit.ToolMethods(t.GoName) {
				own(s.server.ClientType()+"."+m, t.Name, s.server.ClientType())
			}
		}
	}
	files, err := render(cfg, p)
	if err != nil {
		return nil, err
	}
	out := map[string]Owner{}
	types := map[string]*ast.TypeSpec{}
	methods := map[string][]string{}
	var names []string
	for _, n := range slices.Sorted(maps.Keys(files)) {
		f, err := parser.ParseFile(token.NewFileSet(), n, files[n], parser.SkipObjectResolution)
		if err != nil {
			return nil, err // the generator's bug; Generate's callers would see it compile
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names = append(names, d.Name.Name)
					continue
				}
				recv := d.Recv.List[0].Type
				if st, ok := recv.(*ast.StarExpr); ok {
					recv = st.X
				}
				if id, ok := recv.(*ast.Ident); ok && ast.IsExported(d.Name.Name) {
					methods[id.Name] = append(methods[id.Name], d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						types[spec.Name.Name] = spec
						names = append(names, spec.Name.Name)
					case *ast.ValueSpec:
						for _, id := range spec.Names {
							names = append(names, id.Name)
						}
					}
				}
			}
		}
	}
	for _, n := range names {
		if ast.IsExported(n) {
			out[n] = owners[n]
		}
	}
	for n := range types {
		if !ast.IsExported(n) {
			continue
		}
		def := n
		for range 100 {
			id, ok := types[def].Type.(*ast.Ident)
			if !types[def].Assign.IsValid() || !ok || types[id.Name] == nil {
				break
			}
			def = id.Name
		}
		for _, m := range methods[def] {
			o := owners[n+"."+m]
			if o.Type == "" {
				o = Owner{Tool: owners[n].Tool, Type: n}
			}
			out[n+"."+m] = o
		}
	}
	return out, nil
}
