package snapshot

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
)

// tap wraps a transport and keeps the raw result of the latest response to
// each method. mcp-go's client decodes results into structs that drop most
// JSON Schema keywords, so the snapshot reads the bytes from here instead.
type tap struct {
	transport.Interface
	mu   sync.Mutex
	last map[string]json.RawMessage // method → result of its latest successful response
}

func newTap(inner transport.Interface) transport.Interface {
	t := &tap{Interface: inner, last: map[string]json.RawMessage{}}
	// The client changes behaviour on whether the transport implements
	// transport.HTTPConnection (protocol header, cancellation, x-mcp-header
	// checks), so the wrapper implements it exactly when the inner one does.
	if _, ok := inner.(transport.HTTPConnection); ok {
		return &httpTap{t}
	}
	return t
}

// rawOf returns the tap behind a wrapped transport.
func rawOf(tr transport.Interface) *tap {
	switch t := tr.(type) {
	case *tap:
		return t
	case *httpTap:
		return t.tap
	}
	return nil
}

func (t *tap) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	t.mu.Lock()
	delete(t.last, req.Method)
	t.mu.Unlock()
	resp, err := t.Interface.SendRequest(ctx, req)
	if err == nil && resp != nil && resp.Error == nil && resp.Result != nil {
		t.mu.Lock()
		t.last[req.Method] = append(json.RawMessage(nil), resp.Result...)
		t.mu.Unlock()
	}
	return resp, err
}

// result returns the raw result of the latest successful response to method.
func (t *tap) result(method string) (json.RawMessage, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.last[method]
	return r, ok
}

// The client type-asserts these optional interfaces; forwarding them keeps
// its behaviour identical to talking to the inner transport directly. Their
// presence alone changes nothing, so they are forwarded unconditionally.

func (t *tap) SetRequestHandler(h transport.RequestHandler) {
	if b, ok := t.Interface.(transport.BidirectionalInterface); ok {
		b.SetRequestHandler(h)
	}
}

func (t *tap) RequiresLegacyProtocol() bool {
	l, ok := t.Interface.(interface{ RequiresLegacyProtocol() bool })
	return ok && l.RequiresLegacyProtocol()
}

func (t *tap) SetConnectionLostHandler(h func(error)) {
	if s, ok := t.Interface.(interface{ SetConnectionLostHandler(func(error)) }); ok {
		s.SetConnectionLostHandler(h)
	}
}

// httpTap is a tap over an HTTP transport.
type httpTap struct{ *tap }

func (t *httpTap) SetProtocolVersion(v string) {
	t.Interface.(transport.HTTPConnection).SetProtocolVersion(v)
}
