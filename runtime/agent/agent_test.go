package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

func TestModelNames(t *testing.T) {
	long := strings.Repeat("x", 70)
	cases := []struct{ prefix, wire string }{
		{"", "get_deal"}, {"crm", "get_deal"}, {"", "files.read"}, {"", "files_read"},
		{"", long}, {"", long + "y"}, {"gh", "repos/list"}, {"", "déjà"},
	}
	seen := map[string]string{}
	for _, c := range cases {
		n := modelName(c.prefix, c.wire)
		if !ValidName(n) {
			t.Errorf("modelName(%q, %q) = %q: not a valid name", c.prefix, c.wire, n)
		}
		if n != modelName(c.prefix, c.wire) {
			t.Errorf("modelName(%q, %q) is not deterministic", c.prefix, c.wire)
		}
		if o, dup := seen[n]; dup {
			t.Errorf("%q and %q both named %q", o, c.prefix+"/"+c.wire, n)
		}
		seen[n] = c.prefix + "/" + c.wire
	}
	if n := modelName("crm", "get_deal"); n != "crm__get_deal" {
		t.Errorf("namespaced name = %q", n)
	}
	if n := modelName("", "files_read"); n != "files_read" {
		t.Errorf("a valid name changed: %q", n)
	}
}

func goTool(name, schema string, fn func(context.Context, json.RawMessage) (mcpruntime.ModelResult, error)) mcpruntime.Invoker {
	return &mcpruntime.FuncTool{Desc: &mcpruntime.Descriptor{Name: name, Description: name + " tool", InputSchema: json.RawMessage(schema)}, Func: fn}
}

func toolset(t *testing.T, tools ...mcpruntime.Invoker) *mcpruntime.Toolset {
	t.Helper()
	ts, err := mcpruntime.NewToolset(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestSetMergesAndRefuses(t *testing.T) {
	echo := func(_ context.Context, a json.RawMessage) (mcpruntime.ModelResult, error) {
		return mcpruntime.ModelResult{Text: string(a)}, nil
	}
	a := toolset(t, goTool("search", `{}`, echo), goTool("a.b", `{}`, echo))
	b := toolset(t, goTool("search", `{}`, echo))
	if _, err := New(DialectJSONSchema, Source{Tools: a}, Source{Tools: b}); err == nil {
		t.Error("two sources without prefixes were accepted")
	}
	if _, err := New(DialectJSONSchema, Source{Prefix: "x", Tools: a}, Source{Prefix: "x", Tools: b}); err == nil {
		t.Error("one prefix twice was accepted")
	}
	if _, err := New(DialectJSONSchema, Source{Prefix: "a__b", Tools: a}); err == nil {
		t.Error("a prefix with the separator was accepted")
	}
	s, err := New(DialectJSONSchema, Source{Prefix: "one", Tools: a}, Source{Prefix: "two", Tools: b})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(s.Names(), " ")
	if !strings.HasPrefix(got, "one__a_b_") || !strings.HasSuffix(got, " one__search two__search") {
		t.Errorf("names = %s", got)
	}
	for _, n := range s.Names() {
		src, wire, ok := s.Lookup(n)
		if !ok || (src == 1) != strings.HasPrefix(n, "two__") || modelName([]string{"one", "two"}[src], wire) != n {
			t.Errorf("Lookup(%q) = %d, %q, %v", n, src, wire, ok)
		}
	}
	r, err := s.Dispatch(context.Background(), Call{ID: "c1", Name: "two__search", Arguments: json.RawMessage(`{"q":1}`)})
	if err != nil || r.IsError || r.Text != `{"q":1}` || r.CallID != "c1" {
		t.Errorf("dispatch = %+v, %v", r, err)
	}
	r, _ = s.Dispatch(context.Background(), Call{ID: "c2", Name: "search"})
	if !r.IsError || !strings.Contains(r.Text, "one__search, two__search") {
		t.Errorf("unknown tool = %+v", r)
	}
}

const dealSchema = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "definitions": {"stage": {"type": "string", "enum": ["lead", "won"], "description": "Stage."}},
  "properties": {
    "deal_id": {"type": "string", "pattern": "^D-[0-9]+$", "minLength": 3},
    "ref": {"type": "string", "pattern": "^(?!X)[A-Z]+$", "format": "uri"},
    "when": {"type": "string", "format": "date-time"},
    "tries": {"type": "integer", "minimum": 1, "maximum": 5, "multipleOf": 1, "exclusiveMaximum": 6, "default": 3},
    "ids": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 10, "uniqueItems": true},
    "stage": {"$ref": "#/definitions/stage"},
    "amount": {"type": ["number", "null"], "minimum": 0},
    "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "string"}}, "required": ["k"]}}
  },
  "required": ["deal_id"],
  "additionalProperties": false
}`

func TestProjectPlain(t *testing.T) {
	v, err := project([]byte(dealSchema), DialectJSONSchema)
	if err != nil {
		t.Fatal(err)
	}
	s := string(v.schema)
	if strings.Contains(s, "$schema") || strings.Contains(s, "$ref") || strings.Contains(s, "definitions") || v.strict {
		t.Errorf("plain view kept $schema, a $ref or definitions: %s", s)
	}
	if !strings.Contains(s, `"stage":{"description":"Stage.","enum":["lead","won"],"type":"string"}`) || !strings.Contains(s, `"pattern":"^D-[0-9]+$"`) {
		t.Errorf("plain view = %s", s)
	}
	// A recursive $ref stays, with what it points at.
	v, err = project([]byte(`{"type":"object","$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"properties":{"head":{"$ref":"#/$defs/n"}}}`), DialectStrict)
	if err != nil || v.strict || !strings.Contains(string(v.schema), `"$defs"`) || !strings.Contains(string(v.schema), `"$ref":"#/$defs/n"`) {
		t.Errorf("recursive: %s, %v", v.schema, err)
	}
}

func TestProjectStrict(t *testing.T) {
	v, err := project([]byte(dealSchema), DialectStrict)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(v.schema, &got); err != nil || !v.strict {
		t.Fatalf("strict view %s: %v, strict %v", v.schema, err, v.strict)
	}
	var check func(at string, s map[string]any)
	check = func(at string, s map[string]any) {
		// What strict mode refuses is gone; what it enforces stays (see
		// below).
		for _, k := range []string{"minLength", "uniqueItems", "default", "$ref", "$schema"} {
			if _, ok := s[k]; ok {
				t.Errorf("%s keeps %s", at, k)
			}
		}
		if props, ok := s["properties"].(map[string]any); ok {
			if s["additionalProperties"] != false {
				t.Errorf("%s is not closed", at)
			}
			req, _ := s["required"].([]any)
			if len(req) != len(props) {
				t.Errorf("%s requires %v of %d properties", at, req, len(props))
			}
			for n, p := range props {
				check(at+"/"+n, p.(map[string]any))
			}
		}
		if it, ok := s["items"].(map[string]any); ok {
			check(at+"/items", it)
		}
	}
	check("#", got)
	p := got["properties"].(map[string]any)
	if st := p["stage"].(map[string]any); !strings.Contains(string(mustJSON(st)), `"enum":["lead","won",null]`) || !strings.Contains(string(mustJSON(st)), `"type":["string","null"]`) {
		t.Errorf("optional enum not nullable: %s", mustJSON(st))
	}
	// Kept where strict mode enforces them; said in the description where
	// it does not.
	for name, want := range map[string]string{
		"deal_id": `"pattern":"^D-[0-9]+$"`,
		"when":    `"format":"date-time"`,
		"tries":   `"exclusiveMaximum":6,"maximum":5,"minimum":1,"multipleOf":1`,
		"ids":     `"maxItems":10,"minItems":1`,
		"amount":  `"minimum":0`,
	} {
		if got := string(mustJSON(p[name])); !strings.Contains(got, want) {
			t.Errorf("%s: %s lacks %s", name, got, want)
		}
	}
	for name, want := range map[string]string{
		"deal_id": `(minLength: 3)`,
		"ref":     `(pattern: "^(?!X)[A-Z]+$"; format: "uri")`,
		"tries":   `(default: 3)`,
		"ids":     `(uniqueItems: true)`,
	} {
		d, _ := p[name].(map[string]any)["description"].(string)
		if !strings.HasSuffix(d, want) {
			t.Errorf("%s: description %q, want it to end with %s", name, d, want)
		}
		if name == "ref" {
			if _, kept := p[name].(map[string]any)["pattern"]; kept {
				t.Errorf("a lookahead pattern was kept")
			}
		}
	}
	// The way back: nulls for optional members are absent; a null the
	// schema itself allowed stays.
	back := string(stripNulls([]byte(`{"deal_id":"D-1","stage":null,"amount":null,"tags":[{"k":"a","v":null}]}`), v.nulls))
	if back != `{"amount":null,"deal_id":"D-1","tags":[{"k":"a"}]}` {
		t.Errorf("stripNulls = %s", back)
	}
	// A free-form object cannot be strict: the tool is offered unenforced.
	v, _ = project([]byte(`{"type":"object","properties":{"meta":{"type":"object","additionalProperties":{"type":"string"}}}}`), DialectStrict)
	if v.strict {
		t.Errorf("a map was made strict: %s", v.schema)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// counter is a Caller that counts the calls reaching it.
type counter struct{ n atomic.Int32 }

func (c *counter) CallTool(_ context.Context, name string, args json.RawMessage) (*mcpruntime.Result, error) {
	c.n.Add(1)
	return mcpruntime.ParseResult([]byte(`{"content":[{"type":"text","text":"done ` + name + `"}]}`))
}

type noInput struct {
	Note string `json:"note"`
}

func (*noInput) Validate() error { return nil }

func TestPauseResumesOnce(t *testing.T) {
	c := &counter{}
	store := mcpruntime.NewMemoryStore()
	newSet := func() (*Set, *mcpruntime.Gate) {
		g := mcpruntime.NewGate(store)
		d := &mcpruntime.Descriptor{Name: "write", InputSchema: json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}}}`)}
		ro := &mcpruntime.Descriptor{Name: "read", Annotations: mcpruntime.Annotations{ReadOnly: true}, InputSchema: json.RawMessage(`{"type":"object"}`)}
		s, err := New(DialectJSONSchema, Source{Tools: toolset(t,
			mcpruntime.NewTool[noInput, mcpruntime.NoOutput](d, c, mcpruntime.WithGate(g)),
			mcpruntime.NewTool[noInput, mcpruntime.NoOutput](ro, c, mcpruntime.WithGate(g)))})
		if err != nil {
			t.Fatal(err)
		}
		return s, g
	}
	s, gate := newSet()
	ctx := context.Background()
	res, p, err := s.DispatchAll(ctx, []Call{{ID: "1", Name: "write", Arguments: json.RawMessage(`{"note":"x"}`)}, {ID: "2", Name: "read"}})
	if err != nil || res != nil || p == nil || c.n.Load() != 1 {
		t.Fatalf("DispatchAll = %v, %+v, %v (calls %d)", res, p, err, c.n.Load())
	}
	as, err := p.Approvals(ctx, s)
	if err != nil || len(as) != 1 {
		t.Fatalf("approvals = %v, %v", as, err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	// Undecided: still paused, nothing made.
	s2, _ := newSet()
	p2, _ := ParsePause(b)
	if res, still, err := s2.Resume(ctx, p2); err != nil || res != nil || still == nil || c.n.Load() != 1 {
		t.Fatalf("undecided resume = %v, %v, %v", res, still, err)
	}
	a := as[0]
	if err := gate.Approve(ctx, a.ID, a.Digest); err != nil {
		t.Fatal(err)
	}
	p3, _ := ParsePause(b)
	res, still, err := s2.Resume(ctx, p3)
	if err != nil || still != nil || len(res) != 2 || res[0].Text != "done write" || res[1].Text != "done read" || res[0].CallID != "1" {
		t.Fatalf("resume = %+v, %v, %v", res, still, err)
	}
	// A pause is resumed once: later resumes hand nothing to the model.
	for range 2 {
		p3, _ := ParsePause(b)
		if res, still, err := s2.Resume(ctx, p3); !errors.Is(err, ErrPauseUsed) || res != nil || still != nil {
			t.Fatalf("resume again = %+v, %v, %v", res, still, err)
		}
	}
	if n := c.n.Load(); n != 2 {
		t.Errorf("%d calls reached the server, want 2 (the read and the approved write, once)", n)
	}
}

// Content parts: an image's media type comes from its bytes (a declared
// type the bytes do not match is what providers refuse), data that is no
// supported image becomes a text part, and resource links keep their URI.
func TestParts(t *testing.T) {
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	res, err := mcpruntime.ParseResult([]byte(`{"content":[
		{"type":"text","text":"chart"},
		{"type":"image","data":"` + png + `","mimeType":"image/jpeg"},
		{"type":"image","data":"aGVsbG8gd29ybGQ=","mimeType":"image/png"},
		{"type":"resource_link","uri":"crm://deals/D-1/contract","name":"contract","mimeType":"text/markdown"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(DialectJSONSchema, Source{Tools: toolset(t, goTool("chart", `{}`, func(context.Context, json.RawMessage) (mcpruntime.ModelResult, error) {
		return mcpruntime.ModelResult{Text: res.ModelText(), Result: res}, nil
	}))})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Dispatch(context.Background(), Call{ID: "1", Name: "chart"})
	if err != nil {
		t.Fatal(err)
	}
	kinds := []PartKind{}
	for _, p := range r.Parts {
		kinds = append(kinds, p.Kind)
	}
	if len(r.Parts) != 4 || r.Parts[0].Text != "chart" ||
		r.Parts[1].Kind != PartImage || r.Parts[1].MIMEType != "image/png" || r.Parts[1].Data != png ||
		r.Parts[2].Kind != PartText || !strings.Contains(r.Parts[2].Text, "[image: image/png") ||
		r.Parts[3].Kind != PartLink || r.Parts[3].URI != "crm://deals/D-1/contract" || !strings.Contains(r.Parts[3].Text, "contract") {
		t.Errorf("parts %v: %+v", kinds, r.Parts)
	}
	if got := TextOf(r.Parts); !strings.Contains(got, "chart\n[image: image/png") {
		t.Errorf("TextOf = %q", got)
	}
}
