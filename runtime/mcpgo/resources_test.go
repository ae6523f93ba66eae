package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// Resource reads and prompts through the runtime seam against the CRM
// server as a real process, over stdio and streamable HTTP.

var (
	exportPipelineDesc = func() *mcpruntime.Descriptor {
		d := desc("export_pipeline", `{"type":"object","properties":{},"additionalProperties":false}`, "")
		d.Annotations = mcpruntime.Annotations{ReadOnly: true, Idempotent: true}
		return d
	}()
	// The same tool as a binding that does not know it is idempotent.
	exportNotIdempotent = desc("export_pipeline", `{"type":"object","properties":{},"additionalProperties":false}`, "")
	pipelineDesc        = &mcpruntime.ResourceDescriptor{URI: "crm://pipeline", Name: "pipeline", MIMEType: "application/json"}
	contractDesc        = &mcpruntime.ResourceDescriptor{URITemplate: "crm://deals/{deal_id}/contract", Name: "deal-contract", MIMEType: "text/markdown"}
	followUpDesc        = &mcpruntime.PromptDescriptor{Name: "follow_up", Arguments: []mcpruntime.PromptArgument{{Name: "deal_id", Required: true}, {Name: "tone"}}}
)

func crmConns(t *testing.T) map[string]*mcpgo.Conn {
	conns := map[string]*mcpgo.Conn{
		"stdio": mcpgo.Stdio(crmServer(t), nil, mcpgo.WithName("crm")),
		"http":  mcpgo.StreamableHTTP(crmHTTP(t), mcpgo.WithName("crm")),
	}
	for _, c := range conns {
		closeConn(t, c)
	}
	return conns
}

func TestResourceReadsCRM(t *testing.T) {
	for name, c := range crmConns(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			run := mcpruntime.NewRun("")
			ctx = mcpruntime.WithRun(ctx, run)

			res, err := mcpruntime.ReadResource(ctx, c, pipelineDesc)
			if err != nil {
				t.Fatal(err)
			}
			type stage struct {
				Stage string  `json:"stage"`
				Deals int     `json:"deals"`
				Value float64 `json:"value"`
			}
			typed, err := mcpruntime.DecodeResource(res, pipelineDesc, func(b []byte) ([]stage, error) {
				var v []stage
				return v, jsonStrict(b, &v)
			})
			if err != nil || len(typed.Content) != 6 || typed.Content[0].Stage != "lead" {
				t.Fatalf("typed pipeline: %+v, %v", typed, err)
			}
			if p := res.Provenance; p.Resource != "crm://pipeline" || p.Server != "crm" || !p.External || !strings.HasPrefix(p.Digest, "sha256:") {
				t.Errorf("provenance %+v", p)
			}
			if l := run.Ledger(); len(l) != 1 || l[0].Resource != "crm://pipeline" {
				t.Errorf("ledger %+v", l)
			}

			// Markdown is not JSON: a bound schema refuses it.
			k, err := mcpruntime.ReadTemplate(ctx, c, contractDesc, mcpruntime.TemplateVars{"deal_id": "D-2001"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = mcpruntime.DecodeResource(k, contractDesc, func(b []byte) (stage, error) { return stage{}, nil })
			var ce *mcpruntime.ResourceContentError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "text/markdown") {
				t.Errorf("markdown decoded as JSON: %v", err)
			}
			if _, err := k.Blob(); !errors.As(err, &ce) {
				t.Errorf("text read as a blob: %v", err)
			}

			// The limit counts the response as received.
			_, err = mcpruntime.ReadResource(ctx, c, pipelineDesc, mcpruntime.MaxReadSize(32))
			var tl *mcpruntime.ResourceTooLargeError
			if !errors.As(err, &tl) || tl.Limit != 32 || tl.Size <= 32 {
				t.Errorf("size limit: %v", err)
			}

			// A URI the server has never had is reported as expired too:
			// that is all "resource not found" says.
			_, err = mcpruntime.ReadURI(ctx, c, "crm://nothing/here")
			var ee *mcpruntime.ResourceExpiredError
			if !errors.As(err, &ee) || !errors.Is(err, mcpruntime.ErrResourceExpired) || ee.URI != "crm://nothing/here" {
				t.Errorf("unknown resource: %v", err)
			}

			// Prompts: required as values, optional left out or given; a
			// missing required argument never reaches the server.
			pr, err := mcpruntime.GetPrompt(ctx, c, followUpDesc, map[string]string{"deal_id": "D-2001", "tone": "friendly"})
			if err != nil || len(pr.Messages) != 1 || !strings.Contains(pr.Messages[0].Content.Text, "friendly") || pr.Provenance.Prompt != "follow_up" {
				t.Errorf("prompt: %+v, %v", pr, err)
			}
			if _, err := mcpruntime.GetPrompt(ctx, c, followUpDesc, map[string]string{"tone": "x"}); err == nil || !strings.Contains(err.Error(), `missing required argument "deal_id"`) {
				t.Errorf("missing required argument: %v", err)
			}
			if _, err := mcpruntime.GetPrompt(ctx, c, followUpDesc, map[string]string{"deal_id": "D-2001", "mood": "x"}); err == nil || !strings.Contains(err.Error(), `undeclared argument "mood"`) {
				t.Errorf("undeclared argument: %v", err)
			}
			var pe *mcpruntime.ProtocolError
			if _, err := mcpruntime.GetPrompt(ctx, c, followUpDesc, map[string]string{"deal_id": "D-2001", "tone": "rude"}); !errors.As(err, &pe) {
				t.Errorf("server-side prompt error: %v", err)
			}

			// An identity is resolved before anything is sent.
			_, err = mcpruntime.ReadResource(ctx, c, pipelineDesc, mcpruntime.ReadIdentity(mcpruntime.ContextPrincipal))
			if !errors.Is(err, mcpruntime.ErrNoPrincipal) {
				t.Errorf("read without a principal: %v", err)
			}
			_, err = mcpruntime.ReadResource(mcpruntime.WithPrincipal(ctx, "u1", "tok-1"), c, pipelineDesc, mcpruntime.ReadIdentity(mcpruntime.ContextPrincipal))
			if err != nil {
				t.Errorf("read with a principal: %v", err)
			}
		})
	}
}

// Each export replaces the previous one, so the first export's link
// expires: reading it fails loudly unless refreshing was asked for and the
// producing tool is idempotent, and then the call is replayed once.
func TestResourceLinkExpiry(t *testing.T) {
	c := mcpgo.Stdio(crmServer(t), nil, mcpgo.WithName("crm"))
	closeConn(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	export := mcpruntime.NewTool[EmptyInput, mcpruntime.NoOutput](exportPipelineDesc, c)
	first, err := export.Call(ctx, EmptyInput{})
	if err != nil {
		t.Fatal(err)
	}
	links := mcpruntime.LinksOf(export, EmptyInput{}, first)
	if len(links) != 1 || links[0].Name != "pipeline-export" || !links[0].Idempotent {
		t.Fatalf("links %+v", links)
	}
	link := links[0]
	if res, err := mcpruntime.ReadLink(ctx, c, link); err != nil || !strings.HasPrefix(mustText(t, res), "stage,deals,value") {
		t.Fatalf("fresh link: %v", err)
	}
	if _, err := export.Call(ctx, EmptyInput{}); err != nil { // replaces the first export
		t.Fatal(err)
	}

	_, err = mcpruntime.ReadLink(ctx, c, link)
	var ee *mcpruntime.ResourceExpiredError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "not refreshed (pass mcpruntime.Refresh()") {
		t.Fatalf("expired link without Refresh: %v", err)
	}

	plain := mcpruntime.NewTool[EmptyInput, mcpruntime.NoOutput](exportNotIdempotent, c)
	stale := mcpruntime.LinksOf(plain, EmptyInput{}, first)[0]
	_, err = mcpruntime.ReadLink(ctx, c, stale, mcpruntime.Refresh())
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "not annotated idempotent") {
		t.Fatalf("expired link of a tool not annotated idempotent: %v", err)
	}

	res, err := mcpruntime.ReadLink(ctx, c, link, mcpruntime.Refresh())
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if res.URI == link.URI || !strings.HasPrefix(res.URI, "crm://exports/pipeline-") || !strings.HasPrefix(mustText(t, res), "stage,deals,value") {
		t.Errorf("refreshed read %s: %q", res.URI, mustText(t, res))
	}
}

func mustText(t *testing.T, r *mcpruntime.ResourceResult) string {
	t.Helper()
	if r == nil {
		return ""
	}
	s, err := r.Text()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A connection that cannot read resources says so.
func TestResourceReaderMissing(t *testing.T) {
	var c mcpruntime.Caller = callerOnly{}
	_, err := mcpruntime.ReadResource(context.Background(), c, pipelineDesc)
	if err == nil || !strings.Contains(err.Error(), "does not implement mcpruntime.ResourceReader") {
		t.Errorf("read: %v", err)
	}
	_, err = mcpruntime.GetPrompt(context.Background(), c, followUpDesc, map[string]string{"deal_id": "x"})
	if err == nil || !strings.Contains(err.Error(), "does not implement mcpruntime.PromptGetter") {
		t.Errorf("prompt: %v", err)
	}
}

type callerOnly struct{ mcpruntime.Caller }

func jsonStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
