package bindings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpgen/mcpgen/runtime/manager"
)

// The servers' ids, as in bindings/mcpgen.yaml and in the registry entries
// Register saves.
const (
	Everything         = "everything"
	Filesystem         = "filesystem"
	Memory             = "memory"
	SequentialThinking = "sequentialthinking"
	GitHub             = "github"
)

// NPMPackage is an npm release a binding was generated from.
type NPMPackage struct {
	Name    string // e.g. @modelcontextprotocol/server-memory
	Version string // the exact version pinned
}

// String is the package's install spec, name@version.
func (p NPMPackage) String() string { return p.Name + "@" + p.Version }

// The pinned releases of the npm servers (tools/npm/package.json pins the
// same versions for the tests).
var (
	EverythingPackage         = NPMPackage{"@modelcontextprotocol/server-everything", "2026.8.31"}
	FilesystemPackage         = NPMPackage{"@modelcontextprotocol/server-filesystem", "2026.8.31"}
	MemoryPackage             = NPMPackage{"@modelcontextprotocol/server-memory", "2026.8.31"}
	SequentialThinkingPackage = NPMPackage{"@modelcontextprotocol/server-sequential-thinking", "2026.8.31"}
)

// GitHubCommit is the github-mcp-server commit whose published tool
// listing bindings/github was generated from (three commits after
// v1.10.1).
const GitHubCommit = "64a49f34d076b6f5917dae1424521d43c7bcae84"

// GitHubCommand is the program Register starts the GitHub server with. It
// is not on the registry's default stdio allowlist: the operator allows it
// (manager.Policy.StdioCommands, or MCPGEN_STDIO_COMMANDS=github-mcp-server).
const GitHubCommand = "github-mcp-server"

// Options says which servers Register saves and how they may run. A server
// is registered only when its field asks for it; the zero value registers
// none.
type Options struct {
	// NodeModules is an absolute path to a node_modules directory where the
	// pinned npm releases are installed (each registered server's package
	// must be there, at its pinned version); the servers then run as
	// `node <NodeModules>/<package>/dist/index.js`, exactly the installed
	// code. Empty: they run as `npx --yes <package>@<version>`, which
	// downloads the pinned version into npm's cache on first use (checked
	// against the registry's integrity data, not against a lock file of
	// yours).
	NodeModules string

	// FilesystemDir registers the filesystem server, confined to this one
	// directory and what is below it: an absolute path to an existing
	// directory, not the file system's root. (The server follows the
	// client's roots instead when the client declares any; the mcpgo
	// connector declares none unless given WithRoots.)
	FilesystemDir string

	// MemoryFile registers the memory server, keeping its knowledge graph
	// in this file: an absolute path whose directory exists.
	MemoryFile string

	// SequentialThinking registers the sequential-thinking server.
	SequentialThinking bool

	// Everything registers the reference test server. It is off unless
	// asked for: its get-env tool returns the server's whole environment,
	// which the program's secrets may be part of.
	Everything bool

	// GitHubToken registers the GitHub server, started as GitHubCommand
	// with the token in GITHUB_PERSONAL_ACCESS_TOKEN.
	GitHubToken string
	// GitHubToolsets are the toolsets the GitHub server enables
	// (--toolsets; "all" for every one); empty: its defaults.
	GitHubToolsets []string
	// GitHubWrite lets the GitHub server offer its tools that write; without
	// it the server runs with --read-only and lists only read-only tools.
	GitHubWrite bool

	// AllowedAgents, when not empty, limits every entry to these agents.
	AllowedAgents []string
}

// toolsetPattern is a GitHub toolset name: the server's are lower-case
// words joined by '_'. Anything else could be read as another flag.
var toolsetPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Configs returns the registry entries Options asks for, sorted by id,
// without saving them. Every problem is reported, each naming its option.
func Configs(o Options) ([]manager.ServerConfig, error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("bindings.Options.%s: %s", field, fmt.Sprintf(format, args...)))
	}
	modsOK := true
	if o.NodeModules != "" {
		if msg := dirProblem(o.NodeModules); msg != "" {
			bad("NodeModules", "%s", msg)
			modsOK = false
		}
	}
	npm := func(p NPMPackage, args ...string) manager.Transport {
		if o.NodeModules == "" {
			return manager.Transport{Kind: manager.TransportStdio, Command: "npx", Args: append([]string{"--yes", p.String()}, args...)}
		}
		dir := filepath.Join(o.NodeModules, filepath.FromSlash(p.Name))
		script := filepath.Join(dir, "dist", "index.js")
		if modsOK {
			// The bindings were generated from the pinned release: another
			// version may list other tools.
			if v, err := installedVersion(dir); err != nil {
				bad("NodeModules", "%s is not installed there (npm install --save-exact %s): %v", p.Name, p, err)
			} else if v != p.Version {
				bad("NodeModules", "%s %s is installed there, but the bindings are of %s", p.Name, v, p.Version)
			} else if _, err := os.Stat(script); err != nil {
				bad("NodeModules", "%s has no dist/index.js there", p.Name)
			}
		}
		return manager.Transport{Kind: manager.TransportStdio, Command: "node", Args: append([]string{script}, args...)}
	}
	entry := func(id, name, desc string, t manager.Transport) manager.ServerConfig {
		return manager.ServerConfig{ID: id, Name: name, Description: desc, Transport: t, AllowedAgents: append([]string(nil), o.AllowedAgents...)}
	}

	var out []manager.ServerConfig
	if o.Everything {
		out = append(out, entry(Everything, "MCP reference server", "Tests every feature of the protocol.", npm(EverythingPackage, "stdio")))
	}
	if o.FilesystemDir != "" {
		if msg := dirProblem(o.FilesystemDir); msg != "" {
			bad("FilesystemDir", "%s", msg)
		} else if real, err := filepath.EvalSymlinks(o.FilesystemDir); err == nil && filepath.Dir(real) == real {
			// The server resolves links in its directories too.
			bad("FilesystemDir", "%q is the file system's root, which would confine nothing", o.FilesystemDir)
		}
		out = append(out, entry(Filesystem, "Filesystem", "Reads and writes files under one directory.",
			npm(FilesystemPackage, filepath.Clean(o.FilesystemDir))))
	}
	if o.MemoryFile != "" {
		switch {
		case !filepath.IsAbs(o.MemoryFile):
			bad("MemoryFile", "%q is not an absolute path", o.MemoryFile)
		case strings.HasSuffix(o.MemoryFile, string(filepath.Separator)):
			bad("MemoryFile", "%q names a directory, not a file", o.MemoryFile)
		default:
			if msg := dirProblem(filepath.Dir(o.MemoryFile)); msg != "" {
				bad("MemoryFile", "its directory: %s", msg)
			} else if fi, err := os.Stat(o.MemoryFile); err == nil && fi.IsDir() {
				bad("MemoryFile", "%q is a directory, not a file", o.MemoryFile)
			}
		}
		t := npm(MemoryPackage)
		t.Env = map[string]string{"MEMORY_FILE_PATH": filepath.Clean(o.MemoryFile)}
		out = append(out, entry(Memory, "Memory", "A knowledge graph kept in a local file.", t))
	}
	if o.SequentialThinking {
		out = append(out, entry(SequentialThinking, "Sequential thinking", "Structured, revisable step-by-step reasoning.", npm(SequentialThinkingPackage)))
	}
	if o.GitHubToken != "" {
		if strings.ContainsAny(o.GitHubToken, "\x00\r\n") {
			// The token itself is never quoted.
			bad("GitHubToken", "contains a NUL or line break")
		}
		args := []string{"stdio"}
		if !o.GitHubWrite {
			args = append(args, "--read-only")
		}
		if len(o.GitHubToolsets) > 0 {
			for i, ts := range o.GitHubToolsets {
				if !toolsetPattern.MatchString(ts) {
					bad("GitHubToolsets", "[%d] %q is not a toolset name (lower-case letters, digits and '_')", i, ts)
				}
			}
			args = append(args, "--toolsets", strings.Join(o.GitHubToolsets, ","))
		}
		out = append(out, entry(GitHub, "GitHub", "GitHub's MCP server: repositories, issues, pull requests and more.",
			manager.Transport{Kind: manager.TransportStdio, Command: GitHubCommand, Args: args,
				Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": o.GitHubToken}}))
	} else if o.GitHubWrite || len(o.GitHubToolsets) > 0 {
		bad("GitHubToken", "empty, so the GitHub options given have no server to apply to")
	}
	if len(out) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("bindings.Options asks for no server: set FilesystemDir, MemoryFile, SequentialThinking, Everything or GitHubToken"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// The registry's List returns entries by id; so does this.
	slices.SortFunc(out, func(a, b manager.ServerConfig) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Register saves the entries Options asks for into reg and returns them as
// stored (with the registry's defaults filled in). Every entry is first
// checked against the registry's policy, so an entry the policy refuses
// (GitHubCommand not allowlisted, stdio disabled) saves none of them; a
// store failing part-way may leave the earlier entries saved.
func Register(ctx context.Context, reg *manager.Registry, o Options) ([]manager.ServerConfig, error) {
	cfgs, err := Configs(o)
	if err != nil {
		return nil, err
	}
	p := reg.Policy()
	var errs []error
	for _, c := range cfgs {
		if _, err := p.Validate(ctx, c); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("bindings.Register: nothing saved: %w", errors.Join(errs...))
	}
	saved := make([]manager.ServerConfig, 0, len(cfgs))
	for _, c := range cfgs {
		s, err := reg.Save(ctx, c)
		if err != nil {
			return saved, fmt.Errorf("bindings.Register: saving %q: %w", c.ID, err)
		}
		saved = append(saved, s)
	}
	return saved, nil
}

// installedVersion reads the version of the npm package installed in dir.
func installedVersion(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", err
	}
	var p struct{ Version string }
	if err := json.Unmarshal(data, &p); err != nil {
		return "", fmt.Errorf("package.json: %w", err)
	}
	return p.Version, nil
}

// dirProblem says what keeps path from being an absolute path to an
// existing directory, or "".
func dirProblem(path string) string {
	if !filepath.IsAbs(path) {
		return fmt.Sprintf("%q is not an absolute path", path)
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Sprintf("%q: %v", path, err)
	case !fi.IsDir():
		return fmt.Sprintf("%q is not a directory", path)
	}
	return ""
}
