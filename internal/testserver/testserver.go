// Package testserver is a real MCP server (built on mcp-go) used by mcpgen's
// tests and demo: tools with raw input and output schemas (nested objects,
// enums, nullable types, oneOf, $defs), annotations, icons, _meta,
// resources, resource templates and prompts, plus misbehaving modes that
// exercise every error path of a snapshot.
//
// Run it with Main over stdio (the mode comes from $MCPGEN_TESTSERVER_MODE),
// or serve New's server over HTTP with mcp-go's servertest helpers.
package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Options shape the server New builds.
type Options struct {
	// PageSize > 0 paginates every list with that many items per page.
	PageSize int
	// Reversed lists tools in reverse name order (no pagination), to show
	// that a snapshot does not depend on the server's order.
	Reversed bool
	// NoTools builds a server that advertises tools but has none.
	NoTools bool
	// Canary, when not empty, is written into one tool's description, as a
	// careless server might echo a token from its environment.
	Canary string
	// Drifted builds the "next release" of the server, for drift checks:
	// delete_deal removed, archive_deal added, get_deal with a new required
	// argument and without the output member "history", search_contacts
	// no longer read-only, a new currency, and a reworded ping.
	Drifted bool
}

// Instructions are the server's usage instructions.
const Instructions = "A small CRM for mcpgen's tests: deals, contacts and a ping."

// New builds the server.
func New(o Options) *server.MCPServer {
	opts := []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(false, true),
		server.WithPromptCapabilities(true),
		server.WithInstructions(Instructions),
	}
	if o.PageSize > 0 && !o.Reversed {
		opts = append(opts, server.WithPaginationLimit(o.PageSize))
	}
	if o.Reversed {
		opts = append(opts, server.WithToolFilter(func(_ context.Context, ts []mcp.Tool) []mcp.Tool {
			out := slices.Clone(ts)
			slices.Reverse(out)
			return out
		}))
	}
	s := server.NewMCPServer("mcpgen-testserver", "1.0.0", opts...)
	if !o.NoTools {
		for _, t := range tools(o) {
			s.AddTool(t, handle)
		}
	}
	s.AddResource(mcp.NewResource("mem://readme", "readme",
		mcp.WithResourceDescription("What this server is."), mcp.WithMIMEType("text/plain")),
		func(_ context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "text/plain", Text: Instructions}}, nil
		})
	s.AddResource(mcp.NewResource("mem://pipeline", "pipeline",
		mcp.WithResourceDescription("Deal stages in order."), mcp.WithMIMEType("application/json")),
		func(_ context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "application/json", Text: `["lead","won","lost"]`}}, nil
		})
	s.AddResourceTemplate(mcp.NewResourceTemplate("mem://deals/{id}", "deal",
		mcp.WithTemplateDescription("One deal by id."), mcp.WithTemplateMIMEType("application/json")),
		func(_ context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "application/json", Text: `{}`}}, nil
		})
	s.AddPrompt(mcp.NewPrompt("summarize_deal",
		mcp.WithPromptDescription("Summarize a deal for a sales review."),
		mcp.WithArgument("deal_id", mcp.RequiredArgument(), mcp.ArgumentDescription("The deal to summarize.")),
		mcp.WithArgument("tone", mcp.ArgumentDescription("formal or casual"))),
		func(_ context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("Deal summary", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Summarize deal "+r.Params.Arguments["deal_id"])),
			}), nil
		})
	return s
}

// ToolNames lists the tools New adds, sorted.
func ToolNames() []string {
	var ns []string
	for _, t := range tools(Options{}) {
		ns = append(ns, t.Name)
	}
	slices.Sort(ns)
	return ns
}

// CreateDealInput is create_deal's input schema. It uses keywords mcp-go's
// client-side types drop ($schema, title, oneOf, minProperties, $defs with
// $ref, nullable type arrays), so only a raw capture keeps it whole.
const CreateDealInput = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "CreateDeal",
  "description": "A new deal.",
  "type": "object",
  "properties": {
    "title": {"type": "string", "minLength": 1, "maxLength": 200},
    "amount": {"type": "number", "minimum": 0, "description": "In the deal's currency."},
    "currency": {"type": "string", "enum": ["EUR", "USD", "GBP"], "default": "EUR"},
    "stage": {"$ref": "#/$defs/stage"},
    "close_date": {"type": ["string", "null"], "format": "date"},
    "contact": {
      "type": "object",
      "properties": {
        "name": {"type": "string"},
        "email": {"type": "string", "format": "email"},
        "phones": {"type": "array", "items": {"type": "string"}, "maxItems": 3}
      },
      "required": ["name"],
      "additionalProperties": false
    },
    "owner": {
      "oneOf": [
        {"type": "object", "properties": {"kind": {"const": "user"}, "user_id": {"type": "integer"}}, "required": ["kind", "user_id"]},
        {"type": "object", "properties": {"kind": {"const": "team"}, "team": {"type": "string"}}, "required": ["kind", "team"]}
      ]
    },
    "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
    "x-internal-note": {"type": "string"}
  },
  "required": ["title", "amount"],
  "additionalProperties": false,
  "minProperties": 2,
  "$defs": {
    "stage": {"type": "string", "enum": ["lead", "qualified", "won", "lost"]}
  }
}`

// DealOutput is the output schema of create_deal and get_deal.
const DealOutput = `{
  "type": "object",
  "properties": {
    "id": {"type": "string"},
    "title": {"type": "string"},
    "amount": {"type": "number"},
    "stage": {"type": "string", "enum": ["lead", "qualified", "won", "lost"]},
    "closed_at": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]},
    "history": {
      "type": "array",
      "items": {"type": "object", "properties": {"at": {"type": "string"}, "stage": {"type": "string"}}, "required": ["at", "stage"]}
    }
  },
  "required": ["id", "title", "amount", "stage"]
}`

func tools(o Options) []mcp.Tool {
	no := false

	create := mcp.NewToolWithRawSchema("create_deal", "Create a deal in the pipeline.", json.RawMessage(CreateDealInput))
	create.Title = "Create deal"
	create.RawOutputSchema = json.RawMessage(DealOutput)
	create.Annotations = mcp.ToolAnnotation{Title: "Create deal", ReadOnlyHint: &no, DestructiveHint: &no, IdempotentHint: &no, OpenWorldHint: &no}
	create.Icons = []mcp.Icon{{Src: "https://example.com/icons/deal.svg", MIMEType: "image/svg+xml", Sizes: []string{"any"}}}
	create.Meta = mcp.NewMetaFromMap(map[string]any{"example.com/category": "sales"})

	get := mcp.NewTool("get_deal",
		mcp.WithDescription("Fetch one deal by id."),
		mcp.WithString("id", mcp.Required(), mcp.Description("Deal id, like D-1.")),
		mcp.WithBoolean("with_history", mcp.Description("Include stage history.")),
		mcp.WithRawOutputSchema(json.RawMessage(DealOutput)),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false))

	del := mcp.NewTool("delete_deal",
		mcp.WithDescription("Delete a deal. This cannot be undone."),
		mcp.WithString("id", mcp.Required()),
		mcp.WithDestructiveHintAnnotation(true), mcp.WithReadOnlyHintAnnotation(false))
	del.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportForbidden}

	search := mcp.NewTool("search_contacts",
		mcp.WithDescription("Search contacts by name or email."),
		mcp.WithString("query", mcp.Required()),
		mcp.WithNumber("limit", mcp.Min(1), mcp.Max(100), mcp.DefaultNumber(20)),
		mcp.WithArray("fields", mcp.WithStringEnumItems([]string{"name", "email", "phone"})),
		mcp.WithReadOnlyHintAnnotation(true))

	ping := mcp.NewTool("ping", mcp.WithDescription("Check that the server answers."), mcp.WithReadOnlyHintAnnotation(true))

	ts := []mcp.Tool{create, get, del, search, ping}
	if o.Drifted {
		ts = drifted(create, get, search, ping)
	}
	if o.Canary != "" {
		ts = append(ts, mcp.NewTool("whoami", mcp.WithDescription(fmt.Sprintf("Shows the caller (configured token %s).", o.Canary))))
	}
	return ts
}

func handle(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	// An undeclared "fail" argument makes any tool answer with a tool error,
	// for tests of isError handling.
	if r.GetArguments()["fail"] == true {
		return mcp.NewToolResultError("deal store unavailable"), nil
	}
	return mcp.NewToolResultText("ok: " + r.Params.Name), nil
}

// drifted changes the tools the way a careless server release might; see
// Options.Drifted.
func drifted(create, get, search, ping mcp.Tool) []mcp.Tool {
	create.InputSchema = mcp.ToolInputSchema{}
	create.RawInputSchema = json.RawMessage(strings.Replace(CreateDealInput, `"enum": ["EUR", "USD", "GBP"]`, `"enum": ["EUR", "USD", "GBP", "JPY"]`, 1))

	out := strings.Replace(DealOutput, `"history": {
      "type": "array",
      "items": {"type": "object", "properties": {"at": {"type": "string"}, "stage": {"type": "string"}}, "required": ["at", "stage"]}
    }`, `"owner": {"type": "string"}`, 1)
	get = mcp.NewTool("get_deal",
		mcp.WithDescription("Fetch one deal by id, within a tenant."),
		mcp.WithString("id", mcp.Required(), mcp.Description("Deal id, like D-1.")),
		mcp.WithString("tenant", mcp.Required()),
		mcp.WithBoolean("with_history", mcp.Description("Include stage history.")),
		mcp.WithRawOutputSchema(json.RawMessage(out)),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false))

	ro := false
	search.Annotations.ReadOnlyHint = &ro
	ping.Description = "Check that the server answers (and report its version)."
	archive := mcp.NewTool("archive_deal", mcp.WithDescription("Archive a deal."), mcp.WithString("id", mcp.Required()))
	return []mcp.Tool{archive, create, get, search, ping}
}
