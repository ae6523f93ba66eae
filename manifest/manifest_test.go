package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/internal/testcorpus"
)

const sample = `{
  "tools": [
    {"name": "b_tool", "description": "<b> & co", "inputSchema": {"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "integer"}}}},
    {"name": "a_tool", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "oneOf": [{"required": ["x"]}]}, "_meta": {"k": 1}}
  ]
}`

func TestParseKinds(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		kind  Kind
		tools []string
		ptrs  []string
	}{
		{"tools/list", sample, KindToolsList, []string{"b_tool", "a_tool"}, []string{"/tools/0", "/tools/1"}},
		{"tool", `{"name":"solo","inputSchema":{"type":"object"}}`, KindTool, []string{"solo"}, []string{""}},
		{"manifest", `{"mcpgenManifest":1,"id":"x","tools":[{"name":"t","inputSchema":{}}]}`, KindManifest, []string{"t"}, []string{"/tools/0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("in.json", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if f.Kind != tt.kind {
				t.Errorf("kind = %v, want %v", f.Kind, tt.kind)
			}
			var names, ptrs []string
			for _, e := range f.Manifest.Tools {
				names = append(names, e.Key)
				ptrs = append(ptrs, e.Pointer)
			}
			if strings.Join(names, ",") != strings.Join(tt.tools, ",") || strings.Join(ptrs, ",") != strings.Join(tt.ptrs, ",") {
				t.Errorf("tools = %v at %v, want %v at %v", names, ptrs, tt.tools, tt.ptrs)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"syntax", "{\n  \"tools\": [\n  }", "in.json:3:3: invalid JSON"},
		{"truncated", "{\"tools\": [", "in.json:1:12: invalid JSON: unexpected end of JSON input"},
		{"not object", "\n  [1]", "in.json:2:3: expected a JSON object"},
		{"unknown kind", `{"foo": 1}`, "in.json:1:1: not an mcpgen manifest"},
		{"tool without name", "{\"tools\": [\n  {\"inputSchema\": {}}]}", `in.json:2:3: /tools/0: missing or non-string "name" member`},
		{"tool not object", "{\"tools\": [1,\n 2]}", "in.json:2:2: /tools/1: not a JSON object"},
		{"tools not array", `{"tools": {}}`, "in.json:1:11: /tools: must be an array"},
		{"duplicate", `{"tools": [{"name":"a"},{"name":"a"}]}`, `duplicate tool "a"`},
		{"newer format", `{"mcpgenManifest": 99, "tools": []}`, "in.json:1:20: /mcpgenManifest: manifest format 99 is newer"},
		{"bad format", `{"mcpgenManifest": "1"}`, "/mcpgenManifest: format version must be a positive integer"},
		{"unknown member", "{\"mcpgenManifest\": 1,\n \"toolz\": []}", `in.json:2:11: /toolz: unknown manifest member "toolz"`},
		{"bad serverInfo", `{"mcpgenManifest": 1, "serverInfo": []}`, "/serverInfo: must be an object"},
		{"resource without uri", `{"mcpgenManifest": 1, "resources": [{"name":"r"}]}`, `/resources/0: missing or non-string "uri" member`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("in.json", []byte(tt.in))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *manifest.Error", err)
			}
		})
	}
}

func TestParseCollectsAllErrors(t *testing.T) {
	_, err := Parse("in.json", []byte(`{"tools": [1, {"name": 2}, {"name": "ok"}]}`))
	if err == nil || strings.Count(err.Error(), "/tools/") != 2 {
		t.Fatalf("want two positioned errors, got %v", err)
	}
}

// TestEncodeDeterministic: re-encoding is stable, the order in which a
// server lists things does not matter, and member order inside raw objects
// (which drives generated field order) is kept.
func TestEncodeDeterministic(t *testing.T) {
	f, err := Parse("in.json", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	m := f.Manifest
	m.ID = "demo"
	m.ProtocolVersion = "2025-11-25"
	m.Resources = []Entry{mustEntry(t, `{"uri":"b://2","name":"two"}`, keyURI), mustEntry(t, `{"uri":"a://1","name":"one"}`, keyURI)}
	m.Prompts = []Entry{mustEntry(t, `{"name":"p"}`, keyName)}
	want, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20; i++ {
		c := *m
		c.Tools = append([]Entry(nil), m.Tools...)
		c.Resources = append([]Entry(nil), m.Resources...)
		r.Shuffle(len(c.Tools), func(i, j int) { c.Tools[i], c.Tools[j] = c.Tools[j], c.Tools[i] })
		r.Shuffle(len(c.Resources), func(i, j int) { c.Resources[i], c.Resources[j] = c.Resources[j], c.Resources[i] })
		got, err := Encode(&c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("shuffled input encodes differently:\n%s\nwant:\n%s", got, want)
		}
	}
	// Encode sorts a copy: the caller's slices are untouched.
	if m.Tools[0].Key != "b_tool" {
		t.Error("Encode reordered the caller's tools")
	}
	// Round trip through Parse is a fixed point.
	f2, err := Parse("out.json", want)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Encode(f2.Manifest)
	if !bytes.Equal(again, want) {
		t.Fatalf("encode(parse(encode(m))) differs:\n%s\nwant:\n%s", again, want)
	}
	s := string(want)
	if strings.Index(s, `"a_tool"`) > strings.Index(s, `"b_tool"`) {
		t.Error("tools not sorted by name")
	}
	if strings.Index(s, `"z"`) > strings.Index(s, `"a": {`) {
		t.Error("property order inside a schema was not kept")
	}
	if !strings.Contains(s, `"<b> & co"`) {
		t.Error("HTML characters were escaped in a kept description")
	}
	if !strings.HasPrefix(s, "{\n  \"mcpgenManifest\": 1,\n  \"id\": \"demo\",") {
		t.Errorf("envelope order changed:\n%s", s)
	}
}

func mustEntry(t *testing.T, raw, key string) Entry {
	t.Helper()
	e, err := NewEntry(json.RawMessage(raw), key)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestIndexPositions(t *testing.T) {
	data := []byte("{\n  \"a\": [1, {\"b/c\": \"x\", \"d~e\": null}],\n  \"f\": {}\n}")
	ix, err := NewIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	for ptr, want := range map[string][2]int{
		"":          {1, 1},
		"/a":        {2, 8},
		"/a/0":      {2, 9},
		"/a/1":      {2, 12},
		"/a/1/b~1c": {2, 20},
		"/a/1/d~0e": {2, 32},
		"/f":        {3, 8},
	} {
		off, ok := ix.Offset(ptr)
		if !ok {
			t.Errorf("%q not indexed", ptr)
			continue
		}
		if l, c := LineCol(data, off); l != want[0] || c != want[1] {
			t.Errorf("%q at %d:%d, want %d:%d", ptr, l, c, want[0], want[1])
		}
	}
	// A pointer below a leaf falls back to the nearest ancestor.
	if off, ok := ix.Offset("/f/missing/deeper"); ok || off != ix.offs["/f"] {
		t.Errorf("fallback = %d,%v", off, ok)
	}
	e := ix.Errorf("m.json", "/a/1/d~0e", "bad %s", "thing")
	if got := e.Error(); got != "m.json:2:32: /a/1/d~0e: bad thing" {
		t.Errorf("Errorf = %q", got)
	}
}

func TestCorpusRoundTrip(t *testing.T) {
	data := testcorpus.Require(t, testcorpus.GitHubTools)
	f, err := Parse("tools-list.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Manifest.Tools) != 117 {
		t.Fatalf("got %d tools, want 117", len(f.Manifest.Tools))
	}
	out, err := Encode(f.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("m.json", out)
	if err != nil {
		t.Fatal(err)
	}
	// Every tool survives semantically unchanged.
	byName := map[string]json.RawMessage{}
	for _, e := range back.Manifest.Tools {
		byName[e.Key] = e.Raw
	}
	for _, e := range f.Manifest.Tools {
		var a, b any
		_ = json.Unmarshal(e.Raw, &a)
		_ = json.Unmarshal(byName[e.Key], &b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("tool %s changed in the round trip", e.Key)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{sample, `{"name":"t","inputSchema":{}}`, `{"mcpgenManifest":1,"tools":[]}`, `{"tools":[{"name":"a"}]}`, `[`, `{"tools":[{"name":"\u00e9"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("f.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json") {
				t.Fatalf("error without file position: %v", err)
			}
			return
		}
		out, err := Encode(file.Manifest)
		if err != nil {
			t.Fatalf("parsed input does not encode: %v", err)
		}
		again, err := Parse("g.json", out)
		if err != nil {
			t.Fatalf("encoded manifest does not parse: %v\n%s", err, out)
		}
		out2, err := Encode(again.Manifest)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not a fixed point: %v", err)
		}
	})
}
