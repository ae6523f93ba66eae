package mcpgo

import (
	"context"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// ReadResource implements mcpruntime.ResourceReader for a managed session,
// so Manager.Caller reads resources (generated accessors, ReadLink).
func (s *session) ReadResource(ctx context.Context, uri string) (*mcpruntime.ResourceResult, error) {
	return s.conn.ReadResource(ctx, uri)
}

// GetPrompt implements mcpruntime.PromptGetter for a managed session.
func (s *session) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcpruntime.PromptResult, error) {
	return s.conn.GetPrompt(ctx, name, args)
}
