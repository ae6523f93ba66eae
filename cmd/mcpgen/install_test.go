package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// refusingProxy starts a module proxy that answers 403 Forbidden for every
// github.com/mcpgen module, as proxies do for an unpublished module, and
// returns the GOPROXY value to use: it first, then the GOPROXY the tests
// run with. It serves what the local module cache holds (the cache's
// download directory has the proxy protocol's layout) and answers 404 for
// the rest, which sends the go command on to the next proxy; a 403 does
// not, so the mcpgen modules are resolved by the replace lines or not at
// all.
func refusingProxy(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("go env GOMODCACHE GOPROXY: %q", out)
	}
	cache := filepath.Join(lines[0], "cache", "download")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := path.Clean("/" + r.URL.Path)
		if strings.HasPrefix(p, "/github.com/mcpgen/") {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		f := filepath.Join(cache, filepath.FromSlash(p))
		if st, err := os.Stat(f); err != nil || st.IsDir() || strings.HasSuffix(p, "/@v/list") {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, f)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "," + lines[1]
}

// userModule is a fresh module outside the repository with the go command
// set up as a user's would be behind a proxy that refuses mcpgen's
// unpublished modules (the checksum database is not reachable here).
type userModule struct {
	t   *testing.T
	env []string
}

func newUserModule(t *testing.T) *userModule {
	t.Helper()
	t.Chdir(t.TempDir())
	m := &userModule{t: t, env: append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOSUMDB=off", "GOTOOLCHAIN=local", "GOPROXY="+refusingProxy(t))}
	m.run("go", "mod", "init", "example.com/app")
	return m
}

func (m *userModule) run(name string, args ...string) string {
	m.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = m.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		m.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runReadme runs the go commands of one of the README's install blocks,
// with the checkout's path filled in.
func (m *userModule) runReadme(root string, block []string) {
	m.t.Helper()
	for _, step := range block {
		step = strings.ReplaceAll(step, "/path/to/mcpgen", root)
		words, err := splitCommand(step)
		if err != nil || len(words) < 2 || words[0] != "go" {
			m.t.Fatalf("README install step %q: want a go command", step)
		}
		out := m.run("go", words[1:]...)
		if words[1] == "tool" && !strings.HasPrefix(out, "mcpgen ") {
			m.t.Errorf("%s: %s", step, out)
		}
	}
}

// TestAdaptersFromOwnModule: a module outside the repository imports each
// adapter with only the lines the README documents (the install block,
// then the adapter block with the adapter's name), behind a proxy that
// refuses mcpgen's modules: go mod tidy and go build succeed, and the
// module's go.mod names no module the adapters only test with.
func TestAdaptersFromOwnModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the go command")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeInstallBlocks(t, filepath.Join(root, "README.md"))
	if len(blocks) < 2 || !strings.Contains(strings.Join(blocks[1], "\n"), "adapters/openai") {
		t.Fatalf("README's install section has no adapter block naming adapters/openai: %q", blocks)
	}
	for _, dir := range []string{"anthropic", "eino", "langchaingo", "openai", "otel", "postgres"} {
		t.Run(dir, func(t *testing.T) {
			m := newUserModule(t)
			m.runReadme(root, blocks[0])
			var block []string
			for _, step := range blocks[1] {
				block = append(block, strings.ReplaceAll(step, "adapters/openai", "adapters/"+dir))
			}
			if err := os.WriteFile("main.go", []byte(blankImport(dir)), 0o644); err != nil {
				t.Fatal(err)
			}
			m.runReadme(root, block)
			m.run("go", "build", "./...")
			gomod := string(read(t, "go.mod"))
			for _, bad := range []string{"crmtest", "mcpgen/example", "internal/crm"} {
				if strings.Contains(gomod, bad) {
					t.Errorf("go.mod names %q:\n%s", bad, gomod)
				}
			}
			if n := strings.Count(gomod, "\nreplace "); n != 2 {
				t.Errorf("go.mod has %d replace lines, want 2 (mcpgen and the adapter):\n%s", n, gomod)
			}
		})
	}
}

// blankImport is a program that links the adapter's package in.
func blankImport(dir string) string {
	return "package main\n\nimport _ \"github.com/mcpgen/mcpgen/adapters/" + dir + "\"\n\nfunc main() {}\n"
}

// readmeInstallBlocks returns the commands of each sh block of the
// README's "## Install in your module" section, comments dropped.
func readmeInstallBlocks(t *testing.T, readme string) [][]string {
	t.Helper()
	_, sec, ok := strings.Cut(string(read(t, readme)), "\n## Install in your module\n")
	if !ok {
		t.Fatal("README.md has no install section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var blocks [][]string
	for {
		_, rest, ok := strings.Cut(sec, "```sh\n")
		if !ok {
			break
		}
		block, after, ok := strings.Cut(rest, "```")
		if !ok {
			t.Fatal("README.md's install section has an sh block with no end")
		}
		sec = after
		var steps []string
		for _, line := range strings.Split(block, "\n") {
			line, _, _ = strings.Cut(line, "#")
			if line = strings.TrimSpace(line); line != "" {
				steps = append(steps, line)
			}
		}
		if len(steps) == 0 {
			t.Fatal("README.md's install section has an empty sh block")
		}
		blocks = append(blocks, steps)
	}
	if len(blocks) == 0 {
		t.Fatal("README.md's install section has no sh block")
	}
	return blocks
}
