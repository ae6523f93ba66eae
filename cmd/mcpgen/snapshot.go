package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpgen/mcpgen/config"
	"github.com/mcpgen/mcpgen/manifest"
	"github.com/mcpgen/mcpgen/snapshot"
)

func init() {
	register(&command{
		name:    "snapshot",
		summary: "capture live MCP servers into manifests",
		usage: "mcpgen snapshot [--config FILE] [--server ID]...\n" +
			"       mcpgen snapshot (--stdio 'CMD ARGS' | --http URL | --sse URL) --id NAME [-o FILE]",
		flags: snapshotFlags,
	})
}

type snapshotOpts struct {
	config     string
	servers    []string
	timeout    time.Duration
	allowEmpty bool
	quiet      bool
	// ad hoc form
	stdio, http, sse string
	headers, envs    []string
	id, output       string

	fs    *pflag.FlagSet // to ask which flags were given
	proto *protoFlags
}

func snapshotFlags(fs *pflag.FlagSet) func(context.Context, *env) error {
	o := &snapshotOpts{fs: fs, proto: addProtoFlags(fs)}
	fs.StringVar(&o.config, "config", config.DefaultFile, "config file")
	fs.StringArrayVar(&o.servers, "server", nil, "snapshot only this server id (repeatable)")
	fs.DurationVar(&o.timeout, "timeout", snapshot.DefaultTimeout, "bound on each server's whole capture")
	fs.BoolVar(&o.allowEmpty, "allow-empty", false, "accept a server that lists no tools")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines on stderr")
	fs.StringVar(&o.stdio, "stdio", "", "ad hoc: run this command line (split like a shell) and speak stdio")
	fs.StringVar(&o.http, "http", "", "ad hoc: streamable HTTP endpoint URL")
	fs.StringVar(&o.sse, "sse", "", "ad hoc: SSE endpoint URL")
	fs.StringArrayVar(&o.headers, "header", nil, "ad hoc: HTTP header K=V (repeatable; V may hold ${VAR})")
	fs.StringArrayVar(&o.envs, "env", nil, "ad hoc: environment variable K=V for --stdio (repeatable; V may hold ${VAR})")
	fs.StringVar(&o.id, "id", "", "ad hoc: server id written into the manifest")
	fs.StringVarP(&o.output, "output", "o", "", "ad hoc: manifest file (default mcp/<id>.json; - for stdout)")
	return func(ctx context.Context, e *env) error {
		if len(e.args) > 0 {
			return usagef("unexpected arguments: %s", strings.Join(e.args, " "))
		}
		if o.timeout <= 0 {
			return usagef("--timeout must be positive")
		}
		if err := o.proto.check(); err != nil {
			return err
		}
		var adhoc []string
		for name, v := range map[string]string{"--stdio": o.stdio, "--http": o.http, "--sse": o.sse} {
			if v != "" {
				adhoc = append(adhoc, name)
			}
		}
		slices.Sort(adhoc)
		if len(adhoc) > 1 {
			return usagef("%s are exclusive: give one server", strings.Join(adhoc, " and "))
		}
		if len(adhoc) == 1 {
			return o.runAdHoc(ctx, e)
		}
		for _, f := range []string{"header", "env", "id", "output"} {
			if o.fs.Changed(f) {
				return usagef("--%s needs --stdio, --http or --sse", f)
			}
		}
		return o.runConfig(ctx, e)
	}
}

func (o *snapshotOpts) options(s *config.Server) snapshot.Options {
	opts := o.proto.apply(s.Options())
	opts.Timeout = o.timeout
	opts.AllowEmpty = o.allowEmpty
	return opts
}

// job is one server to capture and where its manifest goes.
type job struct {
	server *config.Server
	path   string // "-" for stdout
}

func (o *snapshotOpts) runConfig(ctx context.Context, e *env) error {
	cfg, err := config.Load(o.config)
	if err != nil {
		if os.IsNotExist(err) && !o.fs.Changed("config") {
			return fmt.Errorf("no %s here: write one (see docs/config.md) or use the ad hoc form, like `mcpgen snapshot --stdio 'my-server' --id my`", config.DefaultFile)
		}
		return err
	}
	var jobs []job
	for _, id := range o.servers {
		if !slices.ContainsFunc(cfg.Servers, func(s *config.Server) bool { return s.ID == id }) {
			return usagef("no server %q in %s", id, o.config)
		}
	}
	for _, s := range cfg.Servers {
		if len(o.servers) == 0 || slices.Contains(o.servers, s.ID) {
			jobs = append(jobs, job{server: s, path: s.ManifestPath()})
		}
	}
	return o.capture(ctx, e, jobs)
}

func (o *snapshotOpts) runAdHoc(ctx context.Context, e *env) error {
	if o.id == "" {
		return usagef("--id is required with --stdio, --http or --sse")
	}
	if o.fs.Changed("config") || len(o.servers) > 0 {
		return usagef("--config and --server do not combine with --stdio, --http or --sse")
	}
	s, err := adHocServer(o.id, o.stdio, o.http, o.sse, o.headers, o.envs)
	if err != nil {
		return err
	}
	out := o.output
	if out == "" {
		out = s.ManifestPath()
	}
	return o.capture(ctx, e, []job{{server: s, path: out}})
}

// capture snapshots each job in turn. A failing server is reported and the
// others still run; its manifest on disk is left as it was.
func (o *snapshotOpts) capture(ctx context.Context, e *env, jobs []job) error {
	failed := 0
	for _, j := range jobs {
		if err := o.one(ctx, e, j); err != nil {
			failed++
			printError(e.stderr, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted")
	case failed == 1 && len(jobs) == 1:
		return silentError
	case failed > 0:
		fmt.Fprintf(e.stderr, "mcpgen: %d of %d servers failed; their manifests were not changed\n", failed, len(jobs))
		return silentError
	}
	return nil
}

func (o *snapshotOpts) one(ctx context.Context, e *env, j job) error {
	s := j.server
	src, auth, err := serverSource(ctx, s)
	if err != nil {
		return err
	}
	start := time.Now()
	m, err := captureServer(ctx, src, o.options(s), auth)
	if err != nil {
		return err
	}
	b, err := manifest.Encode(m)
	if err != nil {
		return fmt.Errorf("server %q: encoding the manifest: %w", s.ID, err)
	}
	state := "unchanged"
	if j.path == "-" {
		if _, err := e.data.Write(b); err != nil {
			return err
		}
		state = "written to stdout"
	} else {
		wrote, err := writeFile(j.path, b)
		if err != nil {
			return fmt.Errorf("server %q: writing the manifest: %w", s.ID, err)
		}
		if wrote {
			state = "wrote " + filepath.ToSlash(j.path)
		}
	}
	if !o.quiet {
		fmt.Fprintf(e.stderr, "%s: protocol %s, %d tools, %d resources, %d templates, %d prompts, %s (%s)\n",
			s.ID, oneLine(m.ProtocolVersion), len(m.Tools), len(m.Resources), len(m.ResourceTemplates), len(m.Prompts),
			time.Since(start).Round(time.Millisecond), state)
	}
	return nil
}
