package mcpgo_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// arrival is a server's stderr; ch receives once for every request the
// server says arrived, so a test waits on the event instead of a clock.
type arrival struct {
	mu  sync.Mutex
	buf bytes.Buffer
	ch  chan struct{}
}

func newArrival() *arrival { return &arrival{ch: make(chan struct{}, 64)} }

func (a *arrival) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.buf.Write(p)
	for {
		line, err := a.buf.ReadString('\n')
		if err != nil {
			a.buf.Reset()
			a.buf.WriteString(line) // an unfinished line
			break
		}
		if strings.HasPrefix(line, "arrived: ") {
			a.ch <- struct{}{}
		}
	}
	return len(p), nil
}

func outcomeTool(c mcpruntime.Caller, name string, g *mcpruntime.Gate) *mcpruntime.Tool[NoteArgs, mcpruntime.NoOutput] {
	d := desc(name, `{"type":"object","properties":{"note":{"type":"string"}}}`, "")
	return mcpruntime.NewTool[NoteArgs, mcpruntime.NoOutput](d, c, mcpruntime.WithGate(g))
}

// approved returns the id of an approved call of tl.
func approved(t *testing.T, g *mcpruntime.Gate, tl *mcpruntime.Tool[NoteArgs, mcpruntime.NoOutput]) string {
	t.Helper()
	_, err := tl.Call(context.Background(), NoteArgs{Note: "x"})
	var are *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &are) {
		t.Fatalf("not gated: %v", err)
	}
	if err := g.Approve(context.Background(), are.Approval.ID, are.Approval.Digest); err != nil {
		t.Fatal(err)
	}
	return are.Approval.ID
}

// Resumes tell apart a call that was never sent, one that was sent and got
// no answer, and one the server answered with an error; each has its own
// error and message.
func TestApprovalOutcomes(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	arrived := newArrival()
	c := mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv(attackModeEnv+"=serve", "ATTACK_COUNT="+count), mcpgo.WithName("attack"), mcpgo.WithStderr(arrived))
	closeConn(t, c)
	g := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), mcpruntime.GateDefault(mcpruntime.GateAlways))
	executions := func() int { b, _ := os.ReadFile(count); return strings.Count(string(b), "\n") }

	t.Run("cancelled before the call", func(t *testing.T) {
		tl := outcomeTool(c, "count", g)
		id := approved(t, g, tl)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		before := executions()
		_, err := tl.Resume(ctx, id)
		if !errors.Is(err, mcpruntime.ErrApprovedCallNotSent) || !strings.Contains(err.Error(), "nothing was started; the approval is still approved") {
			t.Fatalf("resume on a cancelled context: %v", err)
		}
		if errors.Is(err, mcpruntime.ErrApprovedCallFailed) || errors.Is(err, mcpruntime.ErrOutcomeUnknown) {
			t.Errorf("a call never sent is reported as made: %v", err)
		}
		if a, _ := g.Get(context.Background(), id); a.State != mcpruntime.StateApproved {
			t.Errorf("state %s, want approved", a.State)
		}
		// A live resume makes it, once.
		if _, err := tl.Resume(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		if _, err := tl.Resume(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		if n := executions() - before; n != 1 {
			t.Errorf("the server ran the call %d times, want 1", n)
		}
	})

	t.Run("sent, no answer", func(t *testing.T) {
		tl := outcomeTool(c, "block", g)
		id := approved(t, g, tl)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-arrived.ch; cancel() }() // the request reached the server
		_, err := tl.Resume(ctx, id)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("first resume: %v", err)
		}
		_, err = tl.Resume(context.Background(), id)
		if !errors.Is(err, mcpruntime.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "the request was sent, or may have been, and no answer came") {
			t.Errorf("later resume of a call that reached the server: %v", err)
		}
		if errors.Is(err, mcpruntime.ErrApprovedCallFailed) {
			t.Errorf("reported as failed: %v", err)
		}
	})

	t.Run("answered with an error", func(t *testing.T) {
		tl := outcomeTool(c, "fail", g)
		id := approved(t, g, tl)
		var pe *mcpruntime.ProtocolError
		if _, err := tl.Resume(context.Background(), id); !errors.As(err, &pe) {
			t.Fatalf("first resume: %v", err)
		}
		_, err := tl.Resume(context.Background(), id)
		if !errors.Is(err, mcpruntime.ErrApprovedCallFailed) || !strings.Contains(err.Error(), "ledger locked") {
			t.Errorf("later resume of a failed call: %v", err)
		}
	})
}

// A call whose connection cannot be made was never sent: the manager's
// connection error says so, and later resumes report it as not sent.
func TestApprovalOutcomeNotSent(t *testing.T) {
	e := newEnv(t)
	e.stdio("dead", "", nil, attackModeEnv, "exit")
	m := e.manager()
	c, err := m.Caller(context.Background(), "agent", "dead")
	if err != nil {
		t.Fatal(err)
	}
	g := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), mcpruntime.GateDefault(mcpruntime.GateAlways))
	tl := outcomeTool(c, "count", g)
	id := approved(t, g, tl)
	_, err = tl.Resume(context.Background(), id)
	var ce *manager.ConnectError
	if !errors.As(err, &ce) || !errors.Is(err, mcpruntime.ErrNotSent) {
		t.Fatalf("first resume: %v", err)
	}
	_, err = tl.Resume(context.Background(), id)
	if !errors.Is(err, mcpruntime.ErrApprovedCallNotSent) || !strings.Contains(err.Error(), "the server never saw it") {
		t.Errorf("later resume: %v", err)
	}
	if errors.Is(err, mcpruntime.ErrApprovedCallFailed) || errors.Is(err, mcpruntime.ErrOutcomeUnknown) {
		t.Errorf("a call never sent is reported as made: %v", err)
	}
}
