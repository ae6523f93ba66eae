// Package config reads mcpgen's config file (mcpgen.yaml): which MCP servers
// to snapshot, how to reach them, which tools to keep, and how to name and
// place what is generated from them. Decoding is strict: an unknown key, a
// value of the wrong type or a missing required key is an error positioned
// at file:line:col. Secrets appear only as ${VAR} references, expanded at
// connect time by Server.Source. See docs/config.md.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mcpgen/mcpgen/snapshot"
)

// Version is the config format this package reads.
const Version = 1

// DefaultFile is the config file name commands look for.
const DefaultFile = "mcpgen.yaml"

// Config is a decoded config file.
type Config struct {
	// File is the path the config was read from, as given (used in errors).
	File string
	// Dir is the directory relative paths in the config are resolved
	// against: the config file's directory.
	Dir     string
	Version int
	Servers []*Server
}

// Server is one configured MCP server.
type Server struct {
	ID        string
	Transport snapshot.Transport
	Stdio     *Stdio  // set when Transport is stdio
	Remote    *Remote // set when Transport is http or sse
	Tools     Tools
	// Manifest is the manifest path, slash-separated and relative to the
	// config's directory (default mcp/<id>.json).
	Manifest string
	// Package is the Go package name of the generated code (default: ID).
	Package string
	// Out is the output directory of the generated code, slash-separated
	// and relative to the config's directory (default: ID).
	Out string
	// InputExtras gives every open input object of the generated code an
	// AdditionalProperties field (key inputExtras; default false).
	InputExtras bool
	// KeepShapesApart gives structurally identical types a declaration
	// each (key keepShapesApart; default false: one type, the other names
	// aliases of it).
	KeepShapesApart bool
	// CheckFormats makes generated Validate methods check the formats
	// date, date-time, email, uri and uuid (key checkFormats).
	CheckFormats bool
	// Names pins Go identifiers (key names): the key is
	// "<tool>#<JSON Pointer within the tool object>", the pointer under
	// /inputSchema or /outputSchema (a type, field, enum constant or union
	// variant), or "*#<pointer>" for that pointer in every tool that has
	// it; the value is an exported Go identifier. The schema a model is
	// shown does not change.
	Names map[string]string
	// NamesPos is where each Names key is written.
	NamesPos map[string]Pos
	Identity *Identity // nil when not configured
	Gate     *Gate     // nil when not configured
	// Auth is the server's OAuth client configuration (nil: none).
	Auth *Auth
	// Resources configures the generated resource accessors.
	Resources Resources
	// ProtocolVersion pins the MCP protocol version mcpgen speaks to the
	// server ("" negotiates the newest both sides speak).
	ProtocolVersion string
	// Capabilities are the client capabilities declared while capturing
	// (sampling, elicitation, roots), so the manifest holds what a client
	// with them is offered: servers may list some tools only to such
	// clients.
	Capabilities []string
	// Pos is where the server's entry starts in the config file.
	Pos Pos

	dir  string // the config's directory
	file string
	path string // servers[i], for error paths
}

// Pos is a position in the config file.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Stdio runs the server as a subprocess.
type Stdio struct {
	Command string
	Args    []string
	// Env is added to the inherited environment, sorted by key. Values may
	// hold ${VAR} references.
	Env []EnvVar
	// Dir is the working directory, slash-separated and relative to the
	// config's directory ("" means the config's directory).
	Dir string
}

// EnvVar is one environment entry; Value is unexpanded.
type EnvVar struct {
	Name, Value string
	Pos         Pos
}

// Remote reaches a server over streamable HTTP or SSE. URL and header
// values are unexpanded and may hold ${VAR} references.
type Remote struct {
	URL     string
	URLPos  Pos
	Headers []Header // sorted by name
}

// Header is one HTTP header; Value is unexpanded.
type Header struct {
	Name, Value string
	Pos         Pos
}

// Tools filters and adjusts the server's tools.
type Tools struct {
	// Include and Exclude are path.Match globs on wire names. An empty
	// Include keeps every tool; Exclude wins over Include.
	Include, Exclude []string
	// Rename maps a wire name to the bare name used in generated code,
	// e.g. "crm-perplexity_research" → "perplexity_research".
	Rename map[string]string
	// RenamePos is where each Rename key is written.
	RenamePos map[string]Pos
	// Override replaces a tool's schemas, for servers that publish wrong
	// ones. Keyed by wire name.
	Override map[string]Override
}

// Override holds replacement schemas as JSON (nil when not overridden).
type Override struct {
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Pos          Pos
}

// Resources configures the accessors generated for resources and resource
// templates.
type Resources struct {
	// Bind maps a resource's uri, or a template's uriTemplate, exactly as
	// the server lists it, to its binding.
	Bind map[string]ResourceBind
}

// ResourceBind binds one resource or template: Schema (JSON, nil when
// unset) makes the accessor decode the content (application/json) into a
// generated type; GoName pins the Go name its declarations are built from;
// Tool (or a ToolName) generates a reader a language model can call, named
// ToolName (default read_<name>).
type ResourceBind struct {
	Schema   json.RawMessage
	GoName   string
	Tool     bool
	ToolName string
	Pos      Pos
}

// Identity names the tool argument that carries the caller's identity.
type Identity struct {
	Argument string
	Pos      Pos
}

// Gate policies.
const (
	GateAnnotations = "annotations" // ask before tools not annotated read-only
	GateAlways      = "always"      // always ask
	GateNever       = "never"       // never ask
)

// Gate says which tool calls need approval.
type Gate struct {
	Default string            // one of the Gate* policies (default annotations)
	Tools   map[string]string // per wire name
	ToolPos map[string]Pos    // where each Tools key is written
	Pos     Pos
}

// Keep reports whether the tool named name passes the server's filters.
func (s *Server) Keep(name string) bool {
	return snapshot.Keep(name, s.Tools.Include, s.Tools.Exclude)
}

// ManifestPath returns the manifest's path on this machine.
func (s *Server) ManifestPath() string {
	return filepath.Join(s.dir, filepath.FromSlash(s.Manifest))
}

// OutDir returns the generated code's directory on this machine.
func (s *Server) OutDir() string {
	return filepath.Join(s.dir, filepath.FromSlash(s.Out))
}

// Options returns the capture options the config sets for this server.
func (s *Server) Options() snapshot.Options {
	return snapshot.Options{Include: s.Tools.Include, Exclude: s.Tools.Exclude, ProtocolVersion: s.ProtocolVersion,
		Capabilities: s.Capabilities}
}

// Load reads and decodes the config file at file.
func Load(file string) (*Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Parse(file, data)
}

var (
	idRE       = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerRE   = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
)

var (
	topKeys    = []string{"version", "servers"}
	serverKeys = []string{"id", "stdio", "http", "sse", "tools", "manifest", "package", "out", "identity", "gate", "resources",
		"inputExtras", "keepShapesApart", "checkFormats", "names", "protocolVersion", "capabilities", "auth"}
	resourceKeys = []string{"bind"}
	bindKeys     = []string{"schema", "goName", "tool", "toolName"}
	stdioKeys    = []string{"command", "args", "env", "dir"}
	remoteKeys   = []string{"url", "headers"}
	toolsKeys    = []string{"include", "exclude", "rename", "override"}
	overrideKeys = []string{"inputSchema", "outputSchema"}
	identityKeys = []string{"argument"}
	gateKeys     = []string{"default", "tools"}
	gatePolicies = []string{GateAnnotations, GateAlways, GateNever}
)

// Parse decodes a config file's contents. name is the file's path, used in
// error positions and to resolve relative paths. Every problem found is
// reported, each as an *Error, sorted by position.
func Parse(name string, data []byte) (*Config, error) {
	d := &decoder{file: name}
	cfg := &Config{File: name, Dir: filepath.Dir(name)}
	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Msg: "empty config: expected a mapping with version and servers"}
		}
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: name, Line: extra.Line, Col: extra.Column, Msg: "a second YAML document; the config must be a single document"}
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: name, Msg: "empty config: expected a mapping with version and servers"}
	}
	root := doc.Content[0]
	if a := findAlias(root); a != nil {
		return nil, &Error{File: name, Line: a.Line, Col: a.Column, Msg: "YAML aliases are not supported; repeat the value"}
	}
	top := d.mapping(root, "", topKeys)
	if root.Kind != yaml.MappingNode {
		return nil, d.err()
	}
	if f, ok := top["version"]; !ok {
		d.errorf(root, "", "missing required key \"version\" (this mcpgen reads version %d)", Version)
	} else if v, ok := d.integer(f.val, f.path); ok {
		cfg.Version = v
		if v != Version {
			d.errorf(f.val, f.path, "unsupported config version %d (this mcpgen reads version %d)", v, Version)
		}
	}
	f, ok := top["servers"]
	switch {
	case !ok:
		d.errorf(root, "", "missing required key \"servers\"")
	case f.val.Kind != yaml.SequenceNode:
		d.errorf(f.val, f.path, "expected a list of servers, found %s", describe(f.val))
	case len(f.val.Content) == 0:
		d.errorf(f.val, f.path, "no servers configured")
	default:
		for i, n := range f.val.Content {
			if s := d.server(n, fmt.Sprintf("servers[%d]", i), cfg); s != nil {
				cfg.Servers = append(cfg.Servers, s)
			}
		}
		d.crossCheck(cfg)
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError positions a YAML syntax error.
func yamlError(file string, err error) error {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		var line int
		fmt.Sscan(m[1], &line)
		return &Error{File: file, Line: line, Msg: "invalid YAML: " + m[2]}
	}
	return &Error{File: file, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

func (d *decoder) pos(n *yaml.Node) Pos { return Pos{File: d.file, Line: n.Line, Col: n.Column} }

func (d *decoder) server(n *yaml.Node, p string, cfg *Config) *Server {
	s := &Server{Pos: d.pos(n), dir: cfg.Dir, file: cfg.File, path: p}
	fs := d.mapping(n, p, serverKeys)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	if f, ok := fs["id"]; !ok {
		d.errorf(n, p, "missing required key \"id\"")
	} else if id, ok := d.str(f.val, f.path); ok {
		s.ID = id
		d.serverID = id
		if !idRE.MatchString(id) || token.IsKeyword(id) {
			d.errorf(f.val, f.path, "id %q must match [a-z][a-z0-9_]* and not be a Go keyword (it names a Go package and files)", id)
		}
	}
	defer func() { d.serverID = "" }()
	var transports []field
	for _, k := range []string{"stdio", "http", "sse"} {
		if f, ok := fs[k]; ok {
			transports = append(transports, f)
		}
	}
	switch len(transports) {
	case 0:
		d.errorf(n, p, "missing transport: set exactly one of stdio, http or sse")
	case 1:
		f := transports[0]
		switch f.key.Value {
		case "stdio":
			s.Transport = snapshot.Stdio
			s.Stdio = d.stdio(f, p)
		case "http":
			s.Transport = snapshot.HTTP
			s.Remote = d.remote(f, p)
		case "sse":
			s.Transport = snapshot.SSE
			s.Remote = d.remote(f, p)
		}
	default:
		d.errorf(transports[1].key, p, "%s and %s both set: a server has exactly one transport", transports[0].key.Value, transports[1].key.Value)
	}
	if f, ok := fs["tools"]; ok {
		s.Tools = d.tools(f, p)
	}
	s.Manifest = "mcp/" + s.ID + ".json"
	if f, ok := fs["manifest"]; ok {
		if v, ok := d.relPath(f, p); ok {
			if !strings.HasSuffix(v, ".json") {
				d.errorf(f.val, join(p, "manifest"), "manifest %q must end in .json", v)
			}
			s.Manifest = v
		}
	}
	s.Package = s.ID
	if f, ok := fs["package"]; ok {
		if v, ok := d.str(f.val, join(p, "package")); ok {
			if !idRE.MatchString(v) || token.IsKeyword(v) {
				d.errorf(f.val, join(p, "package"), "package %q must match [a-z][a-z0-9_]* and not be a Go keyword", v)
			}
			s.Package = v
		}
	}
	s.Out = s.ID
	if f, ok := fs["out"]; ok {
		if v, ok := d.relPath(f, p); ok {
			s.Out = v
		}
	}
	for key, dst := range map[string]*bool{"inputExtras": &s.InputExtras, "keepShapesApart": &s.KeepShapesApart, "checkFormats": &s.CheckFormats} {
		if f, ok := fs[key]; ok {
			if f.val.Kind == yaml.ScalarNode && f.val.ShortTag() == "!!bool" {
				*dst = strings.EqualFold(f.val.Value, "true")
			} else {
				d.errorf(f.val, join(p, key), "expected true or false, found %s", describe(f.val))
			}
		}
	}
	if f, ok := fs["names"]; ok {
		s.Names, s.NamesPos = d.names(f, s)
	}
	if f, ok := fs["identity"]; ok {
		s.Identity = d.identity(f, p)
	}
	if f, ok := fs["gate"]; ok {
		s.Gate = d.gate(f, p, s)
	}
	if f, ok := fs["resources"]; ok {
		s.Resources = d.resources(f, p)
	}
	if f, ok := fs["auth"]; ok {
		s.Auth = d.auth(f, p, s)
	}
	if f, ok := fs["protocolVersion"]; ok {
		if v, ok := d.str(f.val, f.path); ok {
			if !slices.Contains(snapshot.ProtocolVersions, v) {
				d.errorf(f.val, f.path, "unknown protocol version %q (known: %s)", v, strings.Join(snapshot.ProtocolVersions, ", "))
			}
			s.ProtocolVersion = v
		}
	}
	if f, ok := fs["capabilities"]; ok {
		for i, c := range d.strList(f.val, f.path) {
			if !slices.Contains(snapshot.Capabilities, c) {
				d.errorf(f.val.Content[i], fmt.Sprintf("%s[%d]", f.path, i), "unknown client capability %q (known: %s)", c, strings.Join(snapshot.Capabilities, ", "))
				continue
			}
			if slices.Contains(s.Capabilities, c) {
				d.errorf(f.val.Content[i], fmt.Sprintf("%s[%d]", f.path, i), "capability %q listed twice", c)
				continue
			}
			s.Capabilities = append(s.Capabilities, c)
		}
	}
	return s
}

var (
	goNameRE    = regexp.MustCompile(`^\p{Lu}[\p{L}\p{N}_]*$`)
	modelToolRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
)

func (d *decoder) resources(f field, p string) Resources {
	p = join(p, "resources")
	var r Resources
	fs := d.mapping(f.val, p, resourceKeys)
	b, ok := fs["bind"]
	if !ok {
		return r
	}
	r.Bind = map[string]ResourceBind{}
	for _, kv := range d.pairs(b.val, b.path) {
		if strings.TrimSpace(kv.key.Value) == "" {
			d.errorf(kv.key, b.path, "empty resource uri")
			continue
		}
		rb := ResourceBind{Pos: d.pos(kv.key)}
		bf := d.mapping(kv.val, kv.path, bindKeys)
		if kv.val.Kind == yaml.MappingNode && len(kv.val.Content) == 0 {
			d.errorf(kv.val, kv.path, "empty binding: set schema, goName or tool")
		}
		if s, ok := bf["schema"]; ok {
			if s.val.Kind != yaml.MappingNode {
				d.errorf(s.val, s.path, "a schema must be a mapping (a JSON Schema object), found %s", describe(s.val))
			} else if j, ok := d.toJSON(s.val, s.path); ok {
				rb.Schema = j
			}
		}
		if g, ok := bf["goName"]; ok {
			if v, ok := d.str(g.val, g.path); ok {
				if !goNameRE.MatchString(v) {
					d.errorf(g.val, g.path, "goName %q must be an exported Go identifier", v)
				}
				rb.GoName = v
			}
		}
		t, hasTool := bf["tool"]
		if hasTool {
			if t.val.Kind != yaml.ScalarNode || t.val.ShortTag() != "!!bool" {
				d.errorf(t.val, t.path, "tool must be true or false, found %s", describe(t.val))
			} else {
				rb.Tool = t.val.Value == "true"
			}
		}
		if n, ok := bf["toolName"]; ok {
			if v, ok := d.str(n.val, n.path); ok {
				switch {
				case !modelToolRE.MatchString(v):
					d.errorf(n.val, n.path, "toolName %q: a tool name every model provider accepts has 1 to 64 of a-z, A-Z, 0-9, '_' and '-'", v)
				case hasTool && !rb.Tool:
					d.errorf(n.val, n.path, "toolName %q with tool: false; drop one", v)
				}
				rb.ToolName, rb.Tool = v, true
			}
		}
		r.Bind[kv.key.Value] = rb
	}
	return r
}

// relPath reads a slash-separated path relative to the config directory.
func (d *decoder) relPath(f field, p string) (string, bool) {
	fp := join(p, f.key.Value)
	v, ok := d.str(f.val, fp)
	if !ok {
		return "", false
	}
	switch {
	case v == "":
		d.errorf(f.val, fp, "empty path")
		return "", false
	case strings.Contains(v, `\`):
		d.errorf(f.val, fp, "use / in paths, not \\ (the config is shared across systems)")
		return "", false
	case path.IsAbs(v) || filepath.IsAbs(v) || filepath.VolumeName(v) != "":
		d.errorf(f.val, fp, "path %q must be relative to the config file's directory", v)
		return "", false
	}
	return path.Clean(v), true
}

func (d *decoder) stdio(f field, p string) *Stdio {
	p = join(p, "stdio")
	st := &Stdio{}
	fs := d.mapping(f.val, p, stdioKeys)
	if f.val.Kind != yaml.MappingNode {
		return st
	}
	if c, ok := fs["command"]; !ok {
		d.errorf(f.val, p, "missing required key \"command\"")
	} else if v, ok := d.str(c.val, join(p, "command")); ok {
		if strings.TrimSpace(v) == "" {
			d.errorf(c.val, join(p, "command"), "empty command")
		}
		d.noRefs(c.val, join(p, "command"), v)
		st.Command = v
	}
	if a, ok := fs["args"]; ok {
		st.Args = d.strList(a.val, join(p, "args"))
		for i, arg := range st.Args {
			d.noRefs(a.val.Content[i], fmt.Sprintf("%s.args[%d]", p, i), arg)
		}
	}
	if e, ok := fs["env"]; ok {
		for _, kv := range d.pairs(e.val, join(p, "env")) {
			if !envNameRE.MatchString(kv.key.Value) {
				d.errorf(kv.key, join(p, "env"), "%q is not a valid environment variable name", kv.key.Value)
			}
			if v, ok := d.str(kv.val, kv.path); ok {
				d.checkRefs(kv.val, kv.path, v)
				st.Env = append(st.Env, EnvVar{Name: kv.key.Value, Value: v, Pos: d.pos(kv.val)})
			}
		}
		slices.SortFunc(st.Env, func(a, b EnvVar) int { return strings.Compare(a.Name, b.Name) })
	}
	if dir, ok := fs["dir"]; ok {
		if v, ok := d.relPath(dir, p); ok {
			d.noRefs(dir.val, join(p, "dir"), v)
			st.Dir = v
		}
	}
	return st
}

func (d *decoder) remote(f field, p string) *Remote {
	p = join(p, f.key.Value)
	r := &Remote{}
	fs := d.mapping(f.val, p, remoteKeys)
	if f.val.Kind != yaml.MappingNode {
		return r
	}
	if u, ok := fs["url"]; !ok {
		d.errorf(f.val, p, "missing required key \"url\"")
	} else if v, ok := d.str(u.val, u.path); ok {
		r.URL, r.URLPos = v, d.pos(u.val)
		if d.checkRefs(u.val, u.path, v) && !strings.Contains(v, "${") {
			if err := checkURL(v); err != "" {
				d.errorf(u.val, u.path, "%s", err)
			}
		}
	}
	if h, ok := fs["headers"]; ok {
		for _, kv := range d.pairs(h.val, join(p, "headers")) {
			if !headerRE.MatchString(kv.key.Value) {
				d.errorf(kv.key, join(p, "headers"), "%q is not a valid HTTP header name", kv.key.Value)
			}
			if v, ok := d.str(kv.val, kv.path); ok {
				d.checkRefs(kv.val, kv.path, v)
				r.Headers = append(r.Headers, Header{Name: kv.key.Value, Value: v, Pos: d.pos(kv.val)})
			}
		}
		slices.SortFunc(r.Headers, func(a, b Header) int { return strings.Compare(a.Name, b.Name) })
	}
	return r
}

// checkURL returns what is wrong with an http(s) URL, or "". It never
// includes the URL: after expansion it may carry a secret.
func checkURL(v string) string {
	u, err := url.Parse(v)
	if err != nil {
		return "not a valid URL"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "the URL must start with http:// or https://"
	}
	if u.Host == "" {
		return "the URL has no host"
	}
	return ""
}

// checkRefs reports reference syntax errors in a value that allows them.
func (d *decoder) checkRefs(n *yaml.Node, p, v string) bool {
	if _, _, err := expand(v, nil); err != nil {
		d.errorf(n, p, "%v", err)
		return false
	}
	return true
}

// noRefs refuses ${VAR} where it would not be expanded, so nobody expects
// a secret to be filled in there.
func (d *decoder) noRefs(n *yaml.Node, p, v string) {
	if strings.Contains(v, "${") {
		d.errorf(n, p, "${...} references are expanded only in stdio env values and http/sse url and header values")
	}
}

func (d *decoder) tools(f field, p string) Tools {
	p = join(p, "tools")
	var t Tools
	fs := d.mapping(f.val, p, toolsKeys)
	patterns := func(key string) []string {
		g, ok := fs[key]
		if !ok {
			return nil
		}
		list := d.strList(g.val, g.path)
		seen := map[string]bool{}
		for i, pat := range list {
			n := g.val.Content[i]
			if _, err := path.Match(pat, ""); err != nil || pat == "" {
				d.errorf(n, fmt.Sprintf("%s[%d]", g.path, i), "bad pattern %q (path.Match syntax: * ? [a-z] \\x)", pat)
			}
			if seen[pat] {
				d.errorf(n, fmt.Sprintf("%s[%d]", g.path, i), "pattern %q listed twice", pat)
			}
			seen[pat] = true
		}
		return list
	}
	t.Include = patterns("include")
	t.Exclude = patterns("exclude")
	for i, pat := range t.Exclude {
		if slices.Contains(t.Include, pat) {
			d.errorf(fs["exclude"].val.Content[i], fmt.Sprintf("%s.exclude[%d]", p, i), "pattern %q is both included and excluded", pat)
		}
	}
	filtered := func(n *yaml.Node, fp, name string) {
		if !snapshot.Keep(name, t.Include, t.Exclude) {
			d.errorf(n, fp, "tool %q is filtered out by include/exclude", name)
		}
	}
	if r, ok := fs["rename"]; ok {
		t.Rename = map[string]string{}
		t.RenamePos = map[string]Pos{}
		targets := map[string]string{}
		for _, kv := range d.pairs(r.val, r.path) {
			if !toolNameRE.MatchString(kv.key.Value) {
				d.errorf(kv.key, r.path, "%q is not a valid tool name", kv.key.Value)
			}
			filtered(kv.key, kv.path, kv.key.Value)
			v, ok := d.str(kv.val, kv.path)
			if !ok {
				continue
			}
			if !toolNameRE.MatchString(v) {
				d.errorf(kv.val, kv.path, "rename target %q is not a valid tool name ([A-Za-z0-9_.-], 1 to 128 characters)", v)
			}
			if prev, dup := targets[v]; dup {
				d.errorf(kv.val, kv.path, "%q and %q are both renamed to %q", prev, kv.key.Value, v)
			}
			targets[v] = kv.key.Value
			t.Rename[kv.key.Value] = v
			t.RenamePos[kv.key.Value] = d.pos(kv.key)
		}
	}
	if o, ok := fs["override"]; ok {
		t.Override = map[string]Override{}
		for _, kv := range d.pairs(o.val, o.path) {
			filtered(kv.key, kv.path, kv.key.Value)
			ov := Override{Pos: d.pos(kv.key)}
			sf := d.mapping(kv.val, kv.path, overrideKeys)
			if kv.val.Kind == yaml.MappingNode && len(kv.val.Content) == 0 {
				d.errorf(kv.val, kv.path, "empty override: set inputSchema and/or outputSchema")
			}
			for key, dst := range map[string]*json.RawMessage{"inputSchema": &ov.InputSchema, "outputSchema": &ov.OutputSchema} {
				s, ok := sf[key]
				if !ok {
					continue
				}
				if s.val.Kind != yaml.MappingNode {
					d.errorf(s.val, s.path, "a schema must be a mapping (a JSON Schema object), found %s", describe(s.val))
					continue
				}
				if j, ok := d.toJSON(s.val, s.path); ok {
					*dst = j
				}
			}
			t.Override[kv.key.Value] = ov
		}
	}
	return t
}

// names reads the names key: keys "<tool>#<pointer>" or "*#<pointer>",
// the pointer under /inputSchema or /outputSchema; values exported Go
// identifiers. The manifest, once it exists, is checked by CheckNames.
func (d *decoder) names(f field, s *Server) (map[string]string, map[string]Pos) {
	names, pos := map[string]string{}, map[string]Pos{}
	for _, kv := range d.pairs(f.val, f.path) {
		tool, ptr, ok := strings.Cut(kv.key.Value, "#")
		switch {
		case !ok:
			d.errorf(kv.key, f.path, "key %q: expected <tool>#<JSON Pointer>, e.g. \"create_issue#/inputSchema/properties/user_id\", or *#<JSON Pointer> for every tool", kv.key.Value)
			continue
		case tool != "*" && !toolNameRE.MatchString(tool):
			d.errorf(kv.key, f.path, "key %q: %q is not a valid tool name (or * for every tool)", kv.key.Value, tool)
			continue
		case ptr != "/inputSchema" && ptr != "/outputSchema" && !strings.HasPrefix(ptr, "/inputSchema/") && !strings.HasPrefix(ptr, "/outputSchema/"):
			d.errorf(kv.key, f.path, "key %q: the JSON Pointer must be within the tool's /inputSchema or /outputSchema", kv.key.Value)
			continue
		case !validPointer(ptr):
			d.errorf(kv.key, f.path, "key %q: %q is not a JSON Pointer (~ must be followed by 0 or 1)", kv.key.Value, ptr)
			continue
		case tool != "*" && !s.Keep(tool):
			d.errorf(kv.key, kv.path, "tool %q is filtered out by include/exclude", tool)
			continue
		}
		v, ok := d.str(kv.val, kv.path)
		if !ok {
			continue
		}
		if !goNameRE.MatchString(v) {
			d.errorf(kv.val, kv.path, "%q must be an exported Go identifier", v)
			continue
		}
		names[kv.key.Value], pos[kv.key.Value] = v, d.pos(kv.key)
	}
	return names, pos
}

// validPointer reports whether every ~ in a JSON Pointer escapes / or ~.
func validPointer(ptr string) bool {
	for i := 0; i < len(ptr); i++ {
		if ptr[i] == '~' && (i+1 == len(ptr) || ptr[i+1] != '0' && ptr[i+1] != '1') {
			return false
		}
	}
	return true
}

func (d *decoder) identity(f field, p string) *Identity {
	p = join(p, "identity")
	id := &Identity{Pos: d.pos(f.val)}
	fs := d.mapping(f.val, p, identityKeys)
	if f.val.Kind != yaml.MappingNode {
		return id
	}
	if a, ok := fs["argument"]; !ok {
		d.errorf(f.val, p, "missing required key \"argument\"")
	} else if v, ok := d.str(a.val, a.path); ok {
		if v == "" {
			d.errorf(a.val, a.path, "empty argument name")
		}
		id.Argument, id.Pos = v, d.pos(a.val)
	}
	return id
}

func (d *decoder) gate(f field, p string, s *Server) *Gate {
	p = join(p, "gate")
	g := &Gate{Default: GateAnnotations, Pos: d.pos(f.val)}
	fs := d.mapping(f.val, p, gateKeys)
	policy := func(n *yaml.Node, fp string) (string, bool) {
		v, ok := d.str(n, fp)
		if ok && !slices.Contains(gatePolicies, v) {
			d.errorf(n, fp, "unknown gate policy %q (one of %s)", v, strings.Join(gatePolicies, ", "))
			return "", false
		}
		return v, ok
	}
	if v, ok := fs["default"]; ok {
		if pol, ok := policy(v.val, v.path); ok {
			g.Default = pol
		}
	}
	if t, ok := fs["tools"]; ok {
		g.Tools = map[string]string{}
		g.ToolPos = map[string]Pos{}
		for _, kv := range d.pairs(t.val, t.path) {
			g.ToolPos[kv.key.Value] = d.pos(kv.key)
			if !snapshot.Keep(kv.key.Value, s.Tools.Include, s.Tools.Exclude) {
				d.errorf(kv.key, kv.path, "tool %q is filtered out by include/exclude", kv.key.Value)
			}
			if pol, ok := policy(kv.val, kv.path); ok {
				g.Tools[kv.key.Value] = pol
			}
		}
	}
	return g
}

// crossCheck finds conflicts between servers.
func (d *decoder) crossCheck(cfg *Config) {
	ids := map[string]*Server{}
	manifests := map[string]*Server{}
	outs := map[string]*Server{}
	for _, s := range cfg.Servers {
		if s.ID == "" {
			continue
		}
		at := &yaml.Node{Line: s.Pos.Line, Column: s.Pos.Col}
		if prev, dup := ids[s.ID]; dup {
			d.errorf(at, "", "duplicate server id %q (first at line %d)", s.ID, prev.Pos.Line)
			continue
		}
		ids[s.ID] = s
		if prev, dup := manifests[s.Manifest]; dup {
			d.errorf(at, "", "servers %q and %q both write manifest %q", prev.ID, s.ID, s.Manifest)
		}
		manifests[s.Manifest] = s
		if prev, dup := outs[s.Out]; dup {
			// Each server's package declares its own Client, NewClient,
			// Tool* names, Descriptors and GateOptions: two in one package
			// would not compile.
			d.errorf(at, "", "servers %q and %q both generate into %q: one server per package (each declares its own Client, tool names and descriptors); give each its own out, say %s and %s, and import both",
				prev.ID, s.ID, s.Out, path.Join(s.Out, prev.ID), path.Join(s.Out, s.ID))
		}
		outs[s.Out] = s
	}
}
