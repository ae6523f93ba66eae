// Package snapshot connects to a live MCP server with the mcp-go client and
// captures what it offers into a manifest.Manifest, keeping every tool object
// exactly as the server sent it on the wire.
package snapshot

import (
	"time"

	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// Transport names a way to reach a server.
type Transport string

const (
	Stdio Transport = "stdio" // a subprocess speaking JSON-RPC on stdin/stdout
	HTTP  Transport = "http"  // streamable HTTP
	SSE   Transport = "sse"   // legacy HTTP+SSE
)

// Source says how to reach one server. Every value in it is already
// resolved (secrets expanded): treat Env values, Headers values and URL as
// secret-bearing and never print them.
type Source struct {
	ID        string // server id, used in messages and the manifest
	Transport Transport

	// stdio
	Command string
	Args    []string
	Env     []string // KEY=VALUE, added to the inherited environment
	Dir     string   // working directory; "" = current

	// http, sse
	URL     string
	Headers map[string]string

	// Secrets lists resolved secret values (from ${VAR} references). They are
	// redacted from every error and refused in captured output.
	Secrets []string
	// SecretNames[i], when present, names the variable Secrets[i] came from,
	// so errors can say which reference leaked without printing its value.
	SecretNames []string
	// LiveSecrets, when set, is asked for secrets that appear while the
	// source is in use (the tokens an OAuth client fetches and renews:
	// oauth.Client.Secrets), each time something is redacted or checked:
	// they are redacted and refused like Secrets.
	LiveSecrets func() []string
}

// Options tune a capture.
type Options struct {
	// Timeout bounds the whole capture (connect, handshake, every page of
	// every list). Zero means DefaultTimeout.
	Timeout time.Duration
	// AllowEmpty accepts a server that lists no tools.
	AllowEmpty bool
	// Include and Exclude filter tools by wire name (path.Match globs);
	// an empty Include keeps all.
	Include, Exclude []string
	// ProtocolVersion pins the protocol version ("" negotiates).
	ProtocolVersion string
	// Capabilities are client capabilities to declare while capturing
	// (names from Capabilities): servers may offer some tools only to
	// clients that can sample, elicit or list roots. Requests the server
	// makes under them are declined (elicitation), refused (sampling) or
	// answered with no roots.
	Capabilities []string
}

// Capabilities are the client capabilities a capture can declare.
var Capabilities = []string{"sampling", "elicitation", "roots"}

// ProtocolVersions are the protocol versions mcpgen speaks, newest first.
var ProtocolVersions = mcpgo.ProtocolVersions

// DefaultTimeout is used when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Second
