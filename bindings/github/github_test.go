package github_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpgen/mcpgen/bindings"
	"github.com/mcpgen/mcpgen/bindings/github"
	"github.com/mcpgen/mcpgen/bindings/internal/livetest"
	"github.com/mcpgen/mcpgen/internal/testcorpus"
	"github.com/mcpgen/mcpgen/manifest"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

var update = flag.Bool("update", false, "rewrite ../mcp/github.json from the published listing")

const manifestPath = "../mcp/github.json"

// TestManifestFromPublishedListing: the committed manifest is the GitHub
// MCP server's published tool listing (the shared corpus's tools/list
// result, gathered from the project's per-tool snapshots), as an mcpgen
// manifest and nothing else.
func TestManifestFromPublishedListing(t *testing.T) {
	data := testcorpus.Require(t, testcorpus.GitHubTools)
	f, err := manifest.Parse(testcorpus.GitHubTools, data)
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind != manifest.KindToolsList {
		t.Fatalf("the published listing is a %s, want a tools/list result", f.Kind)
	}
	f.Manifest.ID = bindings.GitHub
	want, err := manifest.Encode(f.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(manifestPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the published listing (go test -run TestManifestFromPublishedListing -update rewrites it; then make generate)", manifestPath)
	}
	if n := len(f.Manifest.Tools); n != 117 || n != len(github.Descriptors()) {
		t.Errorf("the listing has %d tools, the bindings %d; want 117", n, len(github.Descriptors()))
	}
}

func TestDoc(t *testing.T) {
	livetest.CheckDoc(t, bindings.GitHubCommit, github.Descriptors())
}

// standIn serves the published tool objects in process and checks every
// call's arguments against the published input schema of its tool. It is
// not the GitHub server: it answers each valid call with "ok <tool>".
type standIn struct {
	conn    *mcpgo.Conn
	schemas map[string]*jsonschema.Schema
	inputs  map[string]json.RawMessage

	mu    sync.Mutex
	calls []call
}

type call struct {
	tool string
	args json.RawMessage
}

func newStandIn(t *testing.T) *standIn {
	t.Helper()
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	f, err := manifest.Parse(manifestPath, data)
	if err != nil {
		t.Fatal(err)
	}
	s := &standIn{schemas: map[string]*jsonschema.Schema{}, inputs: map[string]json.RawMessage{}}
	srv := server.NewMCPServer("github-stand-in", "1", server.WithToolCapabilities(false))
	for _, e := range f.Manifest.Tools {
		var tool struct {
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if err := json.Unmarshal(e.Raw, &tool); err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tool.InputSchema))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		url := "mcpgen:///" + e.Key + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			t.Fatalf("tool %s: %v", e.Key, err)
		}
		s.schemas[e.Key], s.inputs[e.Key] = sch, tool.InputSchema
		name := e.Key
		srv.AddTool(mcp.NewToolWithRawSchema(name, tool.Description, tool.InputSchema),
			func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args, err := json.Marshal(req.GetRawArguments())
				if err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				s.mu.Lock()
				s.calls = append(s.calls, call{name, args})
				s.mu.Unlock()
				if err := s.validate(name, args); err != nil {
					return mcp.NewToolResultError("invalid arguments: " + err.Error()), nil
				}
				return mcp.NewToolResultText("ok " + name), nil
			})
	}
	s.conn = mcpgo.InProcess(srv)
	t.Cleanup(func() { _ = s.conn.Close() })
	return s
}

func (s *standIn) validate(tool string, args json.RawMessage) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return err
	}
	return s.schemas[tool].Validate(inst)
}

func (s *standIn) taken() []call {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = nil
	return c
}

// TestEveryTool calls each of the 117 tools the way a model does, with the
// smallest arguments its published schema accepts: the bindings accept
// them, and the stand-in receives exactly those arguments, valid. With a
// gate, exactly the tools the package documentation lists are held, and a
// held call sends nothing.
func TestEveryTool(t *testing.T) {
	s := newStandIn(t)
	ctx := context.Background()
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), github.GateOptions()...)
	open := github.Invokers(s.conn)
	gated := github.Invokers(s.conn, mcpruntime.WithGate(gate))
	if len(open) != 117 {
		t.Fatalf("%d tools, want 117", len(open))
	}
	held := 0
	for i, inv := range open {
		d := inv.Descriptor()
		args, err := json.Marshal(minimal(s.inputs[d.Name]))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.validate(d.Name, args); err != nil {
			t.Fatalf("%s: the test's arguments %s do not fit the published schema: %v", d.Name, args, err)
		}
		m, err := inv.Invoke(ctx, args)
		if err != nil || m.IsError || m.Text != "ok "+d.Name {
			t.Errorf("%s %s: %+v, %v", d.Name, args, m, err)
		}
		got := s.taken()
		if len(got) != 1 || !sameJSON(got[0].args, args) {
			t.Errorf("%s: sent %s, the server received %v", d.Name, args, got)
		}

		m, err = gated[i].Invoke(ctx, args)
		got = s.taken()
		switch {
		case err != nil:
			t.Errorf("%s with a gate: %v", d.Name, err)
		case d.Annotations.ReadOnly && (m.Pending != nil || len(got) != 1):
			t.Errorf("%s is read-only, yet the gate held it: %+v", d.Name, m)
		case !d.Annotations.ReadOnly && (m.Pending == nil || len(got) != 0):
			t.Errorf("%s is not read-only: want it held and nothing sent, got %+v and %d calls", d.Name, m, len(got))
		case !d.Annotations.ReadOnly:
			held++
		}
	}
	if held != 59 {
		t.Errorf("the gate held %d tools, want 59", held)
	}
}

// TestTypedCalls: typed calls, a rejected input and a gated call resumed
// after approval, which reaches the stand-in once.
func TestTypedCalls(t *testing.T) {
	s := newStandIn(t)
	ctx := context.Background()
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), github.GateOptions()...)
	gh := github.NewClient(s.conn, mcpruntime.WithGate(gate))

	if _, err := gh.GetMe(ctx, github.GetMeInput{}); err != nil {
		t.Fatal(err)
	}
	q := "mcpgen"
	if _, err := gh.SearchRepositories(ctx, github.SearchRepositoriesInput{Query: q}); err != nil {
		t.Fatal(err)
	}
	for _, c := range s.taken() {
		if err := s.validate(c.tool, c.args); err != nil {
			t.Errorf("%s %s: %v", c.tool, c.args, err)
		}
	}
	// Validated before sending: a page size past the schema's maximum.
	big := 1000.0
	if _, err := gh.SearchRepositories(ctx, github.SearchRepositoriesInput{Query: q, PerPage: &big}); err == nil || !strings.Contains(err.Error(), "/perPage") {
		t.Errorf("perPage 1000: want a validation error naming /perPage, got %v", err)
	}
	if got := s.taken(); len(got) != 0 {
		t.Errorf("an invalid input was sent: %v", got)
	}

	in := github.CreateIssueInput{Owner: "octo", Repo: "demo", Title: "Bindings"}
	_, err := gh.CreateIssue(ctx, in)
	var pending *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &pending) {
		t.Fatalf("create_issue: want a pending approval, got %v", err)
	}
	if err := gate.Approve(ctx, pending.Approval.ID, pending.Approval.Digest); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r, err := gh.ResumeCreateIssue(ctx, pending.Approval.ID)
		if err != nil || len(r.Content) != 1 || r.Content[0].Text != "ok create_issue" {
			t.Fatalf("resume: %+v, %v", r, err)
		}
	}
	got := s.taken()
	if len(got) != 1 || !sameJSON(got[0].args, json.RawMessage(`{"owner":"octo","repo":"demo","title":"Bindings"}`)) {
		t.Errorf("two resumes of one approval: the server received %v, want create_issue once", got)
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// minimal returns the smallest instance of a JSON Schema, as the
// published listing's schemas are written: required members only, the
// first enum value, the first non-null variant, lengths and bounds at their
// minimum.
func minimal(raw json.RawMessage) any {
	var s map[string]json.RawMessage
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	if e, ok := s["enum"]; ok {
		var vs []any
		_ = json.Unmarshal(e, &vs)
		if len(vs) > 0 {
			return vs[0]
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		var vs []json.RawMessage
		if json.Unmarshal(s[k], &vs) == nil {
			for _, v := range vs {
				if !bytes.Contains(v, []byte(`"null"`)) {
					return minimal(v)
				}
			}
		}
	}
	num := func(k string) (float64, bool) {
		var f float64
		err := json.Unmarshal(s[k], &f)
		return f, err == nil
	}
	var typ any
	_ = json.Unmarshal(s["type"], &typ)
	if ts, ok := typ.([]any); ok {
		typ = ts[0]
		for _, t := range ts {
			if t != "null" {
				typ = t
				break
			}
		}
	}
	switch typ {
	case "string":
		n, _ := num("minLength")
		return strings.Repeat("x", max(int(n), 1))
	case "integer", "number":
		if n, ok := num("minimum"); ok {
			return max(n, 1)
		}
		return 1
	case "boolean":
		return true
	case "array":
		n, _ := num("minItems")
		items := []any{}
		for range int(n) {
			items = append(items, minimal(s["items"]))
		}
		return items
	}
	// An object: its required members.
	var props map[string]json.RawMessage
	var req []string
	_ = json.Unmarshal(s["properties"], &props)
	_ = json.Unmarshal(s["required"], &req)
	out := map[string]any{}
	for _, k := range slices.Sorted(slices.Values(req)) {
		out[k] = minimal(props[k])
	}
	return out
}
