// Package livetest runs the pinned server behind one of the bindings for
// that package's tests: started once per test binary (TestMain), snapshotted
// as it connects, and compared with the committed manifest the way mcpgen
// check compares them, so a release whose listing differs fails the tests.
//
// Without node or the npm package the tests that need the server skip with
// the reason (the examples, which cannot skip, are not run); with CI=true
// they fail instead.
package livetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/config"
	"github.com/mcpgen/mcpgen/drift"
	"github.com/mcpgen/mcpgen/internal/udiff"
	"github.com/mcpgen/mcpgen/manifest"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
	"github.com/mcpgen/mcpgen/snapshot"
)

// Server is one binding's live server. Set ID (and what the server needs)
// in a package variable, and run the tests with Run from TestMain.
type Server struct {
	// ID is the server's id in bindings/mcpgen.yaml, whose entry says how
	// to start it.
	ID string
	// Args, when set, replaces the arguments after the script (a
	// directory for the filesystem server), so the tests run it on their
	// own files; the listing must not depend on them.
	Args []string
	// Env is added to the server's environment (KEY=VALUE).
	Env []string
	// ConnOptions are added to the session's options after the snapshot's
	// (handlers for the capabilities the entry declares).
	ConnOptions []mcpgo.Option

	// Conn is the session with the server while the tests run, nil when it
	// could not start.
	Conn *mcpgo.Conn

	sess      *snapshot.Session
	manifest  string // path of the committed manifest
	committed []byte
	live      *manifest.Manifest
	err       error // why the server is not running
	missing   bool  // err is a missing prerequisite, not a failure
}

// missing is what a machine without node or the npm packages lacks: the
// tests skip then (fail under CI=true), where other failures fail.
type missing string

func (m missing) Error() string { return string(m) }

// Run starts the server, runs the tests and stops the server; its result
// is TestMain's exit code. When the server cannot start, the examples are
// skipped and every test that asks for the server (Need) skips or fails
// with the reason.
func (s *Server) Run(m *testing.M) int {
	flag.Parse()
	if err := s.start(); err != nil {
		s.err = err
		var ms missing
		s.missing = errors.As(err, &ms)
		// Examples cannot skip, and their output would be wrong.
		skip := "^Example"
		if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" {
			skip = f.Value.String() + "|" + skip
		}
		_ = flag.Set("test.skip", skip)
	}
	code := m.Run()
	if s.sess != nil {
		_ = s.sess.Close()
	}
	return code
}

// Need returns the session with the server, or ends t: a skip with the
// reason when node or the package is missing, a failure under CI=true or
// when the server is installed but did not start.
func (s *Server) Need(t testing.TB) *mcpgo.Conn {
	t.Helper()
	switch {
	case s.err == nil && s.Conn != nil:
		return s.Conn
	case s.err == nil:
		t.Fatalf("the %s server was not started: run the tests through livetest's Run in TestMain", s.ID)
	case s.missing && os.Getenv("CI") != "true":
		t.Skipf("skipping the live %s server's tests: %v", s.ID, s.err)
	case s.missing:
		t.Fatalf("CI=true but the live %s server cannot run: %v", s.ID, s.err)
	}
	t.Fatal(s.err)
	return nil
}

// Check fails t when what the live server listed as the tests started
// differs from the committed manifest: any drift mcpgen check reports,
// compatible or breaking, or any other difference in the manifest's bytes
// (server info, capabilities).
func (s *Server) Check(t testing.TB) {
	t.Helper()
	s.Need(t)
	old, err := manifest.Parse(s.manifest, s.committed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := manifest.Encode(s.live)
	if err != nil {
		t.Fatal(err)
	}
	changes := drift.Compare(old.Manifest, s.live)
	if len(changes) == 0 && bytes.Equal(got, s.committed) {
		return
	}
	var b strings.Builder
	name := s.manifest
	if dir, err := bindingsDir(); err == nil {
		if rel, err := filepath.Rel(filepath.Dir(dir), s.manifest); err == nil {
			name = filepath.ToSlash(rel)
		}
	}
	fmt.Fprintf(&b, "the live %s server's listing differs from %s", s.ID, name)
	switch len(changes) {
	case 0:
		b.WriteString(" (no change mcpgen check reports; the bytes differ)")
	case 1:
		b.WriteString(" (1 change mcpgen check reports)")
	default:
		fmt.Fprintf(&b, " (%d changes mcpgen check reports)", len(changes))
	}
	for _, c := range changes {
		fmt.Fprintf(&b, "\n  %s", c)
	}
	if len(changes) == 0 {
		b.WriteString("\n" + udiff.Diff(name, string(s.committed), "live", string(got)))
	}
	fmt.Fprintf(&b, "\nif the pin changed on purpose: cd bindings && mcpgen snapshot --server %s, then make generate", s.ID)
	t.Error(b.String())
}

// bindingsDir is the directory holding mcpgen.yaml and the bindings.
func bindingsDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the bindings directory")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..")), nil
}

func (s *Server) start() error {
	dir, err := bindingsDir()
	if err != nil {
		return err
	}
	cfg, err := config.Load(filepath.Join(dir, "mcpgen.yaml"))
	if err != nil {
		return err
	}
	i := slices.IndexFunc(cfg.Servers, func(c *config.Server) bool { return c.ID == s.ID })
	if i < 0 {
		return fmt.Errorf("no server %q in bindings/mcpgen.yaml", s.ID)
	}
	entry := cfg.Servers[i]
	s.manifest = entry.ManifestPath()
	if s.committed, err = os.ReadFile(s.manifest); err != nil {
		return err
	}
	src, err := entry.Source(os.LookupEnv)
	if err != nil {
		return err
	}
	if err := checkNode(src); err != nil {
		return err
	}
	if s.Args != nil {
		src.Args = append(src.Args[:1:1], s.Args...)
	}
	src.Env = append(src.Env, s.Env...)
	opts := entry.Options()
	opts.Timeout = time.Minute
	s.sess = snapshot.Open(src, opts, s.ConnOptions...)
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	defer cancel()
	if s.live, err = s.sess.Capture(ctx); err != nil {
		return fmt.Errorf("starting the %s server: %w", s.ID, err)
	}
	s.Conn = s.sess.Conn()
	return nil
}

// checkNode checks that node and the entry's npm package are installed, at
// the version tools/npm pins: the tests are about the pinned release.
func checkNode(src snapshot.Source) error {
	if src.Command != "node" || len(src.Args) == 0 {
		return fmt.Errorf("server %q is not an npm server run with node", src.ID)
	}
	if !onPath("node") {
		return missing("node is not installed")
	}
	script := src.Args[0]
	if !filepath.IsAbs(script) {
		script = filepath.Join(src.Dir, script)
	}
	pkg, root, ok := npmPackage(script)
	if !ok {
		return fmt.Errorf("server %q: %s is not a script of an npm package", src.ID, src.Args[0])
	}
	if _, err := os.Stat(script); err != nil {
		return missing(pkg + " is not installed (run npm ci --prefix tools/npm)")
	}
	pins, err := Pins()
	if err != nil {
		return err
	}
	var installed struct{ Version string }
	data, err := os.ReadFile(filepath.Join(root, pkg, "package.json"))
	if err == nil {
		err = json.Unmarshal(data, &installed)
	}
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", pkg, err)
	case pins[pkg] == "":
		return fmt.Errorf("%s is not pinned in tools/npm/package.json", pkg)
	case installed.Version != pins[pkg]:
		return fmt.Errorf("%s %s is installed, but tools/npm pins %s: run npm ci --prefix tools/npm", pkg, installed.Version, pins[pkg])
	}
	return nil
}

// onPath reports whether an executable file named name is in a PATH
// directory. (Only the session layer starts processes, so this package
// does not import os/exec for LookPath.)
func onPath(name string) bool {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// npmPackage splits .../node_modules/<package>/<file> into the package
// name (scoped or not) and the node_modules directory.
func npmPackage(script string) (pkg, root string, ok bool) {
	parts := strings.Split(filepath.ToSlash(script), "/")
	i := slices.Index(parts, "node_modules")
	if i < 0 || i+2 >= len(parts) {
		return "", "", false
	}
	pkg = parts[i+1]
	if strings.HasPrefix(pkg, "@") {
		if i+3 >= len(parts) {
			return "", "", false
		}
		pkg += "/" + parts[i+2]
	}
	return pkg, filepath.FromSlash(strings.Join(parts[:i+1], "/")), true
}

// Pins returns the npm packages tools/npm/package.json pins, by name.
func Pins() (map[string]string, error) {
	dir, err := bindingsDir()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, "..", "tools", "npm", "package.json"))
	if err != nil {
		return nil, err
	}
	var p struct{ Dependencies map[string]string }
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("tools/npm/package.json: %w", err)
	}
	return p.Dependencies, nil
}

// CheckDoc checks the package documentation in doc.go (in the working
// directory) against the bindings: it names the pinned release, and its
// "Gated tools" section lists exactly the tools not annotated read-only,
// the ones GateOptions holds for approval. Each list item of that section
// is a comma-separated list of wire names, optionally followed by a
// parenthesised remark.
func CheckDoc(t testing.TB, pin string, descs []*mcpruntime.Descriptor) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("doc.go has no package documentation")
	}
	doc := f.Doc.Text()
	if !strings.Contains(doc, pin) {
		t.Errorf("the package documentation does not name the pinned release %s", pin)
	}
	listed, err := gatedSection(f.Doc)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range descs {
		if !d.Annotations.ReadOnly {
			want = append(want, d.Name)
		}
	}
	var missing, extra []string
	for _, n := range want {
		if !slices.Contains(listed, n) {
			missing = append(missing, n)
		}
	}
	seen := map[string]bool{}
	for _, n := range listed {
		if !slices.Contains(want, n) || seen[n] {
			extra = append(extra, n)
		}
		seen[n] = true
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing) > 0 {
		t.Errorf("the package documentation's gated tools lack these tools, which are not annotated read-only: %s", strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		t.Errorf("the package documentation's gated tools list these names, which are no such tools or read-only ones, or listed twice: %s", strings.Join(slices.Compact(extra), ", "))
	}
}

func gatedSection(g *ast.CommentGroup) ([]string, error) {
	in, found := false, false
	var items []string // the section's list items, continuation lines joined
	open := false
	for line := range strings.SplitSeq(g.Text(), "\n") {
		if strings.HasPrefix(line, "# ") {
			in = line == "# Gated tools"
			found = found || in
			open = false
			continue
		}
		if !in {
			continue
		}
		trimmed := strings.TrimSpace(line)
		switch item, ok := strings.CutPrefix(trimmed, "- "); {
		case ok:
			items = append(items, item)
			open = true
		case trimmed == "" || !strings.HasPrefix(line, " "):
			open = false
		case open:
			items[len(items)-1] += " " + trimmed
		}
	}
	if !found {
		return nil, errors.New(`the package documentation has no "# Gated tools" section`)
	}
	var names []string
	for _, item := range items {
		item, _, _ = strings.Cut(item, " (")
		for n := range strings.SplitSeq(item, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	return names, nil
}

// Input decodes a tool's input from JSON with the binding's strict
// decoder, so a test builds nested inputs without naming the generated
// nested types (whose names follow the generator's naming rules).
func Input[T any](t testing.TB, decode func([]byte) (T, error), js string) T {
	t.Helper()
	v, err := decode([]byte(js))
	if err != nil {
		t.Fatalf("input %s: %v", js, err)
	}
	return v
}
