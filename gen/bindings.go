package gen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpgen/mcpgen/runtime/mcpimpl"

	"github.com/mcpgen/mcpgen/gen/internal/emit"
	"github.com/mcpgen/mcpgen/gen/internal/ident"
	"github.com/mcpgen/mcpgen/gen/internal/ir"
	"github.com/mcpgen/mcpgen/gen/internal/names"
	"github.com/mcpgen/mcpgen/gen/internal/par"
	"github.com/mcpgen/mcpgen/manifest"
)

// ToolInfo describes the binding generated for one tool.
type ToolInfo struct {
	// Input is the name of the input the tool comes from.
	Input string
	// Name is the wire name; GoName the Go name of the tool (its Client
	// method), Factory its New<Tool> function.
	Name, GoName, Factory string
	Title, Description    string
	// InputType and OutputType are the generated types; OutputType is ""
	// when the tool declares no output schema (mcpruntime.NoOutput).
	InputType, OutputType string
	Annotations           ToolAnnotations
	// IdentityArgument is the argument the runtime fills with the caller's
	// token, left out of InputType; "" for none.
	IdentityArgument string
	// SchemaHash is the descriptor's SchemaHash (see SchemaHash).
	SchemaHash string
	// Raw lists the members whose values the bindings keep as raw JSON,
	// each with the reason its generated comment gives.
	Raw []RawField
}

// RawField is a member (or the items or values of one) kept as raw JSON.
type RawField struct {
	// Role is "Input" or "Output"; Pointer locates the schema within the
	// tool's input or output schema.
	Role, Pointer, Reason string
}

// rawFields lists the raw members reachable from t, in schema order.
func rawFields(t *ir.Type) []RawField {
	var out []RawField
	seen := map[*ir.Type]bool{}
	var walk func(t *ir.Type)
	walk = func(t *ir.Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		for _, f := range t.Fields {
			e := f.Type
			for e != nil && !e.Named && (e.Kind == ir.Array || e.Kind == ir.Map) {
				e = e.Elem
			}
			if f.Fixed == "" && e != nil && e.Kind == ir.Raw && e.RawReason != "" {
				ptr := e.Loc.Pointer
				if e == f.Type {
					ptr = f.Loc.Pointer
				}
				out = append(out, RawField{Role: f.Loc.Schema.Role, Pointer: ptr, Reason: e.RawReason})
			}
			walk(f.Type)
		}
		walk(t.Elem)
		for _, v := range t.Variants {
			walk(v.Type)
		}
	}
	walk(t)
	return out
}

// ToolAnnotations are a tool's behaviour hints with the specification's
// defaults applied.
type ToolAnnotations struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
	// Defaulted lists the hints the server did not send (readOnlyHint,
	// destructiveHint, idempotentHint, openWorldHint), or sent with a value
	// that is not a boolean; their defaults apply.
	Defaulted []string
}

// Describe returns what Generate would bind for each tool, sorted by input
// and wire name, without rendering code. Its errors are Generate's. An
// empty cfg.Package is allowed.
func Describe(cfg Config) ([]ToolInfo, error) {
	if cfg.Package == "" {
		cfg.Package = "bindings"
	}
	p, err := plan(cfg)
	if err != nil {
		return nil, err
	}
	var out []ToolInfo
	for _, s := range p.inputs {
		for _, t := range s.tools {
			ti := ToolInfo{
				Input: s.in.Name, Name: t.Name, GoName: t.GoName, Factory: emit.Factory(t.GoName),
				Title: t.Title, Description: t.Description, InputType: t.Input.Type.GoName,
				IdentityArgument: t.IdentityArg, SchemaHash: t.SchemaHash,
				Annotations: ToolAnnotations{ReadOnly: t.Annotations.ReadOnly, Destructive: t.Annotations.Destructive,
					Idempotent: t.Annotations.Idempotent, OpenWorld: t.Annotations.OpenWorld,
					Defaulted: append(slices.Clone(t.Annotations.Defaulted), t.Annotations.Invalid...)},
			}
			ti.Raw = rawFields(t.Input.Type)
			if t.Output != nil {
				ti.OutputType = t.Output.Type.GoName
				ti.Raw = append(ti.Raw, rawFields(t.Output.Type)...)
			}
			out = append(out, ti)
		}
	}
	return out, nil
}

// SchemaHash identifies a tool's schemas as a server publishes them:
// "sha256:" and the hex SHA-256 of the canonical JSON of an object holding
// the tool's inputSchema and, when present, outputSchema (members sorted,
// no insignificant space, strings escaped as encoding/json does without
// HTML escaping, numbers as written). tool is the tool object from
// tools/list or a manifest. Generated descriptors carry it, computed from
// the manifest before overrides and stripped arguments, so that a live
// server can be compared with the bindings.
func SchemaHash(tool json.RawMessage) (string, error) {
	var t map[string]json.RawMessage
	if err := json.Unmarshal(tool, &t); err != nil {
		return "", fmt.Errorf("tool: %w", err)
	}
	both := map[string]any{}
	for _, k := range []string{"inputSchema", "outputSchema"} {
		raw := bytes.TrimSpace(t[k])
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return "", fmt.Errorf("%s: %w", k, err)
		}
		both[k] = v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(both); err != nil { // maps encode with sorted keys
		return "", err
	}
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// serverIdentity is the Descriptor.Server of the bindings generated from
// m: its id, "/", and its serverInfo name ("crm/crm"); "" when both are
// empty. Approvals are bound to it, so that the bindings of two servers
// with one tool name and schema do not spend each other's approvals when
// their runtime labels agree.
func serverIdentity(m *manifest.Manifest) string {
	var info struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(m.ServerInfo, &info) // an object, or absent: checked when read
	if m.ID == "" && info.Name == "" {
		return ""
	}
	return m.ID + "/" + info.Name
}

// hints are the annotation members with their specification defaults.
var hints = []struct {
	member string
	def    bool
	set    func(*emit.Annotations, bool)
}{
	{"readOnlyHint", false, func(a *emit.Annotations, v bool) { a.ReadOnly = v }},
	{"destructiveHint", true, func(a *emit.Annotations, v bool) { a.Destructive = v }},
	{"idempotentHint", false, func(a *emit.Annotations, v bool) { a.Idempotent = v }},
	{"openWorldHint", true, func(a *emit.Annotations, v bool) { a.OpenWorld = v }},
}

// annotations reads a tool's hints. A hint that is absent, or not a
// boolean, gets the specification's default, which is the cautious value
// (may write, may destroy, not idempotent, open world); the latter case is
// noted in the generated doc rather than failing generation, since the
// bindings' user cannot fix the server.
func annotations(raw json.RawMessage) emit.Annotations {
	var a emit.Annotations
	var m map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) > 0 && json.Unmarshal(raw, &m) != nil {
		a.Notes = append(a.Notes, fmt.Sprintf("The server's annotations are not a JSON object (%s); every default applies.", clip(raw)))
	}
	_ = json.Unmarshal(m["title"], &a.Title)
	for _, h := range hints {
		v, ok := m[h.member]
		var b bool
		switch {
		case !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")):
			b = h.def
			a.Defaulted = append(a.Defaulted, h.member)
		case json.Unmarshal(v, &b) != nil:
			b = h.def
			a.Invalid = append(a.Invalid, h.member)
			a.Notes = append(a.Notes, fmt.Sprintf("The server's %s is not a boolean (%s); the default, %t, applies.", h.member, clip(v), h.def))
		}
		h.set(&a, b)
	}
	return a
}

func clip(b []byte) string {
	var c bytes.Buffer
	if json.Compact(&c, b) != nil {
		c.Reset()
		c.Write(b)
	}
	s := c.String()
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

// prepareBindings fills each input's tools and server names, and returns
// the package-level names they declare (for the collision check) and the
// problems found.
func prepareBindings(srcs []*srcInput, schemas []*ir.Schema, fileOf map[*ir.Schema]*manifest.File, roots []*ir.Root, gate *GateConfig) ([]names.Decl, []names.Problem, []error) {
	type key struct {
		file       *manifest.File
		tool, role string
	}
	byTool := map[key]*ir.Schema{}
	for _, sc := range schemas {
		byTool[key{fileOf[sc], sc.Tool, sc.Role}] = sc
	}
	rootOf := map[*ir.Schema]*ir.Root{}
	for _, r := range roots {
		rootOf[r.Schema] = r
	}
	var decls []names.Decl
	var probs []names.Problem
	seen := map[string]*emit.Tool{}
	var errs []error
	for _, s := range srcs {
		s.server = emit.Server{Label: s.file.Manifest.ID, Identity: serverIdentity(s.file.Manifest)}
		if gate != nil {
			g := &emit.Gate{Default: gate.Default}
			for _, name := range slices.Sorted(maps.Keys(gate.Tools)) {
				g.Tools = append(g.Tools, emit.GateRule{Tool: name, Policy: gate.Tools[name]})
			}
			s.server.Gate = g
		}
		if s.server.Label == "" {
			s.server.Label = strings.TrimSuffix(path.Base(s.out), ".mcp.go")
		}
		if len(srcs) > 1 {
			base := strings.TrimSuffix(path.Base(s.out), ".mcp.go")
			s.server.Prefix = ident.Ident(base)
			if s.server.Prefix == "" {
				errs = append(errs, fmt.Errorf("mcpgen: %s: the input's name has no letters, digits or symbols to name its Client after; rename the file", s.in.Name))
				continue
			}
		}
		var first ir.Loc
		// Sorted by wire name: the order a server lists its tools in must
		// not show in the output.
		entries := slices.Clone(s.file.Manifest.Tools)
		slices.SortStableFunc(entries, func(a, b manifest.Entry) int { return strings.Compare(a.Key, b.Key) })
		// Each tool's own JSON work (decoding its members, compacting its
		// schemas, hashing them) runs on every core; the rest, which
		// compares tools, runs in order.
		type prepared struct {
			t        *emit.Tool
			in       *ir.Schema
			stripErr error
			hash     string
			hashErr  error
		}
		pre := make([]prepared, len(entries))
		par.Do(len(entries), func(i int) {
			e := entries[i]
			in := byTool[key{s.file, e.Key, "Input"}]
			if in == nil || rootOf[in] == nil {
				return // the tool had errors, reported elsewhere
			}
			var tool map[string]json.RawMessage
			_ = json.Unmarshal(e.Raw, &tool)
			t := &emit.Tool{Name: e.Key, GoName: ident.Ident(in.Bare), Input: rootOf[in], Annotations: annotations(tool["annotations"])}
			_ = json.Unmarshal(tool["title"], &t.Title)
			_ = json.Unmarshal(tool["description"], &t.Description)
			var exec struct {
				TaskSupport string `json:"taskSupport"`
			}
			if json.Unmarshal(tool["execution"], &exec) == nil && (exec.TaskSupport == "optional" || exec.TaskSupport == "required") {
				t.TaskSupport = exec.TaskSupport
			}
			if out := byTool[key{s.file, e.Key, "Output"}]; out != nil {
				t.Output = rootOf[out]
				t.OutputSchema = compact(out.Data)
			}
			p := prepared{t: t, in: in}
			switch len(in.Strip) {
			case 0:
				t.InputSchema = compact(in.Data)
			case 1:
				t.IdentityArg = in.Strip[0]
				t.InputSchema, p.stripErr = stripProperty(in.Data, t.IdentityArg)
			}
			p.hash, p.hashErr = SchemaHash(e.Raw)
			pre[i] = p
		})
		for i, e := range entries {
			t, in := pre[i].t, pre[i].in
			if t == nil {
				continue
			}
			loc := ir.Loc{Schema: in}
			if first.Schema == nil {
				first = loc
			}
			switch len(in.Strip) {
			case 0:
			case 1:
				if err := pre[i].stripErr; err != nil {
					probs = append(probs, names.Problem{Loc: loc, Msg: fmt.Sprintf("tool %q: removing the identity argument %q: %v", e.Key, t.IdentityArg, err)})
					continue
				}
			default:
				probs = append(probs, names.Problem{Loc: loc, Msg: fmt.Sprintf("tool %q: stripArgs lists %d arguments; a tool has at most one, the argument that carries the caller's identity", e.Key, len(in.Strip))})
				continue
			}
			if err := pre[i].hashErr; err != nil {
				probs = append(probs, names.Problem{Loc: loc, Msg: fmt.Sprintf("tool %q: schema hash: %v", e.Key, err)})
				continue
			}
			t.SchemaHash = pre[i].hash
			hint := "rename one of the tools (config tools.rename)"
			ns := []struct{ name, what string }{
				{emit.Factory(t.GoName), "factory"},
				{emit.DescriptorVar(t.GoName), "descriptor"},
				{emit.ToolConst(t.GoName), "tool name constant"},
			}
			// Two tools with one Go name: one error, not one per generated
			// name. Their Input types collide too, and say so, unless one
			// is pinned; then the factories tell.
			if other, dup := seen[t.GoName]; dup {
				ns = ns[:1]
				if other.Input.Type.Pinned == "" && t.Input.Type.Pinned == "" {
					ns = nil
				}
			}
			seen[t.GoName] = t
			for _, n := range ns {
				decls = append(decls, names.Decl{Name: n.name, Where: fmt.Sprintf("the %s of tool %q (%s)", n.what, e.Key, loc.Where()), Pos: loc, Hint: hint})
			}
			for _, m := range emit.ClientMethods {
				if t.GoName == m {
					probs = append(probs, names.Problem{Loc: loc, Msg: fmt.Sprintf("tool %q: its %s method %s is also a generated method of %s; rename the tool (config tools.rename)",
						e.Key, s.server.ClientType(), m, s.server.ClientType())})
				}
			}
			s.tools = append(s.tools, t)
		}
		for _, n := range s.server.PackageNames() {
			decls = append(decls, names.Decl{Name: n, Where: fmt.Sprintf("the generated %s of %s", n, s.in.Name), Pos: first,
				Hint: "rename the tool (config tools.rename)"})
		}
	}
	return decls, probs, errs
}

// compact renders JSON without insignificant space and with strings
// escaped one way (encoding/json's, without HTML escaping), keeping member
// order: two spellings of one schema give the same descriptor.
func compact(data []byte) []byte {
	// Without escapes, invalid UTF-8 or U+2028/U+2029, re-encoding a string
	// gives back its bytes, so json.Compact's copy is the same output for
	// much less work: most schemas take this path.
	if bytes.IndexByte(data, '\\') < 0 && utf8.Valid(data) && !bytes.Contains(data, []byte("\u2028")) && !bytes.Contains(data, []byte("\u2029")) {
		var b bytes.Buffer
		b.Grow(len(data))
		if json.Compact(&b, data) == nil {
			return b.Bytes()
		}
	}
	return recode(data)
}

// recode writes data compactly, every string re-encoded as encoding/json
// writes it (without HTML escaping) and numbers as they are.
func recode(data []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var b bytes.Buffer
	if err := writeValue(&b, dec); err != nil {
		return append([]byte(nil), data...) // ir.Build has reported it
	}
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		b.WriteRune(rune(t))
		for i := 0; dec.More(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				writeString(b, k.(string))
				b.WriteByte(':')
			}
			if err := writeValue(b, dec); err != nil {
				return err
			}
		}
		end, err := dec.Token()
		if err != nil {
			return err
		}
		b.WriteRune(rune(end.(json.Delim)))
	case string:
		writeString(b, t)
	case json.Number:
		b.WriteString(t.String())
	case bool:
		b.WriteString(strconv.FormatBool(t))
	default:
		b.WriteString("null")
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}

// stripProperty removes the identity argument from an input schema with
// the runtime's own StripProperty (package mcpimpl), so the schema a model is shown is the one
// the runtime would compute; members keep their order.
func stripProperty(schema []byte, name string) ([]byte, error) {
	out, _, err := mcpimpl.StripProperty(schema, name)
	if err != nil {
		return nil, err
	}
	return compact(out), nil
}
