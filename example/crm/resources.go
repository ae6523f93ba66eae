package crm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// More resources and prompts, for typed accessors to exercise: a JSON
// resource template, a blob resource, a resource that goes away (each
// export replaces the previous one, whose link then expires), and a prompt
// whose messages mix roles and content kinds.

func init() {
	schemas["export_pipeline"] = struct{ in, out string }{
		in: `{"type": "object", "properties": {}, "additionalProperties": false}`,
	}
}

// exportPrefix is where pipeline exports live; only the latest exists.
const exportPrefix = "crm://exports/pipeline-"

func (c *CRM) addResources(s *server.MCPServer) {
	s.AddResourceTemplate(
		mcp.NewResourceTemplate("crm://deals/{deal_id}/summary", "deal-summary",
			mcp.WithTemplateDescription("A deal's id, title, stage and amount as JSON."), mcp.WithTemplateMIMEType("application/json")),
		c.readSummary)
	s.AddResource(
		mcp.NewResource("crm://charts/pipeline.png", "pipeline-chart",
			mcp.WithResourceDescription("The pipeline chart as a PNG."), mcp.WithMIMEType("image/png")),
		c.readChart)
	c.addTool(s, "export_pipeline", "Export pipeline",
		"Export the pipeline as CSV. The result links to the export; each export replaces the previous one, whose link then expires.",
		mcp.ToolAnnotation{ReadOnlyHint: ptr(true), DestructiveHint: ptr(false), IdempotentHint: ptr(true), OpenWorldHint: ptr(false)},
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return c.exportPipeline(s)
		})
	s.AddPrompt(
		mcp.NewPrompt("deal_review",
			mcp.WithPromptDescription("Review a deal with its contract attached."),
			mcp.WithArgument("deal_id", mcp.RequiredArgument(), mcp.ArgumentDescription("Deal id, e.g. D-2001.")),
			mcp.WithArgument("focus", mcp.ArgumentDescription("What to look at: risk (default) or pricing."))),
		c.reviewPrompt)
}

func (c *CRM) deal(id string) (Deal, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := c.dealIndex(id)
	if i < 0 {
		return Deal{}, false
	}
	return cloneDeal(c.deals[i]), true
}

func (c *CRM) readSummary(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	var id string
	if v, ok := req.Params.Arguments["deal_id"].([]string); ok && len(v) == 1 {
		id = v[0]
	}
	d, ok := c.deal(id)
	if !ok {
		return nil, fmt.Errorf("no deal with id %q", id)
	}
	b, err := json.Marshal(map[string]any{"id": d.ID, "title": d.Title, "stage": d.Stage, "amount": d.Amount, "currency": d.Currency})
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}, nil
}

func (c *CRM) readChart(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	png, err := chartPNG(c.pipeline())
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.BlobResourceContents{URI: req.Params.URI, MIMEType: "image/png", Blob: png}}, nil
}

// exportPipeline writes a new export and removes the previous one, so a
// link to it stops working: the server then answers "resource not found".
func (c *CRM) exportPipeline(s *server.MCPServer) (*mcp.CallToolResult, error) {
	var b strings.Builder
	b.WriteString("stage,deals,value\n")
	for _, t := range c.pipeline() {
		fmt.Fprintf(&b, "%s,%d,%.2f\n", t.Stage, t.Deals, t.Value)
	}
	csv := b.String()
	c.mu.Lock()
	c.exports++
	n := c.exports
	c.mu.Unlock()
	uri := fmt.Sprintf("%s%d.csv", exportPrefix, n)
	if n > 1 {
		s.DeleteResources(fmt.Sprintf("%s%d.csv", exportPrefix, n-1))
	}
	s.AddResource(mcp.NewResource(uri, "pipeline-export", mcp.WithMIMEType("text/csv")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/csv", Text: csv}}, nil
		})
	return &mcp.CallToolResult{Content: []mcp.Content{
		mcp.NewTextContent(fmt.Sprintf("Exported the pipeline (export %d).", n)),
		mcp.NewResourceLink(uri, "pipeline-export", "The pipeline as CSV", "text/csv"),
	}}, nil
}

func (c *CRM) reviewPrompt(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	id := req.Params.Arguments["deal_id"]
	focus := req.Params.Arguments["focus"]
	if focus == "" {
		focus = "risk"
	}
	if focus != "risk" && focus != "pricing" {
		return nil, fmt.Errorf("focus must be risk or pricing, not %q", focus)
	}
	d, ok := c.deal(id)
	if !ok {
		return nil, fmt.Errorf("no deal with id %q", id)
	}
	contract, err := c.readContract(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{
		URI: "crm://deals/" + d.ID + "/contract", Arguments: map[string]any{"deal_id": []string{d.ID}}}})
	if err != nil {
		return nil, err
	}
	return mcp.NewGetPromptResult("Review of "+d.ID, []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(fmt.Sprintf("Review deal %s (%q) for %s. The contract follows.", d.ID, d.Title, focus))),
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewEmbeddedResource(contract[0])),
		mcp.NewPromptMessage(mcp.RoleAssistant, mcp.NewTextContent("I will read the contract and list what stands out.")),
	}), nil
}
