package mcpruntime

import (
	"fmt"
	"strings"
)

// ConnectError reports that a server could not be reached, or that the MCP
// handshake with it failed: no tool call was made. Every session layer
// (the mcpgo package behind generated clients, mcpgen snapshot and call,
// the connection manager) returns it with the same facts.
type ConnectError struct {
	Server string
	// Attempts is how many connections were tried (1 unless a connection
	// manager retried).
	Attempts int
	// Exit says how a stdio server's process ended ("exit status 1",
	// "signal: killed"); empty when it did not end or there is no process.
	Exit string
	// Stderr holds the last lines a stdio server wrote to stderr, with
	// known secrets redacted; empty when it wrote none.
	Stderr string
	// Err is the cause (a timeout, a refused connection, a
	// message too large, a line on stdout that is not JSON-RPC, …).
	Err error
}

func (e *ConnectError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "connect to server %q", e.Server)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (%d attempts)", e.Attempts)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	writeProcessFacts(&b, e.Exit, e.Stderr)
	return b.String()
}

func (e *ConnectError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotSent) true: without a connection nothing
// was sent.
func (e *ConnectError) Is(target error) bool { return target == ErrNotSent }

// ConnectionLostError reports that a connection ended while a request was
// in flight. The server may have received and acted on it: a tool call
// that ends this way must not be assumed to have not run.
type ConnectionLostError struct {
	Server string
	// What was in flight ("call to tool \"x\"", "tools/list").
	Request string
	// NotSent: the connection had ended before the request was written,
	// so the server never saw it (errors.Is(err, ErrNotSent)).
	NotSent bool
	// Exit and Stderr as in ConnectError.
	Exit, Stderr string
	Err          error
}

func (e *ConnectionLostError) Error() string {
	var b strings.Builder
	if e.NotSent {
		fmt.Fprintf(&b, "server %q: the connection had ended before the %s was sent", e.Server, e.Request)
	} else {
		fmt.Fprintf(&b, "server %q: the connection ended during the %s", e.Server, e.Request)
		if strings.HasPrefix(e.Request, "call") {
			b.WriteString(", which may have run")
		}
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	writeProcessFacts(&b, e.Exit, e.Stderr)
	return b.String()
}

func (e *ConnectionLostError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotSent) true for a request never sent.
func (e *ConnectionLostError) Is(target error) bool { return target == ErrNotSent && e.NotSent }

func writeProcessFacts(b *strings.Builder, exit, stderr string) {
	if exit != "" && !strings.Contains(b.String(), exit) {
		fmt.Fprintf(b, " (the server process exited: %s)", exit)
	}
	if stderr != "" {
		b.WriteString("\n  server stderr (last lines):\n    ")
		b.WriteString(strings.ReplaceAll(stderr, "\n", "\n    "))
	}
}
