package crm

import (
	"context"
	"encoding/json"
	"slices"

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
