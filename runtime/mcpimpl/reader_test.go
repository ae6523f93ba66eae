package mcpimpl_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpimpl"
)

// fakeServer answers resources/read from a map and records the URIs; the
// CRM and reference servers are read as processes in the example's tests,
// this covers the template forms they do not have.
type fakeServer struct {
	contents map[string]mcpruntime.ResourceContents
	err      error
	read     []string
}

func (*fakeServer) CallTool(context.Context, string, json.RawMessage) (*mcpruntime.Result, error) {
	return nil, errors.New("no tools")
}

func (f *fakeServer) ReadResource(_ context.Context, uri string) (*mcpruntime.ResourceResult, error) {
	f.read = append(f.read, uri)
	if f.err != nil {
		return nil, f.err
	}
	c, ok := f.contents[uri]
	if !ok {
		return nil, &mcpruntime.ProtocolError{Code: -32002, Message: "resource not found"}
	}
	return &mcpruntime.ResourceResult{Contents: []mcpruntime.ResourceContents{c}}, nil
}

func reader(t *testing.T, tmpl string, f *fakeServer) mcpruntime.Invoker {
	t.Helper()
	return mcpimpl.NewResourceReader(&mcpruntime.Descriptor{Name: "read_x"}, &mcpruntime.ResourceDescriptor{URITemplate: tmpl, Name: "x"}, f)
}

func invoke(t *testing.T, r mcpruntime.Invoker, args string) mcpruntime.ModelResult {
	t.Helper()
	m, err := r.Invoke(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return m
}

func TestReaderTemplateForms(t *testing.T) {
	f := &fakeServer{contents: map[string]mcpruntime.ResourceContents{}}
	for _, uri := range []string{"x://search?q=a%20b&limit=5", "x://search", "file:///srv/a/b%20c", "x://d/50%25", "x://v#sec/1"} {
		f.contents[uri] = mcpruntime.ResourceContents{URI: uri, Text: "ok " + uri}
	}
	cases := []struct {
		tmpl, args, uri, violation string
	}{
		{"x://search{?q,limit}", `{"q":"a b","limit":"5"}`, "x://search?q=a%20b&limit=5", ""},
		{"x://search{?q,limit}", `{}`, "x://search", ""},
		{"x://search{?q,limit}", `{"q":null}`, "x://search", ""},
		{"file://{+root}{/seg*}", `{"root":"/srv","seg":["a","b c"]}`, "file:///srv/a/b%20c", ""},
		{"file://{+root}{/seg*}", `{"root":"/srv","seg":["a","b/c"]}`, "", `- /seg/1: "b/c" holds a '/'`},
		{"file://{+root}{/seg*}", `{"root":"/srv/../etc","seg":["a"]}`, "", `- /root: "/srv/../etc" would change the resource's path (a ".." segment once decoded)`},
		{"file://{+root}{/seg*}", `{"root":"/srv","seg":[]}`, "", "- /seg: must have at least one item"},
		{"file://{+root}{/seg*}", `{"root":"/srv","seg":["a",".."]}`, "", `- /seg/1: ".." would change`},
		{"file://{+root}{/seg*}", `{"root":"/srv","seg":"a"}`, "", "- /seg: expected an array of strings"},
		{"x://d/{id}", `{"id":"%2E%2E"}`, "", `- /id: "%2E%2E" would change the resource's path (a ".." segment once decoded)`},
		{"x://d/{id}", `{"id":"50%"}`, "x://d/50%25", ""},
		{"file://{+root}{/seg*}", `{"root":"/srv/%2e%2E/etc","seg":["a"]}`, "", `(a ".." segment once decoded)`},
		{"x://v{#frag}", `{"frag":"sec/1"}`, "x://v#sec/1", ""},
		{"x://d/{id}", `{"id":"a","id2":"b"}`, "", "- /id2: unknown member"},
		{"x://d/{id}", `"a"`, "", "arguments must be a JSON object"},
	}
	for _, c := range cases {
		f.read = nil
		m := invoke(t, reader(t, c.tmpl, f), c.args)
		switch {
		case c.violation != "":
			if !m.IsError || !strings.Contains(m.Text, c.violation) || len(f.read) != 0 {
				t.Errorf("%s %s: %q (read %v), want %q", c.tmpl, c.args, m.Text, f.read, c.violation)
			}
		case len(f.read) != 1 || f.read[0] != c.uri:
			t.Errorf("%s %s: read %v, want %s", c.tmpl, c.args, f.read, c.uri)
		}
	}
	// Two problems at once, each with its pointer, in the runtime's form.
	m := invoke(t, reader(t, "x://{a}/{b}", f), `{"b":1,"c":2}`)
	want := "Invalid arguments for tool \"read_x\" (3 problems):\n- /c: unknown member: not a variable of the template (they are a, b)\n" +
		"- /a: required: the template needs this variable\n- /b: expected a string\nFix the arguments to match the tool's input schema and call it again."
	if m.Text != want {
		t.Errorf("got %q\nwant %q", m.Text, want)
	}
}

func TestReaderFailures(t *testing.T) {
	f := &fakeServer{contents: map[string]mcpruntime.ResourceContents{
		"x://j/1":    {URI: "x://j/1", MIMEType: "application/json", Text: `{"id": 1}`},
		"x://j/bad":  {URI: "x://j/bad", MIMEType: "application/json", Text: `{"id": "one"}`},
		"x://j/text": {URI: "x://j/text", MIMEType: "text/plain", Text: `hello`},
	}}
	decode := func(b []byte) (int, error) {
		var v struct{ ID any }
		if err := json.Unmarshal(b, &v); err != nil {
			return 0, err
		}
		if _, ok := v.ID.(float64); !ok {
			return 0, &mcpruntime.ValidationError{Violations: []mcpruntime.Violation{{Pointer: "/id", Message: "expected a number"}}}
		}
		return 1, nil
	}
	rd := &mcpruntime.ResourceDescriptor{URITemplate: "x://j/{id}", Name: "j", MIMEType: "application/json"}
	typed := mcpimpl.NewTypedResourceReader(&mcpruntime.Descriptor{Name: "read_j"}, rd, decode, f)
	if m := invoke(t, typed, `{"id":"1"}`); m.IsError || m.Text != `{"id":1}` || string(m.Result.StructuredContent) != `{"id":1}` {
		t.Errorf("typed: %+v", m)
	}
	if m := invoke(t, typed, `{"id":"bad"}`); !m.IsError || !strings.Contains(m.Text, "not what its schema declares") || !strings.Contains(m.Text, "/id: expected a number") {
		t.Errorf("typed mismatch: %q", m.Text)
	}
	if m := invoke(t, typed, `{"id":"text"}`); !m.IsError || !strings.Contains(m.Text, "expected application/json content") {
		t.Errorf("typed, text/plain: %q", m.Text)
	}
	if m := invoke(t, typed, `{"id":"2"}`); !m.IsError || m.Text != "The server has no resource x://j/2 (resource not found). Check the arguments." {
		t.Errorf("expired: %q", m.Text)
	}
	// What the model cannot fix stays a Go error.
	f.err = errors.New("connection reset")
	if _, err := typed.Invoke(context.Background(), json.RawMessage(`{"id":"1"}`)); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("transport failure: %v", err)
	}
	f.err = context.DeadlineExceeded
	if m := invoke(t, typed, `{"id":"1"}`); !m.IsError || !m.TimedOut {
		t.Errorf("timeout: %+v", m)
	}
	// A template that does not parse fails every call, clearly.
	bad := reader(t, "x://{a", f)
	if _, err := bad.Invoke(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "unclosed expression") {
		t.Errorf("bad template: %v", err)
	}
}
