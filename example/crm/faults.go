package crm

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Faults make the server misbehave the way real servers sometimes do, so
// that clients can be tested against a real process. The zero value is a
// well-behaved server. crm-server sets them with -fault.
type Faults struct {
	// MalformedOutput makes get_deal send structuredContent that does not
	// match its output schema (amount as a string, notes missing).
	MalformedOutput bool
	// Hang makes get_contact wait until the request is cancelled.
	Hang bool
	// HangAfter makes these tools do their work and then, instead of
	// answering, wait until the request is cancelled: a call that reached
	// the server and whose outcome the client never learns.
	HangAfter []string
	// Without leaves these tools out, like an older server release.
	Without []string
	// OnHang, when set, is called as a call starts hanging, so that a test
	// can wait for the server to hold the request instead of guessing.
	OnHang func(tool string, req mcp.CallToolRequest)
	// NewerRelease behaves like a compatible later release: deal outputs
	// (get_deal, update_deal, search_deals items) gain a "probability"
	// member and the stage enum of outputs gains "on_hold", which D-2002
	// now reports. The advertised output schemas say so, still closed.
	NewerRelease bool
}

// newerStageEnum is the output stage enum of the newer release.
const newerStageEnum = `["lead", "qualified", "proposal", "negotiation", "on_hold", "won", "lost"]`

// outputSchema is the output schema the server advertises for a tool.
func (f Faults) outputSchema(schema string) string {
	if !f.NewerRelease || schema == "" {
		return schema
	}
	schema = strings.ReplaceAll(schema, stageEnum, newerStageEnum)
	return strings.ReplaceAll(schema, `"title": {"type": "string"},`, `"title": {"type": "string"},
    "probability": {"type": "number", "minimum": 0, "maximum": 1},`)
}

// newer rewrites a deal-shaped output the way the newer release sends it.
func newer(d map[string]any) {
	if _, ok := d["stage"]; ok {
		d["probability"] = 0.4
		if d["id"] == "D-2002" {
			d["stage"] = "on_hold"
		}
	}
}

// hang waits until the request is cancelled.
func (f Faults) hang(ctx context.Context, tool string, req mcp.CallToolRequest) error {
	if f.OnHang != nil {
		f.OnHang(tool, req)
	}
	<-ctx.Done()
	return ctx.Err()
}

func (f Faults) wrap(name string, h handler) handler {
	switch {
	case f.MalformedOutput && name == "get_deal":
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := h(ctx, req)
			if err != nil || res.IsError {
				return res, err
			}
			var d map[string]any
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &d); err != nil {
				return nil, err
			}
			d["amount"] = "a lot"
			delete(d, "notes")
			return structured(d), nil
		}
	case f.NewerRelease && (name == "get_deal" || name == "update_deal" || name == "search_deals"):
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := h(ctx, req)
			if err != nil || res.IsError {
				return res, err
			}
			var d map[string]any
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &d); err != nil {
				return nil, err
			}
			newer(d)
			if items, ok := d["deals"].([]any); ok {
				for _, it := range items {
					if m, ok := it.(map[string]any); ok {
						newer(m)
					}
				}
			}
			return structured(d), nil
		}
	case f.Hang && name == "get_contact":
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, f.hang(ctx, name, req)
		}
	case slices.Contains(f.HangAfter, name):
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if _, err := h(ctx, req); err != nil {
				return nil, err
			}
			return nil, f.hang(ctx, name, req)
		}
	}
	return h
}
