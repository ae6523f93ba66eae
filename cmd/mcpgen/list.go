package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/mcpgen/mcpgen/config"
	"github.com/mcpgen/mcpgen/gen"
	"github.com/mcpgen/mcpgen/manifest"
	"github.com/mcpgen/mcpgen/snapshot"
)

func init() {
	register(&command{
		name:    "list",
		summary: "list each tool with its Go binding, behaviour hints and output type",
		usage: "mcpgen list [--config FILE] [--live] [SERVER...]\n" +
			"       mcpgen list --manifest FILE\n" +
			"       mcpgen list (--stdio 'CMD ARGS' | --http URL | --sse URL)",
		flags: listFlags,
	})
}

type listOpts struct {
	proto            *protoFlags
	config           string
	manifest         string
	live             bool
	stdio, http, sse string
	headers, envs    []string
	timeout          time.Duration
	fs               *pflag.FlagSet
}

// listing is one server's tools as the generator binds them.
type listing struct {
	title string // "crm (mcp/crm.json, package crm)"
	tools []gen.ToolInfo
}

func listFlags(fs *pflag.FlagSet) func(context.Context, *env) error {
	o := &listOpts{fs: fs, proto: addProtoFlags(fs)}
	fs.StringVar(&o.config, "config", config.DefaultFile, "config file")
	fs.StringVar(&o.manifest, "manifest", "", "list one manifest (or tools/list result, or tool) instead of the config's")
	fs.BoolVar(&o.live, "live", false, "ask the config's servers instead of reading their manifests")
	fs.StringVar(&o.stdio, "stdio", "", "ad hoc: run this command line and speak stdio")
	fs.StringVar(&o.http, "http", "", "ad hoc: streamable HTTP endpoint URL")
	fs.StringVar(&o.sse, "sse", "", "ad hoc: SSE endpoint URL")
	fs.StringArrayVar(&o.headers, "header", nil, "ad hoc: HTTP header K=V (repeatable; V may hold ${VAR})")
	fs.StringArrayVar(&o.envs, "env", nil, "ad hoc: environment variable K=V for --stdio (repeatable)")
	fs.DurationVar(&o.timeout, "timeout", snapshot.DefaultTimeout, "with --live or ad hoc: bound on each server's capture")
	return func(ctx context.Context, e *env) error {
		if err := o.proto.check(); err != nil {
			return err
		}
		// The servers that could be listed are, even when others failed.
		ls, err := o.listings(ctx, e.args)
		writeListings(e.stdout, ls)
		return err
	}
}

func (o *listOpts) listings(ctx context.Context, args []string) ([]listing, error) {
	adhoc := o.stdio != "" || o.http != "" || o.sse != ""
	switch {
	case o.timeout <= 0:
		return nil, usagef("--timeout must be positive")
	case adhoc || o.manifest != "":
		if o.fs.Changed("config") || o.live || len(args) > 0 {
			return nil, usagef("--manifest, --stdio, --http and --sse list one server: no --config, --live or SERVER")
		}
	case len(o.headers) > 0 || len(o.envs) > 0:
		return nil, usagef("--header and --env need --stdio, --http or --sse")
	}
	if o.manifest != "" {
		if adhoc {
			return nil, usagef("--manifest does not combine with --stdio, --http or --sse")
		}
		data, err := os.ReadFile(o.manifest)
		if err != nil {
			return nil, err
		}
		name := filepath.ToSlash(filepath.Clean(o.manifest))
		l, err := describe(gen.Config{Inputs: []gen.Input{{Name: name, Data: data}}}, name)
		if err != nil {
			return nil, err
		}
		return []listing{l}, nil
	}
	if adhoc {
		s, err := adHocServer("server", o.stdio, o.http, o.sse, o.headers, o.envs)
		if err != nil {
			return nil, err
		}
		data, err := o.capture(ctx, s)
		if err != nil {
			return nil, err
		}
		l, err := describe(gen.Config{Inputs: []gen.Input{{Name: "live", Data: data}}}, "live server")
		if err != nil {
			return nil, err
		}
		return []listing{l}, nil
	}
	cfg, err := config.Load(o.config)
	if err != nil {
		return nil, err
	}
	for _, id := range args {
		if !slices.ContainsFunc(cfg.Servers, func(s *config.Server) bool { return s.ID == id }) {
			return nil, usagef("no server %q in %s", id, o.config)
		}
	}
	var out []listing
	var errs []error
	for _, s := range cfg.Servers {
		if len(args) > 0 && !slices.Contains(args, s.ID) {
			continue
		}
		var data []byte
		source := s.Manifest
		if o.live {
			data, err = o.capture(ctx, s)
			source = "live"
		} else if data, err = os.ReadFile(s.ManifestPath()); err != nil {
			err = fmt.Errorf("server %q: %w (run mcpgen snapshot first, or use --live)", s.ID, err)
		}
		if err == nil {
			err = checkServerTools(s, data)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		l, err := describe(serverGenConfig(s, source, data), fmt.Sprintf("%s (%s, package %s)", s.ID, source, s.Package))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, l)
	}
	return out, errors.Join(errs...)
}

// capture snapshots s live and returns its manifest.
func (o *listOpts) capture(ctx context.Context, s *config.Server) ([]byte, error) {
	src, auth, err := serverSource(ctx, s)
	if err != nil {
		return nil, err
	}
	opts := o.proto.apply(s.Options())
	opts.Timeout = o.timeout
	opts.AllowEmpty = true
	m, err := captureServer(ctx, src, opts, auth)
	if err != nil {
		return nil, err
	}
	return manifest.Encode(m)
}

func describe(c gen.Config, title string) (listing, error) {
	tools, err := gen.Describe(c)
	if err != nil {
		return listing{}, err
	}
	return listing{title: title, tools: tools}, nil
}

// writeListings prints each server's tools: the wire name, the Client
// method's signature, the hints and the identity argument. A hint the
// server did not send shows its default, marked with *, except the
// destructive and idempotent hints of a read-only tool, which do not apply
// (n/a).
func writeListings(w io.Writer, ls []listing) {
	defaults, notApplicable := false, false
	for i, l := range ls {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %d %s\n", l.title, len(l.tools), plural(len(l.tools), "tool", "tools"))
		// Names and pointers come from the server: one line each, controls
		// shown (termtext.go).
		width := 0
		for _, t := range l.tools {
			width = max(width, utf8.RuneCountInString(oneLine(t.Name)))
		}
		pad := strings.Repeat(" ", width+4)
		for _, t := range l.tools {
			out := "no typed output"
			if t.OutputType != "" {
				out = t.OutputType
			}
			name := oneLine(t.Name)
			fmt.Fprintf(w, "  %s%s  %s(ctx, %s) → %s\n", name, strings.Repeat(" ", width-utf8.RuneCountInString(name)), t.GoName, t.InputType, out)
			a := t.Annotations
			hint := func(name string, member string, v bool) string {
				// The destructive and idempotent hints, and so their
				// defaults, mean something only for a tool that is not
				// read-only.
				if a.ReadOnly && member != "readOnlyHint" && member != "openWorldHint" && slices.Contains(a.Defaulted, member) {
					notApplicable = true
					return name + ": n/a"
				}
				s := name + ": no"
				if v {
					s = name + ": yes"
				}
				if slices.Contains(a.Defaulted, member) {
					defaults = true
					s += "*"
				}
				return s
			}
			fmt.Fprintf(w, "%s%s  %s  %s  %s\n", pad,
				hint("read-only", "readOnlyHint", a.ReadOnly), hint("destructive", "destructiveHint", a.Destructive),
				hint("idempotent", "idempotentHint", a.Idempotent), hint("open-world", "openWorldHint", a.OpenWorld))
			if t.IdentityArgument != "" {
				fmt.Fprintf(w, "%sidentity argument %q, set by the runtime\n", pad, t.IdentityArgument)
			}
			for _, r := range t.Raw {
				fmt.Fprintf(w, "%sraw JSON: %s %s: %s\n", pad, strings.ToLower(r.Role), oneLine(r.Pointer), oneLine(r.Reason))
			}
		}
	}
	if defaults || notApplicable {
		fmt.Fprintln(w)
	}
	if defaults {
		fmt.Fprintln(w, "* not sent by the server: the specification's default")
	}
	if notApplicable {
		fmt.Fprintln(w, "n/a: not sent, and meaningful only for a tool that is not read-only")
	}
}
