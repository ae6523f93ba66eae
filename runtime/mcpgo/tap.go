package mcpgo

import (
	"cmp"
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The mcp-go client decodes tools/call results into its own types, which
// fail on content kinds it does not know and lose the raw bytes of each
// block. tap sits under the client and hands the raw JSON-RPC response of a
// call to a sink carried in the call's context, so results stay lossless.

type sinkKey struct{}

// sink receives the last tools/call response of one call (a multi
// round-trip call sends several; the last is the answer), or the response
// of the method it names.
type sink struct {
	method string // "" means tools/call
	mu     sync.Mutex
	result json.RawMessage
	rpcErr *mcp.JSONRPCErrorDetails
}

func (s *sink) record(r *transport.JSONRPCResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.result, s.rpcErr = append(json.RawMessage(nil), r.Result...), r.Error
}

func (s *sink) get() (json.RawMessage, *mcp.JSONRPCErrorDetails) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.result, s.rpcErr
}

// listSinkKey carries a listSink: the raw pages of tools/list (mcp-go's
// Tool type drops schema keywords, and schema hashes are over the schemas
// as sent).
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

type tap struct {
	transport.Interface
	observe func(method string, result json.RawMessage)
}

func (t *tap) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.Interface.SendRequest(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	if s, ok := ctx.Value(sinkKey{}).(*sink); ok && req.Method == cmp.Or(s.method, string(mcp.MethodToolsCall)) {
		s.record(resp)
	}
	if resp.Error == nil {
		if s, ok := ctx.Value(listSinkKey{}).(*listSink); ok && req.Method == string(mcp.MethodToolsList) {
			s.add(resp.Result)
		}
		if t.observe != nil && resp.Result != nil {
			t.observe(req.Method, resp.Result)
		}
	}
	return resp, err
}

// The client type-asserts the transport for these; forward them. A no-op
// when the inner transport lacks one is what the client does without it.

func (t *tap) SetRequestHandler(h transport.RequestHandler) {
	if b, ok := t.Interface.(transport.BidirectionalInterface); ok {
		b.SetRequestHandler(h)
	}
}

func (t *tap) SetConnectionLostHandler(h func(error)) {
	if s, ok := t.Interface.(interface{ SetConnectionLostHandler(func(error)) }); ok {
		s.SetConnectionLostHandler(h)
	}
}

func (t *tap) RequiresLegacyProtocol() bool {
	l, ok := t.Interface.(interface{ RequiresLegacyProtocol() bool })
	return ok && l.RequiresLegacyProtocol()
}

// httpTap adds SetProtocolVersion, which the client uses to detect HTTP
// transports, so it is present only when the inner transport has it.
type httpTap struct{ *tap }

func (t httpTap) SetProtocolVersion(v string) {
	t.Interface.(transport.HTTPConnection).SetProtocolVersion(v)
}

func wrap(inner transport.Interface, observe func(string, json.RawMessage)) transport.Interface {
	t := &tap{Interface: inner, observe: observe}
	if _, ok := inner.(transport.HTTPConnection); ok {
		return httpTap{t}
	}
	return t
}
