package mcpgo

import (
	"context"
	"maps"
	"net/url"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// Endpoint implements mcpruntime.Endpointer: the transport, the server's
// host and port over HTTP (never the URL's path, query or user info), and
// the protocol version of the current connection ("" before the first).
func (c *Conn) Endpoint() mcpruntime.Endpoint {
	e := mcpruntime.Endpoint{Address: c.addr.host, Port: c.addr.port, ProtocolVersion: c.ProtocolVersion()}
	switch c.kind {
	case kindStdio:
		e.Transport = mcpruntime.TransportStdio
	case kindHTTP:
		e.Transport = mcpruntime.TransportStreamableHTTP
	case kindSSE:
		e.Transport = mcpruntime.TransportSSE
	case kindInProcess:
		e.Transport = mcpruntime.TransportInProcess
	}
	return e
}

// Endpoint implements mcpruntime.Endpointer for the manager's callers.
func (s *session) Endpoint() mcpruntime.Endpoint { return s.conn.Endpoint() }

// netAddr is the host and port an HTTP endpoint names.
type netAddr struct {
	host string
	port int
}

func addrOf(endpoint string) netAddr {
	u, err := url.Parse(endpoint)
	if err != nil {
		return netAddr{}
	}
	a := netAddr{host: u.Hostname()}
	if p, err := strconv.Atoi(u.Port()); err == nil {
		a.port = p
	} else if strings.EqualFold(u.Scheme, "https") {
		a.port = 443
	} else if strings.EqualFold(u.Scheme, "http") {
		a.port = 80
	}
	return a
}

// WithMetaInjector lets inject add members to the params._meta of every
// tools/call, resources/read and prompts/get request the Conn sends, from
// the request's context, through set. adapters/otel passes one that writes
// the W3C trace context (traceparent, tracestate), as OpenTelemetry's MCP
// conventions propagate it on every transport. set ignores progressToken
// and the keys the protocol reserves (a prefix with a label
// modelcontextprotocol or mcp, such as io.modelcontextprotocol/). It is
// mcp-go's meta propagator: of it and one passed with WithClientOptions,
// the option given last is used.
func WithMetaInjector(inject func(ctx context.Context, set func(key, value string))) Option {
	return func(c *config) {
		if inject != nil {
			c.clientOpts = append(c.clientOpts, client.WithMetaPropagator(metaInjector(inject)))
		}
	}
}

// metaInjector is mcp-go's tracing.MetaPropagator over an inject func.
type metaInjector func(ctx context.Context, set func(key, value string))

// InjectMeta returns meta with what the func sets, copied: the request's
// own _meta may be the caller's.
func (f metaInjector) InjectMeta(ctx context.Context, meta *mcp.Meta) *mcp.Meta {
	out := meta
	f(ctx, func(k, v string) {
		if reservedMeta(k) {
			return
		}
		if out == meta {
			out = &mcp.Meta{}
			if meta != nil {
				out.ProgressToken, out.AdditionalFields = meta.ProgressToken, maps.Clone(meta.AdditionalFields)
			}
		}
		if out.AdditionalFields == nil {
			out.AdditionalFields = map[string]any{}
		}
		out.AdditionalFields[k] = v
	})
	return out
}

// ExtractMeta is for servers; a client extracts nothing.
func (metaInjector) ExtractMeta(ctx context.Context, _ *mcp.Meta) context.Context { return ctx }

// reservedMeta reports whether a _meta key is one the runtime or the
// protocol owns.
func reservedMeta(k string) bool {
	if k == "" || k == "progressToken" {
		return true
	}
	prefix, _, ok := strings.Cut(k, "/")
	if !ok {
		return false
	}
	for l := range strings.SplitSeq(prefix, ".") {
		if l == "modelcontextprotocol" || l == "mcp" {
			return true
		}
	}
	return false
}
