package mcpgo

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// listTap sits under the client of a managed session and hands the raw
// tools/list pages to a sink in the request's context: mcp-go's Tool type
// drops schema keywords, and the schema hash is over the schemas as sent.

type listSinkKey struct{}

type listSink struct {
	mu    sync.Mutex
	pages []json.RawMessage
}

func (s *listSink) add(b json.RawMessage) {
	s.mu.Lock()
	s.pages = append(s.pages, append(json.RawMessage(nil), b...))
	s.mu.Unlock()
}

func (s *listSink) get() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pages
}

type listTap struct{ transport.Interface }

func (t *listTap) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.Interface.SendRequest(ctx, req)
	if err == nil && resp != nil && resp.Error == nil && req.Method == string(mcp.MethodToolsList) {
		if s, ok := ctx.Value(listSinkKey{}).(*listSink); ok {
			s.add(resp.Result)
		}
	}
	return resp, err
}

// The client type-asserts the transport for these; forward them.

func (t *listTap) SetRequestHandler(h transport.RequestHandler) {
	if b, ok := t.Interface.(transport.BidirectionalInterface); ok {
		b.SetRequestHandler(h)
	}
}

func (t *listTap) SetConnectionLostHandler(h func(error)) {
	if s, ok := t.Interface.(interface{ SetConnectionLostHandler(func(error)) }); ok {
		s.SetConnectionLostHandler(h)
	}
}

func (t *listTap) RequiresLegacyProtocol() bool {
	l, ok := t.Interface.(interface{ RequiresLegacyProtocol() bool })
	return ok && l.RequiresLegacyProtocol()
}

// httpListTap adds SetProtocolVersion, which the client uses to detect
// HTTP transports, only when the inner transport has it.
type httpListTap struct{ *listTap }

func (t httpListTap) SetProtocolVersion(v string) {
	t.Interface.(transport.HTTPConnection).SetProtocolVersion(v)
}

func wrapList(inner transport.Interface) transport.Interface {
	t := &listTap{Interface: inner}
	if _, ok := inner.(transport.HTTPConnection); ok {
		return httpListTap{t}
	}
	return t
}
