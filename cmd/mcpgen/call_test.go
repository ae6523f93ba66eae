package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
