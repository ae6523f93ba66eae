package mcpgo_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/server/servertest"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// leakyPrompts is a real MCP server whose prompts echo the Authorization
// header they were asked with, as careless servers do: into the
// description, every kind of message, the result's _meta and an error.
func leakyPrompts() *server.MCPServer {
	s := server.NewMCPServer("leaky-prompts", "1.0.0", server.WithPromptCapabilities(false))
	s.AddPrompt(mcp.NewPrompt("echo", mcp.WithArgument("topic")), func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		hdr, _ := ctx.Value(authKey{}).(string)
		res := &mcp.GetPromptResult{
			Description: "written for " + hdr,
			Messages: []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("about "+req.Params.Arguments["topic"]+", as "+hdr)),
				mcp.NewPromptMessage(mcp.RoleAssistant, mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "mem://note", MIMEType: "text/plain", Text: "note for " + hdr})),
			},
		}
		res.Meta = mcp.NewMetaFromMap(map[string]any{"io.example/echo": hdr})
		return res, nil
	})
	s.AddPrompt(mcp.NewPrompt("fail"), func(ctx context.Context, _ mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		hdr, _ := ctx.Value(authKey{}).(string)
		return nil, errors.New("no prompt for " + hdr)
	})
	return s
}

// TestPromptScrubsToken: a prompt read with an identity sends the token as
// a bearer header, and nothing the server echoes of it reaches the caller,
// whether plain or JSON-escaped, in any part of the result or the error.
func TestPromptScrubsToken(t *testing.T) {
	for name, dial := range map[string]func(t *testing.T) *mcpgo.Conn{
		"http": func(t *testing.T) *mcpgo.Conn {
			ts := servertest.NewTestStreamableHTTPServer(leakyPrompts(), server.WithHTTPContextFunc(withAuth))
			t.Cleanup(ts.Close)
			return mcpgo.StreamableHTTP(ts.URL+"/mcp", mcpgo.WithName("leaky"))
		},
		"sse": func(t *testing.T) *mcpgo.Conn {
			ts := servertest.NewTestServer(leakyPrompts(), server.WithSSEContextFunc(withAuth))
			t.Cleanup(ts.Close)
			return mcpgo.SSE(ts.URL+"/sse", mcpgo.WithName("leaky"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := dial(t)
			closeConn(t, c)
			// '<' and '&' are escaped by JSON encoders (\u003c, \u0026), so
			// the server's JSON holds the token in another spelling too.
			buf := make([]byte, 8)
			_, _ = rand.Read(buf)
			tok := "tok-<&>-" + hex.EncodeToString(buf)
			ctx := mcpruntime.WithPrincipal(context.Background(), "alice", mcpruntime.Secret(tok))
			escaped, _ := json.Marshal(tok)
			escaped = escaped[1 : len(escaped)-1]
			identity := mcpruntime.ReadIdentity(mcpruntime.ContextPrincipal)
			run := mcpruntime.NewRun("")
			ctx = mcpruntime.WithRun(ctx, run)

			echo := &mcpruntime.PromptDescriptor{Name: "echo", Arguments: []mcpruntime.PromptArgument{{Name: "topic"}}}
			res, err := mcpruntime.GetPrompt(ctx, c, echo, map[string]string{"topic": "renewals"}, identity)
			if err != nil {
				t.Fatal(err)
			}
			all, _ := json.Marshal(res)
			for _, leak := range []string{tok, string(escaped), hex.EncodeToString(buf)} {
				if strings.Contains(string(all), leak) || strings.Contains(string(res.Meta), leak) {
					t.Errorf("the prompt result holds the token (%q):\n%s\n_meta %s", leak, all, res.Meta)
				}
			}
			// Each part was echoed and scrubbed, not dropped.
			if res.Description != "written for Bearer [redacted]" {
				t.Errorf("description %q", res.Description)
			}
			if len(res.Messages) != 2 || res.Messages[0].Content.Text != "about renewals, as Bearer [redacted]" ||
				res.Messages[1].Content.Resource == nil || res.Messages[1].Content.Resource.Text != "note for Bearer [redacted]" {
				t.Errorf("messages %+v", res.Messages)
			}
			if !strings.Contains(string(res.Meta), `"io.example/echo":"Bearer [redacted]"`) {
				t.Errorf("_meta %s", res.Meta)
			}
			// The ledger's digest is of what the caller got: the scrubbed
			// messages.
			if l := run.Ledger(); len(l) != 1 || l[0].Prompt != "echo" || l[0].Digest != res.Provenance.Digest {
				t.Errorf("ledger %+v, provenance %+v", l, res.Provenance)
			}

			_, err = mcpruntime.GetPrompt(ctx, c, &mcpruntime.PromptDescriptor{Name: "fail"}, nil, identity)
			if err == nil || strings.Contains(err.Error(), tok) || strings.Contains(err.Error(), string(escaped)) || !strings.Contains(err.Error(), "no prompt for Bearer [redacted]") {
				t.Errorf("prompt error: %v", err)
			}
		})
	}
}
