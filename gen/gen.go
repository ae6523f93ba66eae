package gen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/mcpgen/mcpgen/gen/internal/emit"
	"github.com/mcpgen/mcpgen/gen/internal/ident"
	"github.com/mcpgen/mcpgen/gen/internal/ir"
	"github.com/mcpgen/mcpgen/gen/internal/names"
	"github.com/mcpgen/mcpgen/manifest"
)

// RuntimePath is the import path of the package generated code uses.
const RuntimePath = emit.RuntimePath

// ImplPath is the import path of the runtime package for generated code only.
const ImplPath = emit.ImplPath

// Input is one input file.
type Input struct {
	// Name is the input's slash-separated path as the user should see it; it
	// is written in the generated header and in error positions, and its base
	// names the output file (crm.json → crm.mcp.go).
	Name string
	Data []byte
}

// ToolOverride replaces a tool's schemas (raw JSON); a nil member keeps the
// server's.
type ToolOverride struct {
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
}

// Config says what to generate.
type Config struct {
	// Package is the Go package name of the output.
	Package string
	// Inputs, usually one manifest per package.
	Inputs []Input
	// Renames maps a wire tool name to the name used for Go naming (to drop
	// a gateway prefix, or to resolve a collision).
	Renames map[string]string
	// Overrides maps a wire tool name to replacement schemas.
	Overrides map[string]ToolOverride
	// GoNames pins Go identifiers: the key is "<tool>#<JSON Pointer within the
	// tool object>", e.g. "create_issue#/inputSchema/properties/user_id"
	// (the field; types nested in it are named after it),
	// "create_issue#/inputSchema/$defs/User" (a type), or
	// ".../enum/2" (a constant), ".../anyOf/1" (a variant: its
	// constructor and methods, and the name of its inline type), or
	// "*#<pointer>" for that pointer in every tool that has it (a tool's
	// own key wins). The x-go-name keyword in a schema does the same, but
	// shows in the schema a model is shown; a pin does not. Pins resolve
	// name collisions and give shared shapes short names.
	GoNames map[string]string
	// GoNamePos says where each GoNames key is written (a config file's
	// "file:line:col"), for the error when a key pins nothing.
	GoNamePos map[string]string
	// StripArgs maps a wire tool name to the argument that carries the
	// caller's identity (config identity.argument): it is removed from the
	// Input type and from the schema a model is shown, and the tool's
	// factory passes mcpruntime.WithIdentityArgument so the runtime sets
	// it. A tool has at most one.
	StripArgs map[string][]string
	// Resources configures the accessors of resources and resource
	// templates, keyed by uri or uriTemplate: a content schema for typed
	// reads, or a pinned Go name.
	Resources map[string]ResourceBinding
	// Gate, when set, becomes a generated GateOptions function giving the
	// configured approval policies to mcpruntime.NewGate.
	Gate *GateConfig
	// InputExtras gives every open input object an AdditionalProperties
	// field (config inputExtras). Without it an input struct has one only
	// when its schema constrains undeclared members (an
	// additionalProperties schema, patternProperties, min/maxProperties,
	// dependentRequired, dependentSchemas false, propertyNames false, not,
	// if) or it is an open variant of a oneOf told apart by trying the
	// variants; other undeclared members are ignored when decoding.
	InputExtras bool
	// KeepShapesApart turns off sharing (config keepShapesApart):
	// otherwise structurally identical types of one input are one Go type,
	// declared under the name of its first place and aliased under the
	// others' (see ir.Share). Places pinned to one name are one type
	// either way.
	KeepShapesApart bool
	// CheckFormats makes Validate check the formats date, date-time,
	// email, uri and uuid by their RFCs' grammars (config checkFormats,
	// mcpimpl.ValidFormat); otherwise format is documented, not checked.
	CheckFormats bool
}

// Gate policies, as in the config file.
const (
	GateAnnotations = "annotations" // gate tools not annotated read-only
	GateAlways      = "always"
	GateNever       = "never"
)

// GateConfig is a server's approval policy: a default and per-tool
// overrides by wire name, each one of the Gate* policies.
type GateConfig struct {
	Default string
	Tools   map[string]string
}

type srcInput struct {
	in     Input
	file   *manifest.File
	out    string
	roots  []*ir.Root
	schema []*ir.Schema
	// res holds the input's resources and prompts (resources.go).
	res *resourceSet
	// tools are the typed bindings; server names the per-server ones.
	tools  []*emit.Tool
	server emit.Server
}

// Generate returns the generated files by name. On failure the error joins
// every problem found, each a *manifest.Error printing as
// "file:line:col: /json/pointer: message", sorted by position.
func Generate(cfg Config) (files map[string][]byte, err error) {
	defer func() {
		// A bug here must not take down the caller (a go:generate run, an
		// editor integration); report it as an error instead.
		if r := recover(); r != nil {
			files, err = nil, fmt.Errorf("mcpgen: internal error (please report it with the input): %v", r)
		}
	}()
	p, err := plan(cfg)
	if err != nil {
		return nil, err
	}
	return render(cfg, p)
}

// render emits the planned inputs and gives up the plan as it goes.
func render(cfg Config, p *planned) (map[string][]byte, error) {
	files := map[string][]byte{}
	var errs []error
	inputs := p.inputs
	p.inputs, p.roots = nil, nil
	for k, s := range inputs {
		seen := map[*ir.Type]bool{}
		var types []*ir.Type
		for _, r := range s.roots {
			types = append(types, ir.Named(r.Type, seen)...)
		}
		types = ir.Declared(types)
		f := emit.File{Source: s.in.Name, Package: cfg.Package, Roots: s.roots, Types: types, Tools: s.tools, Server: s.server,
			Resources: s.res.resources, Prompts: s.res.prompts, Readers: s.res.readers}
		// Render is then the only holder of this input's IR, and frees it
		// as it goes (see emit.Render).
		source, out := s.in.Name, s.out
		inputs[k], s = nil, nil
		srcs, err := emit.Render(f, splitBytes)
		if err != nil {
			errs = append(errs, fmt.Errorf("mcpgen: %s: %w", source, err))
			continue
		}
		for i, src := range srcs {
			name := PartName(out, i)
			if _, dup := files[name]; dup {
				errs = append(errs, fmt.Errorf("mcpgen: %s: part %d would be %s, which another input generates; rename one", source, i+1, name))
				continue
			}
			files[name] = src
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return files, nil
}

// splitBytes is where an output file ends and the next begins
// (emit.DefaultSplitBytes); tests lower it to split small inputs.
var splitBytes = emit.DefaultSplitBytes

// PartName names part i (from 0) of the output out: crm.mcp.go, then
// crm_2.mcp.go, crm_3.mcp.go and so on. An output is split when it would
// pass a few megabytes (see emit.DefaultSplitBytes), so one input can
// generate several files; IsPart tells a command which files on disk are
// parts it may have written.
func PartName(out string, i int) string {
	if i == 0 {
		return out
	}
	return fmt.Sprintf("%s_%d.mcp.go", strings.TrimSuffix(out, ".mcp.go"), i+1)
}

// IsPart reports whether name is a later part (crm_2.mcp.go...) of the
// output out (crm.mcp.go).
func IsPart(out, name string) bool {
	rest, ok := strings.CutPrefix(name, strings.TrimSuffix(out, ".mcp.go")+"_")
	if !ok {
		return false
	}
	n, ok := strings.CutSuffix(rest, ".mcp.go")
	if !ok || n == "" || n[0] == '0' {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return n != "1"
}

type planned struct {
	inputs []*srcInput
	roots  []*ir.Root
}

// plan runs load → IR → names and returns the named IR.
func plan(cfg Config) (*planned, error) {
	if !ident.ValidPackage(cfg.Package) {
		return nil, fmt.Errorf("mcpgen: package name %q is not a valid Go package name", cfg.Package)
	}
	if len(cfg.Inputs) == 0 {
		return nil, errors.New("mcpgen: no inputs")
	}
	var errs []error
	ins := slices.Clone(cfg.Inputs)
	slices.SortFunc(ins, func(a, b Input) int { return strings.Compare(a.Name, b.Name) })
	var srcs []*srcInput
	outs := map[string]string{}
	index := map[*ir.Schema]*manifest.File{}
	overrideIx := map[*ir.Schema]*manifest.Index{}
	var schemas []*ir.Schema
	usedBindings := map[string]bool{}
	for _, in := range ins {
		base := path.Base(strings.ReplaceAll(in.Name, "\\", "/"))
		if i := strings.LastIndexByte(base, '.'); i > 0 {
			base = base[:i]
		}
		out := base + ".mcp.go"
		if prev, dup := outs[out]; dup {
			errs = append(errs, fmt.Errorf("mcpgen: inputs %s and %s would both generate %s; rename one", prev, in.Name, out))
			continue
		}
		outs[out] = in.Name
		f, err := manifest.Parse(in.Name, in.Data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s := &srcInput{in: in, file: f, out: out}
		srcs = append(srcs, s)
		var resSchemas []*ir.Schema
		var resErrs []error
		s.res, resSchemas, resErrs = planResources(cfg, f, index, overrideIx, usedBindings)
		errs = append(errs, resErrs...)
		schemas = append(schemas, resSchemas...)
		for _, e := range f.Manifest.Tools {
			var tool map[string]json.RawMessage
			_ = json.Unmarshal(e.Raw, &tool) // NewEntry checked it is an object
			var doc []string
			for _, k := range []string{"title", "description"} {
				var v string
				if json.Unmarshal(tool[k], &v) == nil && v != "" && !slices.Contains(doc, v) {
					doc = append(doc, v)
				}
			}
			bare := e.Key
			if r, ok := cfg.Renames[e.Key]; ok {
				bare = r
			}
			for _, role := range []string{"Input", "Output"} {
				member := "inputSchema"
				if role == "Output" {
					member = "outputSchema"
				}
				data := tool[member]
				sc := &ir.Schema{Tool: e.Key, Bare: bare, Role: role, ToolDoc: strings.Join(doc, "\n\n"), File: in.Name, Input: in.Name, Base: e.Pointer + "/" + member, Pins: pinsFor(cfg.GoNames, e.Key, "/"+member), InputExtras: cfg.InputExtras, CheckFormats: cfg.CheckFormats}
				if ov, ok := cfg.Overrides[e.Key]; ok {
					o := ov.InputSchema
					if role == "Output" {
						o = ov.OutputSchema
					}
					if o != nil {
						data = o
						sc.File = fmt.Sprintf("overrides[%s].%s", e.Key, member)
						sc.Base = ""
						ix, err := manifest.NewIndex(o)
						if err != nil {
							errs = append(errs, fmt.Errorf("mcpgen: %s: invalid JSON: %v", sc.File, err))
							continue
						}
						overrideIx[sc] = ix
					}
				}
				if data == nil || bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
					if role == "Input" {
						// The spec requires inputSchema; a tool without one takes no
						// arguments, which an empty object models.
						data = json.RawMessage(`{"type":"object"}`)
					} else {
						continue
					}
				}
				if role == "Input" {
					sc.Strip = cfg.StripArgs[e.Key]
				}
				sc.Data = data
				index[sc] = f
				schemas = append(schemas, sc)
			}
		}
	}
	errs = append(errs, unusedBindings(cfg, usedBindings)...)
	if len(errs) > 0 {
		return nil, sortErrors(errs)
	}
	// Tools sorted by name, input before output, so the output does not
	// depend on the order the server listed them in.
	sort.SliceStable(schemas, func(i, j int) bool {
		a, b := schemas[i], schemas[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Tool != b.Tool {
			return a.Tool < b.Tool
		}
		return a.Role < b.Role
	})
	roots, bErrs := ir.Build(schemas)
	pos := func(l ir.Loc, msg string) error {
		if ix, ok := overrideIx[l.Schema]; ok {
			return ix.Errorf(l.Schema.File, l.Pointer, "%s", msg)
		}
		if f, ok := index[l.Schema]; ok {
			return f.Errorf(l.Schema.Base+l.Pointer, "%s", msg)
		}
		return fmt.Errorf("mcpgen: %s: %s", l.Where(), msg)
	}
	for _, e := range bErrs {
		errs = append(errs, pos(e.Loc, fmt.Sprintf("%s %s schema: %s", e.Loc.Schema.Subject(), strings.ToLower(e.Loc.Schema.Role), e.Msg)))
	}
	seen := map[*ir.Type]bool{}
	var types []*ir.Type
	for _, r := range roots {
		types = append(types, ir.Named(r.Type, seen)...)
	}
	ir.Finish(types)
	// Names first, each from its tool's own schemas; sharing then only
	// decides which of them are aliases.
	names.Assign(types)
	ir.Share(roots, types, cfg.KeepShapesApart)
	var resSets []*resourceSet
	for _, s := range srcs {
		s.res.attach(roots)
		resSets = append(resSets, s.res)
	}
	decls, probs, bErrs2 := prepareBindings(srcs, schemas, index, roots, cfg.Gate)
	errs = append(errs, bErrs2...)
	probs = append(probs, names.Collisions(roots, types, decls)...)
	// The other position of a collision gets its line and column too.
	lineCol := func(l ir.Loc) string {
		var e *manifest.Error
		if ix, ok := overrideIx[l.Schema]; ok {
			e = ix.Errorf(l.Schema.File, l.Pointer, "x")
		} else if f, ok := index[l.Schema]; ok {
			e = f.Errorf(l.Schema.Base+l.Pointer, "x")
		}
		if e == nil || e.Line == 0 {
			return l.Where()
		}
		return fmt.Sprintf("%s:%d:%d %s", e.File, e.Line, e.Col, e.Pointer)
	}
	problem := func(pr names.Problem) error {
		msg := pr.Msg
		if pr.Also != nil {
			msg = strings.Replace(msg, pr.Also.Where(), lineCol(*pr.Also), 1)
		}
		return pos(pr.Loc, msg)
	}
	for _, pr := range probs {
		errs = append(errs, problem(pr))
	}
	for _, pr := range resourceCollisions(resSets, roots, types) {
		errs = append(errs, problem(pr))
	}
	for _, pr := range clientMethodCollisions(srcs) {
		errs = append(errs, pos(pr.Loc, pr.Msg))
	}
	errs = append(errs, unusedConfig(cfg, schemas)...)
	if len(errs) > 0 {
		return nil, sortErrors(errs)
	}
	bySchema := map[*ir.Schema]*srcInput{}
	for _, s := range srcs {
		for _, sc := range schemas {
			if index[sc] == s.file {
				bySchema[sc] = s
			}
		}
	}
	for _, r := range roots {
		s := bySchema[r.Schema]
		s.roots = append(s.roots, r)
	}
	return &planned{inputs: srcs, roots: roots}, nil
}

// pinsFor returns the pins of GoNames for one schema of a tool (member is
// /inputSchema or /outputSchema), by JSON Pointer within the schema: the
// tool's own keys, and the "*#" keys, which pin a pointer in every tool
// that has it; the tool's own key wins.
func pinsFor(goNames map[string]string, tool, member string) map[string]string {
	out := map[string]string{}
	for _, own := range []bool{false, true} {
		for k, v := range goNames {
			t, ptr, ok := strings.Cut(k, "#")
			if !ok || (t == tool) != own || !own && t != "*" {
				continue
			}
			if ptr == member {
				out[""] = v
			} else if rest, ok := strings.CutPrefix(ptr, member+"/"); ok {
				out["/"+rest] = v
			}
		}
	}
	return out
}

// unusedConfig reports config entries that name no tool, property or
// schema location: a typo there would otherwise be silently ignored.
func unusedConfig(cfg Config, schemas []*ir.Schema) []error {
	tools := map[string]bool{}
	used := map[string]bool{}
	props := map[string]map[string]bool{}
	for _, s := range schemas {
		if s.Resource {
			continue
		}
		tools[s.Tool] = true
		member := "/inputSchema"
		if s.Role == "Output" {
			member = "/outputSchema"
		}
		for ptr := range s.PinsUsed {
			// The tool's own key, and the "*#" one, which names the place
			// in every tool that has it (some may name it themselves).
			used[s.Tool+"#"+member+ptr] = true
			used["*#"+member+ptr] = true
		}
		if s.Role == "Input" {
			var top struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			_ = json.Unmarshal(s.Data, &top)
			props[s.Tool] = map[string]bool{}
			for k := range top.Properties {
				props[s.Tool][k] = true
			}
		}
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(cfg.GoNames)) {
		if used[k] {
			continue
		}
		where := "mcpgen"
		if p := cfg.GoNamePos[k]; p != "" {
			where = p
		}
		errs = append(errs, fmt.Errorf("%s: names key %q names nothing mcpgen generates: expected \"<tool>#/inputSchema/...\" or \"<tool>#/outputSchema/...\" (or \"*#...\") pointing at a schema that becomes a type, a property, an enum value or a union variant", where, k))
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Renames)) {
		if !tools[k] {
			errs = append(errs, fmt.Errorf("mcpgen: tools.rename key %q names no tool", k))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Overrides)) {
		if !tools[k] {
			errs = append(errs, fmt.Errorf("mcpgen: tools.override key %q names no tool", k))
		}
	}
	if cfg.Gate != nil {
		for _, p := range append([]string{cfg.Gate.Default}, slices.Sorted(maps.Values(cfg.Gate.Tools))...) {
			if p != "" && p != GateAnnotations && p != GateAlways && p != GateNever {
				errs = append(errs, fmt.Errorf("mcpgen: gate policy %q: want %s, %s or %s", p, GateAnnotations, GateAlways, GateNever))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(cfg.Gate.Tools)) {
			if !tools[k] {
				errs = append(errs, fmt.Errorf("mcpgen: gate.tools key %q names no tool", k))
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.StripArgs)) {
		if !tools[k] {
			errs = append(errs, fmt.Errorf("mcpgen: stripArgs key %q names no tool", k))
			continue
		}
		for _, a := range cfg.StripArgs[k] {
			if !props[k][a] {
				errs = append(errs, fmt.Errorf("mcpgen: stripArgs[%q]: the input schema has no property %q", k, a))
			}
		}
	}
	return errs
}

// sortErrors orders positioned errors by file, line and column (then
// message) and joins them.
func sortErrors(errs []error) error {
	var flat []error
	for _, e := range errs {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			flat = append(flat, j.Unwrap()...)
		} else {
			flat = append(flat, e)
		}
	}
	key := func(e error) (string, int, int, string) {
		var me *manifest.Error
		if errors.As(e, &me) {
			return me.File, me.Line, me.Col, e.Error()
		}
		return "", 0, 0, e.Error()
	}
	slices.SortStableFunc(flat, func(a, b error) int {
		fa, la, ca, sa := key(a)
		fb, lb, cb, sb := key(b)
		switch {
		case fa != fb:
			return strings.Compare(fa, fb)
		case la != lb:
			return la - lb
		case ca != cb:
			return ca - cb
		}
		return strings.Compare(sa, sb)
	})
	flat = slices.CompactFunc(flat, func(a, b error) bool { return a.Error() == b.Error() })
	return errors.Join(flat...)
}
