package gen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpgen/mcpgen/gen/internal/ident"
	"github.com/mcpgen/mcpgen/gen/internal/ir"
	"github.com/mcpgen/mcpgen/internal/testcorpus"
)

// compileUnit is one generated package in the scratch module.
type compileUnit struct {
	dir   string // under the module root
	files map[string][]byte
	roots []*ir.Root
	// given holds hand-written expectations: root key → valid / invalid.
	given map[string]*instanceSet
	// random asks for generated instances per root.
	random int
}

// TestGoldenCompiles writes every golden output, the GitHub MCP server
// corpus and server-everything's live tools/list into one scratch module,
// runs go vet on it, and runs a generated driver over instances: the
// generated decoders and validators must agree with
// santhosh-tekuri/jsonschema on valid versus invalid, and every valid
// instance must decode and re-encode to the same JSON value.
func TestGoldenCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles generated code with the go command; skipped with -short")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	var units []*compileUnit
	for _, c := range loadCases(t) {
		p, err := plan(c.cfg)
		if err != nil {
			continue // an error case; TestGolden covers it
		}
		files, err := Generate(c.cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		u := &compileUnit{dir: "cases/" + c.cfg.Package, files: files, roots: p.roots, given: map[string]*instanceSet{}, random: 30}
		if strings.HasPrefix(c.name, "unions") {
			u.random = 300 // unions within unions: many values that two variants accept
		}
		for i := range c.instances {
			in := &c.instances[i]
			u.given[in.Tool+"/"+in.Role] = in
		}
		units = append(units, u)
	}
	// The corpus parts run as subtests only to report their absence: a SKIP
	// line with the reason, or a failure under CI=true.
	var github, everything []byte
	t.Run("github-corpus", func(t *testing.T) { github = testcorpus.Require(t, testcorpus.GitHubTools) })
	if github != nil {
		units = append(units, corpusUnit(t, "corpus/github", "github", "github-mcp-server/tools-list.json", github))
	}
	t.Run("server-everything", func(t *testing.T) { everything = everythingToolsList(t) })
	if everything != nil {
		units = append(units, corpusUnit(t, "corpus/everything", "everything", "server-everything/tools-list.json", everything))
	}

	dir := t.TempDir()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", []byte("module mcpgentest\n\ngo 1.26.0\n\nrequire github.com/mcpgen/mcpgen v0.0.0\n\nreplace github.com/mcpgen/mcpgen => "+root+"\n"))
	if sum, err := os.ReadFile(filepath.Join(root, "go.sum")); err == nil {
		write("go.sum", sum)
	}
	var reqs []driverRequest
	var verdicts []verdict
	// Roots the reference validator checks, and those it cannot, per unit.
	refRoots, unchecked := map[string]int{}, map[string]int{}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, u := range units {
		for n, b := range u.files {
			write(u.dir+"/"+n, b)
		}
		for _, r := range u.roots {
			key := r.Schema.Tool + "/" + r.Schema.Role
			sch, exact, why := compileSchema(r)
			if sch == nil {
				t.Logf("%s %s: no differential check: %s", u.dir, key, why)
				unchecked[u.dir]++
			} else {
				refRoots[u.dir]++
			}
			// An output is valid under its schema as written or as its
			// tolerant decoders read it (tolerate).
			strict := compileStrict(r)
			add := func(inst json.RawMessage, want *bool) {
				v := verdict{unit: u, root: r, key: key, inst: inst, given: want, exact: exact}
				if sch != nil {
					inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(inst))
					if err != nil {
						t.Fatalf("%s %s: instance %s: %v", u.dir, key, inst, err)
					}
					ok := sch.Validate(inst) == nil
					if !ok && strict != nil {
						ok = strict.Validate(inst) == nil
					}
					v.ref = &ok
				}
				reqs = append(reqs, driverRequest{Root: u.dir + "#" + key, Data: inst})
				verdicts = append(verdicts, v)
			}
			if g := u.given[key]; g != nil {
				yes, no := true, false
				for _, in := range g.Valid {
					add(in, &yes)
				}
				for _, in := range g.Invalid {
					add(in, &no)
				}
			}
			var schemaDoc any
			_ = json.Unmarshal(r.Schema.Data, &schemaDoc)
			for range u.random {
				inst, _ := json.Marshal(genInstance(rng, schemaDoc, schemaDoc, 0))
				add(inst, nil)
			}
		}
	}
	write("driver/main.go", driverSource(units))
	reqData, _ := json.Marshal(reqs)
	write("requests.json", reqData)

	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off")
	run := func(args ...string) []byte {
		cmd := exec.Command(goCmd, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	run("vet", "./...")
	run("build", "-o", "driver.bin", "./driver")
	cmd := exec.Command(filepath.Join(dir, "driver.bin"), filepath.Join(dir, "requests.json"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("driver: %v\n%s", err, stderr.Bytes())
	}
	var results []driverResult
	if err := json.Unmarshal(out, &results); err != nil || len(results) != len(reqs) {
		t.Fatalf("driver output: %v (%d results for %d requests)", err, len(results), len(reqs))
	}
	var checked, roundTrips, invoked int
	for i, v := range verdicts {
		res := results[i]
		where := fmt.Sprintf("%s %s instance %s", v.unit.dir, v.key, v.inst)
		if v.given != nil && *v.given != res.OK {
			t.Errorf("%s: generated code says valid=%v, the case says %v (%s)", where, res.OK, *v.given, res.Err)
		}
		if v.ref != nil {
			if v.given != nil && *v.given != *v.ref {
				t.Errorf("%s: jsonschema says valid=%v, the case says %v", where, *v.ref, *v.given)
			}
			switch {
			case v.exact && *v.ref != res.OK:
				t.Errorf("%s: generated code says valid=%v, jsonschema says %v (%s)", where, res.OK, *v.ref, res.Err)
			case !v.exact && res.OK && !*v.ref:
				// Fallbacks may accept more than the schema, never less.
			case !v.exact && !res.OK && *v.ref:
				t.Errorf("%s: generated code rejects a valid instance: %s", where, res.Err)
			}
			checked++
		}
		// Invoke drops an identity argument a model sends (the runtime sets
		// it), where the decoder rejects the unknown member.
		if res.Sent != nil && !hasAnyMember(v.inst, v.root.Schema.Strip) {
			if *res.Sent != res.OK {
				t.Errorf("%s: Invoke sent the arguments: %v; the decoder accepts them: %v (%s)", where, *res.Sent, res.OK, res.Err)
			}
			invoked++
		}
		if res.OK {
			// An open input that keeps no undeclared members drops them in
			// a round trip (config inputExtras): the value must come back
			// without them, with nothing changed or added.
			if dropsMembers(v.root.Type, map[*ir.Type]bool{}) {
				if !subsetJSON(res.Out, v.inst) {
					t.Errorf("%s: round trip changed the value to %s", where, res.Out)
				}
			} else if !sameJSON(v.inst, res.Out) {
				t.Errorf("%s: round trip changed the value to %s", where, res.Out)
			}
			if !res.Stable {
				t.Errorf("%s: decoding the re-encoded value and encoding again gives different bytes", where)
			}
			roundTrips++
		}
	}
	t.Logf("%d units, %d instances, %d checked against jsonschema, %d round trips, %d through Invoke", len(units), len(reqs), checked, roundTrips, invoked)
	// A floor for the differential check, so that it cannot fade away root
	// by root: every corpus root is checked against the reference validator
	// (real servers' schemas are what it is for), and at least 95% of all
	// roots are.
	var ref, all int
	for _, u := range units {
		ref += refRoots[u.dir]
		all += refRoots[u.dir] + unchecked[u.dir]
		if strings.HasPrefix(u.dir, "corpus/") && (unchecked[u.dir] > 0 || refRoots[u.dir] == 0) {
			t.Errorf("%s: the reference validator checks %d roots and cannot check %d (see the log); every corpus root must be checked", u.dir, refRoots[u.dir], unchecked[u.dir])
		}
	}
	if ref*100 < all*95 {
		t.Errorf("the reference validator checks %d of %d roots, under the floor of 95%%", ref, all)
	}
}

func hasAnyMember(inst json.RawMessage, names []string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(inst, &m) != nil {
		return false
	}
	for _, n := range names {
		if _, ok := m[n]; ok {
			return true
		}
	}
	return false
}

type verdict struct {
	unit  *compileUnit
	root  *ir.Root
	key   string
	inst  json.RawMessage
	given *bool
	ref   *bool
	exact bool
}

type driverRequest struct {
	Root string          `json:"root"`
	Data json.RawMessage `json:"data"`
}

type driverResult struct {
	OK     bool            `json:"ok"`
	Err    string          `json:"err"`
	Out    json.RawMessage `json:"out"`
	Stable bool            `json:"stable"`
	// Sent says whether the tool's Invoke sent the instance as arguments
	// (input roots, object instances only).
	Sent *bool `json:"sent"`
}

func corpusUnit(t *testing.T, dir, pkg, name string, data []byte) *compileUnit {
	t.Helper()
	cfg := Config{Package: pkg, Inputs: []Input{{Name: name, Data: data}}}
	p, err := plan(cfg)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	files, err := Generate(cfg)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &compileUnit{dir: dir, files: files, roots: p.roots, random: 12}
}

// compileSchema compiles the root's schema with the reference validator and
// says whether the generated code should agree exactly (no documented
// fallback anywhere in the type).
func compileSchema(r *ir.Root) (*jsonschema.Schema, bool, string) {
	if len(r.Schema.Strip) > 0 {
		return nil, false, "arguments are stripped"
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Schema.Data))
	if err != nil {
		return nil, false, err.Error()
	}
	// format is an annotation for mcpgen (documented, not checked), while
	// the reference validator asserts it for draft-07; compare without it.
	if r.Schema.CheckFormats {
		keepCheckedFormats(doc)
	} else {
		dropFormat(doc)
	}
	if r.Schema.Tolerant() {
		tolerate(doc)
	}
	c := jsonschema.NewCompiler()
	if r.Schema.CheckFormats {
		c.AssertFormat()
	}
	if err := c.AddResource("mem:///schema.json", doc); err != nil {
		return nil, false, err.Error()
	}
	sch, err := c.Compile("mem:///schema.json")
	if err != nil {
		return nil, false, "jsonschema cannot compile it: " + err.Error()
	}
	return sch, exactType(r.Type, map[*ir.Type]bool{}), ""
}

func exactType(t *ir.Type, seen map[*ir.Type]bool) bool {
	if t == nil || seen[t] {
		return true
	}
	seen[t] = true
	if len(t.Notes) > 0 || t.Kind == ir.Raw && t.RawReason != "" && !strings.HasPrefix(t.RawReason, "the schema") && t.RawReason != "undeclared member" && t.RawReason != "required member without a schema" {
		return false
	}
	for _, p := range t.C.Patterns {
		if p.Go == "" {
			return false
		}
	}
	ok := exactType(t.Elem, seen) && exactType(t.Extra, seen)
	for _, f := range t.Fields {
		ok = ok && exactType(f.Type, seen)
	}
	for _, v := range t.Variants {
		ok = ok && exactType(v.Type, seen)
	}
	return ok
}

func driverSource(units []*compileUnit) []byte {
	var b bytes.Buffer
	b.WriteString("package main\n\nimport (\n\t\"encoding/json\"\n\t\"os\"\n\t\"bytes\"\n")
	for i, u := range units {
		fmt.Fprintf(&b, "\tp%d %q\n", i, "mcpgentest/"+u.dir)
	}
	b.WriteString("\t\"context\"\n\t\"time\"\n\tmcpruntime \"github.com/mcpgen/mcpgen/runtime\"\n")
	b.WriteString(")\n\n")
	// invokes calls each tool's factory over a Caller that records what it
	// is sent: a model's arguments must reach the server exactly when the
	// generated decoder and validator accept them.
	b.WriteString("var invokes = map[string]func([]byte) (bool, error){\n")
	for i, u := range units {
		for _, r := range u.roots {
			if r.Schema.Role != "Input" {
				continue
			}
			fmt.Fprintf(&b, "\t%q: func(data []byte) (bool, error) {\n", u.dir+"#"+r.Schema.Tool+"/"+r.Schema.Role)
			fmt.Fprintf(&b, "\t\tvar f fake\n\t\tm, err := p%d.New%s(&f, identity).Invoke(context.Background(), data)\n", i, ident.Ident(r.Schema.Bare))
			b.WriteString("\t\treturn m.Result != nil && f.calls == 1, err\n\t},\n")
		}
	}
	b.WriteString(`}

var identity = mcpruntime.WithIdentity(func(context.Context) (mcpruntime.Principal, error) {
	return mcpruntime.Principal{ID: "p", Token: "t"}, nil
})

type fake struct{ calls int }

func (f *fake) CallTool(context.Context, string, json.RawMessage) (*mcpruntime.Result, error) {
	f.calls++
	return &mcpruntime.Result{Content: []mcpruntime.Content{{Type: mcpruntime.ContentText, Text: "ok"}}}, nil
}

// A tool that runs only as a task is started as one; the fake runs it at
// once, as a server may.
func (f *fake) StartTool(ctx context.Context, name string, args json.RawMessage, _ time.Duration) (*mcpruntime.Result, error) {
	return f.CallTool(ctx, name, args)
}

func (f *fake) TaskStatus(context.Context, mcpruntime.TaskRef) (mcpruntime.TaskStatus, error) {
	return mcpruntime.TaskStatus{}, nil
}

func (f *fake) TaskResult(context.Context, mcpruntime.TaskRef) (*mcpruntime.Result, error) { return nil, nil }

func (f *fake) CancelTask(context.Context, mcpruntime.TaskRef) (mcpruntime.TaskStatus, error) {
	return mcpruntime.TaskStatus{}, nil
}

var roots = map[string]func([]byte) ([]byte, []byte, error){
`)
	for i, u := range units {
		for _, r := range u.roots {
			fmt.Fprintf(&b, "\t%q: func(data []byte) ([]byte, []byte, error) {\n", u.dir+"#"+r.Schema.Tool+"/"+r.Schema.Role)
			fmt.Fprintf(&b, "\t\tv, err := p%d.Decode%s(data)\n\t\tif err != nil {\n\t\t\treturn nil, nil, err\n\t\t}\n", i, r.Type.GoName)
			b.WriteString("\t\tif err := v.Validate(); err != nil {\n\t\t\treturn nil, nil, err\n\t\t}\n")
			b.WriteString("\t\tout, err := json.Marshal(v)\n\t\tif err != nil {\n\t\t\treturn nil, nil, err\n\t\t}\n")
			fmt.Fprintf(&b, "\t\tw, err := p%d.Decode%s(out)\n\t\tif err != nil {\n\t\t\treturn out, nil, err\n\t\t}\n", i, r.Type.GoName)
			b.WriteString("\t\tagain, err := json.Marshal(w)\n\t\treturn out, again, err\n\t},\n")
		}
	}
	b.WriteString(`}

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var reqs []struct {
		Root string          ` + "`json:\"root\"`" + `
		Data json.RawMessage ` + "`json:\"data\"`" + `
	}
	if err := json.Unmarshal(data, &reqs); err != nil {
		panic(err)
	}
	type result struct {
		OK     bool            ` + "`json:\"ok\"`" + `
		Err    string          ` + "`json:\"err\"`" + `
		Out    json.RawMessage ` + "`json:\"out\"`" + `
		Stable bool            ` + "`json:\"stable\"`" + `
		Sent   *bool           ` + "`json:\"sent\"`" + `
	}
	var out []result
	for _, r := range reqs {
		var res result
		enc, again, err := roots[r.Root](r.Data)
		if err != nil {
			res.Err = err.Error()
		} else {
			res = result{OK: true, Out: enc, Stable: bytes.Equal(enc, again)}
		}
		if inv := invokes[r.Root]; inv != nil && bytes.HasPrefix(bytes.TrimSpace(r.Data), []byte("{")) {
			sent, err := inv(r.Data)
			if err != nil {
				panic(err)
			}
			res.Sent = &sent
		}
		out = append(out, res)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}
`)
	return b.Bytes()
}

// everythingToolsList captures server-everything's tools/list result over
// stdio with raw JSON-RPC (mcp-go's client drops schema keywords). It
// skips t when node or the package is missing, unless CI is set, where that
// is a failure.
func everythingToolsList(t *testing.T) []byte {
	t.Helper()
	script, _ := filepath.Abs("../tools/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(script)
	}
	if err != nil {
		testcorpus.Missing(t, fmt.Errorf("server-everything is not available: %v (run npm ci --prefix tools/npm)", err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, "stdio")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting server-everything: %v", err)
	}
	defer func() {
		stdin.Close()
		cancel()
		_ = cmd.Wait()
	}()
	send := func(s string) {
		if _, err := stdin.Write([]byte(s + "\n")); err != nil {
			t.Fatalf("writing to server-everything: %v", err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpgen-test","version":"0"}}}`)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	read := func(id int) json.RawMessage {
		for sc.Scan() {
			var msg struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil || *msg.ID != id {
				continue // notifications and log lines
			}
			if msg.Error != nil {
				t.Fatalf("server-everything: request %d failed: %s", id, msg.Error)
			}
			return msg.Result
		}
		t.Fatalf("server-everything closed its output before answering request %d: %v", id, sc.Err())
		return nil
	}
	read(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	return read(2)
}

// genInstance builds a random JSON value that is mostly shaped like the
// schema, with mutations, so that the differential test sees both valid
// and invalid instances near the schema's edges. It is deliberately
// sloppy: the reference validator decides what is valid.
func genInstance(rng *rand.Rand, root, s any, depth int) any {
	if depth > 6 {
		return nil
	}
	m, ok := s.(map[string]any)
	if !ok {
		return randomScalar(rng)
	}
	if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#") {
		cur := root
		for _, tok := range strings.Split(strings.TrimPrefix(ref[1:], "/"), "/") {
			if tok == "" {
				continue
			}
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			if mm, ok := cur.(map[string]any); ok {
				cur = mm[tok]
			}
		}
		return genInstance(rng, root, cur, depth+1)
	}
	if rng.IntN(12) == 0 {
		return randomScalar(rng) // mutation: anything
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[rng.IntN(len(e))]
	}
	if c, ok := m["const"]; ok {
		return c
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if vs, ok := m[k].([]any); ok && len(vs) > 0 {
			v := genInstance(rng, root, vs[rng.IntN(len(vs))], depth+1)
			if obj, ok := v.(map[string]any); ok && rng.IntN(3) == 0 {
				// The members of another variant too: a value that two
				// variants of a union accept, or neither.
				if other, ok := genInstance(rng, root, vs[rng.IntN(len(vs))], depth+1).(map[string]any); ok {
					for k, x := range other {
						if _, dup := obj[k]; !dup {
							obj[k] = x
						}
					}
				}
			}
			if obj, ok := v.(map[string]any); ok && m["properties"] != nil {
				base := genInstance(rng, root, withoutKeys(m, "oneOf", "anyOf"), depth+1)
				if bo, ok := base.(map[string]any); ok {
					for k, x := range bo {
						if _, dup := obj[k]; !dup {
							obj[k] = x
						}
					}
				}
			}
			return v
		}
	}
	if all, ok := m["allOf"].([]any); ok && len(all) > 0 {
		merged := map[string]any{}
		for _, p := range all {
			if v, ok := genInstance(rng, root, p, depth+1).(map[string]any); ok {
				for k, x := range v {
					merged[k] = x
				}
			}
		}
		if len(merged) > 0 {
			return merged
		}
		return genInstance(rng, root, all[0], depth+1)
	}
	typ := ""
	switch tv := m["type"].(type) {
	case string:
		typ = tv
	case []any:
		typ, _ = tv[rng.IntN(len(tv))].(string)
	}
	if typ == "" {
		switch {
		case m["properties"] != nil:
			typ = "object"
		case m["items"] != nil:
			typ = "array"
		default:
			return randomScalar(rng)
		}
	}
	num := func(k string, def float64) float64 {
		if f, ok := m[k].(float64); ok {
			return f
		}
		return def
	}
	switch typ {
	case "string":
		pool := []string{"", "a", "ab", "hello world", "ñé", "x-1/y", "A1", "in_progress", "open", "2024-01-01"}
		s := pool[rng.IntN(len(pool))]
		if n := int(num("minLength", 0)); len([]rune(s)) < n && rng.IntN(3) > 0 {
			s += strings.Repeat("z", n)
		}
		return s
	case "integer":
		lo, hi := num("minimum", -3), num("maximum", 50)
		if hi < lo {
			hi = lo
		}
		return float64(int64(lo) + rng.Int64N(int64(hi-lo)+3) - 1)
	case "number":
		lo, hi := num("minimum", -3), num("maximum", 50)
		return lo + float64(rng.IntN(int(max(hi-lo, 0))+2)) + []float64{0, 0.5, 0.25, 0.01}[rng.IntN(4)] - 0.5
	case "boolean":
		return rng.IntN(2) == 0
	case "null":
		return nil
	case "array":
		n := rng.IntN(4)
		if mi := int(num("minItems", 0)); n < mi && rng.IntN(3) > 0 {
			n = mi
		}
		out := []any{}
		for range n {
			out = append(out, genInstance(rng, root, m["items"], depth+1))
		}
		return out
	case "object":
		out := map[string]any{}
		req := map[string]bool{}
		if r, ok := m["required"].([]any); ok {
			for _, x := range r {
				if s, ok := x.(string); ok {
					req[s] = true
				}
			}
		}
		if props, ok := m["properties"].(map[string]any); ok {
			keys := slices.Sorted(mapKeys(props))
			for _, k := range keys {
				if req[k] && rng.IntN(20) > 0 || !req[k] && rng.IntN(2) == 0 {
					out[k] = genInstance(rng, root, props[k], depth+1)
				}
			}
		}
		if ap, ok := m["additionalProperties"]; !ok || ap != false || rng.IntN(10) == 0 {
			if rng.IntN(4) == 0 {
				if ap == nil || ap == true || ap == false {
					out["extra_member"] = randomScalar(rng)
				} else {
					out["extra_member"] = genInstance(rng, root, ap, depth+1)
				}
			}
		}
		return out
	}
	return randomScalar(rng)
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func withoutKeys(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

func randomScalar(rng *rand.Rand) any {
	switch rng.IntN(7) {
	case 0:
		return nil
	case 1:
		return "s"
	case 2:
		return float64(rng.IntN(10))
	case 3:
		return 1.5
	case 4:
		return true
	case 5:
		return []any{}
	}
	return map[string]any{}
}

// dropFormat removes the format keyword from every subschema.
func dropFormat(s any) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	if _, ok := m["format"].(string); ok {
		delete(m, "format")
	}
	for _, k := range []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"} {
		dropFormat(m[k])
	}
	for _, k := range []string{"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"} {
		if mm, ok := m[k].(map[string]any); ok {
			for _, v := range mm {
				dropFormat(v)
			}
		}
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf", "prefixItems", "items"} {
		if l, ok := m[k].([]any); ok {
			for _, v := range l {
				dropFormat(v)
			}
		}
	}
}

// sameJSON reports whether a and b are the same JSON value: numbers by
// value, objects regardless of member order.
func sameJSON(a, b []byte) bool {
	norm := func(data []byte) (any, bool) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return nil, false
		}
		return normNumbers(v), true
	}
	x, ok1 := norm(a)
	y, ok2 := norm(b)
	return ok1 && ok2 && reflect.DeepEqual(x, y)
}

func normNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = normNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = normNumbers(e)
		}
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(v)); ok {
			return r.RatString()
		}
	}
	return v
}

// tolerate rewrites an output schema into what its generated decoders
// accept by design (forward compatibility): closed objects open, and an
// enum (or a oneOf/anyOf of consts) becomes the JSON types of its values.
func tolerate(s any) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	if m["additionalProperties"] == false {
		delete(m, "additionalProperties")
	}
	typesOf := func(vals []any) []any {
		var ts []any
		add := func(t string) {
			if !slices.Contains(ts, any(t)) {
				ts = append(ts, t)
			}
		}
		for _, v := range vals {
			switch v := v.(type) {
			case string:
				add("string")
			case float64:
				if v == float64(int64(v)) {
					add("integer")
				} else {
					add("number")
				}
			case bool:
				add("boolean")
			case nil:
				add("null")
			case []any:
				add("array")
			case map[string]any:
				add("object")
			}
		}
		if slices.Contains(ts, any("number")) {
			ts = slices.DeleteFunc(ts, func(t any) bool { return t == "integer" })
		}
		return ts
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 1 { // one value is a const
		delete(m, "enum")
		if _, typed := m["type"]; !typed {
			m["type"] = typesOf(e)
		}
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		l, ok := m[k].([]any)
		if !ok || len(l) == 0 {
			continue
		}
		var consts []any
		for _, v := range l {
			vm, ok := v.(map[string]any)
			c, has := vm["const"]
			if !ok || !has || len(withoutKeys(vm, "const", "title", "description")) > 0 {
				consts = nil
				break
			}
			consts = append(consts, c)
		}
		if consts != nil {
			delete(m, k)
			if _, typed := m["type"]; !typed {
				m["type"] = typesOf(consts)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"} {
		tolerate(m[k])
	}
	for _, k := range []string{"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"} {
		if mm, ok := m[k].(map[string]any); ok {
			for _, v := range mm {
				tolerate(v)
			}
		}
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf", "prefixItems", "items"} {
		if l, ok := m[k].([]any); ok {
			for _, v := range l {
				tolerate(v)
			}
		}
	}
}

// dropsMembers reports whether t or a type in it is an open struct with no
// field for undeclared members.
func dropsMembers(t *ir.Type, seen map[*ir.Type]bool) bool {
	if t == nil || seen[t] {
		return false
	}
	seen[t] = true
	if t.Kind == ir.Struct && !t.Closed && t.Extra == nil {
		return true
	}
	if dropsMembers(t.Elem, seen) || dropsMembers(t.Extra, seen) {
		return true
	}
	for _, f := range t.Fields {
		if dropsMembers(f.Type, seen) {
			return true
		}
	}
	for _, v := range t.Variants {
		if dropsMembers(v.Type, seen) {
			return true
		}
	}
	return false
}

// subsetJSON reports whether a is b with some object members left out:
// every member of a is in b with a value that is subsetJSON too, arrays
// have the same length, and scalars are the same value.
func subsetJSON(a, b []byte) bool {
	norm := func(data []byte) any {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return struct{}{}
		}
		return normNumbers(v)
	}
	var sub func(x, y any) bool
	sub = func(x, y any) bool {
		switch x := x.(type) {
		case map[string]any:
			ym, ok := y.(map[string]any)
			if !ok {
				return false
			}
			for k, v := range x {
				if w, ok := ym[k]; !ok || !sub(v, w) {
					return false
				}
			}
			return true
		case []any:
			ya, ok := y.([]any)
			if !ok || len(x) != len(ya) {
				return false
			}
			for i := range x {
				if !sub(x[i], ya[i]) {
					return false
				}
			}
			return true
		}
		return reflect.DeepEqual(x, y)
	}
	return sub(norm(a), norm(b))
}

// keepCheckedFormats is dropFormat for the formats generated code does not
// check with config checkFormats: the others stay, for the reference
// validator to assert.
func keepCheckedFormats(s any) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	if f, ok := m["format"].(string); ok && !slices.Contains(ir.CheckedFormats, f) {
		delete(m, "format")
	}
	for _, v := range m {
		switch v := v.(type) {
		case map[string]any:
			keepCheckedFormats(v)
		case []any:
			for _, e := range v {
				keepCheckedFormats(e)
			}
		}
	}
}

// compileStrict compiles a tolerant root's schema as written (formats
// aside), or returns nil.
func compileStrict(r *ir.Root) *jsonschema.Schema {
	if !r.Schema.Tolerant() || len(r.Schema.Strip) > 0 {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Schema.Data))
	if err != nil {
		return nil
	}
	if r.Schema.CheckFormats {
		keepCheckedFormats(doc)
	} else {
		dropFormat(doc)
	}
	c := jsonschema.NewCompiler()
	if r.Schema.CheckFormats {
		c.AssertFormat()
	}
	if c.AddResource("mem:///strict.json", doc) != nil {
		return nil
	}
	sch, err := c.Compile("mem:///strict.json")
	if err != nil {
		return nil
	}
	return sch
}
