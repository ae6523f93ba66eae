package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// ReadResource implements mcpruntime.ResourceReader. The result is built
// from the raw JSON the server sent, so nothing is lost to mcp-go's types.
//
// The size limit (mcpruntime.ReadLimit) is checked against the response as
// received, before it is decoded: a blob counts base64-encoded. mcp-go reads
// each message whole before handing it over, so the limit protects the
// program from decoding and holding a huge resource, not the transport
// from reading it.
func (c *Conn) ReadResource(ctx context.Context, uri string) (*mcpruntime.ResourceResult, error) {
	raw, err := c.request(ctx, string(mcp.MethodResourcesRead), fmt.Sprintf("resource %q", uri), func(ctx context.Context, cli clientAPI) (any, error) {
		return cli.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
	})
	if err != nil {
		return nil, err
	}
	r, err := mcpruntime.ParseResourceResult(raw)
	if err != nil {
		return nil, fmt.Errorf("server %q: resource %q: %w", c.cfg.name, uri, err)
	}
	return r, nil
}

// GetPrompt implements mcpruntime.PromptGetter, from the raw JSON the
// server sent; the size limit applies as for ReadResource.
func (c *Conn) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcpruntime.PromptResult, error) {
	raw, err := c.request(ctx, string(mcp.MethodPromptsGet), fmt.Sprintf("prompt %q", name), func(ctx context.Context, cli clientAPI) (any, error) {
		return cli.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: name, Arguments: args}})
	})
	if err != nil {
		return nil, err
	}
	r, err := mcpruntime.ParsePromptResult(raw)
	if err != nil {
		return nil, fmt.Errorf("server %q: prompt %q: %w", c.cfg.name, name, err)
	}
	return r, nil
}

type clientAPI interface {
	ReadResource(context.Context, mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error)
	GetPrompt(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error)
}

// request sends one request through the mcp-go client and returns the raw
// JSON result the tap recorded: a JSON-RPC error becomes a
// *mcpruntime.ProtocolError, an ended context wins over what the transport
// made of it, and a response over the size limit is refused before it is
// decoded any further.
func (c *Conn) request(ctx context.Context, method, what string, send func(context.Context, clientAPI) (any, error)) (json.RawMessage, error) {
	l, err := c.link(ctx)
	if err != nil {
		return nil, err
	}
	if l.isDone() {
		return nil, c.lostBefore(l, what)
	}
	s := &sink{method: method}
	bctx, release := c.bound(ctx, l)
	defer release()
	res, err := send(context.WithValue(bctx, sinkKey{}, s), l.cli)
	raw, rpcErr := s.get()
	if err != nil || rpcErr != nil {
		if cerr := settle(ctx); cerr != nil {
			return nil, fmt.Errorf("server %q: %s: %w", c.cfg.name, what, cerr)
		}
	}
	if rpcErr != nil {
		return nil, &mcpruntime.ProtocolError{Code: rpcErr.Code, Message: rpcErr.Message, Data: dataOf(rpcErr.Data)}
	}
	if raw == nil {
		var tl *mcpruntime.ResourceTooLargeError
		if errors.As(err, &tl) {
			// Cut off while reading (HTTP): the limit is the read's own.
			return nil, &mcpruntime.ResourceTooLargeError{What: what, Limit: tl.Limit, Size: tl.Size}
		}
		if err != nil {
			return nil, c.requestError(ctx, l, what, err)
		}
		// A transport that bypasses SendRequest: re-encode mcp-go's value.
		if raw, err = json.Marshal(res); err != nil {
			return nil, fmt.Errorf("server %q: %s: re-encode result: %w", c.cfg.name, what, err)
		}
	}
	if limit, ok := mcpruntime.ReadLimit(ctx); ok && int64(len(raw)) > limit {
		return nil, &mcpruntime.ResourceTooLargeError{What: what, Limit: limit, Size: int64(len(raw))}
	}
	return raw, nil
}

var (
	_ mcpruntime.ResourceReader = (*Conn)(nil)
	_ mcpruntime.PromptGetter   = (*Conn)(nil)
)
