package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpgen/mcpgen/config"
	"github.com/mcpgen/mcpgen/gen"
	"github.com/mcpgen/mcpgen/internal/udiff"
	"github.com/mcpgen/mcpgen/manifest"
)

func init() {
	register(&command{
		name:    "generate",
		summary: "generate typed Go bindings from committed manifests",
		usage: "mcpgen generate [--config FILE] [--server ID]... [--check] [--clean]\n" +
			"       mcpgen generate --manifest FILE --package NAME --out DIR [--check] [--clean]",
		flags: generateFlags,
	})
}

type generateOpts struct {
	config   string
	servers  []string
	manifest string
	pkg      string
	out      string
	check    bool
	clean    bool
	fs       *pflag.FlagSet
}

// unit is one package to generate.
type unit struct {
	id  string // server id, or the manifest path in the flag form
	cfg gen.Config
	dir string // output directory on this machine
}

// generatorGC lets the garbage collector run less often while generating,
// within a memory limit: generation allocates about twenty times what it
// keeps, so at the default GOGC collection is a tenth of the work, and a
// generate process is short-lived. A GOGC or GOMEMLIMIT the user set wins.
func generatorGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(300)
	debug.SetMemoryLimit(800 << 20)
}

func generateFlags(fs *pflag.FlagSet) func(context.Context, *env) error {
	o := &generateOpts{fs: fs}
	fs.StringVar(&o.config, "config", config.DefaultFile, "config file")
	fs.StringArrayVar(&o.servers, "server", nil, "generate only this server id (repeatable)")
	fs.StringVar(&o.manifest, "manifest", "", "one manifest (or tools/list result, or tool) instead of the config")
	fs.StringVarP(&o.pkg, "package", "p", "", "with --manifest: Go package name")
	fs.StringVarP(&o.out, "out", "o", "", "with --manifest: output directory")
	fs.BoolVar(&o.check, "check", false, "write nothing: print a unified diff against the files on disk, exit 1 if any differ")
	fs.BoolVar(&o.clean, "clean", false, "remove files mcpgen generated earlier that are no longer produced")
	return func(ctx context.Context, e *env) error {
		if len(e.args) > 0 {
			return usagef("unexpected arguments: %s", strings.Join(e.args, " "))
		}
		units, err := o.units()
		if err != nil {
			return err
		}
		generatorGC()
		var errs []error
		stale := 0
		for _, u := range units {
			files, err := gen.Generate(u.cfg)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if o.check {
				n, err := checkUnit(e, u, files)
				stale += n
				if err != nil {
					errs = append(errs, err)
				}
				continue
			}
			if err := writeUnit(u, files, o.clean); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		if stale > 0 {
			fmt.Fprintf(e.stderr, "mcpgen: %d generated %s out of date; run mcpgen generate\n", stale, plural(stale, "file is", "files are"))
			return silentError
		}
		return nil
	}
}

func (o *generateOpts) units() ([]unit, error) {
	if o.manifest != "" {
		if o.fs.Changed("config") || len(o.servers) > 0 {
			return nil, usagef("--manifest does not combine with --config or --server")
		}
		if o.pkg == "" || o.out == "" {
			return nil, usagef("--manifest needs --package and --out")
		}
		if !validPackage(o.pkg) {
			return nil, usagef("--package %q is not a Go package name", o.pkg)
		}
		data, err := os.ReadFile(o.manifest)
		if err != nil {
			return nil, err
		}
		name := filepath.ToSlash(filepath.Clean(o.manifest))
		return []unit{{id: name, dir: o.out, cfg: gen.Config{Package: o.pkg, Inputs: []gen.Input{{Name: name, Data: data}}}}}, nil
	}
	for _, f := range []string{"package", "out"} {
		if o.fs.Changed(f) {
			return nil, usagef("--%s goes with --manifest", f)
		}
	}
	cfg, err := config.Load(o.config)
	if err != nil {
		return nil, err
	}
	for _, id := range o.servers {
		if !slices.ContainsFunc(cfg.Servers, func(s *config.Server) bool { return s.ID == id }) {
			return nil, usagef("no server %q in %s", id, o.config)
		}
	}
	var units []unit
	var bad []error // every server's config mistakes, not only the first's
	for _, s := range cfg.Servers {
		if len(o.servers) > 0 && !slices.Contains(o.servers, s.ID) {
			continue
		}
		data, err := os.ReadFile(s.ManifestPath())
		if err != nil {
			return nil, fmt.Errorf("server %q: %w (run mcpgen snapshot first)", s.ID, err)
		}
		if err := checkServerTools(s, data); err != nil {
			bad = append(bad, err)
			continue
		}
		// The config's directory is the root of names in headers and
		// errors, so output does not depend on where mcpgen runs.
		u := unit{id: s.ID, dir: s.OutDir(), cfg: serverGenConfig(s, s.Manifest, data)}
		units = append(units, u)
	}
	if len(bad) > 0 {
		return nil, errors.Join(bad...)
	}
	return units, nil
}

// serverGenConfig is what mcpgen generate uses for s, with the manifest
// given as data under name (mcpgen list and check generate with it too).
func serverGenConfig(s *config.Server, name string, data []byte) gen.Config {
	c := gen.Config{
		Package:         s.Package,
		Inputs:          []gen.Input{{Name: name, Data: data}},
		Renames:         s.Tools.Rename,
		InputExtras:     s.InputExtras,
		KeepShapesApart: s.KeepShapesApart,
		CheckFormats:    s.CheckFormats,
	}
	if len(s.Names) > 0 {
		c.GoNames, c.GoNamePos = map[string]string{}, map[string]string{}
		for k, v := range s.Names {
			c.GoNames[k], c.GoNamePos[k] = v, s.NamesPos[k].String()
		}
	}
	if len(s.Tools.Override) > 0 {
		c.Overrides = map[string]gen.ToolOverride{}
		for name, ov := range s.Tools.Override {
			c.Overrides[name] = gen.ToolOverride{InputSchema: ov.InputSchema, OutputSchema: ov.OutputSchema}
		}
	}
	if s.Identity != nil {
		c.StripArgs = stripIdentity(data, s.Identity.Argument)
	}
	if s.Gate != nil {
		c.Gate = &gen.GateConfig{Default: s.Gate.Default, Tools: s.Gate.Tools}
	}
	if len(s.Resources.Bind) > 0 {
		c.Resources = map[string]gen.ResourceBinding{}
		for key, b := range s.Resources.Bind {
			c.Resources[key] = gen.ResourceBinding{Schema: b.Schema, GoName: b.GoName, Tool: b.Tool, ToolName: b.ToolName, Where: b.Pos.String()}
		}
	}
	return c
}

// stripIdentity lists, per tool, the identity argument to leave out of the
// generated Input: the runtime injects it, so neither Go callers nor a
// model ever supply it.
func stripIdentity(manifestData []byte, arg string) map[string][]string {
	out := map[string][]string{}
	for _, name := range toolsWithArg(manifestData, arg) {
		out[name] = []string{arg}
	}
	return out
}

var packageName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

func validPackage(s string) bool { return packageName.MatchString(s) && s != "_" }

// generatedHeader is Go's convention for generated files, restricted to
// mcpgen's own (golang.org/s/generatedcode).
var generatedHeader = regexp.MustCompile(`^// Code generated by mcpgen.* DO NOT EDIT\.$`)

// isGenerated reports whether src carries mcpgen's header before the
// package clause.
func isGenerated(src []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		if generatedHeader.MatchString(line) {
			return true
		}
		if strings.HasPrefix(line, "package ") {
			return false
		}
	}
	return false
}

// generatedIn lists the .go files in dir that mcpgen generated.
func generatedIn(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if isGenerated(b) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func writeUnit(u unit, files map[string][]byte, clean bool) error {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	// Refuse before writing anything, so a refusal leaves the directory as
	// it was.
	for _, n := range names {
		p := filepath.Join(u.dir, n)
		if old, err := os.ReadFile(p); err == nil && !isGenerated(old) {
			return fmt.Errorf("%s: %s exists and was not generated by mcpgen; refusing to overwrite it (move it away or choose another --out)", u.id, filepath.ToSlash(p))
		}
	}
	for _, n := range names {
		if _, err := writeFile(filepath.Join(u.dir, n), files[n]); err != nil {
			return fmt.Errorf("%s: %w", u.id, err)
		}
	}
	old, err := generatedIn(u.dir)
	if err != nil {
		return err
	}
	for _, n := range old {
		if _, keep := files[n]; keep {
			continue
		}
		// A later part of an output written now (crm_3.mcp.go once crm
		// fits in two) goes even without --clean: left behind it would
		// declare everything twice and the package would not compile.
		if clean || slices.ContainsFunc(names, func(out string) bool { return gen.IsPart(out, n) }) {
			if err := os.Remove(filepath.Join(u.dir, n)); err != nil {
				return fmt.Errorf("%s: %w", u.id, err)
			}
		}
	}
	return nil
}

// checkUnit prints a unified diff for every file that differs from what
// would be generated, including generated files no longer produced, and
// returns how many differ.
func checkUnit(e *env, u unit, files map[string][]byte) (int, error) {
	old, err := generatedIn(u.dir)
	if err != nil {
		return 0, err
	}
	all := map[string]bool{}
	for n := range files {
		all[n] = true
	}
	for _, n := range old {
		all[n] = true
	}
	stale := 0
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range all {
			if !yield(n) {
				return
			}
		}
	}) {
		p := filepath.Join(u.dir, n)
		shown := relSlash(p)
		have, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return stale, err
		}
		want, produced := files[n]
		if err == nil && !isGenerated(have) && produced {
			return stale, fmt.Errorf("%s: %s exists and was not generated by mcpgen", u.id, shown)
		}
		if produced && bytes.Equal(have, want) {
			continue
		}
		stale++
		from, to := "a/"+shown, "b/"+shown
		if errors.Is(err, fs.ErrNotExist) {
			from = "/dev/null"
		}
		if !produced {
			to = "/dev/null"
		}
		fmt.Fprint(e.stdout, udiff.Diff(from, string(have), to, string(want)))
	}
	return stale, nil
}

// toolsWithArg lists the tools whose input schema declares a property
// named arg. A manifest that does not parse yields none here; Generate
// reports its errors with positions.
func toolsWithArg(data []byte, arg string) []string {
	tools, _ := manifestTools(data)
	var out []string
	for _, name := range slices.Sorted(maps.Keys(tools)) {
		if slices.Contains(tools[name], arg) {
			out = append(out, name)
		}
	}
	return out
}

// manifestTools maps each tool of a manifest to its input schema's
// argument names; ok is false when the manifest does not parse (Generate
// reports why, with positions).
func manifestTools(data []byte) (tools map[string][]string, ok bool) {
	f, err := manifest.Parse("", data)
	if err != nil {
		return nil, false
	}
	tools = map[string][]string{}
	for _, t := range f.Manifest.Tools {
		var tool struct {
			InputSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"inputSchema"`
		}
		_ = json.Unmarshal(t.Raw, &tool)
		tools[t.Key] = slices.Sorted(maps.Keys(tool.InputSchema.Properties))
	}
	return tools, true
}

// checkServerTools reports the config entries of s that name tools or
// arguments its manifest lacks, positioned in the config file.
func checkServerTools(s *config.Server, data []byte) error {
	tools, ok := manifestTools(data)
	if !ok {
		return nil
	}
	f, _ := manifest.Parse("", data)
	keys := map[string]bool{}
	for _, e := range append(slices.Clone(f.Manifest.Resources), f.Manifest.ResourceTemplates...) {
		keys[e.Key] = true
	}
	raw := map[string]json.RawMessage{}
	for _, e := range f.Manifest.Tools {
		raw[e.Key] = e.Raw
	}
	return errors.Join(s.CheckTools(tools), s.CheckResources(keys), s.CheckNames(raw))
}
