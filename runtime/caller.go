package mcpruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Caller is the seam between generated code and a connection: call a tool by
// its wire name with raw JSON arguments and get the raw result back. The
// mcpgo adapter implements it over mcp-go; any client can.
//
// A Caller returns a non-nil *Result whenever the server answered with a
// tools/call result (isError results included). It returns an error for
// everything else: a *ProtocolError when the server answered with a JSON-RPC
// error, a *MissingToolError when the server does not offer the tool, and
// transport or context errors otherwise.
type Caller interface {
	CallTool(ctx context.Context, name string, args json.RawMessage) (*Result, error)
}

// ToolLister is implemented by Callers that can list the server's tools;
// CheckTools uses it.
type ToolLister interface {
	ToolNames(ctx context.Context) ([]string, error)
}

// CheckTools verifies that the server behind c offers every named tool and
// returns a *MissingToolError listing the absent ones and the tools the
// server does have. When c cannot list tools it returns nil: the check
// happens at call time then.
func CheckTools(ctx context.Context, c Caller, names ...string) error {
	l, ok := c.(ToolLister)
	if !ok {
		return nil
	}
	have, err := l.ToolNames(ctx)
	if err != nil {
		return fmt.Errorf("list tools: %w", err)
	}
	var missing []string
	for _, n := range names {
		if !slices.Contains(have, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &MissingToolError{Tools: missing, Available: have}
}

// MissingToolError reports that the server does not offer tools a binding
// declares.
type MissingToolError struct {
	Server    string   // server label, if known
	Tools     []string // the declared tools the server lacks
	Available []string // what the server does offer, sorted
}

func (e *MissingToolError) Error() string {
	var b strings.Builder
	if e.Server != "" {
		fmt.Fprintf(&b, "server %s ", e.Server)
	} else {
		b.WriteString("the server ")
	}
	avail := slices.Sorted(slices.Values(e.Available))
	if len(e.Tools) == 1 {
		fmt.Fprintf(&b, "has no tool %q", e.Tools[0])
	} else {
		fmt.Fprintf(&b, "lacks tools %s", quoteList(e.Tools))
	}
	if len(avail) == 0 {
		b.WriteString("; it offers no tools")
	} else {
		fmt.Fprintf(&b, "; it offers %s", quoteList(avail))
	}
	b.WriteString(" (regenerate the bindings or point them at the right server)")
	return b.String()
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// ErrNotSent marks a call error where the request provably never reached
// the server (the connection could not be made, the process was already
// gone, the runtime refused the call before sending it). Connections wrap
// their errors so that errors.Is(err, ErrNotSent) tells; retrying such a
// call, or reporting it as never made, is safe.
var ErrNotSent = errors.New("the request was not sent")

// ProtocolError is a JSON-RPC error response from the server: the server
// answered, but not with a result.
type ProtocolError struct {
	Code    int
	Message string
	Data    json.RawMessage
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("server error %d: %s", e.Code, e.Message)
}
