package mcpruntime

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestArgsDigest(t *testing.T) {
	a, err := ArgsDigest(json.RawMessage(`{"b": [1, 2.50, {"y":1,"x":"<&>"}], "a": null}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ArgsDigest(json.RawMessage("{\"a\":null,\n\"b\":[1,2.50,{\"x\":\"\\u003c&>\",\"y\":1}]}"))
	if a != b || !strings.HasPrefix(a, "sha256:") || len(a) != len("sha256:")+64 {
		t.Errorf("equal arguments, different digests: %s %s", a, b)
	}
	// Numbers are kept as written: 2.5 and 2.50 are different arguments
	// to a server that reads them as text.
	for _, other := range []string{`{"a":null,"b":[1,2.5,{"x":"<&>","y":1}]}`, `{"b":[1,2.50,{"y":1,"x":"<&>"}]}`, `{"a":null,"b":[2.50,1,{"y":1,"x":"<&>"}]}`} {
		if d, _ := ArgsDigest(json.RawMessage(other)); d == a {
			t.Errorf("%s has the same digest", other)
		}
	}
	e1, _ := ArgsDigest(nil)
	e2, _ := ArgsDigest(json.RawMessage(" {} "))
	if e1 != e2 {
		t.Errorf("empty arguments: %s != %s", e1, e2)
	}
	if _, err := ArgsDigest(json.RawMessage(`{"a":`)); err == nil {
		t.Error("malformed arguments accepted")
	}
	if _, err := ArgsDigest(json.RawMessage(`{} {}`)); err == nil {
		t.Error("two values accepted")
	}
}

func testApproval(id string, created time.Time) *Approval {
	args := json.RawMessage(`{"deal_id":"D-2001"}`)
	d, _ := ArgsDigest(args)
	return &Approval{ID: id, Tool: "update_deal", Args: args, Digest: d, Principal: "alice", Why: "test",
		State: StatePending, Created: created, Expires: created.Add(time.Hour)}
}

func TestGateDecisions(t *testing.T) {
	ro := &Descriptor{Name: "get", Annotations: Annotations{ReadOnly: true}}
	mut := &Descriptor{Name: "put", Annotations: DefaultAnnotations()}
	harmless := &Descriptor{Name: "note", Annotations: Annotations{Destructive: false}}
	ctx := context.Background()
	g := NewGate(NewMemoryStore(), GateTool("note", func(_ *Descriptor, args json.RawMessage) bool {
		return strings.Contains(string(args), "urgent")
	}))
	for _, tc := range []struct {
		d    *Descriptor
		args string
		want bool
	}{
		{ro, `{}`, false},
		{mut, `{}`, true},
		{harmless, `{"text":"hi"}`, false},
		{harmless, `{"text":"urgent"}`, true},
	} {
		if _, got := g.decide(ctx, &call{desc: tc.d, args: json.RawMessage(tc.args)}); got != tc.want {
			t.Errorf("%s %s: gated = %v", tc.d.Name, tc.args, got)
		}
	}
	if !GateMutations(harmless, nil) || GateMutations(ro, nil) {
		t.Error("GateMutations: not read-only is a mutation, destructive or not")
	}

	// Taint-aware: only after external content, only for mutations, even
	// when a rule says never.
	tg := NewGate(NewMemoryStore(), GateDefault(GateNever), GateTool("put", GateNever), GateAfterTaint())
	run := NewRun("r")
	rctx := WithRun(ctx, run)
	if _, got := tg.decide(rctx, &call{desc: mut}); got {
		t.Error("gated before any content")
	}
	run.Record(Provenance{Tool: "clock", External: false})
	if _, got := tg.decide(rctx, &call{desc: mut}); got {
		t.Error("gated after internal content")
	}
	run.Record(Provenance{Tool: "fetch", External: true})
	if why, got := tg.decide(rctx, &call{desc: mut}); !got || !strings.Contains(why, `external content (from tool "fetch")`) {
		t.Errorf("after external content: %v %q", got, why)
	}
	if _, got := tg.decide(rctx, &call{desc: ro}); got {
		t.Error("read-only call gated by taint")
	}
	if _, got := tg.decide(WithRun(ctx, NewRun("other")), &call{desc: mut}); got {
		t.Error("another run's taint leaked")
	}
}

// WaitDecision returns once a person decides, at the expiry of an
// undecided approval, at once for one decided already, and with the
// context's error when it ends first.
func TestMemoryStoreWaitDecision(t *testing.T) {
	s := NewMemoryStore()
	g := NewGate(s)
	ctx := context.Background()
	now := time.Now()
	mk := func(id string, ttl time.Duration) *Approval {
		a := testApproval(id, now)
		a.Expires = now.Add(ttl)
		if err := s.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := mk(strings.Repeat("1", 32), time.Hour)
	got := make(chan *Approval, 1)
	go func() {
		w, err := s.WaitDecision(ctx, a.ID)
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case w := <-got:
		t.Fatalf("returned before the decision: %+v", w)
	default:
	}
	if err := g.Approve(ctx, a.ID, a.Digest); err != nil {
		t.Fatal(err)
	}
	if w := <-got; w == nil || w.State != StateApproved {
		t.Errorf("after approval: %+v", w)
	}
	if w, err := s.WaitDecision(ctx, a.ID); err != nil || w.State != StateApproved {
		t.Errorf("decided already: %+v, %v", w, err)
	}
	e := mk(strings.Repeat("2", 32), 50*time.Millisecond)
	if w, err := s.WaitDecision(ctx, e.ID); err != nil || w.State != StateExpired {
		t.Errorf("at the expiry: %+v, %v", w, err)
	}
	if st, _ := s.Get(ctx, e.ID); st.State != StatePending {
		t.Errorf("waiting changed the store: %s", st.State)
	}
	p := mk(strings.Repeat("3", 32), time.Hour)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if _, err := s.WaitDecision(cctx, p.ID); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("with an ending context: %v", err)
	}
	if _, err := s.WaitDecision(ctx, strings.Repeat("4", 32)); !errors.Is(err, ErrApprovalNotFound) {
		t.Errorf("a missing approval: %v", err)
	}
}
