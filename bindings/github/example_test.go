package github_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/mcpgen/mcpgen/bindings/github"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// A gated call: create_issue is not read-only, so it waits for a person's
// approval. Nothing is sent until then; the connection starts its server
// on first use, so here the server is not even started.
func Example() {
	ctx := context.Background()
	token := "github_pat_example" // from your secret store
	conn := mcpgo.Stdio("github-mcp-server", []string{"stdio", "--toolsets", "issues"},
		mcpgo.WithEnv("GITHUB_PERSONAL_ACCESS_TOKEN="+token), mcpgo.WithSecrets(token))
	defer conn.Close()
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), github.GateOptions()...)
	gh := github.NewClient(conn, mcpruntime.WithGate(gate))

	_, err := gh.CreateIssue(ctx, github.CreateIssueInput{Owner: "octo-org", Repo: "demo", Title: "Try the bindings"})
	var pending *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &pending) {
		log.Fatalf("want a pending approval, got %v", err)
	}
	fmt.Println("held for approval:", pending.Approval.Tool)
	fmt.Println("arguments:", string(pending.Approval.Args))
	// A person decides: gate.Approve(ctx, pending.Approval.ID, pending.Approval.Digest),
	// then gh.ResumeCreateIssue(ctx, pending.Approval.ID) makes the call, once.

	// Output:
	// held for approval: create_issue
	// arguments: {"owner":"octo-org","repo":"demo","title":"Try the bindings"}
}
