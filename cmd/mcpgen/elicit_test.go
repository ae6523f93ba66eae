package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

const form = `{"type":"object","properties":{
	"name":{"type":"string","title":"Name","default":"John Doe"},
	"age":{"type":"integer","description":"in years"},
	"status":{"type":"string","enum":["active","inactive"]},
	"verified":{"type":"boolean","default":true}},"required":["age"]}`

// A person answers field by field: Enter takes a default, a bad value is
// asked again, a required field without a default must be given.
func TestTerminalElicitation(t *testing.T) {
	in := strings.NewReader("\n\nforty\n42\nretired\ninactive\nno\n\n")
	var out strings.Builder
	h := terminalElicitation(in, &out, "crm")
	res, err := h(context.Background(), mcpgo.ElicitationRequest{Mode: "form", Message: "Who are you?", Schema: json.RawMessage(form)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != mcpgo.ElicitAccept {
		t.Fatalf("action %q\n%s", res.Action, out.String())
	}
	want := map[string]any{"age": int64(42), "status": "inactive", "verified": false}
	for k, v := range want {
		if res.Content[k] != v {
			t.Errorf("%s = %#v, want %#v\n%s", k, res.Content[k], v, out.String())
		}
	}
	if _, ok := res.Content["name"]; ok {
		t.Errorf("name was answered with Enter: the default is the session layer's to fill, got %v", res.Content["name"])
	}
	for _, s := range []string{"Server \"crm\" asks:\n  > Who are you?\n", "Name (string) [John Doe]: ", "    required", "    want an integer", "want one of active, inactive", "Send this answer? [Y/n]"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("prompt lacks %q:\n%s", s, out.String())
		}
	}
}

func TestTerminalElicitationDeclineAndCancel(t *testing.T) {
	h := terminalElicitation(strings.NewReader("\n1\n\n\nn\n"), &strings.Builder{}, "crm")
	res, err := h(context.Background(), mcpgo.ElicitationRequest{Mode: "form", Schema: json.RawMessage(form)})
	if err != nil || res.Action != mcpgo.ElicitDecline {
		t.Errorf("declined form: %+v, %v", res, err)
	}
	h = terminalElicitation(strings.NewReader(""), &strings.Builder{}, "crm")
	res, err = h(context.Background(), mcpgo.ElicitationRequest{Mode: "form", Schema: json.RawMessage(form)})
	if err != nil || res.Action != mcpgo.ElicitCancel {
		t.Errorf("end of input: %+v, %v", res, err)
	}
	h = terminalElicitation(strings.NewReader("y\n"), &strings.Builder{}, "crm")
	res, err = h(context.Background(), mcpgo.ElicitationRequest{Mode: "url", URL: "https://example.test/consent"})
	if err != nil || res.Action != mcpgo.ElicitAccept {
		t.Errorf("url mode: %+v, %v", res, err)
	}
}
