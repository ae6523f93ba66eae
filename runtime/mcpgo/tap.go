package mcpgo

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

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

// record keeps r's result, a copy of it when mcp-go reads it too.
func (s *sink) record(r *transport.JSONRPCResponse, shared bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.result, s.rpcErr = r.Result, r.Error
	if shared {
		s.result = append(json.RawMessage(nil), r.Result...)
	}
}

// emptyCallResult is the tools/call result mcp-go parses in place of the
// server's (see tap.SendRequest).
var emptyCallResult = json.RawMessage(`{"content":[]}`)

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
	// namesOnly: the caller wants the names; mcp-go is shown only the
	// tools it needs (withHeaderToolsOnly).
	namesOnly bool
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
	// answer, when it returns a response, answers a server's request in
	// place of mcp-go's handlers (which can only fail with -32603).
	answer func(transport.JSONRPCRequest) *transport.JSONRPCResponse
	// listenAnyway: the Conn asked for mcp-go's standalone GET stream
	// itself, for the older protocols only (see StreamableHTTP), so the
	// option is no reason to skip 2026-07-28.
	listenAnyway bool
}

func (t *tap) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.Interface.SendRequest(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	if req.Method == string(mcp.MethodServerDiscover) && resp.Error == nil && !isDiscoverResult(resp.Result) {
		// A server that answers every method with an empty result would be
		// taken for a 2026-07-28 server and never get initialize: only a
		// real discover result counts, anything else is a legacy server's
		// "method not found", and the client falls back to initialize.
		resp = &transport.JSONRPCResponse{JSONRPC: resp.JSONRPC, ID: resp.ID,
			Error: &mcp.JSONRPCErrorDetails{Code: mcp.METHOD_NOT_FOUND, Message: "the server/discover result names no supported versions"}}
		return resp, nil
	}
	var stub bool
	if s, ok := ctx.Value(sinkKey{}).(*sink); ok && req.Method == cmp.Or(s.method, string(mcp.MethodToolsCall)) {
		// The runtime reads a tools/call result from these bytes, once;
		// mcp-go, whose parse of it nobody reads, gets an empty result
		// instead, and since nothing else holds the bytes the sink keeps
		// them without a copy. A result asking for input (2026-07-28's
		// multi round-trip) goes to mcp-go as it is: mcp-go answers it.
		// The test is on the bytes: the string token "input_required"
		// anywhere (a content value of that text at worst costs the copy).
		stub = s.method == "" && resp.Error == nil && !bytes.Contains(resp.Result, []byte(`"`+mcp.ResultTypeInputRequired+`"`))
		s.record(resp, !stub)
	}
	if resp.Error == nil {
		// The observer sees what the server sent, before anything below
		// trims it for mcp-go.
		if t.observe != nil && resp.Result != nil {
			t.observe(req.Method, resp.Result)
		}
		if s, ok := ctx.Value(listSinkKey{}).(*listSink); ok && req.Method == string(mcp.MethodToolsList) {
			s.add(resp.Result)
			if s.namesOnly {
				resp = withHeaderToolsOnly(resp)
			}
		}
	}
	if stub {
		out := *resp
		out.Result = emptyCallResult
		return &out, err
	}
	return resp, err
}

// withHeaderToolsOnly returns resp with only the tools whose definition
// mentions x-mcp-header. mcp-go keeps every tool it lists and, on each
// tools/call of a kept tool, marshals and walks its input schema to mirror
// annotated parameters into HTTP headers (SEP-2243); for a tool without
// annotations that is work on every call with nothing to show for it. The
// caller reads the names from the raw page, so nothing else is lost.
func withHeaderToolsOnly(resp *transport.JSONRPCResponse) *transport.JSONRPCResponse {
	var page map[string]json.RawMessage
	var tools []json.RawMessage
	if json.Unmarshal(resp.Result, &page) != nil || json.Unmarshal(page["tools"], &tools) != nil {
		return resp // mcp-go reports what is wrong with it
	}
	kept := tools[:0]
	for _, t := range tools {
		if bytes.Contains(t, []byte("x-mcp-header")) {
			kept = append(kept, t)
		}
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return resp
	}
	page["tools"] = b
	result, err := json.Marshal(page)
	if err != nil {
		return resp
	}
	out := *resp
	out.Result = result
	return &out
}

// The client type-asserts the transport for these; forward them. A no-op
// when the inner transport lacks one is what the client does without it.

func (t *tap) SetRequestHandler(h transport.RequestHandler) {
	if answer := t.answer; answer != nil && h != nil {
		next := h
		h = func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
			if r := answer(req); r != nil {
				return r, nil
			}
			return next(ctx, req)
		}
	}
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
	if t.listenAnyway {
		return false
	}
	l, ok := t.Interface.(interface{ RequiresLegacyProtocol() bool })
	return ok && l.RequiresLegacyProtocol()
}

type httpTap struct {
	*tap
	protocol *atomic.Value // string
	// sse: the answer comes on the shared event stream, so no request
	// stream ends with a cancellation; it is always a notification.
	sse bool
}

func (t httpTap) SetProtocolVersion(v string) {
	t.protocol.Store(v)
	t.Interface.(transport.HTTPConnection).SetProtocolVersion(v)
}

// SendRequest sends a notifications/cancelled for a request whose context
// ended before its answer, over SSE and, over streamable HTTP, on
// protocols before 2026-07-28: there, closing the HTTP request does not
// cancel it (the specification says a disconnection is not a
// cancellation), and mcp-go sends nothing over HTTP transports. On
// 2026-07-28 over streamable HTTP, ending the request's stream is the
// cancellation.
func (t httpTap) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.tap.SendRequest(ctx, req)
	if err != nil && ctx.Err() != nil && req.Method != string(mcp.MethodInitialize) && req.Method != string(mcp.MethodServerDiscover) {
		if v, _ := t.protocol.Load().(string); t.sse || (v != "" && !mcp.IsModernProtocol(v)) {
			n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
				Method: string(mcp.MethodNotificationCancelled),
				Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": req.ID, "reason": ctx.Err().Error()}},
			}}
			go func() {
				nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				_ = t.Interface.SendNotification(nctx, n)
			}()
		}
	}
	return resp, err
}

func wrap(inner transport.Interface, observe func(string, json.RawMessage), answer func(transport.JSONRPCRequest) *transport.JSONRPCResponse, listenAnyway bool) transport.Interface {
	t := &tap{Interface: inner, observe: observe, answer: answer, listenAnyway: listenAnyway}
	if _, ok := inner.(transport.HTTPConnection); ok {
		_, sse := inner.(*transport.SSE)
		return httpTap{tap: t, protocol: &atomic.Value{}, sse: sse}
	}
	return t
}

// isDiscoverResult reports whether result is a server/discover result: an
// object whose supportedVersions lists at least one version as a string,
// with capabilities as an object.
func isDiscoverResult(result json.RawMessage) bool {
	var r struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      map[string]json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(result, &r) != nil || r.Capabilities == nil {
		return false
	}
	for _, v := range r.SupportedVersions {
		if v != "" {
			return true
		}
	}
	return false
}

// httpTap adds SetProtocolVersion, which the client uses to detect HTTP
// transports, and the cancellation mcp-go leaves out over HTTP.
