package github_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/mcpgen/mcpgen/gen"
	"github.com/mcpgen/mcpgen/gen/internal/usecases/github"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// User code against GitHub-like bindings.

func TestReactionsSpelled(t *testing.T) {
	in := github.AddIssueReactionInput{Owner: "o", Repo: "r", IssueNumber: 7, Content: github.AddIssueReactionInputContentPlus1}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"owner":"o","repo":"r","issue_number":7,"content":"+1"}`; string(b) != want {
		t.Errorf("encoded %s, want %s", b, want)
	}
	if github.AddIssueReactionInputContentMinus1 != "-1" {
		t.Error("-1 is Minus1")
	}
	// Inputs stay strict: a value the enum does not list is refused.
	bad := github.AddIssueReactionInput{Owner: "o", Repo: "r", IssueNumber: 7, Content: "thumbs"}
	if err := bad.Validate(); err == nil {
		t.Error("unknown reaction accepted")
	}
}

// server answers list_issues as a newer release would: an issue state the
// bindings do not know, and members they do not declare.
type server struct{ args json.RawMessage }

func (s *server) CallTool(_ context.Context, _ string, args json.RawMessage) (*mcpruntime.Result, error) {
	s.args = args
	return &mcpruntime.Result{StructuredContent: json.RawMessage(`{"issues":[{"number":1,"title":"t","state":"DRAFT","user":{"login":"u","id":9},"labels":[]}],"totalCount":1,"pageInfo":{}}`)}, nil
}

func TestListIssuesFromNewerServer(t *testing.T) {
	s := &server{}
	gh := github.NewClient(s)
	res, err := gh.ListIssues(context.Background(), github.ListIssuesInput{Owner: "o", Repo: "r", State: ptr(github.ListIssuesInputStateOpen)})
	if err != nil {
		t.Fatal(err)
	}
	if string(s.args) != `{"owner":"o","repo":"r","state":"OPEN"}` {
		t.Errorf("sent %s", s.args)
	}
	is := res.Output.Issues[0]
	if is.State != "DRAFT" || is.State.Valid() || is.User == nil || string(is.User.AdditionalProperties["id"]) != "9" {
		t.Errorf("issue %+v", is)
	}
	if _, ok := res.Output.AdditionalProperties["pageInfo"]; !ok {
		t.Errorf("pageInfo lost: %+v", res.Output)
	}
}

func TestUpToDate(t *testing.T) {
	data, err := os.ReadFile("github.json")
	if err != nil {
		t.Fatal(err)
	}
	files, err := gen.Generate(gen.Config{Package: "github", Inputs: []gen.Input{{Name: "github.json", Data: data}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("github.mcp.go")
	if err != nil || string(got) != string(files["github.mcp.go"]) {
		t.Fatalf("github.mcp.go is out of date (%v): run go generate", err)
	}
}

func ptr[T any](v T) *T { return &v }
