package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"io"
	"log/slog"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"github.com/spf13/pflag"

	"github.com/mcpgen/mcpgen/config"
	"github.com/mcpgen/mcpgen/manifest"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
	"github.com/mcpgen/mcpgen/snapshot"
)

func init() {
	register(&command{
		name:    "call",
		summary: "call one tool and print its result, for people exploring a server",
		usage: "mcpgen call [--config FILE] [--approve] [--task] SERVER TOOL ['{json args}' | -]\n" +
			"       mcpgen call (--stdio 'CMD ARGS' | --http URL | --sse URL) [--task] TOOL ['{json args}' | -]",
		flags: callFlags,
	})
}

type callOpts struct {
	proto            *protoFlags
	config           string
	stdio, http, sse string
	headers, envs    []string
	timeout          time.Duration
	noValidate       bool
	elicitDefaults   bool
	approve          bool
	task             bool
	fs               *pflag.FlagSet
}

func callFlags(fs *pflag.FlagSet) func(context.Context, *env) error {
	o := &callOpts{fs: fs, proto: addProtoFlags(fs)}
	fs.StringVar(&o.config, "config", config.DefaultFile, "config file (for SERVER)")
	fs.StringVar(&o.stdio, "stdio", "", "ad hoc: run this command line and speak stdio")
	fs.StringVar(&o.http, "http", "", "ad hoc: streamable HTTP endpoint URL")
	fs.StringVar(&o.sse, "sse", "", "ad hoc: SSE endpoint URL")
	fs.StringArrayVar(&o.headers, "header", nil, "ad hoc: HTTP header K=V (repeatable; V may hold ${VAR})")
	fs.StringArrayVar(&o.envs, "env", nil, "ad hoc: environment variable K=V for --stdio (repeatable)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "bound on the whole call")
	fs.BoolVar(&o.noValidate, "no-validate", false, "send the arguments without checking them against the tool's input schema")
	fs.BoolVar(&o.approve, "approve", false, "approve a call the config's gate holds (otherwise asked on a terminal, refused elsewhere)")
	fs.BoolVar(&o.elicitDefaults, "elicit-defaults", false, "answer the server's questions (elicitation) with their schema's defaults instead of asking")
	fs.BoolVar(&o.task, "task", false, "run the tool as a task: start it, print a line on stderr as its status changes, print its result (a tool that runs only as a task always is)")
	return func(ctx context.Context, e *env) error {
		if o.timeout <= 0 {
			return usagef("--timeout must be positive")
		}
		if err := o.proto.check(); err != nil {
			return err
		}
		adhoc := o.stdio != "" || o.http != "" || o.sse != ""
		args := e.args
		var s *config.Server
		var schemaFrom *manifest.Manifest
		switch {
		case adhoc:
			if len(args) < 1 || len(args) > 2 {
				return usagef("want TOOL and optional JSON arguments")
			}
			srv, err := adHocServer(adHocID(o.stdio, o.http, o.sse), o.stdio, o.http, o.sse, o.headers, o.envs)
			if err != nil {
				return err
			}
			s = srv
		default:
			if len(args) < 2 || len(args) > 3 {
				return usagef("want SERVER, TOOL and optional JSON arguments")
			}
			cfg, err := config.Load(o.config)
			if err != nil {
				return err
			}
			i := slices.IndexFunc(cfg.Servers, func(s *config.Server) bool { return s.ID == args[0] })
			if i < 0 {
				return usagef("no server %q in %s", args[0], o.config)
			}
			s, args = cfg.Servers[i], args[1:]
			// The committed manifest holds the schemas the generated code
			// validates with; prefer it so call checks what Go code checks.
			if data, err := os.ReadFile(s.ManifestPath()); err == nil {
				if f, err := manifest.Parse(relSlash(s.ManifestPath()), data); err == nil {
					schemaFrom = f.Manifest
				}
			}
		}
		tool := args[0]
		rawArgs, err := readArgs(args[1:], os.Stdin)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, o.timeout)
		defer cancel()
		src, auth, err := serverSource(ctx, s)
		if err != nil {
			return err
		}
		// Everything printed from here on may hold what the server sent,
		// and servers echo headers and arguments: every ${VAR} secret, and
		// every OAuth token the run holds by the time it prints, is
		// redacted from it.
		red := newRedactor(src.Secrets, src.LiveSecrets)

		opts := o.proto.apply(s.Options())
		opts.Timeout = o.timeout
		opts.AllowEmpty = true
		// One connection lists the tool (when no manifest has it) and calls
		// it: servers that count or key state by connection see one client.
		// The server's log messages and progress go to stderr, a line each
		// (serverlog.go).
		extra := []mcpgo.Option{mcpgo.WithLogger(slog.New(&serverLog{w: e.stderr, server: s.ID, red: red}))}
		switch {
		case o.elicitDefaults:
			extra = append(extra, mcpgo.WithElicitation(defaultsElicitation(e.stderr, s.ID), false))
		case isTerminal(os.Stdin) && len(args) > 1:
			// A person is there to answer (the arguments did not come on
			// stdin).
			extra = append(extra, mcpgo.WithElicitation(terminalElicitation(os.Stdin, e.stderr, s.ID), true))
		}
		sess := snapshot.Open(src, opts, append(extra, auth...)...)
		defer sess.Close()
		if !o.noValidate {
			if schemaFrom == nil || !hasTool(schemaFrom, tool) {
				live, err := sess.Capture(ctx)
				if err != nil {
					return redactedErr(red, err)
				}
				schemaFrom = live
			}
			if err := validateArgs(schemaFrom, s.ID, tool, rawArgs); err != nil {
				return redactedErr(red, err)
			}
		}

		// The config's gate, as the generated GateOptions apply it: a
		// person approves here, at the terminal or with --approve.
		if s.Gate != nil {
			if schemaFrom == nil || !hasTool(schemaFrom, tool) {
				live, err := sess.Capture(ctx)
				if err != nil {
					return redactedErr(red, err)
				}
				schemaFrom = live
			}
			if reason := gateReason(s, schemaFrom, tool); reason != "" && !o.approve {
				if !isTerminal(os.Stdin) || len(args) < 2 {
					return fmt.Errorf("tool %q of server %q needs approval (%s in %s); nothing was sent: give --approve, or run on a terminal to be asked", tool, s.ID, reason, o.config)
				}
				if err := askApproval(os.Stdin, e.stderr, s.ID, tool, reason, rawArgs); err != nil {
					return err
				}
			}
		}

		pctx := mcpruntime.WithProgress(ctx, progressLine(e.stderr, s.ID, red))
		var res *mcpruntime.Result
		if o.task || taskSupport(schemaFrom, tool) == "required" {
			res, err = runTask(pctx, sess.Conn(), e.stderr, s.ID, tool, rawArgs, red)
		} else {
			res, err = sess.Conn().CallTool(pctx, tool, rawArgs)
		}
		if err != nil {
			msg := red.Replace(err.Error())
			if pe := (*mcpruntime.ProtocolError)(nil); errors.As(err, &pe) {
				// The server's own words: one line, so they cannot pass for
				// more of mcpgen's.
				msg = oneLine(msg)
				if !o.task && pe.Code == -32601 && strings.Contains(pe.Message, "runs only as a task") {
					msg += " (run it with --task)"
				}
			}
			return errors.New(msg)
		}
		var out strings.Builder
		printResult(&out, res)
		_, _ = io.WriteString(e.stdout, red.Replace(out.String()))
		if res.IsError {
			fmt.Fprintf(e.stderr, "mcpgen: tool %q returned an error\n", tool)
			return silentError
		}
		return nil
	}
}

// adHocID names an ad hoc server in messages: after the URL's host, or
// the command's base name, as an id ([a-z][a-z0-9_]*).
func adHocID(stdio, httpURL, sseURL string) string {
	name := ""
	if u, err := url.Parse(httpURL + sseURL); err == nil && httpURL+sseURL != "" {
		name = u.Hostname()
		if name != "" && name[0] >= '0' && name[0] <= '9' {
			name = "host_" + name // an IP address
		}
	} else if words, err := splitCommand(stdio); err == nil && len(words) > 0 {
		name = filepath.Base(words[0])
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9' && b.Len() > 0:
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	id := strings.TrimSuffix(b.String(), "_")
	if id == "" || token.IsKeyword(id) {
		return "server"
	}
	return id
}

// adHocServer builds a config entry from the ad hoc flags shared with
// snapshot.
func adHocServer(id, stdio, httpURL, sseURL string, headers, envs []string) (*config.Server, error) {
	n := 0
	for _, v := range []string{stdio, httpURL, sseURL} {
		if v != "" {
			n++
		}
	}
	if n > 1 {
		return nil, usagef("--stdio, --http and --sse are exclusive")
	}
	a := config.AdHoc{ID: id}
	if stdio != "" {
		if len(headers) > 0 {
			return nil, usagef("--header needs --http or --sse")
		}
		words, err := splitCommand(stdio)
		if err != nil {
			return nil, usagef("--stdio: %v", err)
		}
		if len(words) == 0 {
			return nil, usagef("--stdio: empty command line")
		}
		a.Transport, a.Command, a.Args = snapshot.Stdio, words[0], words[1:]
		a.Env = map[string]string{}
		for _, kv := range envs {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, usagef("--env %q: want K=V", kv)
			}
			a.Env[k] = v
		}
	} else {
		if len(envs) > 0 {
			return nil, usagef("--env needs --stdio")
		}
		a.Transport, a.URL = snapshot.HTTP, httpURL
		if sseURL != "" {
			a.Transport, a.URL = snapshot.SSE, sseURL
		}
		a.Headers = map[string]string{}
		for _, kv := range headers {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, usagef("--header %q: want K=V", kv)
			}
			a.Headers[k] = v
		}
	}
	s, err := a.Server()
	if err != nil {
		return nil, usagef("%v", err)
	}
	return s, nil
}

// secretPairs are the replacements that redact secrets: each value as is
// and as JSON escapes it (structured content is printed as the server
// encoded it), longest first so a secret holding another goes whole.
func secretPairs(secrets []string) []string {
	var forms []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		forms = append(forms, s)
		if b, err := json.Marshal(s); err == nil {
			if esc := string(b[1 : len(b)-1]); esc != s {
				forms = append(forms, esc)
			}
		}
	}
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	var out []string
	for _, f := range forms {
		out = append(out, f, "[redacted]")
	}
	return out
}

// replacer redacts text: a *strings.Replacer or a *redactor.
type replacer interface{ Replace(string) string }

// redactor redacts fixed secrets and those a live source holds when it
// is used (an OAuth client's tokens, renewed during the run).
type redactor struct {
	fixed *strings.Replacer
	base  []string
	live  func() []string
}

func newRedactor(secrets []string, live func() []string) *redactor {
	return &redactor{fixed: strings.NewReplacer(secretPairs(secrets)...), base: secrets, live: live}
}

func (r *redactor) Replace(s string) string {
	if r.live == nil {
		return r.fixed.Replace(s)
	}
	return strings.NewReplacer(secretPairs(append(slices.Clone(r.base), r.live()...))...).Replace(s)
}

// redactedErr returns err, or its text redacted when it holds a secret.
func redactedErr(red replacer, err error) error {
	if msg := err.Error(); red.Replace(msg) != msg {
		return errors.New(red.Replace(msg))
	}
	return err
}

func readArgs(args []string, stdin io.Reader) (json.RawMessage, error) {
	raw := []byte("{}")
	if len(args) == 1 {
		raw = []byte(args[0])
		if args[0] == "-" {
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, err
			}
			raw = b
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, usagef("arguments must be a JSON object, like '{\"id\": \"D-1\"}'")
	}
	return bytes.TrimSpace(raw), nil
}

func hasTool(m *manifest.Manifest, name string) bool {
	return slices.ContainsFunc(m.Tools, func(e manifest.Entry) bool { return e.Key == name })
}

// validateArgs checks args against the tool's input schema and lists every
// violation with its JSON Pointer, the way generated validators report.
func validateArgs(m *manifest.Manifest, server, tool string, args json.RawMessage) error {
	i := slices.IndexFunc(m.Tools, func(e manifest.Entry) bool { return e.Key == tool })
	if i < 0 {
		var names []string
		for _, e := range m.Tools {
			names = append(names, e.Key)
		}
		if len(names) == 0 {
			return fmt.Errorf("server %q has no tool %q; it offers no tools", server, tool)
		}
		return fmt.Errorf("server %q has no tool %q; it offers %s", server, tool, strings.Join(names, ", "))
	}
	var t struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(m.Tools[i].Raw, &t); err != nil || len(t.InputSchema) == 0 {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.InputSchema))
	if err != nil {
		return nil
	}
	c := jsonschema.NewCompiler()
	const url = "mcpgen:///input.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil
	}
	sch, err := c.Compile(url)
	if err != nil {
		// A schema the validator cannot compile (a remote $ref, a pattern
		// RE2 rejects) is the server's problem; let the server judge.
		return nil
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return usagef("arguments: %v", err)
	}
	err = sch.Validate(inst)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var vs []mcpruntime.Violation
	collectViolations(*ve.DetailedOutput(), &vs)
	if len(vs) == 0 {
		vs = append(vs, mcpruntime.Violation{Message: ve.Error()})
	}
	return &mcpruntime.ValidationError{Subject: tool + " arguments (nothing was sent)", Violations: vs}
}

func collectViolations(u jsonschema.OutputUnit, out *[]mcpruntime.Violation) {
	if u.Error != nil && len(u.Errors) == 0 {
		*out = append(*out, runtimeWording(u.InstanceLocation, u.Error)...)
	}
	for _, e := range u.Errors {
		collectViolations(e, out)
	}
}

// printResult shows a result to a person: structured content as indented
// JSON, text as is, other blocks as one descriptive line each.
func printResult(w io.Writer, r *mcpruntime.Result) {
	if r.HasStructuredContent() {
		var b bytes.Buffer
		if json.Indent(&b, r.StructuredContent, "", "  ") == nil {
			fmt.Fprintln(w, b.String())
			return
		}
	}
	for _, c := range r.Content {
		if c.Type == "text" {
			fmt.Fprintln(w, strings.TrimRight(c.Text, "\n"))
			continue
		}
		fmt.Fprintln(w, c.Placeholder())
	}
}

// runtimeWording phrases a schema violation the way generated validators
// and decoders do (expected string, found number; missing required member
// "x"), so a person trying a tool here and a program calling it read the
// same words. Kinds the runtime has no wording for keep the validator's.
func runtimeWording(ptr string, e *jsonschema.OutputError) []mcpruntime.Violation {
	one := func(msg string) []mcpruntime.Violation { return []mcpruntime.Violation{{Pointer: ptr, Message: msg}} }
	chars := func(n int) string {
		if n == 1 {
			return "1 character"
		}
		return fmt.Sprintf("%d characters", n)
	}
	items := func(n int) string {
		if n == 1 {
			return "1 item"
		}
		return fmt.Sprintf("%d items", n)
	}
	num := func(r *big.Rat) string { return strings.TrimSuffix(r.FloatString(10), ".0000000000") }
	switch k := e.Kind.(type) {
	case *kind.Type:
		return one("expected " + strings.Join(k.Want, " or ") + ", found " + k.Got)
	case *kind.Required:
		var vs []mcpruntime.Violation
		for _, m := range k.Missing {
			vs = append(vs, mcpruntime.Violation{Pointer: ptr, Message: "missing required member " + strconv.Quote(m)})
		}
		return vs
	case *kind.AdditionalProperties:
		var vs []mcpruntime.Violation
		for _, m := range k.Properties {
			vs = append(vs, mcpruntime.Violation{Pointer: ptr + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(m), Message: "unknown member " + strconv.Quote(m) + " is not allowed"})
		}
		return vs
	case *kind.Enum:
		var lits []string
		for _, w := range k.Want {
			b, _ := json.Marshal(w)
			lits = append(lits, string(b))
		}
		return one("must be one of " + strings.Join(lits, ", "))
	case *kind.Const:
		b, _ := json.Marshal(k.Want)
		return one("must be " + string(b))
	case *kind.MinLength:
		return one("must be at least " + chars(k.Want) + " long")
	case *kind.MaxLength:
		return one("must be at most " + chars(k.Want) + " long")
	case *kind.Pattern:
		return one("must match the pattern " + strconv.Quote(k.Want))
	case *kind.MinItems:
		return one("must have at least " + items(k.Want))
	case *kind.MaxItems:
		return one("must have at most " + items(k.Want))
	case *kind.Minimum:
		return one("must be at least " + num(k.Want))
	case *kind.Maximum:
		return one("must be at most " + num(k.Want))
	case *kind.ExclusiveMinimum:
		return one("must be greater than " + num(k.Want))
	case *kind.ExclusiveMaximum:
		return one("must be less than " + num(k.Want))
	case *kind.MultipleOf:
		return one("must be a multiple of " + num(k.Want))
	}
	return one(e.String())
}
