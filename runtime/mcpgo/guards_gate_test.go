package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/runtime/filestore"
	"github.com/mcpgen/mcpgen/runtime/mcpimpl"

	"github.com/mark3labs/mcp-go/server"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// Gated calls against the example CRM's update_deal, a destructive tool
// taking the caller's identity in its caller_token argument. Each
// execution appends a note to the deal, so the notes count executions.

// crmUpdateIn is update_deal's schema as the server declares it.
const crmUpdateIn = `{"type":"object","properties":{"caller_token":{"type":"string","minLength":1},"deal_id":{"type":"string","pattern":"^D-[0-9]{4}$"},"note":{"type":"string","maxLength":500}},"required":["caller_token","deal_id"],"additionalProperties":false}`

// NoteInput is update_deal's generated Input: no caller_token.
type NoteInput struct {
	DealID string `json:"deal_id"`
	Note   string `json:"note"`
}

func (*NoteInput) Validate() error { return nil }

var alice = mcpruntime.WithPrincipal(context.Background(), "alice", "tok-alice")

func guardedUpdate(c mcpruntime.Caller, g *mcpruntime.Gate) *mcpruntime.Tool[NoteInput, Deal] {
	schema, _, err := mcpimpl.StripProperty(json.RawMessage(crmUpdateIn), "caller_token")
	if err != nil {
		panic(err)
	}
	d := desc("update_deal", string(schema), `{"type":"object"}`)
	return mcpruntime.NewTool[NoteInput, Deal](d, c,
		mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithIdentityArgument("caller_token"), mcpruntime.WithGate(g))
}

// countNotes counts the notes on deal D-2001 with the given text.
func countNotes(t *testing.T, c mcpruntime.Caller, text string) int {
	t.Helper()
	r, err := mcpruntime.NewTool[GetDealInput, Deal](getDealDesc, c).Call(context.Background(), GetDealInput{DealID: "D-2001"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, note := range r.Output.Notes {
		if note == "alice: "+text {
			n++
		}
	}
	return n
}

// gated invokes update_deal and returns the approval it must produce.
func gated(t *testing.T, tool *mcpruntime.Tool[NoteInput, Deal], note string) *mcpruntime.Approval {
	t.Helper()
	m, err := tool.Invoke(alice, json.RawMessage(`{"deal_id":"D-2001","note":"`+note+`","caller_token":"tok-carol"}`))
	// A pending approval is a state of the model result, not a Go error.
	if err != nil || m.Pending == nil || m.IsError || !strings.Contains(m.Text, m.Pending.ID) {
		t.Fatalf("update_deal was not gated: %+v, %v", m, err)
	}
	return m.Pending
}

func isApproval(err, want error) bool {
	var ae *mcpruntime.ApprovalError
	return errors.As(err, &ae) && errors.Is(err, want)
}

func approvalStores(t *testing.T) map[string]func(t *testing.T) mcpruntime.ApprovalStore {
	return map[string]func(t *testing.T) mcpruntime.ApprovalStore{
		"memory": func(*testing.T) mcpruntime.ApprovalStore { return mcpruntime.NewMemoryStore() },
		"file": func(t *testing.T) mcpruntime.ApprovalStore {
			s, err := filestore.Open(filepath.Join(t.TempDir(), "approvals"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
}

func TestGateExactlyOnce(t *testing.T) {
	for name, open := range approvalStores(t) {
		t.Run(name, func(t *testing.T) {
			c := mcpgo.StreamableHTTP(crmHTTP(t))
			closeConn(t, c)
			gate := mcpruntime.NewGate(open(t))
			update := guardedUpdate(c, gate)
			note := "once via " + name

			a := gated(t, update, note)
			wantDigest, _ := mcpruntime.ArgsDigest(json.RawMessage(`{"deal_id":"D-2001","note":"` + note + `"}`))
			if a.Tool != "update_deal" || a.Principal != "alice" || a.Digest != wantDigest || a.State != mcpruntime.StatePending ||
				strings.Contains(string(a.Args), "caller_token") || !strings.Contains(a.Why, "not annotated read-only") {
				t.Errorf("approval = %+v", a)
			}
			if n := countNotes(t, c, note); n != 0 {
				t.Fatalf("a gated call ran (%d notes)", n)
			}
			if p, err := gate.Pending(context.Background()); err != nil || len(p) != 1 || p[0].ID != a.ID {
				t.Errorf("pending = %v, %v", p, err)
			}
			if _, err := update.ResumeInvoke(alice, a.ID); !isApproval(err, mcpruntime.ErrApprovalPending) {
				t.Errorf("resume before the decision: %v", err)
			}
			if err := gate.Approve(context.Background(), a.ID, "sha256:00"); !isApproval(err, mcpruntime.ErrApprovalMismatch) {
				t.Errorf("approve with other arguments' digest: %v", err)
			}
			if err := gate.Approve(context.Background(), a.ID, a.Digest); err != nil {
				t.Fatal(err)
			}
			if err := gate.Approve(context.Background(), a.ID, a.Digest); err != nil {
				t.Errorf("approving twice: %v", err)
			}

			// 100 resumers race; one call reaches the server.
			texts := make([]string, 100)
			var wg sync.WaitGroup
			for i := range texts {
				wg.Go(func() {
					m, err := update.ResumeInvoke(alice, a.ID)
					if err != nil || m.IsError {
						t.Errorf("resume %d: %+v, %v", i, m, err)
					}
					texts[i] = m.Text
				})
			}
			wg.Wait()
			if n := countNotes(t, c, note); n != 1 {
				t.Fatalf("the approved call ran %d times", n)
			}
			if uniq := slices.Compact(slices.Sorted(slices.Values(texts))); len(uniq) != 1 || !strings.Contains(uniq[0], `"alice: `+note+`"`) {
				t.Errorf("resumers got different results: %q", uniq)
			}

			// Later resumes return the recorded outcome.
			r, err := update.Resume(alice, a.ID)
			if err != nil || r.Output.ID != "D-2001" || r.Provenance.Tool != "update_deal" || r.Provenance.Digest != r.Digest() {
				t.Errorf("typed resume: %+v, %v", r, err)
			}
			ts, _ := mcpruntime.NewToolset(update)
			if m, err := ts.Resume(alice, "update_deal", a.ID); err != nil || m.Text != texts[0] {
				t.Errorf("toolset resume: %+v, %v", m, err)
			}
			bob := mcpruntime.WithPrincipal(context.Background(), "bob", "tok-bob")
			if _, err := update.Resume(bob, a.ID); !isApproval(err, mcpruntime.ErrApprovalMismatch) {
				t.Errorf("resume by another principal: %v", err)
			}
			if got, _ := gate.Get(context.Background(), a.ID); got.State != mcpruntime.StateDone || got.Outcome == nil || got.Outcome.Provenance == nil {
				t.Errorf("final state: %+v", got)
			}
			if n := countNotes(t, c, note); n != 1 {
				t.Errorf("the approved call ran %d times", n)
			}
		})
	}
}

func TestGateDenyExpireTamper(t *testing.T) {
	c := mcpgo.StreamableHTTP(crmHTTP(t))
	closeConn(t, c)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var clockMu sync.Mutex
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	store := mcpruntime.NewMemoryStore()
	gate := mcpruntime.NewGate(store, mcpruntime.GateTTL(time.Hour), mcpruntime.GateClock(clock))
	update := guardedUpdate(c, gate)

	t.Run("deny", func(t *testing.T) {
		a := gated(t, update, "denied")
		if err := gate.Deny(ctx, a.ID, "not during the audit"); err != nil {
			t.Fatal(err)
		}
		m, err := update.ResumeInvoke(alice, a.ID)
		if err != nil || !m.IsError || m.Result != nil ||
			m.Text != `A person reviewing this call to "update_deal" denied it, so it was not made. Reason: not during the audit` {
			t.Errorf("denied resume: %+v, %v", m, err)
		}
		if _, err := update.Resume(alice, a.ID); !isApproval(err, mcpruntime.ErrApprovalDenied) {
			t.Errorf("typed resume of a denied call: %v", err)
		}
		if err := gate.Approve(ctx, a.ID, a.Digest); !isApproval(err, mcpruntime.ErrApprovalDenied) {
			t.Errorf("approve after deny: %v", err)
		}
		if n := countNotes(t, c, "denied"); n != 0 {
			t.Errorf("a denied call ran %d times", n)
		}
	})

	t.Run("expired", func(t *testing.T) {
		a := gated(t, update, "expired")
		clockMu.Lock()
		now = now.Add(time.Hour)
		clockMu.Unlock()
		if p, _ := gate.Pending(ctx); len(p) != 0 {
			t.Errorf("expired approvals still pending: %v", p)
		}
		if err := gate.Approve(ctx, a.ID, a.Digest); !isApproval(err, mcpruntime.ErrApprovalExpired) {
			t.Errorf("approve after expiry: %v", err)
		}
		if _, err := update.ResumeInvoke(alice, a.ID); !isApproval(err, mcpruntime.ErrApprovalExpired) {
			t.Errorf("resume after expiry: %v", err)
		}
		if got, _ := store.Get(ctx, a.ID); got.State != mcpruntime.StateExpired {
			t.Errorf("stored state %s", got.State)
		}
		if n := countNotes(t, c, "expired"); n != 0 {
			t.Errorf("an expired call ran %d times", n)
		}
	})

	t.Run("tampered arguments", func(t *testing.T) {
		a := gated(t, update, "approved text")
		if err := gate.Approve(ctx, a.ID, a.Digest); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Update(ctx, a.ID, func(s *mcpruntime.Approval) error {
			s.Args = json.RawMessage(`{"deal_id":"D-2001","note":"tampered text"}`)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := update.ResumeInvoke(alice, a.ID); !isApproval(err, mcpruntime.ErrApprovalMismatch) || !strings.Contains(err.Error(), "no longer hash") {
			t.Errorf("resume with tampered arguments: %v", err)
		}
		if countNotes(t, c, "tampered text")+countNotes(t, c, "approved text") != 0 {
			t.Error("a tampered call ran")
		}
		// The same arguments again need their own approval.
		b := gated(t, update, "approved text")
		if b.ID == a.ID {
			t.Error("a new call reused an approval")
		}
	})

	t.Run("other tool", func(t *testing.T) {
		a := gated(t, update, "other tool")
		if err := gate.Approve(ctx, a.ID, a.Digest); err != nil {
			t.Fatal(err)
		}
		send := mcpruntime.NewTool[NoteInput, mcpruntime.NoOutput](desc("send_email", emptyIn, ""), c, mcpruntime.WithGate(gate))
		if _, err := send.Resume(alice, a.ID); !isApproval(err, mcpruntime.ErrApprovalMismatch) {
			t.Errorf("resume through another tool: %v", err)
		}
	})
}

// TestGateRestart crosses process boundaries: a process that approves and
// exits, a store reopened by a new instance, a process that died mid-call,
// and several processes racing to resume one approval.
func TestGateRestart(t *testing.T) {
	endpoint := crmHTTP(t)
	c := mcpgo.StreamableHTTP(endpoint)
	closeConn(t, c)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "approvals")
	open := func() (*filestore.FileStore, *mcpruntime.Gate) {
		s, err := filestore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s, mcpruntime.NewGate(s)
	}

	t.Run("approve in another process, resume after restart", func(t *testing.T) {
		s1, g1 := open()
		a := gated(t, guardedUpdate(c, g1), "restart")
		_ = s1.Close()
		if out, err := guardProcess("guard-approve", dir, a.ID, a.Digest, "").CombinedOutput(); err != nil {
			t.Fatalf("approving process: %v\n%s", err, out)
		}
		_, g2 := open()
		m, err := guardedUpdate(c, g2).ResumeInvoke(alice, a.ID)
		if err != nil || m.IsError {
			t.Fatalf("resume after restart: %+v, %v", m, err)
		}
		_, g3 := open()
		m3, err := guardedUpdate(c, g3).ResumeInvoke(alice, a.ID)
		if err != nil || m3.Text != m.Text {
			t.Errorf("second resume after another restart: %+v, %v", m3, err)
		}
		if n := countNotes(t, c, "restart"); n != 1 {
			t.Errorf("ran %d times", n)
		}
	})

	t.Run("died mid-call", func(t *testing.T) {
		// A server that does the work and then never answers, so the
		// resumer is killed while the call is in flight.
		srv := startCRM(t, "-fault", "hang-after=update_deal")
		hc := mcpgo.StreamableHTTP(srv.endpoint)
		closeConn(t, hc)
		_, g := open()
		a := gated(t, guardedUpdate(hc, g), "mid-call")
		if err := g.Approve(ctx, a.ID, a.Digest); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		cmd := guardProcess("guard-resume", dir, a.ID, "", srv.endpoint)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case tool := <-srv.hangs:
			if tool != "update_deal deal_id=D-2001" {
				t.Fatalf("the server holds a call to %s", tool)
			}
		case err := <-exited:
			t.Fatalf("the resuming process exited before its call reached the server: %v\n%s", err, out.String())
		case <-time.After(2 * time.Minute): // a bound against hanging, far beyond the wait
			_ = cmd.Process.Kill()
			<-exited // then its output is complete
			t.Fatalf("the resuming process's call never reached the server\n%s", out.String())
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if err := <-exited; cmd.ProcessState == nil || cmd.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("the resuming process was not killed: %v\n%s", err, out.String())
		}
		s2, g2 := open()
		if got, err := s2.Get(ctx, a.ID); err != nil || got.State != mcpruntime.StateExecuting {
			t.Fatalf("state the killed process left behind: %+v, %v", got, err)
		}

		// Another process resumes: the outcome is unknown, and the call is
		// not made again.
		again := guardProcess("guard-resume", dir, a.ID, "", srv.endpoint)
		b, err := again.Output()
		if err != nil {
			t.Fatalf("second resuming process: %v\n%s", err, b)
		}
		var r struct{ Text, Err string }
		if err := json.Unmarshal(b, &r); err != nil || !strings.Contains(r.Err, mcpruntime.ErrOutcomeUnknown.Error()) {
			t.Errorf("resume in another process after the executor died: %s (%v)", b, err)
		}
		if _, err := guardedUpdate(hc, g2).ResumeInvoke(alice, a.ID); !isApproval(err, mcpruntime.ErrOutcomeUnknown) {
			t.Errorf("resume of a call whose executor died: %v", err)
		}
		if n := countNotes(t, hc, "mid-call"); n != 1 {
			t.Errorf("the server executed the approved call %d times, want exactly once", n)
		}
	})

	t.Run("processes race", func(t *testing.T) {
		_, g := open()
		a := gated(t, guardedUpdate(c, g), "race")
		if err := g.Approve(ctx, a.ID, a.Digest); err != nil {
			t.Fatal(err)
		}
		cmds := make([]*exec.Cmd, 4)
		outs := make([]bytes.Buffer, len(cmds))
		for i := range cmds {
			cmds[i] = guardProcess("guard-resume", dir, a.ID, "", endpoint)
			cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
		}
		var results []string
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("resuming process %d: %v\n%s", i, err, outs[i].String())
			}
			var r struct{ Text, Err string }
			if err := json.Unmarshal(outs[i].Bytes(), &r); err != nil {
				t.Fatalf("resuming process %d: %v: %s", i, err, outs[i].String())
			}
			switch {
			case r.Err == "":
				results = append(results, r.Text)
			case !strings.Contains(r.Err, mcpruntime.ErrOutcomeUnknown.Error()):
				// Another process was mid-call: that is the only other
				// acceptable answer.
				t.Errorf("resuming process %d: %s", i, r.Err)
			}
		}
		if n := countNotes(t, c, "race"); n != 1 {
			t.Fatalf("the approved call ran %d times across processes", n)
		}
		m, err := guardedUpdate(c, g).ResumeInvoke(alice, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if r != m.Text {
				t.Errorf("process result %q, recorded %q", r, m.Text)
			}
		}
	})
}

func guardProcess(mode, dir, id, digest, endpoint string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MCPGO_FIXTURE="+mode, "GUARD_STORE="+dir, "GUARD_ID="+id, "GUARD_DIGEST="+digest, "GUARD_ENDPOINT="+endpoint)
	return cmd
}

// guardMain runs this test binary as a helper process: the recorder
// server, or a program that approves or resumes with a file store.
func guardMain(mode string) int {
	if mode == "recorder" {
		r := &recorder{file: os.Getenv("RECORDER_LOG")}
		if err := server.ServeStdio(r.server()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	store, err := filestore.Open(os.Getenv("GUARD_STORE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer store.Close()
	gate := mcpruntime.NewGate(store)
	id := os.Getenv("GUARD_ID")
	switch mode {
	case "guard-approve":
		if err := gate.Approve(context.Background(), id, os.Getenv("GUARD_DIGEST")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "guard-resume":
		c := mcpgo.StreamableHTTP(os.Getenv("GUARD_ENDPOINT"))
		defer c.Close()
		m, err := guardedUpdate(c, gate).ResumeInvoke(alice, id)
		out := struct{ Text, Err string }{Text: m.Text}
		if err != nil {
			out.Err = err.Error()
		}
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown MCPGO_FIXTURE mode", mode)
	return 2
}

// Through a Toolset too, a gated call is a state of the model result: no
// Go error, nothing sent, the approval in Pending; a denial then reaches the
// model as the tool's result.
func TestToolsetInvokeGated(t *testing.T) {
	c := mcpgo.StreamableHTTP(crmHTTP(t))
	closeConn(t, c)
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore())
	ts, err := mcpruntime.NewToolset(guardedUpdate(c, gate))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ts.Invoke(alice, "update_deal", json.RawMessage(`{"deal_id":"D-2001","note":"via toolset"}`))
	if err != nil || m.Pending == nil || m.Pending.Tool != "update_deal" || m.Result != nil || m.IsError {
		t.Fatalf("gated toolset call = %+v, %v", m, err)
	}
	if n := countNotes(t, c, "via toolset"); n != 0 {
		t.Fatalf("a gated call ran (%d notes)", n)
	}
	if err := gate.Deny(context.Background(), m.Pending.ID, "not today"); err != nil {
		t.Fatal(err)
	}
	d, err := ts.Resume(alice, "update_deal", m.Pending.ID)
	if err != nil || !d.IsError || d.Pending != nil || !strings.Contains(d.Text, "not today") {
		t.Errorf("denied resume = %+v, %v", d, err)
	}
}
