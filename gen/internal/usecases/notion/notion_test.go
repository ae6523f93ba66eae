package notion_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/gen"
	"github.com/mcpgen/mcpgen/gen/internal/usecases/notion"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// User code against Notion-like bindings: every union is written in one
// expression, and what a server sends decodes into types, not raw JSON.

func TestBuildPageInOneExpression(t *testing.T) {
	in := notion.APIPostPageInput{
		Parent: notion.APIPostPageInputParentRequestOfDatabaseID(notion.APIPostPageInputParentRequestDatabaseID{DatabaseID: "db1"}),
		Title: []notion.APIPostPageInputTitleItem{
			notion.APIPostPageInputTitleItemOfRichTextRequest(notion.APIPostPageInputRichTextRequest{Text: notion.APIPostPageInputRichTextRequestText{Content: "Roadmap"}}),
			notion.APIPostPageInputTitleItemOfString("plain"),
		},
		AtContext: ptr("ctx"),
	}
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"parent":{"database_id":"db1"},"title":[{"text":{"content":"Roadmap"}},"plain"],"@context":"ctx"}`
	if string(b) != want {
		t.Errorf("encoded %s\nwant    %s", b, want)
	}
	// The zero union is invalid, and says so before any call.
	var zero notion.APIPostPageInput
	if err := zero.Validate(); err == nil || !strings.Contains(err.Error(), "/parent: no variant is set") {
		t.Errorf("zero input: %v", err)
	}
}

func TestDecodeWhatAServerSends(t *testing.T) {
	in, err := notion.DecodeAPIPostPageInput([]byte(`{"parent":{"page_id":"p"},"title":[{"type":"text","text":{"content":"a"}},"b",{"mention":{}}],"icon":{"emoji":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := in.Parent.AsPageID(); !ok || p.PageID != "p" {
		t.Errorf("parent %+v", in.Parent)
	}
	if rt, ok := in.Title[0].AsRichTextRequest(); !ok || rt.Text.Content != "a" {
		t.Errorf("title[0] %+v", in.Title[0])
	}
	if s, ok := in.Title[1].AsString(); !ok || s != "b" {
		t.Errorf("title[1] %+v", in.Title[1])
	}
	if o, ok := in.Title[2].AsObject(); !ok || string(o["mention"]) != "{}" {
		t.Errorf("title[2] (the catch-all) %+v", in.Title[2])
	}
	// anyOf takes the first variant that accepts the value: a rich text
	// whose content is not a string is still a valid catch-all object.
	odd, err := notion.DecodeAPIPostPageInput([]byte(`{"parent":{"page_id":"p"},"title":[{"text":{"content":1}}]}`))
	if _, ok := odd.Title[0].AsObject(); err != nil || !ok {
		t.Errorf("catch-all: %v %+v", err, odd.Title)
	}
	// What the schema forbids inside the unions is now refused.
	for _, bad := range []string{
		`{"parent":{},"title":[]}`,
		`{"parent":{"page_id":"p"},"title":[[]]}`,
		`{"parent":{"page_id":"p","database_id":"d"},"title":[]}`,
		`{"parent":{"page_id":"p"},"title":[1]}`,
		`{"parent":{"page_id":"p"},"title":[],"$type":"post"}`,
	} {
		if _, err := notion.DecodeAPIPostPageInput([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// Text that is not JSON is said to be, whatever JSON type it starts like.
func TestNotJSON(t *testing.T) {
	for _, in := range []string{"nonsense", "tx", "fx", "1x", "-x", "x", `"a`} {
		_, errIn := notion.DecodeAPIPostPageInput([]byte(in))
		_, errOut := notion.DecodeAPIPostPageOutput([]byte(in))
		var u notion.APIPostPageInputIcon
		errUnion := u.UnmarshalJSON([]byte(in))
		for _, err := range []error{errIn, errOut, errUnion} {
			if err == nil || !strings.Contains(err.Error(), "invalid JSON") || strings.Contains(err.Error(), "null") {
				t.Errorf("%q: %v, want invalid JSON", in, err)
			}
		}
	}
}

func TestNewerServerOutput(t *testing.T) {
	out, err := notion.DecodeAPIPostPageOutput([]byte(`{"object":"page","id":"1","icon":{"type":"file","url":"u"},"public_url":"https://x"}`))
	if err != nil {
		t.Fatal(err)
	}
	icon, ok := out.Icon.Get()
	if !ok || icon.Type.Valid() || icon.Type != "file" || string(icon.AdditionalProperties["url"]) != `"u"` {
		t.Errorf("icon %+v", icon)
	}
	if string(out.AdditionalProperties["public_url"]) != `"https://x"` {
		t.Errorf("extras %v", out.AdditionalProperties)
	}
	var _ mcpruntime.Unknown // the hook that would hear of them: see docs/cli.md
}

// An output oneOf of closed objects: the variant that accepts the value
// strictly wins; a value only a newer server sends (a member no variant
// declares) still decodes, into the first variant in try order.
func TestOutputOneOfOfClosedObjects(t *testing.T) {
	out, err := notion.DecodeAPIPostPageOutput([]byte(`{"object":"page","id":"1","cover":{"url":"u"}}`))
	if err == nil {
		t.Fatalf("a value both variants accept is not a oneOf: %+v", out)
	}
	out, err = notion.DecodeAPIPostPageOutput([]byte(`{"object":"page","id":"1","cover":{"url":"u","caption":"c"}}`))
	if c, ok := out.Cover.AsCaption(); err != nil || !ok || c.Caption == nil || *c.Caption != "c" {
		t.Fatalf("strict match: %v %+v", err, out.Cover)
	}
	out, err = notion.DecodeAPIPostPageOutput([]byte(`{"object":"page","id":"1","cover":{"url":"u","caption":"c","expiry":"t"}}`))
	if c, ok := out.Cover.AsCaption(); err != nil || !ok || string(c.AdditionalProperties["expiry"]) != `"t"` {
		t.Fatalf("newer server: %v %+v", err, out.Cover)
	}
}

// The committed bindings are what the generator makes of notion.json.
func TestUpToDate(t *testing.T) {
	data, err := os.ReadFile("notion.json")
	if err != nil {
		t.Fatal(err)
	}
	files, err := gen.Generate(gen.Config{Package: "notion", Inputs: []gen.Input{{Name: "notion.json", Data: data}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("notion.mcp.go")
	if err != nil || string(got) != string(files["notion.mcp.go"]) {
		t.Fatalf("notion.mcp.go is out of date (%v): run go generate", err)
	}
}

func ptr[T any](v T) *T { return &v }
