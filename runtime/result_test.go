package mcpruntime

import (
	"encoding/json"
	"strings"
	"testing"
)

const everyKind = `{
  "content": [
    {"type": "text", "text": "hello", "annotations": {"audience": ["user"]}},
    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png", "_meta": {"k": 1}},
    {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
    {"type": "resource_link", "uri": "crm://deals/D-1/contract", "name": "contract", "title": "Contract", "mimeType": "text/markdown", "size": 42},
    {"type": "resource", "resource": {"uri": "mem://a.txt", "mimeType": "text/plain", "text": ""}},
    {"type": "resource", "resource": {"uri": "mem://b.bin", "blob": "AAEC"}},
    {"type": "hologram", "frames": [1, 2], "text": 7}
  ],
  "structuredContent": {"n": 12345678901234567890},
  "_meta": {"io.example/trace": "t-1"},
  "isError": false
}`

func TestParseResultKeepsEverything(t *testing.T) {
	r, err := ParseResult([]byte(everyKind))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Content) != 7 {
		t.Fatalf("got %d blocks, want 7", len(r.Content))
	}
	c := r.Content
	if c[0].Text != "hello" || string(c[0].Annotations) != `{"audience": ["user"]}` {
		t.Errorf("text block: %+v", c[0])
	}
	if c[1].Data != "iVBORw0KGgo=" || c[1].MIMEType != "image/png" || string(c[1].Meta) != `{"k": 1}` {
		t.Errorf("image block: %+v", c[1])
	}
	if c[3].URI != "crm://deals/D-1/contract" || c[3].Size == nil || *c[3].Size != 42 || c[3].Title != "Contract" {
		t.Errorf("resource_link block: %+v", c[3])
	}
	if rc := c[4].Resource; rc == nil || rc.IsBlob || rc.Text != "" || rc.URI != "mem://a.txt" {
		t.Errorf("empty text resource: %+v", rc)
	}
	if rc := c[5].Resource; rc == nil || !rc.IsBlob || rc.Blob != "AAEC" {
		t.Errorf("blob resource: %+v", rc)
	}
	// An unknown kind is kept whole, even with members of unexpected types.
	if c[6].Type != "hologram" || string(c[6].Raw) != `{"type": "hologram", "frames": [1, 2], "text": 7}` {
		t.Errorf("unknown block: %+v", c[6])
	}
	// Big numbers survive: the raw bytes are kept, not a float64.
	if string(r.StructuredContent) != `{"n": 12345678901234567890}` {
		t.Errorf("structuredContent = %s", r.StructuredContent)
	}
	if string(r.Meta) != `{"io.example/trace": "t-1"}` {
		t.Errorf("_meta = %s", r.Meta)
	}
	// Re-encoding a block gives back what was received (compacted by
	// encoding/json).
	b, err := json.Marshal(c[6])
	if err != nil || string(b) != `{"type":"hologram","frames":[1,2],"text":7}` {
		t.Errorf("re-encoded unknown block = %s, %v", b, err)
	}
}

func TestParseResultRejectsMalformed(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`[]`, "tools/call result: json: cannot unmarshal array"},
		{`{"isError": true}`, "missing content member"},
		{`{"content": [{"text": "no type"}]}`, "/content/0: content block without a type"},
		{`{"content": [{"type": "image", "data": 5}]}`, "/content/0: image content block"},
		{`{"content": [{"type": "resource"}]}`, "/content/0: resource content block without a resource"},
	} {
		_, err := ParseResult([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseResult(%s) = %v, want error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestModelText(t *testing.T) {
	r, err := ParseResult([]byte(everyKind))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.ModelText(), `{"n":12345678901234567890}`; got != want {
		t.Errorf("structured: got %s, want %s", got, want)
	}
	r.StructuredContent = nil
	want := strings.Join([]string{
		"hello",
		"[image: image/png, 8 bytes]",
		"[audio: audio/wav, 4 bytes]",
		`[resource link: crm://deals/D-1/contract "contract" (text/markdown)]`,
		"[embedded resource: mem://a.txt (text/plain, text, 0 bytes)]",
		"[embedded resource: mem://b.bin (unknown type, blob, 3 bytes)]",
		`["hologram" content block]`,
	}, "\n")
	if got := r.ModelText(); got != want {
		t.Errorf("blocks:\ngot:\n%s\nwant:\n%s", got, want)
	}
	// An error result shows the server's words even with structured content.
	e := &Result{IsError: true, StructuredContent: json.RawMessage(`{}`), Content: []Content{{Type: ContentText, Text: "boom"}}}
	if got := e.ModelText(); got != "boom" {
		t.Errorf("error result: %q", got)
	}
	if got := (&Result{}).ModelText(); got != "(the tool returned no content)" {
		t.Errorf("empty result: %q", got)
	}
}

func TestPointers(t *testing.T) {
	type item struct {
		D int `json:"d"`
	}
	type doc struct {
		A struct {
			C []item `json:"c"`
		} `json:"a/b"`
	}
	data := []byte(`{"a/b": {"c": [{"d": 1}, {"d": "two"}]}}`)
	vs := decodeJSON(data, new(doc), false)
	if len(vs) != 1 || vs[0].Pointer != "/a~1b/c/1/d" || vs[0].Message != "expected an integer, got JSON string" {
		t.Errorf("type error: %+v", vs)
	}
	vs = decodeJSON([]byte(`{"a/b": {"c": [{"d": 1, "e~": 2}]}}`), new(doc), true)
	if len(vs) != 1 || vs[0].Pointer != "/a~1b/c/0/e~0" || vs[0].Message != "unknown member (not in the schema)" {
		t.Errorf("unknown member: %+v", vs)
	}
	vs = decodeJSON([]byte(`{"a/b": `), new(doc), true)
	if len(vs) != 1 || vs[0].Pointer != "" || !strings.HasPrefix(vs[0].Message, "not valid JSON") {
		t.Errorf("syntax error: %+v", vs)
	}
}
