package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
	"github.com/mcpgen/mcpgen/runtime/filestore"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// A paused agent loop over two CRM server processes, its pause edited as
// whoever holds it (a browser, a queue) could: sent to the other server,
// shown with other arguments, resumed twice, from two processes.

// crmPair is one agent process: its own connections to the east and west
// CRMs and its own gate over the shared approval directory.
type crmPair struct {
	set        *agent.Set
	gate       *mcpruntime.Gate
	east, west *mcpgo.Conn
}

func newCRMPair(t *testing.T, eastURL, westURL, dir string) *crmPair {
	t.Helper()
	store, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	p := &crmPair{gate: mcpruntime.NewGate(store),
		east: mcpgo.StreamableHTTP(eastURL, mcpgo.WithName("crm-east")), west: mcpgo.StreamableHTTP(westURL, mcpgo.WithName("crm-west"))}
	closeConn(t, p.east)
	closeConn(t, p.west)
	ts := func(c *mcpgo.Conn) *mcpruntime.Toolset {
		s, err := mcpruntime.NewToolset(guardedUpdate(c, p.gate))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	p.set, err = agent.New(agent.DialectJSONSchema, agent.Source{Prefix: "east", Tools: ts(p.east)}, agent.Source{Prefix: "west", Tools: ts(p.west)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// reshape edits a stored pause's first result.
func reshape(t *testing.T, b []byte, f func(result, pending map[string]any)) *agent.Pause {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	r := p["results"].([]any)[0].(map[string]any)
	f(r, r["pending"].(map[string]any))
	out, _ := json.Marshal(p)
	pause, err := agent.ParsePause(out)
	if err != nil {
		t.Fatal(err)
	}
	return pause
}

func TestPauseAttacksOverCRMProcesses(t *testing.T) {
	eastURL, westURL := crmHTTP(t), crmHTTP(t)
	dir := filepath.Join(t.TempDir(), "approvals")
	p1 := newCRMPair(t, eastURL, westURL, dir)
	const note = "east only, once"

	res, pause, err := p1.set.DispatchAll(alice, []agent.Call{{ID: "tu_1", Name: "east__update_deal", Arguments: json.RawMessage(`{"deal_id":"D-2001","note":"` + note + `"}`)}})
	if err != nil || res != nil || pause == nil {
		t.Fatalf("DispatchAll = %v, %v, %v", res, pause, err)
	}
	stored, _ := json.Marshal(pause)
	// The person decides on the approval as the store holds it.
	as, err := pause.Approvals(alice, p1.set)
	if err != nil || len(as) != 1 || as[0].Server != "crm-east" || !strings.Contains(string(as[0].Args), note) {
		t.Fatalf("approvals = %+v, %v", as, err)
	}
	if err := p1.gate.Approve(context.Background(), as[0].ID, as[0].Digest); err != nil {
		t.Fatal(err)
	}

	// Sent to the west's update_deal, with or without the server label
	// changed to match: refused, as the west's tool cannot spend it.
	for _, relabel := range []bool{false, true} {
		west := reshape(t, stored, func(r, a map[string]any) {
			r["name"] = "west__update_deal"
			if relabel {
				a["server"] = "crm-west"
			}
		})
		if _, _, err := p1.set.Resume(alice, west); !errors.Is(err, agent.ErrPauseAltered) || !errors.Is(err, mcpruntime.ErrApprovalMismatch) {
			t.Errorf("resume on the west (relabelled %v) = %v", relabel, err)
		}
	}
	// Shown with a harmless note, the digest untouched: refused.
	shown := reshape(t, stored, func(_, a map[string]any) { a["args"] = map[string]any{"deal_id": "D-2001", "note": "typo fix"} })
	if _, err := shown.Approvals(alice, p1.set); !errors.Is(err, agent.ErrPauseAltered) {
		t.Errorf("Approvals of the altered pause = %v", err)
	}
	if _, _, err := p1.set.Resume(alice, shown); !errors.Is(err, agent.ErrPauseAltered) {
		t.Errorf("resume of the altered pause = %v", err)
	}
	if e, w := countNotes(t, p1.east, note), countNotes(t, p1.west, note); e != 0 || w != 0 {
		t.Fatalf("notes after the refused resumes: east %d, west %d", e, w)
	}

	// The pause as stored: the east's call, once.
	res, still, err := p1.set.Resume(alice, reshape(t, stored, func(map[string]any, map[string]any) {}))
	if err != nil || still != nil || len(res) != 1 || res[0].IsError || !strings.Contains(res[0].Text, "alice: "+note) {
		t.Fatalf("resume = %+v, %v, %v", res, still, err)
	}
	// Again, here and in another process sharing the store: refused.
	p2 := newCRMPair(t, eastURL, westURL, dir)
	for _, p := range []*crmPair{p1, p2} {
		again, _ := agent.ParsePause(stored)
		if res, still, err := p.set.Resume(alice, again); !errors.Is(err, agent.ErrPauseUsed) || res != nil || still != nil {
			t.Errorf("second resume = %+v, %v, %v", res, still, err)
		}
	}
	if e, w := countNotes(t, p1.east, note), countNotes(t, p1.west, note); e != 1 || w != 0 {
		t.Errorf("notes: east %d, west %d; want 1 and 0", e, w)
	}
}

// openNote is a generated Input for an open schema: undeclared members are
// kept and encoded.
type openNote struct {
	Note  string                     `json:"note,omitempty"`
	Extra map[string]json.RawMessage `json:"-"`
}

func (*openNote) Validate() error { return nil }

func (v openNote) MarshalJSON() ([]byte, error) {
	m := maps.Clone(v.Extra)
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m["note"], _ = json.Marshal(v.Note)
	return json.Marshal(m)
}

// A Go caller's Input holding members the server binds to the identity
// argument: they are dropped before the gate, so the approval file never
// holds them (nor the run's token put in one), and the server sees the
// run's token.
func TestCallIdentityAliasesNotStored(t *testing.T) {
	c := attackStdio()
	closeConn(t, c)
	dir := filepath.Join(t.TempDir(), "approvals")
	store, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	gate := mcpruntime.NewGate(store, mcpruntime.GateDefault(mcpruntime.GateAlways))
	whoami := mcpruntime.NewTool[openNote, mcpruntime.NoOutput](attackDesc(t, "whoami"), c,
		mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithIdentityArgument("access_token"), mcpruntime.WithGate(gate))
	tok := token("tok-alice-")
	ctx := mcpruntime.WithPrincipal(context.Background(), "alice", tok)
	_, err = whoami.Call(ctx, openNote{Note: "n", Extra: map[string]json.RawMessage{
		"ACCESS_TOKEN":       json.RawMessage(`"` + string(tok) + `"`),
		"access_to\u212aen":  json.RawMessage(`"tok-evil"`),
		"accessToken":        json.RawMessage(`"tok-evil"`),
		"unrelated_property": json.RawMessage(`1`),
	}})
	var are *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &are) {
		t.Fatalf("Call = %v", err)
	}
	if got := string(are.Approval.Args); got != `{"note":"n","unrelated_property":1}` {
		t.Errorf("approval args = %s", got)
	}
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(dir, f.Name()))
		if s := string(b); strings.Contains(s, string(tok)) || strings.Contains(s, "tok-evil") || strings.Contains(strings.ToLower(s), "token") {
			t.Errorf("%s holds an identity member: %s", f.Name(), s)
		}
	}
	if err := gate.Approve(ctx, are.Approval.ID, are.Approval.Digest); err != nil {
		t.Fatal(err)
	}
	r, err := whoami.Resume(ctx, are.Approval.ID)
	// The server echoes the token it bound: the run's, scrubbed.
	if err != nil || r.ModelText() != "access_token=[redacted] note=n" {
		t.Errorf("resume = %+v, %v", r, err)
	}
}

// Bob's pending approval, copied exactly into alice's pause over the CRM
// processes: not shown to alice's approver, not resumed as hers even once
// approved, and bob's own pause not used up by the attempt.
func TestPauseOfAnotherPrincipalOverCRM(t *testing.T) {
	eastURL, westURL := crmHTTP(t), crmHTTP(t)
	p := newCRMPair(t, eastURL, westURL, filepath.Join(t.TempDir(), "approvals"))
	bob := mcpruntime.WithPrincipal(context.Background(), "bob", "tok-bob")
	const note = "bob's, for bob only"
	_, mine, err := p.set.DispatchAll(alice, []agent.Call{{ID: "tu_1", Name: "east__update_deal", Arguments: json.RawMessage(`{"deal_id":"D-2001","note":"alice's"}`)}})
	if err != nil || mine == nil {
		t.Fatal(mine, err)
	}
	_, theirs, err := p.set.DispatchAll(bob, []agent.Call{{ID: "tu_1", Name: "east__update_deal", Arguments: json.RawMessage(`{"deal_id":"D-2001","note":"` + note + `"}`)}})
	if err != nil || theirs == nil {
		t.Fatal(theirs, err)
	}
	bobs, _ := json.Marshal(theirs.Results[0].Pending)
	stored, _ := json.Marshal(mine)
	swapped := reshape(t, stored, func(r, _ map[string]any) {
		var a map[string]any
		_ = json.Unmarshal(bobs, &a)
		r["pending"] = a
	})
	if as, err := swapped.Approvals(alice, p.set); !errors.Is(err, agent.ErrPauseAltered) || as != nil {
		t.Fatalf("alice's approver is shown bob's approval: %v, %v", as, err)
	}
	bp := theirs.Results[0].Pending
	if err := p.gate.Approve(context.Background(), bp.ID, bp.Digest); err != nil {
		t.Fatal(err)
	}
	if res, still, err := p.set.Resume(alice, swapped); !errors.Is(err, agent.ErrPauseAltered) || res != nil || still != nil {
		t.Fatalf("alice's resume of bob's approval = %v, %v, %v", res, still, err)
	}
	if n := countNotes(t, p.east, note); n != 0 {
		t.Fatalf("%d notes after the refused resume", n)
	}
	if as, err := theirs.Approvals(bob, p.set); err != nil || len(as) != 1 || as[0].State != mcpruntime.StateApproved {
		t.Fatalf("bob's approvals = %+v, %v", as, err)
	}
}

// Two CRM processes under one label ("crm", as two unnamed stdio servers
// of one command would share one), each with bindings generated from its
// own manifest (Descriptor.Server), in two agent processes sharing the
// approval store: an approval made through the east's bindings is neither
// shown nor resumed through the west's, and the west's CRM gets nothing.
func TestApprovalBoundToServerIdentityOverCRM(t *testing.T) {
	eastURL, westURL := crmHTTP(t), crmHTTP(t)
	dir := filepath.Join(t.TempDir(), "approvals")
	process := func(url, identity string) (*agent.Set, *mcpruntime.Gate, *mcpgo.Conn) {
		store, err := filestore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		g := mcpruntime.NewGate(store)
		c := mcpgo.StreamableHTTP(url, mcpgo.WithName("crm"))
		closeConn(t, c)
		tool := guardedUpdate(c, g)
		tool.Descriptor().Server = identity
		ts, err := mcpruntime.NewToolset(tool)
		if err != nil {
			t.Fatal(err)
		}
		s, err := agent.New(agent.DialectJSONSchema, agent.Source{Tools: ts})
		if err != nil {
			t.Fatal(err)
		}
		return s, g, c
	}
	east, gate, eastConn := process(eastURL, "crm_east/crm")
	west, _, westConn := process(westURL, "crm_west/crm")
	const note = "for the east's bindings only"
	_, pause, err := east.DispatchAll(alice, []agent.Call{{ID: "tu_1", Name: "update_deal", Arguments: json.RawMessage(`{"deal_id":"D-2001","note":"` + note + `"}`)}})
	if err != nil || pause == nil {
		t.Fatal(pause, err)
	}
	stored, _ := json.Marshal(pause)
	as, err := pause.Approvals(alice, east)
	if err != nil || as[0].Server != "crm" || as[0].ServerIdentity != "crm_east/crm" {
		t.Fatalf("approvals = %+v, %v", as, err)
	}
	if err := gate.Approve(context.Background(), as[0].ID, as[0].Digest); err != nil {
		t.Fatal(err)
	}
	for _, relabel := range []bool{false, true} {
		p := reshape(t, stored, func(_, a map[string]any) {
			if relabel {
				a["serverIdentity"] = "crm_west/crm"
			}
		})
		if _, err := p.Approvals(alice, west); !errors.Is(err, agent.ErrPauseAltered) || !errors.Is(err, mcpruntime.ErrApprovalMismatch) {
			t.Errorf("Approvals through the west's bindings (relabelled %v) = %v", relabel, err)
		}
		if _, _, err := west.Resume(alice, p); !errors.Is(err, agent.ErrPauseAltered) {
			t.Errorf("resume through the west's bindings (relabelled %v) = %v", relabel, err)
		}
	}
	if w := countNotes(t, westConn, note); w != 0 {
		t.Fatalf("the west's CRM got %d notes", w)
	}
	res, _, err := east.Resume(alice, reshape(t, stored, func(map[string]any, map[string]any) {}))
	if err != nil || len(res) != 1 || res[0].IsError {
		t.Fatalf("resume through the east's bindings = %+v, %v", res, err)
	}
	if e, w := countNotes(t, eastConn, note), countNotes(t, westConn, note); e != 1 || w != 0 {
		t.Errorf("notes: east %d, west %d; want 1 and 0", e, w)
	}
}
