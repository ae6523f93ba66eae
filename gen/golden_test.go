package gen

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.txtar with the current output")

// A golden case is a txtar archive:
//
//	-- config.json --      optional: package, renames, goNames, overrides, stripArgs, inputExtras, keepShapesApart, checkFormats
//	-- in/<name>.json --   one or more inputs
//	-- instances.json --   optional: [{"tool", "role", "valid": [...], "invalid": [...]}]
//	-- want/<file>.go --   the generated files, or
//	-- want.err --         the error text
type goldenCase struct {
	name      string
	path      string
	ar        *txtar.Archive
	cfg       Config
	instances []instanceSet
}

type instanceSet struct {
	Tool    string            `json:"tool"`
	Role    string            `json:"role"`
	Valid   []json.RawMessage `json:"valid"`
	Invalid []json.RawMessage `json:"invalid"`
}

type caseConfig struct {
	Package   string                     `json:"package"`
	Renames   map[string]string          `json:"renames"`
	GoNames   map[string]string          `json:"goNames"`
	Overrides map[string]ToolOverride    `json:"overrides"`
	StripArgs map[string][]string        `json:"stripArgs"`
	Resources map[string]ResourceBinding `json:"resources"`
	Gate      *GateConfig                `json:"gate"`
	// InputExtras is Config.InputExtras (config inputExtras).
	InputExtras bool `json:"inputExtras"`
	// KeepShapesApart is Config.KeepShapesApart (config keepShapesApart).
	KeepShapesApart bool `json:"keepShapesApart"`
	// CheckFormats is Config.CheckFormats (config checkFormats).
	CheckFormats bool `json:"checkFormats"`
}

func loadCases(t *testing.T) []*goldenCase {
	t.Helper()
	paths, err := filepath.Glob("testdata/golden/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	var out []*goldenCase
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".txtar")
		c := &goldenCase{name: name, path: p, ar: ar}
		cc := caseConfig{Package: strings.ReplaceAll(name, "-", "")}
		for _, f := range ar.Files {
			switch {
			case f.Name == "config.json":
				dec := json.NewDecoder(bytes.NewReader(f.Data))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&cc); err != nil {
					t.Fatalf("%s: config.json: %v", p, err)
				}
			case strings.HasPrefix(f.Name, "in/"):
				c.cfg.Inputs = append(c.cfg.Inputs, Input{Name: strings.TrimPrefix(f.Name, "in/"), Data: f.Data})
			case f.Name == "instances.json":
				if err := json.Unmarshal(f.Data, &c.instances); err != nil {
					t.Fatalf("%s: instances.json: %v", p, err)
				}
			}
		}
		c.cfg.Package, c.cfg.Renames, c.cfg.GoNames, c.cfg.Overrides, c.cfg.StripArgs = cc.Package, cc.Renames, cc.GoNames, cc.Overrides, cc.StripArgs
		c.cfg.Resources = cc.Resources
		c.cfg.Gate = cc.Gate
		c.cfg.InputExtras = cc.InputExtras
		c.cfg.KeepShapesApart = cc.KeepShapesApart
		c.cfg.CheckFormats = cc.CheckFormats
		out = append(out, c)
	}
	return out
}

// got returns the want/* files (or want.err) that the current generator
// produces for c.
func (c *goldenCase) got() (map[string]string, error) {
	files, err := Generate(c.cfg)
	out := map[string]string{}
	if err != nil {
		out["want.err"] = err.Error() + "\n"
		return out, err
	}
	for n, b := range files {
		out["want/"+n] = string(b)
	}
	return out, nil
}

func (c *goldenCase) want() map[string]string {
	out := map[string]string{}
	for _, f := range c.ar.Files {
		if f.Name == "want.err" || strings.HasPrefix(f.Name, "want/") {
			out[f.Name] = string(f.Data)
		}
	}
	return out
}

func TestGolden(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.name, func(t *testing.T) {
			got, _ := c.got()
			if *update {
				var keep []txtar.File
				for _, f := range c.ar.Files {
					if f.Name != "want.err" && !strings.HasPrefix(f.Name, "want/") {
						keep = append(keep, f)
					}
				}
				for _, n := range slices.Sorted(maps.Keys(got)) {
					keep = append(keep, txtar.File{Name: n, Data: []byte(got[n])})
				}
				c.ar.Files = keep
				if err := os.WriteFile(c.path, txtar.Format(c.ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if d := cmp.Diff(c.want(), got); d != "" {
				t.Errorf("%s: generated output differs (-want +got); run go test ./gen -run TestGolden -update\n%s", c.path, d)
			}
		})
	}
}

var headerRE = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// TestGoldenProperties checks what must hold for every case: the header
// follows Go's generated-code convention, output is deterministic and does
// not depend on tool order, and errors are positioned.
func TestGoldenProperties(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.got()
			again, _ := c.got()
			if d := cmp.Diff(got, again); d != "" {
				t.Fatalf("two runs differ:\n%s", d)
			}
			if err != nil {
				for _, line := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
					if !positioned.MatchString(line) && !strings.HasPrefix(line, "mcpgen: ") {
						t.Errorf("error line is neither positioned nor prefixed: %q", line)
					}
				}
				return
			}
			for n, src := range got {
				first, _, _ := strings.Cut(src, "\n")
				if !headerRE.MatchString(first) {
					t.Errorf("%s: header %q does not match %s", n, first, headerRE)
				}
				if strings.Contains(src, "/tmp/") || strings.Contains(src, "/work/") {
					t.Errorf("%s: output mentions an absolute path", n)
				}
				if f, err := format.Source([]byte(src)); err != nil || string(f) != src {
					t.Errorf("%s: output is not as gofmt writes it (%v)", n, err)
				}
			}
			shuffled := c.cfg
			shuffled.Inputs = nil
			for _, in := range c.cfg.Inputs {
				shuffled.Inputs = append([]Input{{Name: in.Name, Data: reverseTools(t, in.Data)}}, shuffled.Inputs...)
			}
			files, err := Generate(shuffled)
			if err != nil {
				t.Fatalf("shuffled tools: %v", err)
			}
			for n, b := range files {
				if got["want/"+n] != string(b) {
					t.Errorf("%s: output changes when the tools are listed in reverse order", n)
				}
			}
		})
	}
}

var positioned = regexp.MustCompile(`^[^:]+:\d+:\d+: (/\S*: )?\S`)

// reverseTools reverses the tools array of a tools/list result or manifest.
func reverseTools(t *testing.T, data []byte) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil || top["tools"] == nil {
		return data
	}
	var tools []json.RawMessage
	if json.Unmarshal(top["tools"], &tools) != nil {
		return data
	}
	slices.Reverse(tools)
	top["tools"], _ = json.Marshal(tools)
	out, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestErrorsArePositioned(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"malformed", `{"tools": [`, "x.json:1:12: invalid JSON"},
		{"remote ref", `{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"p":{"$ref":"https://example.com/s.json"}}}}]}`,
			`x.json:1:80: /tools/0/inputSchema/properties/p/$ref: tool "a" input schema: $ref "https://example.com/s.json" is not local`},
		{"unknown type", `{"name":"a","inputSchema":{"type":"object","properties":{"p":{"type":"strung"}}}}`,
			`x.json:1:70: /inputSchema/properties/p/type: tool "a" input schema: unknown type "strung"`},
		{"bad package", ``, `mcpgen: package name "func" is not a valid Go package name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pkg := "p"
			if tc.name == "bad package" {
				pkg = "func"
			}
			_, err := Generate(Config{Package: pkg, Inputs: []Input{{Name: "x.json", Data: []byte(tc.in)}}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func ExampleGenerate() {
	files, err := Generate(Config{Package: "weather", Inputs: []Input{{Name: "weather.json", Data: []byte(`{
		"name": "get_forecast",
		"inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
	}`)}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for name := range files {
		fmt.Println(name)
	}
	// Output: weather.mcp.go
}
