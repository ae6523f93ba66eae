package mcpgo_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// Regression tests for holes independent tests found in the guards, each
// against a real server process.

// A JSON-RPC error's message reaches the model, so it taints the run like
// a result does, and the taint-aware gate holds the next mutation.
func TestTaintFromProtocolError(t *testing.T) {
	c := mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv("MCPGO_FIXTURE=stdio"), mcpgo.WithName("fixture"))
	closeConn(t, c)
	run := mcpruntime.NewRun("")
	ctx := mcpruntime.WithRun(context.Background(), run)

	m, err := newPlain(handlerErrDesc, c).Invoke(ctx, nil)
	if err != nil || !m.IsError || !strings.Contains(m.Text, "The server rejected the call: ") || !strings.Contains(m.Text, "database unavailable") {
		t.Fatalf("handler_error: %+v, %v", m, err)
	}
	p, ok := run.Tainted()
	if !ok || p.Tool != "handler_error" || p.Server != "fixture" || !p.IsError || !strings.HasPrefix(p.Digest, "sha256:") {
		t.Fatalf("a JSON-RPC error shown to the model left the run untainted: %+v, %v", p, ok)
	}
	if m.Provenance == nil || *m.Provenance != p {
		t.Errorf("model result provenance = %+v, want %+v", m.Provenance, p)
	}

	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), mcpruntime.GateDefault(mcpruntime.GateNever), mcpruntime.GateAfterTaint())
	mutation := newPlain(kindsDesc, c, mcpruntime.WithGate(gate)) // not annotated read-only
	_, err = mutation.Invoke(ctx, nil)
	var are *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &are) || !strings.Contains(are.Approval.Why, `(from tool "handler_error")`) {
		t.Errorf("mutation after a JSON-RPC error reached the model: %v", err)
	}
	// A fresh run is not tainted.
	if _, err := mutation.Invoke(mcpruntime.WithRun(context.Background(), mcpruntime.NewRun("")), nil); err != nil {
		t.Errorf("fresh run: %v", err)
	}
}

var _ = mcp.NewTextContent
