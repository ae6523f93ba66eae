package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/filestore"
	"github.com/mcpgen/mcpgen/runtime/mcpimpl"
)

// closingServer closes the approval store while the approved call runs,
// after the server has answered, so that its outcome cannot be recorded.
type closingServer struct {
	server
	store io.Closer
}

func (c *closingServer) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpruntime.Result, error) {
	res, err := c.server.CallTool(ctx, name, args)
	_ = c.store.Close()
	return res, err
}

// closingLibrary is the library closing the store as it answers a read.
type closingLibrary struct {
	*library
	store io.Closer
}

func (c closingLibrary) ReadResource(ctx context.Context, uri string) (*mcpruntime.ResourceResult, error) {
	res, err := c.library.ReadResource(ctx, uri)
	_ = c.store.Close()
	return res, err
}

// resumeUnrecorded approves the one gated call of pause and resumes it:
// the store closes during the call, so the result comes with
// ErrOutcomeNotRecorded; the model must get it all the same.
func resumeUnrecorded(t *testing.T, s *Set, g *mcpruntime.Gate, dir string, pause *Pause) Result {
	t.Helper()
	pa := pause.Results[0].Pending
	if err := g.Approve(context.Background(), pa.ID, pa.Digest); err != nil {
		t.Fatal(err)
	}
	res, still, err := s.Resume(alice, pause)
	if !errors.Is(err, mcpruntime.ErrOutcomeNotRecorded) || still != nil || len(res) != 1 {
		t.Fatalf("Resume = %+v, %v, %v", res, still, err)
	}
	// The store is closed, so the pause could not be marked continued
	// either: both are said, each once.
	if msg := err.Error(); strings.Count(msg, "approval store: closed") != 2 || strings.Count(msg, "record that the pause was resumed") != 1 {
		t.Errorf("error does not say both once: %v", err)
	}
	again, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if a, err := again.Get(context.Background(), pa.ID); err != nil || a.State != mcpruntime.StateExecuting {
		t.Errorf("stored approval = %+v, %v", a, err)
	}
	return res[0]
}

// TestResumeKeepsUnrecordedResult: a resumed call that was made, but whose
// outcome the store could not record, gives the model its result (the
// only copy) and the caller the error.
func TestResumeKeepsUnrecordedResult(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "approvals")
	store := fileStore(t, dir)
	srv := &closingServer{store: store}
	g := mcpruntime.NewGate(store)
	s := mustSet(t, Source{Tools: toolset(t, mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](moveDesc, srv,
		mcpruntime.WithGate(g), mcpruntime.WithServerName("bank"), mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)))})
	_, pause, err := s.DispatchAll(alice, []Call{{ID: "tu_1", Name: "move", Arguments: json.RawMessage(`{"amount":5}`)}})
	if err != nil || pause == nil {
		t.Fatal(pause, err)
	}
	r := resumeUnrecorded(t, s, g, dir, pause)
	if r.IsError || r.Pending != nil || r.Text != "Moved." || r.CallID != "tu_1" {
		t.Errorf("the model got %+v", r)
	}
	if got := srv.made(); len(got) != 1 {
		t.Errorf("calls made: %q", got)
	}
}

// TestResumeKeepsUnrecordedRead: the same for a gated resource read.
func TestResumeKeepsUnrecordedRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "approvals")
	store := fileStore(t, dir)
	lib := &library{}
	g := mcpruntime.NewGate(store, mcpruntime.GateTool("read_doc", mcpruntime.GateAlways))
	r := mcpimpl.NewResourceReader(docDesc, &mcpruntime.ResourceDescriptor{URITemplate: "doc:///{name}", Name: "doc"}, closingLibrary{lib, store},
		mcpruntime.WithToolOptions(mcpruntime.WithGate(g)), mcpruntime.ReadIdentity(mcpruntime.ContextPrincipal))
	s := mustSet(t, Source{Tools: toolset(t, r)})
	_, pause, err := s.DispatchAll(alice, []Call{{ID: "tu_1", Name: "read_doc", Arguments: json.RawMessage(`{"name":"payroll"}`)}})
	if err != nil || pause == nil {
		t.Fatal(pause, err)
	}
	res := resumeUnrecorded(t, s, g, dir, pause)
	if res.IsError || res.Pending != nil || res.Text != "doc:///payroll, read #1" {
		t.Errorf("the model got %+v", res)
	}
	if n := lib.reads.Load(); n != 1 {
		t.Errorf("%d reads", n)
	}
}

// rejectingServer closes the approval store and rejects the call, so the
// failed call's outcome cannot be recorded.
type rejectingServer struct {
	closingServer
}

func (c *rejectingServer) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpruntime.Result, error) {
	_, _ = c.closingServer.CallTool(ctx, name, args)
	return nil, &mcpruntime.ProtocolError{Code: -32000, Message: "no such account"}
}

// TestResumeKeepsUnrecordedFailure: a resumed call the server answered
// with an error, whose outcome the store could not record, gives the model
// the server's answer and the caller the error saying it was not
// recorded.
func TestResumeKeepsUnrecordedFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "approvals")
	store := fileStore(t, dir)
	srv := &rejectingServer{closingServer{store: store}}
	g := mcpruntime.NewGate(store)
	s := mustSet(t, Source{Tools: toolset(t, mcpruntime.NewTool[moveInput, mcpruntime.NoOutput](moveDesc, srv,
		mcpruntime.WithGate(g), mcpruntime.WithServerName("bank"), mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)))})
	_, pause, err := s.DispatchAll(alice, []Call{{ID: "tu_1", Name: "move", Arguments: json.RawMessage(`{"amount":5}`)}})
	if err != nil || pause == nil {
		t.Fatal(pause, err)
	}
	r := resumeUnrecorded(t, s, g, dir, pause)
	if !r.IsError || !strings.Contains(r.Text, "The server rejected the call: no such account") || r.CallID != "tu_1" {
		t.Errorf("the model got %+v", r)
	}
}
