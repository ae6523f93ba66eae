package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpgen/mcpgen/config"
	"github.com/mcpgen/mcpgen/drift"
	"github.com/mcpgen/mcpgen/gen"
	"github.com/mcpgen/mcpgen/manifest"
	"github.com/mcpgen/mcpgen/snapshot"
)

func init() {
	register(&command{
		name:    "check",
		summary: "compare live servers with their committed manifests and classify the drift",
		usage:   "mcpgen check [--config FILE] [--server ID]... [--fail-on breaking|any] [--json] [--update]",
		flags:   checkFlags,
	})
}

type checkOpts struct {
	proto   *protoFlags
	config  string
	servers []string
	timeout time.Duration
	failOn  string
	json    bool
	update  bool
	fs      *pflag.FlagSet
}

// serverDrift is one server's part of the report (also its JSON form).
type serverDrift struct {
	ID       string         `json:"id"`
	Manifest string         `json:"manifest"`
	Max      drift.Class    `json:"max"`
	Changes  []drift.Change `json:"changes"`
	Error    string         `json:"error,omitempty"`
	Updated  bool           `json:"updated,omitempty"`
}

func checkFlags(fs *pflag.FlagSet) func(context.Context, *env) error {
	o := &checkOpts{fs: fs, proto: addProtoFlags(fs)}
	fs.StringVar(&o.config, "config", config.DefaultFile, "config file")
	fs.StringArrayVar(&o.servers, "server", nil, "check only this server id (repeatable)")
	fs.DurationVar(&o.timeout, "timeout", snapshot.DefaultTimeout, "bound on each server's whole capture")
	fs.StringVar(&o.failOn, "fail-on", "breaking", "exit 1 on drift of this class or worse: breaking, or any")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON on stdout")
	fs.BoolVar(&o.update, "update", false, "accept the drift: rewrite the manifests of drifted servers (then run mcpgen generate)")
	return func(ctx context.Context, e *env) error {
		if err := o.proto.check(); err != nil {
			return err
		}
		if len(e.args) > 0 {
			return usagef("unexpected arguments: %s", strings.Join(e.args, " "))
		}
		failOn, err := drift.ParseClass(o.failOn)
		if err != nil || o.failOn == "compatible" {
			return usagef("--fail-on %q: want breaking or any", o.failOn)
		}
		if o.timeout <= 0 {
			return usagef("--timeout must be positive")
		}
		cfg, err := config.Load(o.config)
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		for _, id := range o.servers {
			if !slices.ContainsFunc(cfg.Servers, func(s *config.Server) bool { return s.ID == id }) {
				return usagef("no server %q in %s", id, o.config)
			}
		}
		var report []serverDrift
		for _, s := range cfg.Servers {
			if len(o.servers) > 0 && !slices.Contains(o.servers, s.ID) {
				continue
			}
			report = append(report, o.checkOne(ctx, s))
			if ctx.Err() != nil {
				return &exitError{code: exitUsage, err: errors.New("interrupted")}
			}
		}
		if o.json {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(map[string]any{"servers": report, "max": maxClass(report)}); err != nil {
				return err
			}
		} else {
			printDrift(e.stdout, report)
		}
		failed := 0
		for _, r := range report {
			if r.Error != "" {
				failed++
				if o.json { // the text report already shows it
					printError(e.stderr, errors.New(r.Error))
				}
			}
		}
		switch {
		case failed > 0:
			return &exitError{code: exitUsage, err: silentError}
		case maxClass(report) >= failOn && !o.update:
			return silentError
		}
		return nil
	}
}

func maxClass(r []serverDrift) drift.Class {
	m := drift.None
	for _, s := range r {
		m = max(m, s.Max)
	}
	return m
}

func (o *checkOpts) checkOne(ctx context.Context, s *config.Server) serverDrift {
	path := s.ManifestPath()
	r := serverDrift{ID: s.ID, Manifest: relSlash(path), Changes: []drift.Change{}}
	data, err := os.ReadFile(path)
	if err != nil {
		r.Error = fmt.Sprintf("server %q: no committed manifest to compare with (run mcpgen snapshot first): %v", s.ID, err)
		return r
	}
	old, err := manifest.Parse(relSlash(path), data)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	src, auth, err := serverSource(ctx, s)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	opts := o.proto.apply(s.Options())
	opts.Timeout = o.timeout
	opts.AllowEmpty = true // an emptied server is drift (every tool removed), not an error
	live, err := captureServer(ctx, src, opts, auth)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	changes := drift.Compare(old.Manifest, live)
	if ids := removedIdentifiers(s, relSlash(path), data, old.Manifest, live); len(ids) > 0 {
		// With the others of their object, in drift's order: by kind
		// (server, then tools), then name.
		rank := map[string]int{"server": 0, "tool": 1, "resource": 2, "resourceTemplate": 3, "prompt": 4}
		changes = append(changes, ids...)
		slices.SortStableFunc(changes, func(a, b drift.Change) int {
			return cmp.Or(rank[a.Kind]-rank[b.Kind], strings.Compare(a.Name, b.Name))
		})
	}
	if len(changes) > 0 {
		r.Changes = changes // else stays [], never null in JSON
	}
	r.Max = drift.Max(r.Changes)
	if o.update && len(r.Changes) > 0 {
		b, err := manifest.Encode(live)
		if err == nil {
			_, err = writeFile(path, b)
		}
		if err != nil {
			r.Error = fmt.Sprintf("server %q: writing the manifest: %v", s.ID, err)
			return r
		}
		r.Updated = true
	}
	return r
}

// removedIdentifiers generates, with the server's config, from the
// committed manifest and from the live listing, and reports as breaking
// each exported Go identifier the first declares and the second would not:
// code that uses it would no longer compile after check --update and
// generate. The identifiers of a removed tool are not listed (its removal
// is), nor the methods, constructors and constants of a removed type (the
// type is). Bindings that cannot be generated from the live listing at all
// are one breaking change. A committed manifest that does not generate is
// left to generate to report.
func removedIdentifiers(s *config.Server, name string, committed []byte, old, live *manifest.Manifest) []drift.Change {
	before, err := gen.Identifiers(serverGenConfig(s, name, committed))
	if err != nil {
		return nil
	}
	liveData, err := manifest.Encode(live)
	if err == nil {
		var after map[string]gen.Owner
		if after, err = gen.Identifiers(serverGenConfig(s, name, liveData)); err == nil {
			return identifierChanges(before, after, old, live)
		}
	}
	return []drift.Change{{Class: drift.Breaking, Kind: "server", Message: "the Go bindings cannot be generated from the live listing: " + err.Error()}}
}

func identifierChanges(before, after map[string]gen.Owner, old, live *manifest.Manifest) []drift.Change {
	kept := map[string]bool{}
	for _, e := range live.Tools {
		kept[e.Key] = true
	}
	gone := map[string]bool{}
	for _, e := range old.Tools {
		gone[e.Key] = !kept[e.Key]
	}
	var out []drift.Change
	for _, id := range slices.Sorted(maps.Keys(before)) {
		o := before[id]
		if _, ok := after[id]; ok || gone[o.Tool] {
			continue
		}
		if _, ok := after[o.Type]; o.Type != "" && !ok {
			continue // its type is reported
		}
		c := drift.Change{Class: drift.Breaking, Kind: "tool", Name: o.Tool, Message: fmt.Sprintf("Go identifier %s of tool %q would be removed", id, o.Tool)}
		if o.Tool == "" {
			c.Kind, c.Message = "server", fmt.Sprintf("Go identifier %s would be removed", id)
		}
		out = append(out, c)
	}
	return out
}

// printDrift writes the human report: per server, changes grouped by the
// object they concern, breaking ones first within each group.
func printDrift(w io.Writer, report []serverDrift) {
	for i, r := range report {
		if i > 0 {
			fmt.Fprintln(w)
		}
		switch {
		case r.Error != "":
			fmt.Fprintf(w, "%s: error: %s\n", r.ID, termText(r.Error, true))
			continue
		case len(r.Changes) == 0:
			fmt.Fprintf(w, "%s: no drift from %s\n", r.ID, r.Manifest)
			continue
		}
		nb := 0
		for _, c := range r.Changes {
			if c.Class == drift.Breaking {
				nb++
			}
		}
		fmt.Fprintf(w, "%s: %d %s from %s (%d breaking, %d compatible)\n", r.ID, len(r.Changes),
			plural(len(r.Changes), "change", "changes"), r.Manifest, nb, len(r.Changes)-nb)
		type group struct {
			title   string
			changes []drift.Change
		}
		var groups []*group
		byKey := map[string]*group{}
		for _, c := range r.Changes {
			k := c.Kind + "\x00" + c.Name
			g := byKey[k]
			if g == nil {
				title := c.Kind
				if c.Name != "" {
					title += " " + oneLine(c.Name) // the server's, as the pointer and message may be
				}
				g = &group{title: title}
				byKey[k] = g
				groups = append(groups, g)
			}
			g.changes = append(g.changes, c)
		}
		for _, g := range groups {
			fmt.Fprintf(w, "  %s\n", g.title)
			slices.SortStableFunc(g.changes, func(a, b drift.Change) int { return int(b.Class) - int(a.Class) })
			for _, c := range g.changes {
				where := ""
				if c.Pointer != "" {
					where = oneLine(c.Pointer) + ": "
				}
				fmt.Fprintf(w, "    %-10s %s%s\n", c.Class, where, oneLine(c.Message))
			}
		}
		if r.Updated {
			fmt.Fprintf(w, "  updated %s; run mcpgen generate to regenerate the bindings\n", r.Manifest)
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
