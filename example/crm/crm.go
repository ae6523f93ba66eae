// Package crm is a small, self-contained CRM served over MCP: contacts and
// deals held in memory and seeded deterministically. It needs no network
// and no account; send_email only records to an in-memory outbox.
//
// It exercises what typed bindings must handle: read-only lookups with
// output schemas, a search returning an array of objects, a destructive
// update, an open-world action, an argument carrying the caller's identity,
// image, resource-link and embedded-resource content, a resource template,
// a JSON resource and a prompt.
package crm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Version is the server version reported to clients.
const Version = "1.0.0"

// Contact is a person at a customer.
type Contact struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Email   string   `json:"email"`
	Company string   `json:"company"`
	Owner   string   `json:"owner"`
	Tags    []string `json:"tags"`
}

// Deal is a sales opportunity.
type Deal struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	ContactID string   `json:"contact_id"`
	Stage     string   `json:"stage"`
	Amount    float64  `json:"amount"`
	Currency  string   `json:"currency"`
	Owner     string   `json:"owner"`
	Notes     []string `json:"notes"`
}

// Email is a message recorded by send_email.
type Email struct {
	ID      string `json:"message_id"`
	From    string `json:"from"`
	To      string `json:"to"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
}

// user is who a caller_token stands for.
type user struct {
	ID      string
	Manager bool // may change any deal
}

// Tokens accepted as caller_token. They are demo values, not secrets.
var users = map[string]user{
	"tok-alice": {ID: "alice"},
	"tok-bob":   {ID: "bob"},
	"tok-carol": {ID: "carol", Manager: true},
}

var stages = []string{"lead", "qualified", "proposal", "negotiation", "won", "lost"}

// CRM is one in-memory CRM. Each New starts from the same seed.
type CRM struct {
	mu       sync.Mutex
	contacts []Contact // sorted by id
	deals    []Deal    // sorted by id
	outbox   []Email
	exports  int    // pipeline exports made (resources.go)
	faults   Faults // set by ServerWith before any tool is added
}

// New returns a CRM holding the seed data.
func New() *CRM {
	return &CRM{
		contacts: []Contact{
			{ID: "C-1001", Name: "Ada Lovelace", Email: "ada@analytical.example", Company: "Analytical Engines Ltd", Owner: "alice", Tags: []string{"vip", "uk"}},
			{ID: "C-1002", Name: "Grace Hopper", Email: "grace@compilers.example", Company: "Compiler Co", Owner: "bob", Tags: []string{"us"}},
			{ID: "C-1003", Name: "Alan Turing", Email: "alan@bletchley.example", Company: "Bletchley Systems", Owner: "alice", Tags: []string{}},
		},
		deals: []Deal{
			{ID: "D-2001", Title: "Difference engine retrofit", ContactID: "C-1001", Stage: "proposal", Amount: 48000, Currency: "EUR", Owner: "alice", Notes: []string{"Wants a pilot first."}},
			{ID: "D-2002", Title: "COBOL migration", ContactID: "C-1002", Stage: "negotiation", Amount: 125000, Currency: "USD", Owner: "bob", Notes: []string{}},
			{ID: "D-2003", Title: "Cipher audit", ContactID: "C-1003", Stage: "won", Amount: 30000, Currency: "GBP", Owner: "alice", Notes: []string{}},
			{ID: "D-2004", Title: "Compiler support plan", ContactID: "C-1002", Stage: "lead", Amount: 9000, Currency: "USD", Owner: "bob", Notes: []string{}},
		},
	}
}

// NewServer returns an MCP server over a fresh CRM.
func NewServer() *server.MCPServer { return New().Server() }

// Outbox returns the emails sent so far, oldest first.
func (c *CRM) Outbox() []Email {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.outbox)
}

// Server returns an MCP server over c.
func (c *CRM) Server() *server.MCPServer { return c.ServerWith(Faults{}) }

// ServerWith returns an MCP server over c that misbehaves as f says, for
// testing clients (see Faults).
func (c *CRM) ServerWith(f Faults) *server.MCPServer {
	s := server.NewMCPServer("crm", Version,
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(false, true),
		server.WithPromptCapabilities(true),
		server.WithInstructions("A small CRM. Look contacts and deals up before changing them; changes need the caller's token."),
	)
	c.faults = f
	ro := mcp.ToolAnnotation{ReadOnlyHint: ptr(true), DestructiveHint: ptr(false), IdempotentHint: ptr(true), OpenWorldHint: ptr(false)}
	c.addTool(s, "get_contact", "Get contact", "Look up one contact by id.", ro, c.getContact)
	c.addTool(s, "get_deal", "Get deal", "Look up one deal by id. The result links to the deal's contract.", ro, c.getDeal)
	c.addTool(s, "search_deals", "Search deals", "Find deals by text, stage and minimum amount, largest first.", ro, c.searchDeals)
	c.addTool(s, "update_deal", "Update deal", "Change a deal's stage or amount, or add a note. Only the deal's owner or a manager may change it.",
		mcp.ToolAnnotation{ReadOnlyHint: ptr(false), DestructiveHint: ptr(true), IdempotentHint: ptr(false), OpenWorldHint: ptr(false)}, c.updateDeal)
	c.addTool(s, "send_email", "Send email", "Email a contact on behalf of the caller.",
		mcp.ToolAnnotation{ReadOnlyHint: ptr(false), DestructiveHint: ptr(false), IdempotentHint: ptr(false), OpenWorldHint: ptr(true)}, c.sendEmail)
	c.addTool(s, "pipeline_chart", "Pipeline chart", "A bar chart (PNG) of deal value per stage.", ro, c.pipelineChart)
	// No annotations: the specification's defaults apply to this one.
	c.addTool(s, "export_contacts", "", "Export contacts as CSV, embedded in the result.", mcp.ToolAnnotation{}, c.exportContacts)

	s.AddResourceTemplate(
		mcp.NewResourceTemplate("crm://deals/{deal_id}/contract", "deal-contract",
			mcp.WithTemplateDescription("The contract text of a deal."), mcp.WithTemplateMIMEType("text/markdown")),
		c.readContract)
	s.AddResource(
		mcp.NewResource("crm://pipeline", "pipeline",
			mcp.WithResourceDescription("Deal count and value per stage."), mcp.WithMIMEType("application/json")),
		c.readPipeline)
	s.AddPrompt(
		mcp.NewPrompt("follow_up",
			mcp.WithPromptDescription("Draft a follow-up email for a deal."),
			mcp.WithArgument("deal_id", mcp.RequiredArgument(), mcp.ArgumentDescription("Deal id, e.g. D-2001.")),
			mcp.WithArgument("tone", mcp.ArgumentDescription("formal (default) or friendly."))),
		c.followUpPrompt)
	c.addResources(s)
	return s
}

func ptr[T any](v T) *T { return &v }

type handler func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error)

func (c *CRM) addTool(s *server.MCPServer, name, title, desc string, ann mcp.ToolAnnotation, h handler) {
	if slices.Contains(c.faults.Without, name) {
		return
	}
	h = c.faults.wrap(name, h)
	sc := schemas[name]
	t := mcp.NewToolWithRawSchema(name, desc, raw(sc.in))
	t.Title = title
	t.Annotations = ann
	t.RawOutputSchema = raw(c.faults.outputSchema(sc.out))
	s.AddTool(t, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := strictArgs(req, sc.in); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return h(ctx, req)
	})
}

// strictArgs rejects arguments the tool's schema does not know, as a
// careful server would for a closed schema.
func strictArgs(req mcp.CallToolRequest, schema string) error {
	var s struct {
		Properties           map[string]json.RawMessage `json:"properties"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal([]byte(schema), &s); err != nil || s.AdditionalProperties == nil || *s.AdditionalProperties {
		return nil
	}
	for k := range req.GetArguments() {
		if _, ok := s.Properties[k]; !ok {
			return fmt.Errorf("unknown argument %q", k)
		}
	}
	return nil
}

func structured(v any) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return mcp.NewToolResultError("encode result: " + err.Error())
	}
	return mcp.NewToolResultStructured(v, string(b))
}

func (c *CRM) contact(id string) (Contact, bool) {
	for _, ct := range c.contacts {
		if ct.ID == id {
			return ct, true
		}
	}
	return Contact{}, false
}

func (c *CRM) dealIndex(id string) int {
	return slices.IndexFunc(c.deals, func(d Deal) bool { return d.ID == id })
}

func cloneDeal(d Deal) Deal {
	d.Notes = slices.Clone(d.Notes)
	return d
}

func (c *CRM) getContact(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id := req.GetString("contact_id", "")
	c.mu.Lock()
	ct, ok := c.contact(id)
	c.mu.Unlock()
	if !ok {
		return mcp.NewToolResultError(fmt.Sprintf("no contact with id %q", id)), nil
	}
	ct.Tags = slices.Clone(ct.Tags)
	return structured(ct), nil
}

func (c *CRM) getDeal(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id := req.GetString("deal_id", "")
	c.mu.Lock()
	i := c.dealIndex(id)
	var d Deal
	if i >= 0 {
		d = cloneDeal(c.deals[i])
	}
	c.mu.Unlock()
	if i < 0 {
		return mcp.NewToolResultError(fmt.Sprintf("no deal with id %q", id)), nil
	}
	res := structured(d)
	res.Content = append(res.Content, mcp.NewResourceLink(contractURI(d.ID), "contract-"+d.ID, "Contract for "+d.Title, "text/markdown"))
	return res, nil
}

func contractURI(dealID string) string { return "crm://deals/" + dealID + "/contract" }

type dealSummary struct {
	ID       string  `json:"id"`
	Title    string  `json:"title"`
	Company  string  `json:"company"`
	Stage    string  `json:"stage"`
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

func (c *CRM) searchDeals(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Query     string   `json:"query"`
		Stage     string   `json:"stage"`
		MinAmount *float64 `json:"min_amount"`
		Limit     *int     `json:"limit"`
	}
	if err := req.BindArguments(&in); err != nil {
		return mcp.NewToolResultError("invalid arguments: " + err.Error()), nil
	}
	limit := 10
	if in.Limit != nil {
		limit = *in.Limit
	}
	if limit < 1 || limit > 50 {
		return mcp.NewToolResultError("limit must be between 1 and 50"), nil
	}
	if in.Stage != "" && !slices.Contains(stages, in.Stage) {
		return mcp.NewToolResultError(fmt.Sprintf("unknown stage %q", in.Stage)), nil
	}
	q := strings.ToLower(in.Query)
	c.mu.Lock()
	var out []dealSummary
	for _, d := range c.deals {
		ct, _ := c.contact(d.ContactID)
		switch {
		case in.Stage != "" && d.Stage != in.Stage,
			in.MinAmount != nil && d.Amount < *in.MinAmount,
			q != "" && !strings.Contains(strings.ToLower(d.Title), q) && !strings.Contains(strings.ToLower(ct.Company), q):
			continue
		}
		out = append(out, dealSummary{ID: d.ID, Title: d.Title, Company: ct.Company, Stage: d.Stage, Amount: d.Amount, Currency: d.Currency})
	}
	c.mu.Unlock()
	slices.SortStableFunc(out, func(a, b dealSummary) int {
		switch {
		case a.Amount > b.Amount:
			return -1
		case a.Amount < b.Amount:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	total := len(out)
	out = out[:min(limit, total)]
	if out == nil {
		out = []dealSummary{}
	}
	return structured(struct {
		Deals []dealSummary `json:"deals"`
		Total int           `json:"total"`
	}{out, total}), nil
}

func authenticate(req mcp.CallToolRequest) (user, error) {
	u, ok := users[req.GetString("caller_token", "")]
	if !ok {
		// The token itself is not echoed back.
		return user{}, fmt.Errorf("caller_token is not valid")
	}
	return u, nil
}

func (c *CRM) updateDeal(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	u, err := authenticate(req)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	var in struct {
		DealID string   `json:"deal_id"`
		Stage  *string  `json:"stage"`
		Amount *float64 `json:"amount"`
		Note   *string  `json:"note"`
	}
	if err := req.BindArguments(&in); err != nil {
		return mcp.NewToolResultError("invalid arguments: " + err.Error()), nil
	}
	if in.Stage == nil && in.Amount == nil && in.Note == nil {
		return mcp.NewToolResultError("nothing to change: give stage, amount or note"), nil
	}
	if in.Stage != nil && !slices.Contains(stages, *in.Stage) {
		return mcp.NewToolResultError(fmt.Sprintf("unknown stage %q", *in.Stage)), nil
	}
	if in.Amount != nil && *in.Amount < 0 {
		return mcp.NewToolResultError("amount must not be negative"), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	i := c.dealIndex(in.DealID)
	if i < 0 {
		return mcp.NewToolResultError(fmt.Sprintf("no deal with id %q", in.DealID)), nil
	}
	d := &c.deals[i]
	if d.Owner != u.ID && !u.Manager {
		return mcp.NewToolResultError(fmt.Sprintf("permission denied: %s may not change deal %s (owner %s)", u.ID, d.ID, d.Owner)), nil
	}
	if in.Stage != nil {
		d.Stage = *in.Stage
	}
	if in.Amount != nil {
		d.Amount = *in.Amount
	}
	if in.Note != nil {
		d.Notes = append(d.Notes, fmt.Sprintf("%s: %s", u.ID, *in.Note))
	}
	return structured(cloneDeal(*d)), nil
}

func (c *CRM) sendEmail(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	u, err := authenticate(req)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	id := req.GetString("contact_id", "")
	subject, body := req.GetString("subject", ""), req.GetString("body", "")
	if subject == "" || body == "" {
		return mcp.NewToolResultError("subject and body must not be empty"), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ct, ok := c.contact(id)
	if !ok {
		return mcp.NewToolResultError(fmt.Sprintf("no contact with id %q", id)), nil
	}
	e := Email{ID: fmt.Sprintf("msg-%04d", len(c.outbox)+1), From: u.ID, To: ct.Email, Subject: subject, Body: body}
	c.outbox = append(c.outbox, e)
	return structured(struct {
		ID     string `json:"message_id"`
		To     string `json:"to"`
		Status string `json:"status"`
	}{e.ID, e.To, "queued"}), nil
}

type stageTotal struct {
	Stage string  `json:"stage"`
	Deals int     `json:"deals"`
	Value float64 `json:"value"`
}

// pipeline sums deals per stage, in stage order. Amounts are summed as
// numbers regardless of currency: a demo, not accounting.
func (c *CRM) pipeline() []stageTotal {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]stageTotal, len(stages))
	for i, s := range stages {
		out[i].Stage = s
		for _, d := range c.deals {
			if d.Stage == s {
				out[i].Deals++
				out[i].Value += d.Amount
			}
		}
	}
	return out
}

func (c *CRM) pipelineChart(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	totals := c.pipeline()
	img, err := chartPNG(totals)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, t := range totals {
		lines = append(lines, fmt.Sprintf("%s: %d deals, %.0f", t.Stage, t.Deals, t.Value))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		mcp.NewTextContent("Pipeline by stage (bar height is value):\n" + strings.Join(lines, "\n")),
		mcp.NewImageContent(img, "image/png"),
	}}, nil
}

// chartPNG draws one bar per stage, base64-encoded.
func chartPNG(totals []stageTotal) (string, error) {
	const w, h, bar = 120, 60, 20
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	maxV := 0.0
	for _, t := range totals {
		maxV = max(maxV, t.Value)
	}
	for i, t := range totals {
		if maxV == 0 {
			break
		}
		top := h - int(t.Value/maxV*float64(h-4))
		for x := i*bar + 2; x < (i+1)*bar-2; x++ {
			for y := top; y < h; y++ {
				img.Set(x, y, color.RGBA{0x33, 0x66, 0xcc, 0xff})
			}
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

func (c *CRM) exportContacts(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	owner := req.GetString("owner", "")
	var b strings.Builder
	b.WriteString("id,name,email,company,owner\n")
	n := 0
	c.mu.Lock()
	for _, ct := range c.contacts {
		if owner != "" && ct.Owner != owner {
			continue
		}
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s\n", ct.ID, csvField(ct.Name), ct.Email, csvField(ct.Company), ct.Owner)
		n++
	}
	c.mu.Unlock()
	return &mcp.CallToolResult{Content: []mcp.Content{
		mcp.NewTextContent(fmt.Sprintf("Exported %d contacts.", n)),
		mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "crm://exports/contacts.csv", MIMEType: "text/csv", Text: b.String()}),
	}}, nil
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

func (c *CRM) readContract(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	var id string
	if v, ok := req.Params.Arguments["deal_id"].([]string); ok && len(v) == 1 {
		id = v[0]
	}
	c.mu.Lock()
	i := c.dealIndex(id)
	var d Deal
	if i >= 0 {
		d = cloneDeal(c.deals[i])
	}
	c.mu.Unlock()
	if i < 0 {
		return nil, fmt.Errorf("no deal with id %q", id)
	}
	ct, _ := c.contact(d.ContactID)
	text := fmt.Sprintf("# Contract %s\n\n%s for %s.\n\nValue: %.2f %s. Stage: %s.\n", d.ID, d.Title, ct.Company, d.Amount, d.Currency, d.Stage)
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/markdown", Text: text}}, nil
}

func (c *CRM) readPipeline(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	b, err := json.Marshal(c.pipeline())
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}, nil
}

func (c *CRM) followUpPrompt(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	id := req.Params.Arguments["deal_id"]
	tone := req.Params.Arguments["tone"]
	if tone == "" {
		tone = "formal"
	}
	if tone != "formal" && tone != "friendly" {
		return nil, fmt.Errorf("tone must be formal or friendly, not %q", tone)
	}
	c.mu.Lock()
	i := c.dealIndex(id)
	var d Deal
	if i >= 0 {
		d = cloneDeal(c.deals[i])
	}
	c.mu.Unlock()
	if i < 0 {
		return nil, fmt.Errorf("no deal with id %q", id)
	}
	return mcp.NewGetPromptResult("Follow-up for "+d.ID, []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(fmt.Sprintf(
			"Write a %s follow-up email about deal %s (%q, stage %s). Look the deal and its contact up first, then send it with send_email.",
			tone, d.ID, d.Title, d.Stage))),
	}), nil
}
