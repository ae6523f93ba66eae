package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpimpl"
)

// library is a server whose resources a model reads through a resource
// reader: "doc:///{name}" answers with the name and the number of reads
// it has served.
type library struct{ reads atomic.Int32 }

func (l *library) CallTool(context.Context, string, json.RawMessage) (*mcpruntime.Result, error) {
	return nil, errors.New("the library has no tools")
}

func (l *library) ReadResource(_ context.Context, uri string) (*mcpruntime.ResourceResult, error) {
	n := l.reads.Add(1)
	return &mcpruntime.ResourceResult{URI: uri, Contents: []mcpruntime.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: fmt.Sprintf("%s, read #%d", uri, n)}}}, nil
}

func (l *library) Name() string { return "library" }

var docDesc = &mcpruntime.Descriptor{Name: "read_doc", SchemaHash: "sha256:doc-v1", Annotations: mcpruntime.Annotations{ReadOnly: true, Idempotent: true},
	InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`)}

// readerProcess is an agent process whose set holds a reader every read
// of which waits for a person, over a store shared with other processes.
func readerProcess(t *testing.T, store mcpruntime.ApprovalStore, lib *library) (*Set, *mcpruntime.Gate) {
	t.Helper()
	g := mcpruntime.NewGate(store, mcpruntime.GateTool("read_doc", mcpruntime.GateAlways))
	r := mcpimpl.NewResourceReader(docDesc, &mcpruntime.ResourceDescriptor{URITemplate: "doc:///{name}", Name: "doc"}, lib,
		mcpruntime.WithToolOptions(mcpruntime.WithGate(g)), mcpruntime.ReadIdentity(mcpruntime.ContextPrincipal))
	s, err := New(DialectJSONSchema, Source{Tools: toolset(t, r), Rendering: mcpruntime.RenderLean})
	if err != nil {
		t.Fatal(err)
	}
	return s, g
}

// A gated read pauses the loop like a tool's call: the pause shows the
// store's approval, resumes to one read across processes sharing the
// store, and is refused as altered when edited.
func TestReaderPauses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "approvals")
	lib := &library{}
	s1, g1 := readerProcess(t, fileStore(t, dir), lib)
	s2, _ := readerProcess(t, fileStore(t, dir), lib)
	if server, ok := s1.byName["read_doc"].ts.Gated("read_doc"); !ok || server != "library" {
		t.Fatalf("Gated(read_doc) = %q, %v", server, ok)
	}
	res, pause, err := s1.DispatchAll(alice, []Call{{ID: "tu_1", Name: "read_doc", Arguments: json.RawMessage(`{"name":"payroll"}`)}})
	if err != nil || res != nil || pause == nil || lib.reads.Load() != 0 {
		t.Fatalf("DispatchAll = %v, %+v, %v (%d reads)", res, pause, err, lib.reads.Load())
	}
	stored, err := json.Marshal(pause)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(b []byte) *Pause {
		p, err := ParsePause(b)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	as, err := parse(stored).Approvals(alice, s2)
	if err != nil || len(as) != 1 || as[0].Tool != "read_doc" || as[0].Server != "library" || string(as[0].Args) != `{"name":"payroll"}` ||
		as[0].Principal != "alice" || as[0].State != mcpruntime.StatePending {
		t.Fatalf("Approvals = %+v, %v", as, err)
	}
	if res, still, err := s2.Resume(alice, parse(stored)); err != nil || res != nil || still == nil || lib.reads.Load() != 0 {
		t.Fatalf("undecided resume = %v, %v, %v", res, still, err)
	}

	// Edited as an attacker holding it would: refused, nothing read.
	for name, f := range map[string]func(p, a map[string]any){
		"args":      func(_, a map[string]any) { a["args"] = map[string]any{"name": "lunch"} },
		"principal": func(_, a map[string]any) { a["principal"] = "bob" },
		"server":    func(_, a map[string]any) { a["server"] = "other" },
		"unknown":   func(_, a map[string]any) { a["id"] = "0123456789abcdef0123456789abcdef" },
	} {
		tampered := parse(edit(t, stored, f))
		if _, err := tampered.Approvals(alice, s2); !errors.Is(err, ErrPauseAltered) {
			t.Errorf("%s: Approvals = %v", name, err)
		}
		if _, _, err := s2.Resume(alice, tampered); !errors.Is(err, ErrPauseAltered) {
			t.Errorf("%s: Resume = %v", name, err)
		}
	}

	if err := g1.Approve(context.Background(), as[0].ID, as[0].Digest); err != nil {
		t.Fatal(err)
	}
	// Resumed at once from both processes: one read, one continuation.
	var wg sync.WaitGroup
	var won, used atomic.Int32
	texts := make(chan string, 8)
	for i := range 8 {
		wg.Go(func() {
			res, still, err := []*Set{s1, s2}[i%2].Resume(alice, parse(stored))
			switch {
			case err == nil && still == nil && len(res) == 1 && !res[0].IsError:
				won.Add(1)
				texts <- res[0].Text
			case errors.Is(err, ErrPauseUsed):
				used.Add(1)
			default:
				t.Errorf("resume %d = %+v, %v, %v", i, res, still, err)
			}
		})
	}
	wg.Wait()
	close(texts)
	if won.Load() != 1 || used.Load() != 7 {
		t.Errorf("%d resumes continued, %d were refused; want 1 and 7", won.Load(), used.Load())
	}
	for text := range texts {
		if text != "doc:///payroll, read #1" {
			t.Errorf("the model got %q", text)
		}
	}
	if n := lib.reads.Load(); n != 1 {
		t.Errorf("%d reads for one approval", n)
	}
	if _, _, err := s1.Resume(alice, parse(stored)); !errors.Is(err, ErrPauseUsed) {
		t.Errorf("a later resume = %v", err)
	}
}

// A pause that names a tool without a gate cannot hold an approval made
// through it: refused as altered, not a plain error.
func TestPauseNamingToolWithoutGate(t *testing.T) {
	lib := &library{}
	s1, _ := readerProcess(t, mcpruntime.NewMemoryStore(), lib)
	_, pause, err := s1.DispatchAll(alice, []Call{{ID: "tu_1", Name: "read_doc", Arguments: json.RawMessage(`{"name":"a"}`)}})
	if err != nil || pause == nil {
		t.Fatal(pause, err)
	}
	free := mcpimpl.NewResourceReader(docDesc, &mcpruntime.ResourceDescriptor{URITemplate: "doc:///{name}", Name: "doc"}, lib)
	s, err := New(DialectJSONSchema, Source{Tools: toolset(t, free)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pause.Approvals(alice, s); !errors.Is(err, ErrPauseAltered) || !strings.Contains(err.Error(), "no gate") {
		t.Errorf("Approvals = %v", err)
	}
	if _, _, err := s.Resume(alice, pause); !errors.Is(err, ErrPauseAltered) {
		t.Errorf("Resume = %v", err)
	}
	if lib.reads.Load() != 0 {
		t.Errorf("%d reads", lib.reads.Load())
	}
}
