package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"github.com/spf13/pflag"

	"github.com/mcpgen/mcpgen/config"
	"github.com/mcpgen/mcpgen/templates"
)

func init() {
	register(&command{
		name:    "init",
		summary: "scaffold a config, a go:generate file and a README in this module",
		usage:   "mcpgen init [--add] --id NAME (--stdio 'CMD ARGS' | --http URL | --sse URL) [--out DIR] [--package NAME]",
		flags:   initFlags,
	})
}

// initParams feed the templates in templates/init.
type initParams struct {
	ID, Package, Transport string
	Command                string
	Args                   []string
	URL                    string
	Config                 string // config path, slash-separated, relative to the working directory
	Manifest               string // relative to the config's directory
	Out                    string // relative to the config's directory
	ConfigFromOut          string // the config as seen from Out
	ManifestFromOut        string
	Generate               string // how go:generate runs mcpgen
}

var idPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func initFlags(set *pflag.FlagSet) func(context.Context, *env) error {
	p := &initParams{}
	var stdio, httpURL, sseURL, gen string
	var add bool
	set.BoolVar(&add, "add", false, "add the server to the existing mcpgen.yaml instead of creating one")
	set.StringVar(&p.ID, "id", "", "server id (lower case, Go-package-friendly)")
	set.StringVar(&stdio, "stdio", "", "the server's command line (split like a shell)")
	set.StringVar(&httpURL, "http", "", "the server's streamable HTTP endpoint")
	set.StringVar(&sseURL, "sse", "", "the server's SSE endpoint")
	set.StringVar(&p.Out, "out", "", "directory of the generated package (default: the id)")
	set.StringVarP(&p.Package, "package", "p", "", "Go package name of the bindings (default: the id)")
	set.StringVar(&gen, "generate-with", "go tool mcpgen", "how the go:generate line runs mcpgen")
	return func(_ context.Context, e *env) error {
		if len(e.args) > 0 {
			return usagef("unexpected arguments: %s", strings.Join(e.args, " "))
		}
		if !idPattern.MatchString(p.ID) {
			return usagef("--id %q must match %s", p.ID, idPattern)
		}
		n := 0
		for _, v := range []string{stdio, httpURL, sseURL} {
			if v != "" {
				n++
			}
		}
		if n != 1 {
			return usagef("give exactly one of --stdio, --http or --sse")
		}
		switch {
		case stdio != "":
			words, err := splitCommand(stdio)
			if err != nil || len(words) == 0 {
				return usagef("--stdio: want a command line")
			}
			p.Transport, p.Command, p.Args = "stdio", words[0], words[1:]
		case httpURL != "":
			p.Transport, p.URL = "http", httpURL
		default:
			p.Transport, p.URL = "sse", sseURL
		}
		if p.Package == "" {
			p.Package = p.ID
		}
		if !validPackage(p.Package) {
			return usagef("--package %q is not a Go package name", p.Package)
		}
		if p.Out == "" {
			p.Out = p.ID
		}
		p.Out = path.Clean(filepath.ToSlash(p.Out))
		if path.IsAbs(p.Out) || p.Out == "." || strings.HasPrefix(p.Out, "../") {
			return usagef("--out %q must be a directory inside this module", p.Out)
		}
		p.Generate = gen
		p.Config = config.DefaultFile
		p.Manifest = "mcp/" + p.ID + ".json"
		up := strings.Repeat("../", strings.Count(p.Out, "/")+1)
		p.ConfigFromOut = up + p.Config
		p.ManifestFromOut = up + p.Manifest

		if _, err := os.Stat("go.mod"); err != nil {
			return errors.New("no go.mod here: run mcpgen init at the root of a Go module (go mod init first)")
		}
		files, err := renderInit(p)
		if err != nil {
			return err
		}
		if add {
			if files[0], err = addServer(p); err != nil {
				return err
			}
		}
		// Refuse before writing anything.
		var exist []string
		for i, f := range files {
			if add && i == 0 {
				continue // the config, which --add extends
			}
			if _, err := os.Stat(f.path); err == nil {
				exist = append(exist, f.path)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		if len(exist) > 0 {
			hint := ""
			if !add && exist[0] == p.Config {
				hint = " (to add a server to it: mcpgen init --add)"
			}
			return fmt.Errorf("refusing to overwrite %s%s", strings.Join(exist, ", "), hint)
		}
		for _, f := range files {
			if _, err := writeFile(filepath.FromSlash(f.path), f.data); err != nil {
				return err
			}
			if add && f.path == p.Config {
				fmt.Fprintf(e.stderr, "added server %q to %s\n", p.ID, f.path)
			} else {
				fmt.Fprintf(e.stderr, "wrote %s\n", f.path)
			}
		}
		fmt.Fprintf(e.stderr, "next: mcpgen snapshot, then go generate ./%s/...\n", p.Out)
		return nil
	}
}

var initFuncs = template.FuncMap{
	// yaml quotes a scalar: a JSON string is a valid YAML flow scalar.
	"yaml": func(s string) string { b, _ := json.Marshal(s); return string(b) },
}

type scaffold struct {
	path string
	data []byte
}

func renderInit(p *initParams) ([]scaffold, error) {
	funcs := initFuncs
	var out []scaffold
	for _, f := range []struct{ tmpl, path string }{
		{"init/mcpgen.yaml.tmpl", p.Config}, // includes server.yaml.tmpl
		{"init/doc.go.tmpl", p.Out + "/doc.go"},
		{"init/README.md.tmpl", p.Out + "/README.md"},
	} {
		t, err := template.New(path.Base(f.tmpl)).Funcs(funcs).ParseFS(templates.FS, f.tmpl, "init/server.yaml.tmpl")
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, p); err != nil {
			return nil, err
		}
		out = append(out, scaffold{path: f.path, data: b.Bytes()})
	}
	return out, nil
}

// addServer returns the existing config with p's server entry appended,
// refusing (and so writing nothing) when the config does not load, already
// has the id, or would not load with the entry added.
func addServer(p *initParams) (scaffold, error) {
	data, err := os.ReadFile(p.Config)
	if errors.Is(err, fs.ErrNotExist) {
		return scaffold{}, fmt.Errorf("--add: no %s here to add to (run mcpgen init without --add to create it)", p.Config)
	} else if err != nil {
		return scaffold{}, err
	}
	cfg, err := config.Parse(p.Config, data)
	if err != nil {
		return scaffold{}, fmt.Errorf("--add: fix %s first:\n%w", p.Config, err)
	}
	for _, s := range cfg.Servers {
		if s.ID == p.ID {
			return scaffold{}, fmt.Errorf("--add: %s: server %q is already configured", s.Pos, p.ID)
		}
	}
	t, err := template.New("server.yaml.tmpl").Funcs(initFuncs).ParseFS(templates.FS, "init/server.yaml.tmpl")
	if err != nil {
		return scaffold{}, err
	}
	var entry bytes.Buffer
	if err := t.Execute(&entry, p); err != nil {
		return scaffold{}, err
	}
	out, err := config.AppendServer(p.Config, data, entry.Bytes())
	if err != nil {
		return scaffold{}, fmt.Errorf("--add: %w", err)
	}
	if _, err := config.Parse(p.Config, out); err != nil {
		return scaffold{}, fmt.Errorf("--add: %s with server %q added would not load:\n%w", p.Config, p.ID, err)
	}
	return scaffold{path: p.Config, data: out}, nil
}
