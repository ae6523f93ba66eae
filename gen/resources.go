package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpgen/mcpgen/gen/internal/emit"
	"github.com/mcpgen/mcpgen/gen/internal/ir"
	"github.com/mcpgen/mcpgen/gen/internal/names"
	"github.com/mcpgen/mcpgen/manifest"
)

// ResourceBinding configures the accessor of one resource or resource
// template, keyed in Config.Resources by its uri or uriTemplate.
type ResourceBinding struct {
	// Schema, when set, is the JSON Schema of the resource's content: the
	// accessor decodes the content (JSON text) into a generated
	// <Name>Content type and validates it, instead of returning text or
	// blob.
	Schema json.RawMessage
	// GoName pins the Go name the accessor (Read<GoName>), descriptor
	// (<GoName>Resource) and content type (<GoName>Content) are built
	// from; it resolves collisions.
	GoName string
	// Tool generates a reader a language model can call
	// (New<GoName>Reader), named ToolName, or read_<name> when that is
	// empty. The name must be one every provider accepts and no tool of
	// the server's.
	Tool     bool
	ToolName string
	// Where positions the binding in its config file ("file:line:col"),
	// for errors.
	Where string
}

// resourceSet is the resources and prompts of one input.
type resourceSet struct {
	resources []*ir.Resource
	prompts   []*ir.Prompt
	readers   []*emit.Reader
	// content maps a bound content schema to its resource, until Build
	// made its root.
	content map[*ir.Schema]*ir.Resource
	// locs position each entry's declarations.
	locs map[any]ir.Loc
}

// planResources reads the resources, templates and prompts of the input f,
// and returns the content schemas config bindings give them (to build with
// the tool schemas). index and overrideIx are plan's maps that position
// errors; used records the binding keys that named something.
func planResources(cfg Config, f *manifest.File, index map[*ir.Schema]*manifest.File, overrideIx map[*ir.Schema]*manifest.Index, used map[string]bool) (*resourceSet, []*ir.Schema, []error) {
	set := &resourceSet{content: map[*ir.Schema]*ir.Resource{}, locs: map[any]ir.Loc{}}
	var schemas []*ir.Schema
	var errs []error
	entryErrs := func(es []*ir.EntryError) {
		for _, e := range es {
			errs = append(errs, f.Errorf(e.Pointer, "%s", e.Msg))
		}
	}
	loc := func(key, ptr string) ir.Loc {
		s := &ir.Schema{Tool: key, File: f.Name, Base: ptr, Resource: true}
		index[s] = f
		return ir.Loc{Schema: s}
	}
	m := f.Manifest
	for _, l := range []struct {
		es       []manifest.Entry
		template bool
	}{{m.Resources, false}, {m.ResourceTemplates, true}} {
		for _, e := range l.es {
			b, bound := cfg.Resources[e.Key]
			if bound {
				used[e.Key] = true
			}
			r, es := ir.BuildResource(f.Name, e.Pointer, e.Raw, l.template, b.GoName)
			entryErrs(es)
			if r == nil || len(es) > 0 {
				continue
			}
			set.resources = append(set.resources, r)
			set.locs[r] = loc(r.Key, e.Pointer)
			if bound && (b.Tool || b.ToolName != "") {
				set.readers = append(set.readers, &emit.Reader{Resource: r, Name: b.readerName(r)})
			}
			if !bound || len(bytes.TrimSpace(b.Schema)) == 0 {
				continue
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, b.Schema); err != nil {
				errs = append(errs, fmt.Errorf("mcpgen: resources.bind[%q].schema: invalid JSON: %v", e.Key, err))
				continue
			}
			r.Schema = compact.Bytes()
			sc := &ir.Schema{Tool: e.Key, Bare: r.GoName, Role: "Content", Data: b.Schema, Resource: true,
				File: "resources.bind.schema", Input: f.Name, Pins: map[string]string{"": r.GoName + "Content"}}
			ix, err := manifest.NewIndex(b.Schema)
			if err != nil {
				errs = append(errs, fmt.Errorf("mcpgen: %s: invalid JSON: %v", sc.File, err))
				continue
			}
			overrideIx[sc] = ix
			index[sc] = f
			set.content[sc] = r
			schemas = append(schemas, sc)
		}
	}
	for _, e := range m.Prompts {
		p, es := ir.BuildPrompt(f.Name, e.Pointer, e.Raw)
		entryErrs(es)
		if p == nil || p.GoName == "" {
			continue
		}
		set.prompts = append(set.prompts, p)
		set.locs[p] = loc(p.Name, e.Pointer)
	}
	// Sorted by key and name: the order a server lists them in must not
	// show in the output.
	slices.SortStableFunc(set.resources, func(a, b *ir.Resource) int {
		if a.Template != b.Template {
			return map[bool]int{false: -1, true: 1}[a.Template]
		}
		return strings.Compare(a.Key, b.Key)
	})
	slices.SortStableFunc(set.prompts, func(a, b *ir.Prompt) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(set.readers, func(a, b *emit.Reader) int { return strings.Compare(a.Resource.Key, b.Resource.Key) })
	errs = append(errs, readerNameErrors(cfg, m, set.readers)...)
	return set, schemas, errs
}

func (b ResourceBinding) readerName(r *ir.Resource) string {
	if b.ToolName != "" {
		return b.ToolName
	}
	return emit.DefaultReaderName(r.Name)
}

// readerNameErrors checks the readers' tool names: valid for every
// provider, none a tool of the server's, no two alike. Each error names
// the binding's place in the config.
func readerNameErrors(cfg Config, m *manifest.Manifest, rs []*emit.Reader) []error {
	tools := map[string]bool{}
	for _, t := range m.Tools {
		tools[t.Key] = true
	}
	var errs []error
	taken := map[string]string{}
	for _, rd := range rs {
		key := rd.Resource.Key
		b := cfg.Resources[key]
		where := "mcpgen"
		if b.Where != "" {
			where = b.Where
		}
		field := "toolName"
		if b.ToolName == "" {
			field = "tool"
		}
		fail := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s: resources.bind[%q].%s: %s", where, key, field, fmt.Sprintf(format, args...)))
		}
		switch {
		case !readerNameRE.MatchString(rd.Name):
			fail("tool name %q is not one every model provider accepts (1 to 64 of a-z, A-Z, 0-9, '_' and '-'); set toolName", rd.Name)
		case tools[rd.Name]:
			fail("tool name %q is already a tool of the server; set another toolName", rd.Name)
		case taken[rd.Name] != "":
			fail("tool name %q is also the reader of %q; set another toolName", rd.Name, taken[rd.Name])
		}
		taken[rd.Name] = key
	}
	return errs
}

var readerNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// attach links each bound resource to the root Build made of its content
// schema.
func (s *resourceSet) attach(roots []*ir.Root) {
	for _, r := range roots {
		if res, ok := s.content[r.Schema]; ok {
			res.Content = r
		}
	}
}

// collisions checks the resource and prompt declarations of every input
// against each other and against the generated types and decoders.
func resourceCollisions(sets []*resourceSet, roots []*ir.Root, types []*ir.Type) []names.Problem {
	var decls []names.Decl
	for _, t := range types {
		decls = append(decls, names.Decl{Name: t.GoName, Where: t.Loc.Where(), Pos: t.Loc})
	}
	for _, r := range roots {
		decls = append(decls, names.Decl{Name: "Decode" + r.Type.GoName, Where: r.Type.Loc.Where() + " (decoder)", Pos: r.Type.Loc})
	}
	add := func(name, what string, l ir.Loc) {
		decls = append(decls, names.Decl{Name: name, Where: l.Where() + " (" + what + ")", Pos: l,
			Hint: "pin another Go name for the resource (config resources.bind[<uri>].goName) or rename a tool"})
	}
	for _, s := range sets {
		for _, r := range s.resources {
			l := s.locs[r]
			add(emit.ReadFunc(r.GoName), "accessor of "+kindOf(r)+" "+quote(r.Key), l)
			add(emit.ResourceVar(r.GoName), "descriptor of "+kindOf(r)+" "+quote(r.Key), l)
		}
		for _, rd := range s.readers {
			r := rd.Resource
			l := s.locs[r]
			add(emit.ReaderFunc(r.GoName), "reader tool of "+kindOf(r)+" "+quote(r.Key), l)
			add(emit.ReaderDescriptor(r.GoName), "reader tool descriptor of "+kindOf(r)+" "+quote(r.Key), l)
		}
		for _, p := range s.prompts {
			l := s.locs[p]
			add(emit.PromptFunc(p.GoName), "getter of prompt "+quote(p.Name), l)
			add(emit.PromptVar(p.GoName), "descriptor of prompt "+quote(p.Name), l)
		}
	}
	var probs []names.Problem
	seen := map[[2]string]bool{}
	for _, c := range names.Check(decls) {
		// Only mine carry a Hint: collisions among types alone are
		// names.Assign's to report.
		if c.A.Hint == "" && c.B.Hint == "" {
			continue
		}
		if c.B.Hint == "" {
			c.A, c.B = c.B, c.A // positioned at the resource or prompt
		}
		// Two entries whose names clash clash in every declaration; one
		// error says it.
		pair := [2]string{c.A.Pos.(ir.Loc).Where(), c.B.Pos.(ir.Loc).Where()}
		if seen[pair] {
			continue
		}
		seen[pair] = true
		a := c.A.Pos.(ir.Loc)
		probs = append(probs, names.Problem{Loc: c.B.Pos.(ir.Loc), Msg: c.Message(), Also: &a})
	}
	return probs
}

func kindOf(r *ir.Resource) string {
	if r.Template {
		return "resource template"
	}
	return "resource"
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// unusedBindings reports binding keys that name no resource or template.
func unusedBindings(cfg Config, used map[string]bool) []error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(cfg.Resources)) {
		if !used[k] {
			hint := "a resource uri"
			if strings.Contains(k, "{") {
				hint = "a resource template's uriTemplate"
			}
			errs = append(errs, fmt.Errorf("mcpgen: resources key %q names no resource or resource template (expected %s, as in the manifest)", k, hint))
		}
	}
	return errs
}

// clientMethodCollisions checks the methods of each input's Client: per
// tool the call, Resume<Tool> and <Tool>Links, per resource its Read
// method, per prompt its Get method, and ReadLink. Two with one name would
// not compile. Pairs whose package-level names collide too (two tools with
// one Go name, two resources with one accessor) and a tool named like
// CheckTools or Toolset are reported elsewhere, once.
func clientMethodCollisions(srcs []*srcInput) []names.Problem {
	var probs []names.Problem
	const hint = "rename the tool (config tools.rename) or pin another Go name for the resource (config resources.bind[<uri>].goName)"
	for _, s := range srcs {
		type owner struct {
			what  string
			loc   ir.Loc
			tool  string // the tool's Go name, for methods named after a tool
			entry bool   // a resource or prompt
		}
		seen := map[string]owner{}
		client := s.server.ClientType()
		add := func(method string, o owner) {
			prev, dup := seen[method]
			if !dup {
				seen[method] = o
				return
			}
			if (o.tool != "" && o.tool == prev.tool) || (o.entry && prev.entry) {
				return
			}
			probs = append(probs, names.Problem{Loc: o.loc, Msg: fmt.Sprintf("%s and %s would both be the %s method %s; %s", prev.what, o.what, client, method, hint)})
		}
		goNames := map[string]bool{}
		for _, t := range s.tools {
			if goNames[t.GoName] {
				continue // two tools with one Go name: reported with their types
			}
			goNames[t.GoName] = true
			l := ir.Loc{Schema: t.Input.Schema}
			for i, m := range emit.ToolMethods(t.GoName) {
				what := fmt.Sprintf("tool %q", t.Name)
				if i > 0 {
					what = fmt.Sprintf("the %s method of tool %q", m, t.Name)
				}
				add(m, owner{what: what, loc: l, tool: t.GoName})
			}
		}
		for _, r := range s.res.resources {
			add(emit.ReadFunc(r.GoName), owner{what: kindOf(r) + " " + quote(r.Key), loc: s.res.locs[r], entry: true})
		}
		for _, p := range s.res.prompts {
			add(emit.PromptFunc(p.GoName), owner{what: "prompt " + quote(p.Name), loc: s.res.locs[p], entry: true})
		}
		for _, m := range emit.ClientMethods {
			if prev, dup := seen[m]; dup && prev.tool != m {
				probs = append(probs, names.Problem{Loc: prev.loc, Msg: fmt.Sprintf("%s would be the %s method %s, which the Client has already; %s", prev.what, client, m, hint)})
			}
		}
	}
	return probs
}
