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

type tap struct {
	transport.Interface
}

func (t *tap) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.Interface.SendRequest(ctx, req)
	if err == nil && resp != nil {
		if s, ok := ctx.Value(sinkKey{}).(*sink); ok && req.Method == cmp.Or(s.method, string(mcp.MethodToolsCall)) {
			s.record(resp)
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

func wrap(inner transport.Interface) transport.Interface {
	t := &tap{Interface: inner}
	if _, ok := inner.(transport.HTTPConnection); ok {
		return httpTap{t}
	}
	return t
}
