package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpimpl"
)

func TestCall(t *testing.T) {
	dir := t.TempDir()
	cfg := snapshotTestServer(t, dir)

	code, out, errOut := mcpgen(t, "call", "--config", cfg, "crm", "get_deal", `{"id": "D-1"}`)
	if code != 0 || out != "ok: get_deal\n" || errOut != "" {
		t.Errorf("valid call: exit %d\nstdout: %q\nstderr: %q", code, out, errOut)
	}

	// Arguments are checked against the committed manifest's schema first,
	// every violation listed with its pointer, and nothing is sent.
	code, out, errOut = mcpgen(t, "call", "--config", cfg, "crm", "create_deal", `{"title": "", "amount": -1, "currency": "XYZ"}`)
	if code != 1 || out != "" {
		t.Errorf("invalid call: exit %d, stdout %q", code, out)
	}
	for _, want := range []string{"create_deal arguments (nothing was sent)", "/title: ", "/amount: ", "/currency: "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}

	// A tool error result is printed and exits 1.
	code, out, errOut = mcpgen(t, "call", "--config", cfg, "--no-validate", "crm", "ping", `{"fail": true}`)
	if code != 1 || out != "deal store unavailable\n" || !strings.Contains(errOut, `mcpgen: tool "ping" returned an error`) {
		t.Errorf("tool error: exit %d\nstdout: %q\nstderr: %q", code, out, errOut)
	}

	// An unknown tool is named with what the server has.
	code, _, errOut = mcpgen(t, "call", "--config", cfg, "crm", "nope")
	if code != 1 || !strings.Contains(errOut, `server "crm" has no tool "nope"; it offers create_deal, delete_deal, get_deal, ping, search_contacts`) {
		t.Errorf("unknown tool: exit %d: %s", code, errOut)
	}

	// Ad hoc form: the schema comes from a live listing.
	t.Setenv("MCPGEN_TESTSERVER_MODE", "rich")
	code, out, errOut = mcpgen(t, "call", "--stdio", "'"+os.Args[0]+"'", "get_deal", `{}`)
	if code != 1 || out != "" || !strings.Contains(errOut, "get_deal arguments (nothing was sent)") {
		t.Errorf("ad hoc invalid call: exit %d\nstdout: %q\nstderr: %q", code, out, errOut)
	}
	code, out, _ = mcpgen(t, "call", "--stdio", "'"+os.Args[0]+"'", "search_contacts", `{"query": "ada"}`)
	if code != 0 || out != "ok: search_contacts\n" {
		t.Errorf("ad hoc call: exit %d, stdout %q", code, out)
	}

	for _, args := range [][]string{
		{"call", "--config", cfg, "crm"},
		{"call", "--config", cfg, "crm", "ping", "[1]"},
		{"call", "--config", cfg, "nope", "ping"},
		{"call", "--stdio", "x", "--http", "http://h", "ping"},
		{"call", "--config", filepath.Join(dir, "mcpgen.yaml"), "crm", "ping", "{}", "extra"},
	} {
		if code, _, _ := mcpgen(t, args...); code != 2 {
			t.Errorf("mcpgen %q: exit %d, want 2", args, code)
		}
	}
}

// TestCallArgumentWording: the command words argument errors as the
// generated code does (mcpimpl's decoders and generated validators), so
// the same mistake reads the same here and in a program.
func TestCallArgumentWording(t *testing.T) {
	dir := t.TempDir()
	cfg := snapshotTestServer(t, dir)
	code, _, errOut := mcpgen(t, "call", "--config", cfg, "crm", "create_deal", `{"amount": -1, "currency": "XYZ", "extra": 1}`)
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, _, errOut2 := mcpgen(t, "call", "--config", cfg, "crm", "create_deal", `{"title": 7, "amount": 1, "currency": "EUR"}`)
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errOut2)
	}
	errOut += errOut2

	// What the runtime says for the same mistakes.
	var vs mcpimpl.Violations
	var title string
	mcpimpl.DecodeString(json.RawMessage(`7`), &title, "/title", &vs)
	members := map[string]json.RawMessage{"amount": json.RawMessage(`-1`), "extra": json.RawMessage(`1`)}
	mcpimpl.Required(members, "", &vs, "title")
	mcpimpl.Unknown(members, "", &vs, "title", "amount", "currency")
	var ve *mcpruntime.ValidationError
	if !errors.As(vs.Err("x"), &ve) || len(ve.Violations) != 3 {
		t.Fatalf("runtime violations: %v", vs.Err("x"))
	}
	for _, v := range ve.Violations {
		if want := v.Pointer + ": " + v.Message; !strings.Contains(errOut, want) {
			t.Errorf("the command does not say %q, as the runtime does:\n%s", want, errOut)
		}
	}
	for _, want := range []string{`/currency: must be one of "EUR", "USD", "GBP"`, "/amount: must be at least 0"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q (the generated validators' wording):\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "got ") || strings.Contains(errOut, "want ") {
		t.Errorf("the validator's own wording leaks through:\n%s", errOut)
	}
}

// TestCallGate: call applies the config's gate. Off a terminal (as here) a
// held call is refused unless --approve is given; a read-only tool under
// the annotations policy is not held.
func TestCallGate(t *testing.T) {
	dir := t.TempDir()
	snapshotTestServer(t, dir)
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: crm
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: rich}}
    out: internal/crm
    gate: {default: annotations, tools: {ping: always, create_deal: never}}
`)
	for _, tc := range []struct {
		args []string
		code int
		out  string
		err  string
	}{
		{[]string{"get_deal", `{"id": "D-1"}`}, 0, "ok: get_deal\n", ""},
		{[]string{"delete_deal", `{"id": "D-1"}`}, 1, "",
			`mcpgen: tool "delete_deal" of server "crm" needs approval (gate.default is "annotations" and the tool is not annotated read-only in ` + cfg + `); nothing was sent: give --approve, or run on a terminal to be asked`},
		{[]string{"--approve", "delete_deal", `{"id": "D-1"}`}, 0, "ok: delete_deal\n", ""},
		{[]string{"ping", `{}`}, 1, "", `needs approval (gate.tools.ping is "always" in `},
		{[]string{"--approve", "ping", `{}`}, 0, "ok: ping\n", ""},
		{[]string{"--no-validate", "create_deal", `{}`}, 0, "ok: create_deal\n", ""},
	} {
		code, out, errOut := mcpgen(t, append([]string{"call", "--config", cfg, "crm"}, tc.args...)...)
		if tc.args[0] == "--approve" || tc.args[0] == "--no-validate" {
			code, out, errOut = mcpgen(t, append([]string{"call", "--config", cfg, tc.args[0], "crm"}, tc.args[1:]...)...)
		}
		if code != tc.code || out != tc.out || !strings.Contains(errOut, tc.err) {
			t.Errorf("call %q: exit %d, stdout %q, stderr:\n%s\nwant exit %d, stdout %q, stderr ~ %q", tc.args, code, out, errOut, tc.code, tc.out, tc.err)
		}
	}
}

func TestAskApproval(t *testing.T) {
	for in, approved := range map[string]bool{"y\n": true, "YES\n": true, "n\n": false, "\n": false, "": false, "sure\n": false} {
		var out strings.Builder
		err := askApproval(strings.NewReader(in), &out, "crm", "delete_deal", `gate.default is "annotations"`, json.RawMessage(`{"id":"D-1"}`))
		if (err == nil) != approved || (!approved && !errors.Is(err, errNotApproved)) {
			t.Errorf("answer %q: %v, want approved %v", in, err, approved)
		}
		if want := "Tool \"delete_deal\" of server \"crm\" needs approval (gate.default is \"annotations\" in the config).\n  arguments: {\"id\":\"D-1\"}\nCall it? [y/N] "; out.String() != want {
			t.Errorf("prompt %q, want %q", out.String(), want)
		}
	}
}
