package crm

import (
	"context"
	"encoding/json"

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
	// Without leaves these tools out, like an older server release.
	Without []string
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
	case f.Hang && name == "get_contact":
		return func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
	}
	return h
}
