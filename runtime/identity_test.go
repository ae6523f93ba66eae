package mcpruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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
	got, err := setArgument(json.RawMessage(`{"deal_id":"D-1","caller_token":"tok-evil"}`), "caller_token", "tok-alice", nil)
	if err != nil || string(got) != `{"caller_token":"tok-alice","deal_id":"D-1"}` {
		t.Errorf("set = %s, %v", got, err)
	}
	if got, _ := setArgument(nil, "t", "v", nil); string(got) != `{"t":"v"}` {
		t.Errorf("set on nothing = %s", got)
	}
	if _, err := setArgument(json.RawMessage(`[1]`), "t", "v", nil); err == nil {
		t.Error("array arguments accepted")
	}
	if got := removeArgument(json.RawMessage(`{"a":1,"caller_token":"x"}`), "caller_token", nil); string(got) != `{"a":1}` {
		t.Errorf("remove = %s", got)
	}
	if got := removeArgument(json.RawMessage(` {"a": 1} `), "caller_token", nil); string(got) != ` {"a": 1} ` {
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

func TestBindsToIdentity(t *testing.T) {
	// Every spelling some mainstream decoder binds to access_token.
	for _, k := range []string{
		"access_token", "ACCESS_TOKEN", "Access_Token",
		"acce\u017fs_token", "access_to\u212aen", "ACCE\u017fS_TO\u212aEN", // Go: long s, Kelvin sign
		"accessToken", "AccessToken", "access-token", "ACCESS-TOKEN", "access__token", "_access_token_",
	} {
		if !bindsTo(k, "access_token") {
			t.Errorf("%q does not bind to access_token", k)
		}
	}
	if !bindsTo("\u0131d", "id") || !bindsTo("\u0130D", "id") { // .NET, Java: dotless and dotted i
		t.Error("dotless/dotted i")
	}
	for _, k := range []string{"access_tokens", "access", "token", "accesstoke", "ac\u0441ess_token" /* Cyrillic es */, ""} {
		if bindsTo(k, "access_token") {
			t.Errorf("%q binds to access_token", k)
		}
	}
	got, err := setArgument(json.RawMessage(`{"note":"n","acce\u017fs_token":"evil","Access-Token":"evil","accessToken":"evil","access_token":"evil"}`), "access_token", "real", nil)
	if err != nil || string(got) != `{"access_token":"real","note":"n"}` {
		t.Errorf("set = %s, %v", got, err)
	}
	// A member the schema declares is the server's own parameter.
	got, _ = setArgument(json.RawMessage(`{"accessToken":"kept"}`), "access_token", "real", map[string]bool{"accessToken": true})
	if string(got) != `{"accessToken":"kept","access_token":"real"}` {
		t.Errorf("declared member: %s", got)
	}
	if got := removeArgument(json.RawMessage(`{"a":1,"CALLER_TOKEN":"x","caller_to\u212aen":"y"}`), "caller_token", nil); string(got) != `{"a":1}` {
		t.Errorf("remove = %s", got)
	}
}

// holder is an error holding a token in an unexported field, as transport
// errors holding a request do.
type holder struct{ req string }

func (h *holder) Error() string { return "request failed" }

// deepContains reports whether any string or byte slice reachable from v
// holds s.
func deepContains(v reflect.Value, s string, seen map[uintptr]bool) bool {
	switch v.Kind() {
	case reflect.String:
		return strings.Contains(v.String(), s)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return false
		}
		if v.Kind() == reflect.Pointer {
			if seen[v.Pointer()] {
				return false
			}
			seen[v.Pointer()] = true
		}
		return deepContains(v.Elem(), s, seen)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return strings.Contains(string(v.Bytes()), s)
		}
		for i := range v.Len() {
			if deepContains(v.Index(i), s, seen) {
				return true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if deepContains(v.Field(i), s, seen) {
				return true
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if deepContains(k, s, seen) || deepContains(v.MapIndex(k), s, seen) {
				return true
			}
		}
	}
	return false
}

// A redacted error holds no token anywhere, not only in its text: %#v and
// reflection find nothing.
func TestRedactedErrorHoldsNoToken(t *testing.T) {
	tok := Secret(canary)
	for _, err := range []error{
		fmt.Errorf("call tool %q: %w", "x", fmt.Errorf("server said %s: %w", canary, context.DeadlineExceeded)),
		fmt.Errorf("call tool: %w", &holder{req: `{"caller_token":"` + canary + `"}`}),
		fmt.Errorf("a: %w", errors.Join(&ProtocolError{Code: 1, Message: "m", Data: json.RawMessage(`"` + canary + `"`)}, context.Canceled)),
	} {
		r := redactError(err, tok)
		if deepContains(reflect.ValueOf(&r), canary, map[uintptr]bool{}) {
			t.Errorf("%v: the redacted error still holds the token: %#v", err, r)
		}
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
			if s := fmt.Sprintf(verb, r); strings.Contains(s, canary) {
				t.Errorf("%s prints the token: %s", verb, s)
			}
		}
	}
}

func TestScrubResourceContents(t *testing.T) {
	tok := Secret(canary)
	r := &ResourceResult{URI: "mem://x", Meta: json.RawMessage(`{"k":"` + canary + `"}`), Contents: []ResourceContents{
		{URI: "mem://" + canary, MIMEType: "text/" + canary, Blob: canary, IsBlob: true, Raw: json.RawMessage(`{"blob":"` + canary + `"}`)},
		{URI: "mem://t", MIMEType: canary, Text: canary},
	}}
	scrubContents(r, tok)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		if s := fmt.Sprintf(verb, *r); strings.Contains(s, canary) {
			t.Errorf("%s: %s", verb, s)
		}
	}
	if deepContains(reflect.ValueOf(r), canary, map[uintptr]bool{}) {
		t.Errorf("scrubbed contents still hold the token: %+v", r)
	}
}
