package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/mcpgen/mcpgen/runtime/filestore"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// waitCounter is the real FileStore, counting the resumers that wait
// through it for a runner in another Gate.
type waitCounter struct {
	*filestore.FileStore
	waits *atomic.Int32
	moved chan struct{} // signalled whenever a resumer enters Wait or returns
}

func (w waitCounter) Wait(ctx context.Context, id string) (*mcpruntime.Approval, error) {
	w.waits.Add(1)
	w.moved <- struct{}{}
	return w.FileStore.Wait(ctx, id)
}

// heldCaller holds the one execution until release is closed, so the other
// resumers find the approval executing.
type heldCaller struct {
	mcpruntime.Caller
	started chan struct{}
	release chan struct{}
}

// Name is the Conn's: the approval is bound to the server's label, and
// this is the same server.
func (h heldCaller) Name() string { return h.Caller.(*mcpgo.Conn).Name() }

func (h heldCaller) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpruntime.Result, error) {
	close(h.started)
	<-h.release
	return h.Caller.CallTool(ctx, name, args)
}

// Two Gates over one FileStore directory in one process: the resumers of the
// Gate that did not win wait for the winner instead of reporting
// ErrOutcomeUnknown.
func TestGateTwoGatesOneDirectoryWait(t *testing.T) {
	c := mcpgo.StreamableHTTP(crmHTTP(t))
	closeConn(t, c)
	dir := filepath.Join(t.TempDir(), "approvals")
	const perGate = 50
	var waits atomic.Int32
	moved := make(chan struct{}, 2*perGate)
	held := heldCaller{Caller: c, started: make(chan struct{}), release: make(chan struct{})}
	var gates [2]*mcpruntime.Gate
	for i := range gates {
		s, err := filestore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		gates[i] = mcpruntime.NewGate(waitCounter{FileStore: s, waits: &waits, moved: moved})
	}
	a := gated(t, guardedUpdate(c, gates[0]), "two gates")
	if err := gates[1].Approve(context.Background(), a.ID, a.Digest); err != nil {
		t.Fatal(err)
	}

	results := make([]string, 2*perGate)
	errs := make([]error, 2*perGate)
	var wg sync.WaitGroup
	for i := range 2 * perGate {
		wg.Go(func() {
			m, err := guardedUpdate(held, gates[i%2]).ResumeInvoke(alice, a.ID)
			results[i], errs[i] = m.Text, err
			moved <- struct{}{}
		})
	}
	// Release the one execution once every resumer of the other Gate has
	// either entered Wait or given up: resumers of the winner's Gate wait
	// on it in memory and count for neither.
	<-held.started
	for n := 0; n < perGate; n++ {
		<-moved
	}
	close(held.release)
	wg.Wait()
	if n := countNotes(t, c, "two gates"); n != 1 {
		t.Fatalf("the approved call ran %d times", n)
	}
	if got := waits.Load(); got < perGate {
		t.Errorf("%d resumers waited through the store, want at least %d", got, perGate)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("resumer %d (gate %d): %v", i, i%2, err)
		} else if results[i] != results[0] {
			t.Errorf("resumer %d got %q, resumer 0 %q", i, results[i], results[0])
		}
	}
}

// Resumers in other processes wait for a live winner too: none of them is
// told the outcome is unknown.
func TestGateProcessesWait(t *testing.T) {
	endpoint := crmHTTP(t)
	c := mcpgo.StreamableHTTP(endpoint)
	closeConn(t, c)
	dir := filepath.Join(t.TempDir(), "approvals")
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	g := mcpruntime.NewGate(s)
	a := gated(t, guardedUpdate(c, g), "processes wait")
	if err := g.Approve(context.Background(), a.ID, a.Digest); err != nil {
		t.Fatal(err)
	}
	cmds := make([]*exec.Cmd, 6)
	outs := make([]bytes.Buffer, len(cmds))
	for i := range cmds {
		cmds[i] = guardProcess("guard-resume", dir, a.ID, "", endpoint)
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("resuming process %d: %v\n%s", i, err, outs[i].String())
		}
		var r struct{ Text, Err string }
		if err := json.Unmarshal(outs[i].Bytes(), &r); err != nil || r.Err != "" {
			t.Errorf("resuming process %d: %v %s", i, err, outs[i].String())
		}
	}
	if n := countNotes(t, c, "processes wait"); n != 1 {
		t.Fatalf("the approved call ran %d times across processes", n)
	}
}
