package mcpruntime

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
)

// argsCaller records the arguments each call reached it with.
type argsCaller struct {
	mu   sync.Mutex
	args []string
}

func (c *argsCaller) CallTool(_ context.Context, _ string, args json.RawMessage) (*Result, error) {
	c.mu.Lock()
	c.args = append(c.args, string(args))
	c.mu.Unlock()
	return ParseResult([]byte(`{"content":[{"type":"text","text":"sent"}]}`))
}

// sendInput is a generated Input for an open schema: members the schema
// does not declare are kept and encoded after the declared ones.
type sendInput struct {
	To                   string                     `json:"to"`
	AdditionalProperties map[string]json.RawMessage `json:"-"`
}

func (*sendInput) Validate() error { return nil }

func (v sendInput) MarshalJSON() ([]byte, error) {
	m := maps.Clone(v.AdditionalProperties)
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m["to"], _ = json.Marshal(v.To)
	return json.Marshal(m)
}

// On the Go Call path, as on Invoke, members a server would bind to the
// identity argument are dropped before the gate: the approval a person is
// shown (and the store) never holds them, and the call sends only the
// run's own token.
func TestCallDropsIdentityAliasesBeforeTheGate(t *testing.T) {
	srv := &argsCaller{}
	store := NewMemoryStore()
	g := NewGate(store)
	d := &Descriptor{Name: "send", Annotations: DefaultAnnotations(), InputSchema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"}}}`)}
	tool := NewTool[sendInput, NoOutput](d, srv, WithIdentity(ContextPrincipal), WithIdentityArgument("token"), WithGate(g))
	ctx := WithPrincipal(context.Background(), "alice", "tok-alice-0123456789")
	in := sendInput{To: "bob", AdditionalProperties: map[string]json.RawMessage{
		"TOKEN":       json.RawMessage(`"tok-alice-0123456789"`), // the run's token, put there by Go code
		"to\u212aen":  json.RawMessage(`"tok-evil"`),             // Kelvin sign: folds to "token"
		"Token":       json.RawMessage(`"tok-evil"`),
		"token":       json.RawMessage(`"tok-evil"`),
		"cc":          json.RawMessage(`"carol"`), // undeclared, but no alias: kept
		"access_note": json.RawMessage(`"n"`),
	}}
	_, err := tool.Call(ctx, in)
	var are *ApprovalRequiredError
	if !errors.As(err, &are) {
		t.Fatalf("Call = %v, want an approval", err)
	}
	want := `{"access_note":"n","cc":"carol","to":"bob"}`
	if got := string(are.Approval.Args); got != want {
		t.Errorf("approval args = %s, want %s", got, want)
	}
	all, err := store.List(ctx)
	if err != nil || len(all) != 1 {
		t.Fatal(all, err)
	}
	b, _ := json.Marshal(all)
	if strings.Contains(string(b), "tok-") || strings.Contains(strings.ToLower(string(b)), "token") {
		t.Errorf("the store holds an identity member: %s", b)
	}
	if err := g.Approve(ctx, are.Approval.ID, are.Approval.Digest); err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Resume(ctx, are.Approval.ID); err != nil {
		t.Fatal(err)
	}
	if len(srv.args) != 1 || srv.args[0] != `{"access_note":"n","cc":"carol","to":"bob","token":"tok-alice-0123456789"}` {
		t.Errorf("the server got %q", srv.args)
	}
}
