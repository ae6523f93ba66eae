package bindings_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/bindings"
	"github.com/mcpgen/mcpgen/bindings/filesystem"
	"github.com/mcpgen/mcpgen/bindings/internal/livetest"
	"github.com/mcpgen/mcpgen/bindings/memory"
	"github.com/mcpgen/mcpgen/bindings/sequentialthinking"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// The pins the helper starts are the ones tools/npm installs for the
// bindings' tests.
func TestPinsMatchToolsNPM(t *testing.T) {
	pins, err := livetest.Pins()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []bindings.NPMPackage{bindings.EverythingPackage, bindings.FilesystemPackage, bindings.MemoryPackage, bindings.SequentialThinkingPackage} {
		if pins[p.Name] != p.Version {
			t.Errorf("bindings pins %s, tools/npm/package.json %q", p, pins[p.Name])
		}
	}
}

func byID(t *testing.T, cs []manager.ServerConfig) map[string]manager.ServerConfig {
	t.Helper()
	m := map[string]manager.ServerConfig{}
	for _, c := range cs {
		m[c.ID] = c
	}
	if len(m) != len(cs) {
		t.Fatalf("duplicate ids in %v", cs)
	}
	return m
}

func TestConfigs(t *testing.T) {
	dir := t.TempDir()
	mods := filepath.Join(dir, "node_modules")
	install := func(p bindings.NPMPackage, version string) {
		t.Helper()
		pkg := filepath.Join(mods, filepath.FromSlash(p.Name))
		if err := os.MkdirAll(filepath.Join(pkg, "dist"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name": "`+p.Name+`", "version": "`+version+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "dist", "index.js"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	install(bindings.FilesystemPackage, bindings.FilesystemPackage.Version)
	install(bindings.MemoryPackage, bindings.MemoryPackage.Version)
	install(bindings.SequentialThinkingPackage, bindings.SequentialThinkingPackage.Version)
	install(bindings.EverythingPackage, "2025.1.1") // not the pin
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	mem := filepath.Join(dir, "graph.jsonl")

	t.Run("installed", func(t *testing.T) {
		cs, err := bindings.Configs(bindings.Options{NodeModules: mods, FilesystemDir: work, MemoryFile: mem,
			SequentialThinking: true, AllowedAgents: []string{"assistant"}})
		if err != nil {
			t.Fatal(err)
		}
		got := byID(t, cs)
		if len(got) != 3 || !slices.IsSortedFunc(cs, func(a, b manager.ServerConfig) int { return strings.Compare(a.ID, b.ID) }) {
			t.Fatalf("want filesystem, memory and sequentialthinking sorted by id, got %v", cs)
		}
		fs := got[bindings.Filesystem].Transport
		if fs.Command != "node" || !slices.Equal(fs.Args, []string{filepath.Join(mods, "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), work}) {
			t.Errorf("filesystem: %s %q", fs.Command, fs.Args)
		}
		if m := got[bindings.Memory].Transport; m.Env["MEMORY_FILE_PATH"] != mem || len(m.Args) != 1 {
			t.Errorf("memory: %q, env %v", m.Args, m.Env)
		}
		for _, c := range cs {
			if !slices.Equal(c.AllowedAgents, []string{"assistant"}) {
				t.Errorf("%s: allowed agents %q", c.ID, c.AllowedAgents)
			}
		}
	})

	t.Run("npx at the pinned version", func(t *testing.T) {
		cs, err := bindings.Configs(bindings.Options{SequentialThinking: true, Everything: true})
		if err != nil {
			t.Fatal(err)
		}
		got := byID(t, cs)
		if st := got[bindings.SequentialThinking].Transport; st.Command != "npx" || !slices.Equal(st.Args, []string{"--yes", "@modelcontextprotocol/server-sequential-thinking@2026.8.31"}) {
			t.Errorf("sequentialthinking: %s %q", st.Command, st.Args)
		}
		if ev := got[bindings.Everything].Transport; !slices.Equal(ev.Args, []string{"--yes", bindings.EverythingPackage.String(), "stdio"}) {
			t.Errorf("everything: %q", ev.Args)
		}
	})

	t.Run("everything only when asked", func(t *testing.T) {
		cs, err := bindings.Configs(bindings.Options{SequentialThinking: true, FilesystemDir: work, MemoryFile: mem, GitHubToken: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := byID(t, cs)[bindings.Everything]; ok {
			t.Error("the everything server, whose get-env returns its environment, was registered unasked")
		}
	})

	t.Run("github read-only unless asked", func(t *testing.T) {
		const token = "ghp_secretvalue"
		cs, err := bindings.Configs(bindings.Options{GitHubToken: token, GitHubToolsets: []string{"repos", "issues"}})
		if err != nil {
			t.Fatal(err)
		}
		gh := byID(t, cs)[bindings.GitHub].Transport
		if gh.Command != bindings.GitHubCommand || !slices.Equal(gh.Args, []string{"stdio", "--read-only", "--toolsets", "repos,issues"}) ||
			gh.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != token {
			t.Errorf("github: %s %q", gh.Command, gh.Args)
		}
		if strings.Contains(cs[0].String(), token) {
			t.Errorf("the entry prints its token: %s", cs[0])
		}
		cs, err = bindings.Configs(bindings.Options{GitHubToken: token, GitHubWrite: true})
		if err != nil || !slices.Equal(cs[0].Transport.Args, []string{"stdio"}) {
			t.Errorf("GitHubWrite: %v, %v", cs, err)
		}
	})

	t.Run("refused", func(t *testing.T) {
		file := filepath.Join(dir, "file")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		rootLink := filepath.Join(dir, "root-link")
		if err := os.Symlink("/", rootLink); err != nil {
			t.Fatal(err)
		}
		const token = "ghp_with\nnewline"
		for _, c := range []struct {
			name string
			o    bindings.Options
			want []string
		}{
			{"nothing asked", bindings.Options{}, []string{"asks for no server"}},
			{"relative dir", bindings.Options{FilesystemDir: "work"}, []string{`FilesystemDir: "work" is not an absolute path`}},
			{"missing dir", bindings.Options{FilesystemDir: filepath.Join(dir, "nope")}, []string{"FilesystemDir: ", "no such file or directory"}},
			{"file as dir", bindings.Options{FilesystemDir: file}, []string{"FilesystemDir: ", "is not a directory"}},
			{"root", bindings.Options{FilesystemDir: "/"}, []string{"FilesystemDir: ", "root"}},
			{"link to root", bindings.Options{FilesystemDir: rootLink}, []string{"FilesystemDir: ", "root"}},
			{"relative memory", bindings.Options{MemoryFile: "graph.jsonl"}, []string{"MemoryFile: ", "not an absolute path"}},
			{"memory dir missing", bindings.Options{MemoryFile: filepath.Join(dir, "nope", "g.jsonl")}, []string{"MemoryFile: its directory"}},
			{"memory is a dir", bindings.Options{MemoryFile: work}, []string{"MemoryFile: ", "is a directory"}},
			{"relative node_modules", bindings.Options{NodeModules: "node_modules", SequentialThinking: true}, []string{"NodeModules: "}},
			{"not installed", bindings.Options{NodeModules: work, SequentialThinking: true},
				[]string{"NodeModules: @modelcontextprotocol/server-sequential-thinking is not installed there (npm install --save-exact @modelcontextprotocol/server-sequential-thinking@2026.8.31)"}},
			{"another version installed", bindings.Options{NodeModules: mods, Everything: true},
				[]string{"NodeModules: @modelcontextprotocol/server-everything 2025.1.1 is installed there, but the bindings are of 2026.8.31"}},
			{"toolset flag", bindings.Options{GitHubToken: "t", GitHubToolsets: []string{"repos", "--read-only=false"}}, []string{`GitHubToolsets: [1] "--read-only=false"`}},
			{"github options without a token", bindings.Options{SequentialThinking: true, GitHubWrite: true}, []string{"GitHubToken: empty"}},
			{"bad token", bindings.Options{GitHubToken: token}, []string{"GitHubToken: contains a NUL or line break"}},
			{"all at once", bindings.Options{FilesystemDir: "/", MemoryFile: "x"}, []string{"FilesystemDir", "MemoryFile"}},
		} {
			cs, err := bindings.Configs(c.o)
			if err == nil {
				t.Errorf("%s: accepted: %v", c.name, cs)
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %q lacks %q", c.name, err, w)
				}
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("%s: the error quotes the token", c.name)
			}
		}
	})
}

// TestRegister: the registry's policy decides; an entry it refuses saves
// nothing.
func TestRegister(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	o := bindings.Options{FilesystemDir: work, SequentialThinking: true, GitHubToken: "ghp_secretvalue"}

	reg := manager.NewRegistry(manager.NewMemoryServerStore(), manager.Policy{})
	_, err := bindings.Register(ctx, reg, o)
	var ce *manager.ConfigError
	if !errors.As(err, &ce) || ce.Server != bindings.GitHub || !strings.Contains(err.Error(), manager.EnvStdioCommands) ||
		strings.Contains(err.Error(), "ghp_secretvalue") {
		t.Fatalf("github-mcp-server not allowlisted: want the registry's refusal naming %s, got %v", manager.EnvStdioCommands, err)
	}
	if cs, _ := reg.List(ctx); len(cs) != 0 {
		t.Errorf("a refused Register saved %v", cs)
	}

	reg = manager.NewRegistry(manager.NewMemoryServerStore(), manager.Policy{StdioCommands: []string{bindings.GitHubCommand}})
	saved, err := bindings.Register(ctx, reg, o)
	if err != nil || len(saved) != 3 || saved[0].ToolTimeout != manager.DefaultToolTimeout {
		t.Fatalf("allowlisted: %v, %v", saved, err)
	}
	if cs, _ := reg.List(ctx); len(cs) != 3 {
		t.Errorf("the registry holds %v", cs)
	}

	reg = manager.NewRegistry(manager.NewMemoryServerStore(), manager.Policy{DisableStdio: true})
	if _, err := bindings.Register(ctx, reg, bindings.Options{SequentialThinking: true}); err == nil || !strings.Contains(err.Error(), manager.EnvDisableStdio) {
		t.Errorf("stdio disabled: %v", err)
	}
}

// TestRegisteredServersRun starts what Register saved, through a manager
// and the mcpgo connector, from the npm packages tools/npm installs: the
// filesystem server sees only its directory, the memory server writes the
// graph to the named file, and the typed tools of the bindings bind to
// the managed connections.
func TestRegisteredServersRun(t *testing.T) {
	mods, err := filepath.Abs(filepath.Join("..", "tools", "npm", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing(t, "node is not installed")
	}
	for _, p := range []bindings.NPMPackage{bindings.FilesystemPackage, bindings.MemoryPackage, bindings.SequentialThinkingPackage} {
		if _, err := os.Stat(filepath.Join(mods, p.Name, "dist", "index.js")); err != nil {
			missing(t, p.Name+" is not installed (run npm ci --prefix tools/npm)")
		}
	}
	ctx := context.Background()
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, other := filepath.Join(tmp, "work"), filepath.Join(tmp, "other")
	for _, d := range []string{work, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, "secret.txt"), []byte("no"), 0o644); err != nil {
		t.Fatal(err)
	}
	graph := filepath.Join(tmp, "graph.jsonl")

	policy := manager.Policy{}
	reg := manager.NewRegistry(manager.NewMemoryServerStore(), policy)
	if _, err := bindings.Register(ctx, reg, bindings.Options{NodeModules: mods, FilesystemDir: work, MemoryFile: graph,
		SequentialThinking: true, AllowedAgents: []string{"assistant"}}); err != nil {
		t.Fatal(err)
	}
	m := manager.NewManager(reg, mcpgo.NewConnector(policy))
	defer m.CloseAll()
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore())
	gated := []mcpruntime.Option{mcpruntime.WithGate(gate)}
	ts, err := m.Toolset(ctx, "assistant", []manager.ToolSource{
		{Server: bindings.Filesystem, Bind: filesystem.Invokers, Tools: []string{"list_allowed_directories", "read_text_file", "write_file"}, Options: gated},
		{Server: bindings.Memory, Bind: memory.Invokers, Tools: []string{"create_entities", "read_graph"}, Options: gated},
		{Server: bindings.SequentialThinking, Bind: sequentialthinking.Invokers},
	})
	if err != nil {
		t.Fatal(err)
	}
	call := func(tool, args string) mcpruntime.ModelResult {
		t.Helper()
		r, err := ts.Invoke(ctx, tool, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return r
	}

	if r := call("list_allowed_directories", `{}`); r.IsError || !strings.Contains(r.Text, work) || strings.Contains(r.Text, other) {
		t.Errorf("list_allowed_directories: %+v", r)
	}
	if r := call("read_text_file", `{"path": "`+filepath.Join(other, "secret.txt")+`"}`); !r.IsError || !strings.Contains(r.Text, "Access denied") {
		t.Errorf("reading outside the directory: %+v", r)
	}
	if r := call("write_file", `{"path": "`+filepath.Join(work, "a.txt")+`", "content": "a"}`); r.Pending == nil {
		t.Errorf("write_file was not gated: %+v", r)
	}

	r := call("create_entities", `{"entities": [{"name": "x", "entityType": "t", "observations": []}]}`)
	if r.Pending == nil {
		t.Fatalf("create_entities was not gated: %+v", r)
	}
	if err := gate.Approve(ctx, r.Pending.ID, r.Pending.Digest); err != nil {
		t.Fatal(err)
	}
	if r, err := ts.Resume(ctx, "create_entities", r.Pending.ID); err != nil || r.IsError {
		t.Fatalf("resumed create_entities: %+v, %v", r, err)
	}
	if data, err := os.ReadFile(graph); err != nil || !strings.Contains(string(data), `"name":"x"`) {
		t.Errorf("the graph file: %q, %v", data, err)
	}
	if r := call("sequentialthinking", `{"thought": "t", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": false}`); r.IsError {
		t.Errorf("sequentialthinking: %+v", r)
	}
}

func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but %s", why)
	}
	t.Skip(why)
}
