package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpgen/mcpgen/snapshot"
)

const full = `version: 1
servers:
  - id: crm
    stdio:
      command: go
      args: [run, ./crm-server]
      env: {CRM_TOKEN: "${CRM_TOKEN}", MODE: "cost: $$5", Z: plain}
      dir: example
    tools:
      include: ["*_deal", "crm-*"]
      exclude: ["*_debug"]
      rename: {crm-perplexity_research: perplexity_research}
      override:
        get_deal:
          outputSchema:
            type: object
            properties:
              zeta: {type: string}
              alpha: {type: [integer, "null"], minimum: 0, maximum: 1.5e3}
            required: [zeta]
    manifest: mcp/crm.json
    package: crmapi
    out: internal/crm
    identity: {argument: caller_token}
    gate: {default: annotations, tools: {delete_deal: always, get_deal: never}}
  - id: search
    http:
      url: "https://search.example.com/mcp?key=${SEARCH_KEY}"
      headers: {Authorization: "Bearer ${SEARCH_TOKEN}", X-Plain: v}
  - id: legacy
    sse: {url: "http://127.0.0.1:9000/sse"}
`

func TestParseFull(t *testing.T) {
	cfg, err := Parse("conf/mcpgen.yaml", []byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Version != 1 || len(cfg.Servers) != 3 || cfg.Dir != "conf" {
		t.Fatalf("cfg = %+v", cfg)
	}
	crm := cfg.Servers[0]
	if crm.Transport != snapshot.Stdio || crm.Stdio.Command != "go" || crm.Package != "crmapi" || crm.Out != "internal/crm" {
		t.Errorf("crm = %+v", crm)
	}
	if crm.Pos.Line != 3 || crm.Pos.Col != 5 {
		t.Errorf("crm position = %v", crm.Pos)
	}
	if got := crm.ManifestPath(); got != filepath.Join("conf", "mcp", "crm.json") {
		t.Errorf("ManifestPath = %q", got)
	}
	if crm.Identity.Argument != "caller_token" || crm.Gate.Tools["delete_deal"] != GateAlways || crm.Gate.Default != GateAnnotations {
		t.Errorf("identity/gate = %+v %+v", crm.Identity, crm.Gate)
	}
	if crm.Tools.Rename["crm-perplexity_research"] != "perplexity_research" {
		t.Errorf("rename = %v", crm.Tools.Rename)
	}
	// YAML becomes JSON with key order kept and types preserved.
	want := `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":["integer","null"],"minimum":0,"maximum":1500}},"required":["zeta"]}`
	if got := string(crm.Tools.Override["get_deal"].OutputSchema); got != want {
		t.Errorf("override =\n%s\nwant\n%s", got, want)
	}
	if !json.Valid(crm.Tools.Override["get_deal"].OutputSchema) || crm.Tools.Override["get_deal"].InputSchema != nil {
		t.Error("override schemas wrong")
	}
	s := cfg.Servers[1]
	if s.Manifest != "mcp/search.json" || s.Package != "search" || s.Out != "search" || s.Transport != snapshot.HTTP {
		t.Errorf("defaults = %+v", s)
	}
	if cfg.Servers[2].Transport != snapshot.SSE {
		t.Errorf("sse = %+v", cfg.Servers[2])
	}
	if !crm.Keep("get_deal") || crm.Keep("get_debug") || crm.Keep("ping") {
		t.Error("Keep disagrees with the filters")
	}
}

func TestSource(t *testing.T) {
	cfg, err := Parse("conf/mcpgen.yaml", []byte(full))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CRM_TOKEN": "tok-crm-123", "SEARCH_KEY": "k&y/1", "SEARCH_TOKEN": "tok-search"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	src, err := cfg.Servers[0].Source(lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := snapshot.Source{
		ID: "crm", Transport: snapshot.Stdio, Command: "go", Args: []string{"run", "./crm-server"},
		Env: []string{"CRM_TOKEN=tok-crm-123", "MODE=cost: $5", "Z=plain"}, Dir: filepath.Join("conf", "example"),
		Secrets: []string{"tok-crm-123"}, SecretNames: []string{"CRM_TOKEN"},
	}
	if d := cmp.Diff(want, src); d != "" {
		t.Errorf("stdio source (-want +got):\n%s", d)
	}
	src, err = cfg.Servers[1].Source(lookup)
	if err != nil {
		t.Fatal(err)
	}
	want = snapshot.Source{
		ID: "search", Transport: snapshot.HTTP, URL: "https://search.example.com/mcp?key=k&y/1",
		Headers: map[string]string{"Authorization": "Bearer tok-search", "X-Plain": "v"},
		Secrets: []string{"k&y/1", "tok-search"}, SecretNames: []string{"SEARCH_KEY", "SEARCH_TOKEN"},
	}
	if d := cmp.Diff(want, src); d != "" {
		t.Errorf("http source (-want +got):\n%s", d)
	}

	// An unset variable names the variable, the place and the server.
	delete(env, "SEARCH_TOKEN")
	_, err = cfg.Servers[1].Source(lookup)
	var unset *UnsetError
	if !errors.As(err, &unset) || unset.Var != "SEARCH_TOKEN" {
		t.Fatalf("err = %v, want UnsetError for SEARCH_TOKEN", err)
	}
	if got := err.Error(); got != `conf/mcpgen.yaml:29:32: http.headers.Authorization: environment variable SEARCH_TOKEN is not set (server "search")` {
		t.Errorf("err = %s", got)
	}
}

// TestSourceSecretNeverInErrors expands a canary into a URL that turns out
// invalid: the error must explain without showing the value.
func TestSourceSecretNeverInErrors(t *testing.T) {
	const canary = "canary-55aa-not-a-url"
	cfg, err := Parse("c.yaml", []byte("version: 1\nservers:\n  - id: a\n    http: {url: \"${U}\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = cfg.Servers[0].Source(func(string) (string, bool) { return canary, true })
	if err == nil || strings.Contains(err.Error(), canary) || !strings.Contains(err.Error(), "c.yaml:4:17") {
		t.Errorf("err = %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // each error, in order
	}{
		{"empty", "", []string{"c.yaml: empty config: expected a mapping with version and servers"}},
		{"syntax", "version: 1\nservers: [\n", []string{"c.yaml:2: invalid YAML: did not find expected node content"}},
		{"not a mapping", "- 1\n", []string{"c.yaml:1:1: expected a mapping, found a list"}},
		{"missing version", "servers:\n  - {id: a, stdio: {command: x}}\n", []string{`c.yaml:1:1: missing required key "version" (this mcpgen reads version 1)`}},
		{"version type", "version: \"1\"\nservers:\n  - {id: a, stdio: {command: x}}\n", []string{`c.yaml:1:10: version: expected an integer, found the string "1"`}},
		{"version value", "version: 2\nservers:\n  - {id: a, stdio: {command: x}}\n", []string{"c.yaml:1:10: version: unsupported config version 2 (this mcpgen reads version 1)"}},
		{"unknown top key", "version: 1\nserver: []\n", []string{
			`c.yaml:1:1: missing required key "servers"`,
			`c.yaml:2:1: unknown key "server" (known keys: version, servers)`}},
		{"no servers", "version: 1\nservers: []\n", []string{"c.yaml:2:10: servers: no servers configured"}},
		{"missing command", "version: 1\nservers:\n  - id: crm\n    stdio:\n      args: [x]\n", []string{
			`c.yaml:5:7: servers[0].stdio: missing required key "command" (server "crm")`}},
		{"missing url", "version: 1\nservers:\n  - id: web\n    http: {headers: {A: b}}\n", []string{
			`c.yaml:4:11: servers[0].http: missing required key "url" (server "web")`}},
		{"missing sse url", "version: 1\nservers:\n  - id: web\n    sse: {}\n", []string{
			`c.yaml:4:10: servers[0].sse: missing required key "url" (server "web")`}},
		{"no transport", "version: 1\nservers:\n  - id: a\n", []string{
			`c.yaml:3:5: servers[0]: missing transport: set exactly one of stdio, http or sse (server "a")`}},
		{"two transports", "version: 1\nservers:\n  - id: a\n    stdio: {command: x}\n    http: {url: \"http://h\"}\n", []string{
			`c.yaml:5:5: servers[0]: stdio and http both set: a server has exactly one transport (server "a")`}},
		{"unknown server key", "version: 1\nservers:\n  - id: a\n    stdio: {command: x, cwd: /}\n", []string{
			`c.yaml:4:25: servers[0].stdio: unknown key "cwd" (known keys: command, args, env, dir) (server "a")`}},
		{"wrong types", "version: 1\nservers:\n  - id: a\n    stdio: {command: [x], args: x, env: {A: 1}}\n", []string{
			`c.yaml:4:22: servers[0].stdio.command: expected a string, found a list (server "a")`,
			`c.yaml:4:33: servers[0].stdio.args: expected a list of strings, found the string "x" (server "a")`,
			`c.yaml:4:45: servers[0].stdio.env.A: expected a string, found the integer 1 (quote it: "1") (server "a")`}},
		{"bad ids", "version: 1\nservers:\n  - {id: Bad-Id, stdio: {command: x}}\n  - {id: type, stdio: {command: x}}\n", []string{
			`c.yaml:3:10: servers[0].id: id "Bad-Id" must match [a-z][a-z0-9_]* and not be a Go keyword (it names a Go package and files) (server "Bad-Id")`,
			`c.yaml:4:10: servers[1].id: id "type" must match [a-z][a-z0-9_]* and not be a Go keyword (it names a Go package and files) (server "type")`}},
		{"duplicate id", "version: 1\nservers:\n  - {id: a, stdio: {command: x}}\n  - {id: a, stdio: {command: y}, manifest: other.json}\n", []string{
			`c.yaml:4:5: duplicate server id "a" (first at line 3)`}},
		{"duplicate key", "version: 1\nversion: 1\nservers:\n  - {id: a, stdio: {command: x}}\n", []string{
			`c.yaml:2:1: duplicate key "version" (first at line 1)`}},
		{"same manifest", "version: 1\nservers:\n  - {id: a, stdio: {command: x}, manifest: m.json}\n  - {id: b, stdio: {command: x}, manifest: ./m.json}\n", []string{
			`c.yaml:4:5: servers "a" and "b" both write manifest "m.json"`}},
		{"refs", "version: 1\nservers:\n  - id: a\n    stdio: {command: \"${BIN}\", env: {A: \"${1X}\", B: \"$5\", C: \"${OPEN\"}}\n", []string{
			`c.yaml:4:22: servers[0].stdio.command: ${...} references are expanded only in stdio env values and http/sse url and header values (server "a")`,
			`c.yaml:4:41: servers[0].stdio.env.A: invalid variable name "1X" in ${...} (letters, digits and _) (server "a")`,
			`c.yaml:4:53: servers[0].stdio.env.B: a lone $ at byte 1: write ${VAR} for a reference or $$ for a literal $ (server "a")`,
			`c.yaml:4:62: servers[0].stdio.env.C: unterminated ${ at byte 1 (server "a")`}},
		{"bad url", "version: 1\nservers:\n  - id: a\n    http: {url: \"ftp://h/x\"}\n", []string{
			`c.yaml:4:17: servers[0].http.url: the URL must start with http:// or https:// (server "a")`}},
		{"bad header", "version: 1\nservers:\n  - id: a\n    http: {url: \"http://h\", headers: {\"Bad Header\": x}}\n", []string{
			`c.yaml:4:39: servers[0].http.headers: "Bad Header" is not a valid HTTP header name (server "a")`}},
		{"tools", "version: 1\nservers:\n  - id: a\n    stdio: {command: x}\n    tools:\n      include: [\"[a-\", \"x_*\", \"x_*\"]\n      exclude: [\"x_*\"]\n      rename: {y_tool: z, x_a: \"bad name\", x_b: z2, x_c: z2}\n", []string{
			`c.yaml:6:17: servers[0].tools.include[0]: bad pattern "[a-" (path.Match syntax: * ? [a-z] \x) (server "a")`,
			`c.yaml:6:31: servers[0].tools.include[2]: pattern "x_*" listed twice (server "a")`,
			`c.yaml:7:17: servers[0].tools.exclude[0]: pattern "x_*" is both included and excluded (server "a")`,
			`c.yaml:8:16: servers[0].tools.rename.y_tool: tool "y_tool" is filtered out by include/exclude (server "a")`,
			`c.yaml:8:27: servers[0].tools.rename.x_a: tool "x_a" is filtered out by include/exclude (server "a")`,
			`c.yaml:8:32: servers[0].tools.rename.x_a: rename target "bad name" is not a valid tool name ([A-Za-z0-9_.-], 1 to 128 characters) (server "a")`,
			`c.yaml:8:44: servers[0].tools.rename.x_b: tool "x_b" is filtered out by include/exclude (server "a")`,
			`c.yaml:8:53: servers[0].tools.rename.x_c: tool "x_c" is filtered out by include/exclude (server "a")`,
			`c.yaml:8:58: servers[0].tools.rename.x_c: "x_b" and "x_c" are both renamed to "z2" (server "a")`}},
		{"override", "version: 1\nservers:\n  - id: a\n    stdio: {command: x}\n    tools:\n      override:\n        t1: {}\n        t2: {outputSchema: [1]}\n        t3: {inputSchema: {maximum: .inf}}\n        t4: {schema: {}}\n", []string{
			`c.yaml:7:13: servers[0].tools.override.t1: empty override: set inputSchema and/or outputSchema (server "a")`,
			`c.yaml:8:28: servers[0].tools.override.t2.outputSchema: a schema must be a mapping (a JSON Schema object), found a list (server "a")`,
			`c.yaml:9:37: servers[0].tools.override.t3.inputSchema.maximum: the number .inf has no JSON form (server "a")`,
			`c.yaml:10:14: servers[0].tools.override.t4: unknown key "schema" (known keys: inputSchema, outputSchema) (server "a")`}},
		{"paths", "version: 1\nservers:\n  - {id: a, stdio: {command: x, dir: /abs}, manifest: m.yaml, out: \"a\\\\b\", package: Pkg}\n", []string{
			`c.yaml:3:38: servers[0].stdio.dir: path "/abs" must be relative to the config file's directory (server "a")`,
			`c.yaml:3:55: servers[0].manifest: manifest "m.yaml" must end in .json (server "a")`,
			`c.yaml:3:68: servers[0].out: use / in paths, not \ (the config is shared across systems) (server "a")`,
			`c.yaml:3:85: servers[0].package: package "Pkg" must match [a-z][a-z0-9_]* and not be a Go keyword (server "a")`}},
		{"gate and identity", "version: 1\nservers:\n  - id: a\n    stdio: {command: x}\n    identity: {}\n    gate: {default: sometimes, tools: {t: ask}}\n", []string{
			`c.yaml:5:15: servers[0].identity: missing required key "argument" (server "a")`,
			`c.yaml:6:21: servers[0].gate.default: unknown gate policy "sometimes" (one of annotations, always, never) (server "a")`,
			`c.yaml:6:43: servers[0].gate.tools.t: unknown gate policy "ask" (one of annotations, always, never) (server "a")`}},
		{"inputExtras type", "version: 1\nservers:\n  - {id: a, stdio: {command: x}, inputExtras: \"yes\"}\n", []string{
			`c.yaml:3:47: servers[0].inputExtras: expected true or false, found the string "yes" (server "a")`}},
		{"alias", "version: 1\nservers:\n  - &s {id: a, stdio: {command: x}}\n  - *s\n", []string{
			"c.yaml:4:5: YAML aliases are not supported; repeat the value"}},
		{"two documents", "version: 1\nservers:\n  - {id: a, stdio: {command: x}}\n---\nversion: 1\n", []string{
			"c.yaml:4:1: a second YAML document; the config must be a single document"}},
		{"shared out", "version: 1\nservers:\n  - {id: a, stdio: {command: x}, out: gen}\n  - {id: b, stdio: {command: x}, out: gen}\n", []string{
			`c.yaml:4:5: servers "a" and "b" both generate into "gen": one server per package (each declares its own Client, tool names and descriptors); give each its own out, say gen/a and gen/b, and import both`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			var got []string
			var j joined
			if errors.As(err, &j) {
				for _, e := range j {
					got = append(got, e.Error())
				}
			} else {
				got = []string{err.Error()}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("no *Error in %v", err)
			}
		})
	}
}

func TestAdHoc(t *testing.T) {
	s, err := AdHoc{ID: "x", Transport: snapshot.HTTP, URL: "http://h/mcp", Headers: map[string]string{"Authorization": "Bearer ${TOK}"}}.Server()
	if err != nil {
		t.Fatal(err)
	}
	src, err := s.Source(func(string) (string, bool) { return "secret-value", true })
	if err != nil || src.Headers["Authorization"] != "Bearer secret-value" || src.Secrets[0] != "secret-value" {
		t.Errorf("src = %+v, %v", src, err)
	}
	_, err = s.Source(func(string) (string, bool) { return "", false })
	if err == nil || err.Error() != `command line: http.headers.Authorization: environment variable TOK is not set (server "x")` {
		t.Errorf("err = %v", err)
	}
	for _, a := range []AdHoc{
		{ID: "X", Transport: snapshot.Stdio, Command: "x"},
		{ID: "x", Transport: snapshot.Stdio},
		{ID: "x", Transport: snapshot.HTTP, URL: "nope"},
		{ID: "x", Transport: snapshot.Stdio, Command: "x", Env: map[string]string{"A": "$"}},
	} {
		if _, err := a.Server(); err == nil {
			t.Errorf("%+v: no error", a)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mcpgen.yaml")
	if err := os.WriteFile(p, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(p)
	if err != nil || cfg.Dir != dir {
		t.Fatalf("Load: %v, %+v", err, cfg)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("no error for a missing file")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	f.Add([]byte("version: 1\nservers:\n  - {id: a, stdio: {command: x}}\n"))
	f.Add([]byte("version: 1\nservers:\n  - &s {id: a}\n  - *s\n"))
	f.Add([]byte("version: 1\nservers:\n  - id: a\n    http: {url: \"${U}$$\"}\n    tools: {override: {t: {inputSchema: {a: [1, 2.5, null, true]}}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("f.yaml", data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error without position type: %v", err)
			}
			return
		}
		for _, s := range cfg.Servers {
			for _, o := range s.Tools.Override {
				for _, j := range []json.RawMessage{o.InputSchema, o.OutputSchema} {
					if j != nil && !json.Valid(j) {
						t.Fatalf("override is not JSON: %s", j)
					}
				}
			}
			if _, err := s.Source(func(string) (string, bool) { return "v", true }); err != nil && !strings.Contains(err.Error(), s.ID) {
				t.Fatalf("Source error does not name the server: %v", err)
			}
		}
	})
}

func TestInputExtras(t *testing.T) {
	cfg, err := Parse("c.yaml", []byte("version: 1\nservers:\n  - {id: a, stdio: {command: x}, inputExtras: true, keepShapesApart: true, checkFormats: true}\n  - {id: b, stdio: {command: x}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Servers[0].InputExtras || cfg.Servers[1].InputExtras {
		t.Errorf("inputExtras: a %v, b %v; want true, false", cfg.Servers[0].InputExtras, cfg.Servers[1].InputExtras)
	}
	if !cfg.Servers[0].CheckFormats || cfg.Servers[1].CheckFormats {
		t.Errorf("checkFormats: a %v, b %v; want true, false", cfg.Servers[0].CheckFormats, cfg.Servers[1].CheckFormats)
	}
	if !cfg.Servers[0].KeepShapesApart || cfg.Servers[1].KeepShapesApart {
		t.Errorf("keepShapesApart: a %v, b %v; want true, false", cfg.Servers[0].KeepShapesApart, cfg.Servers[1].KeepShapesApart)
	}
}
