// Package githubtest is the GitHub MCP server's 117 tools (bindings/github)
// over a stand-in server, for the adapters' measures of what a large
// toolset costs a model, and the token estimate those measures use.
package githubtest

import (
	"context"
	"testing"
	"unicode"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgen/mcpgen/bindings/github"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// Description is the GitHub source's description for a model that has not
// loaded its tools.
const Description = "GitHub: repositories, files, branches, commits, issues, pull requests and reviews, Actions, releases, gists, discussions, projects, notifications, security alerts, users and teams."

// Toolset is every tool of the GitHub bindings over an in-process mcp-go
// server that lists the same tools and answers each call with "ok <tool>".
func Toolset(t testing.TB) *mcpruntime.Toolset {
	t.Helper()
	s := server.NewMCPServer("github-stand-in", "1", server.WithToolCapabilities(false))
	for _, d := range github.Descriptors() {
		name := d.Name
		s.AddTool(mcp.NewToolWithRawSchema(name, d.Description, d.InputSchema), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok " + name), nil
		})
	}
	c := mcpgo.InProcess(s, mcpgo.WithName("github"))
	t.Cleanup(func() { _ = c.Close() })
	ts, err := mcpruntime.NewToolset(github.Invokers(c)...)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// EstimateTokens is the token estimate of the lean rendering's measure
// (example/crmapi/tokens_test.go, docs/benchmarks.md), which stands in
// for a provider's tokenizer: a run of letters is a token per four
// letters, a run of digits one per three, every other visible character
// one, a single space before a word nothing, any other run of white space
// one.
func EstimateTokens(s string) int {
	n := 0
	rs := []rune(s)
	for i := 0; i < len(rs); {
		j := i + 1
		switch r := rs[i]; {
		case unicode.IsLetter(r):
			for j < len(rs) && unicode.IsLetter(rs[j]) {
				j++
			}
			n += (j - i + 3) / 4
		case unicode.IsDigit(r):
			for j < len(rs) && unicode.IsDigit(rs[j]) {
				j++
			}
			n += (j - i + 2) / 3
		case unicode.IsSpace(r):
			for j < len(rs) && unicode.IsSpace(rs[j]) {
				j++
			}
			if !(r == ' ' && j == i+1 && j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]))) {
				n++
			}
		default:
			n++
		}
		i = j
	}
	return n
}
