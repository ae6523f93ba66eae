package mcpruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const canary = "canary-7f3a9c1e5b"

func TestSecretDoesNotPrint(t *testing.T) {
	p := Principal{ID: "alice", Token: canary}
	js, _ := json.Marshal(p)
	for _, s := range []string{fmt.Sprint(p), fmt.Sprintf("%+v %#v %s %q %x", p, p, p.Token, p.Token, p.Token), string(js)} {
		if strings.Contains(s, canary) {
			t.Errorf("token printed: %s", s)
		}
	}
	if string(p.Token) != canary {
		t.Error("string conversion must give the token")
	}
}

func TestPrincipalFromContext(t *testing.T) {
	ctx := context.Background()
	if _, err := ContextPrincipal(ctx); !errors.Is(err, ErrNoPrincipal) {
		t.Errorf("no principal: %v", err)
	}
	p, err := ContextPrincipal(WithPrincipal(ctx, "bob", "tok-bob"))
	if err != nil || p.ID != "bob" || p.Token != "tok-bob" {
		t.Errorf("principal = %v, %v", p, err)
	}
	for _, bad := range []Principal{{ID: "x"}, {Token: "t"}} {
		_, err := resolvePrincipal(ctx, func(context.Context) (Principal, error) { return bad, nil }, "tool")
		if !errors.Is(err, ErrNoPrincipal) {
			t.Errorf("%+v accepted: %v", bad, err)
		}
	}
}

func TestSetAndRemoveArgument(t *testing.T) {
	got, err := setArgument(json.RawMessage(`{"deal_id":"D-1","caller_token":"tok-evil"}`), "caller_token", "tok-alice")
	if err != nil || string(got) != `{"caller_token":"tok-alice","deal_id":"D-1"}` {
		t.Errorf("set = %s, %v", got, err)
	}
	if got, _ := setArgument(nil, "t", "v"); string(got) != `{"t":"v"}` {
		t.Errorf("set on nothing = %s", got)
	}
	if _, err := setArgument(json.RawMessage(`[1]`), "t", "v"); err == nil {
		t.Error("array arguments accepted")
	}
	if got := removeArgument(json.RawMessage(`{"a":1,"caller_token":"x"}`), "caller_token"); string(got) != `{"a":1}` {
		t.Errorf("remove = %s", got)
	}
	if got := removeArgument(json.RawMessage(` {"a": 1} `), "caller_token"); string(got) != ` {"a": 1} ` {
		t.Errorf("remove changed arguments without the member: %s", got)
	}
}

func TestRedaction(t *testing.T) {
	tok := Secret(canary)
	pe := &ProtocolError{Code: -32603, Message: "bad token " + canary, Data: json.RawMessage(`{"token":"` + canary + `"}`)}
	err := redactError(fmt.Errorf("call tool %q: %w", "x", errors.Join(pe, fmt.Errorf("wrapped %s: %w", canary, context.DeadlineExceeded))), tok)
	if strings.Contains(err.Error(), canary) {
		t.Errorf("error text leaks: %v", err)
	}
	var got *ProtocolError
	if !errors.As(err, &got) || got.Code != -32603 || strings.Contains(got.Message, canary) || strings.Contains(string(got.Data), canary) {
		t.Errorf("ProtocolError = %+v", got)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Error("sentinels must still match")
	}
	// Walk the whole chain: nothing reachable prints the token.
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if strings.Contains(e.Error(), canary) {
			t.Errorf("reachable error leaks: %T %v", e, e)
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, w := range u.Unwrap() {
				walk(w)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	plain := errors.New("nothing secret")
	if redactError(plain, tok) != plain {
		t.Error("an error without the token must pass unchanged")
	}

	r, perr := ParseResult([]byte(`{"content":[{"type":"text","text":"you are ` + canary + `"},{"type":"resource","resource":{"uri":"mem://` + canary + `","text":"` + canary + `"}}],"structuredContent":{"t":"` + canary + `"},"_meta":{"k":"` + canary + `"}}`))
	if perr != nil {
		t.Fatal(perr)
	}
	scrubResult(r, tok)
	b, _ := encodeResult(r)
	if strings.Contains(string(b), canary) || strings.Contains(r.ModelText(), canary) || strings.Contains(r.Content[1].Resource.Text, canary) {
		t.Errorf("result leaks: %s", b)
	}
	if r.Content[0].Text != "you are [redacted]" {
		t.Errorf("text = %q", r.Content[0].Text)
	}
}

func TestStripProperty(t *testing.T) {
	in := `{"type":"object","properties":{"caller_token":{"type":"string"},"deal_id":{"type":"string"},"note":{"maxLength":5}},"required":["caller_token","deal_id"],"additionalProperties":false}`
	out, found, err := StripProperty(json.RawMessage(in), "caller_token")
	want := `{"type":"object","properties":{"deal_id":{"type":"string"},"note":{"maxLength":5}},"required":["deal_id"],"additionalProperties":false}`
	if err != nil || !found || string(out) != want {
		t.Errorf("strip = %s, %v, %v", out, found, err)
	}
	out, found, err = StripProperty(json.RawMessage(`{"properties":{"z":{},"t":{}},"required":["t"],"title":"<x>"}`), "t")
	if err != nil || !found || string(out) != `{"properties":{"z":{}},"title":"<x>"}` {
		t.Errorf("strip emptying required = %s, %v, %v", out, found, err)
	}
	if _, found, err := StripProperty(json.RawMessage(`{"properties":{"a":{}}}`), "t"); found || err != nil {
		t.Errorf("absent property: %v, %v", found, err)
	}
	for _, bad := range []string{`[]`, `{"properties":[]}`, `{"required":"t"}`, `{"a":1} x`, `{"a":`} {
		if _, _, err := StripProperty(json.RawMessage(bad), "t"); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
