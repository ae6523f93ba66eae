package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateList = flag.Bool("update-list", false, "rewrite testdata/list/*.golden")

// golden compares got with testdata/list/<name>.golden.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "list", name+".golden")
	if *updateList {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got); run go test ./cmd/mcpgen -run TestList -update-list\n%s", p, d)
	}
}

func TestListManifest(t *testing.T) {
	code, out, errOut := mcpgen(t, "list", "--manifest", "testdata/list/crm.json")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	golden(t, "manifest", out)
}

// From the config, the identity argument and renames change what the
// bindings look like, and the listing shows them as generate makes them.
func TestListConfig(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/list/crm.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "mcp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcp", "crm.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: crm
    stdio: {command: "BIN"}
    package: crmapi
    identity: {argument: caller_token}
    tools:
      rename: {export_contacts: dump_contacts}
  - id: other
    stdio: {command: "BIN"}
`)
	code, out, errOut := mcpgen(t, "list", "--config", cfg, "crm")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	golden(t, "config", out)

	// Without SERVER, every server is listed; one without a manifest is
	// an error naming it, after the others are printed.
	code, out, errOut = mcpgen(t, "list", "--config", cfg)
	if code != 1 || !strings.Contains(out, "crm (mcp/crm.json, package crmapi): 7 tools") ||
		!strings.Contains(errOut, `mcpgen: server "other": open `) || !strings.Contains(errOut, "run mcpgen snapshot first, or use --live") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

func TestListLive(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: crm
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: rich}}
`)
	code, live, errOut := mcpgen(t, "list", "--config", cfg, "--live")
	if code != 0 || errOut != "" || !strings.HasPrefix(live, "crm (live, package crm): ") {
		t.Fatalf("--live: exit %d\nstdout: %s\nstderr: %s", code, live, errOut)
	}
	// Ad hoc gives the same tools as the config's live listing.
	t.Setenv("MCPGEN_TESTSERVER_MODE", "rich")
	code, adhoc, errOut := mcpgen(t, "list", "--stdio", os.Args[0])
	if code != 0 || errOut != "" {
		t.Fatalf("--stdio: exit %d\nstdout: %s\nstderr: %s", code, adhoc, errOut)
	}
	_, liveTools, _ := strings.Cut(live, "\n")
	_, adhocTools, _ := strings.Cut(adhoc, "\n")
	if liveTools != adhocTools || !strings.Contains(adhoc, "CreateDeal(ctx, CreateDealInput)") {
		t.Errorf("ad hoc listing differs from --live:\n%s\n%s", live, adhoc)
	}
}

func TestListUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"list", "--manifest", "x.json", "--live"}, 2, "no --config, --live or SERVER"},
		{[]string{"list", "--manifest", "x.json", "crm"}, 2, "no --config, --live or SERVER"},
		{[]string{"list", "--manifest", "x.json", "--stdio", "x"}, 2, "--manifest does not combine"},
		{[]string{"list", "--header", "A=b"}, 2, "--header and --env need"},
		{[]string{"list", "--stdio", "x", "--http", "http://h"}, 2, "exclusive"},
		{[]string{"list", "--manifest", "testdata/list/nope.json"}, 1, "nope.json"},
		{[]string{"list", "--config", "/nonexistent/mcpgen.yaml"}, 1, "/nonexistent/mcpgen.yaml"},
	} {
		code, _, errOut := mcpgen(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.err) {
			t.Errorf("mcpgen %q = %d\n%s\nwant %d and %q", tc.args, code, errOut, tc.code, tc.err)
		}
	}
	// A malformed manifest is a positioned error.
	p := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(p, []byte(`{"tools": [{"name": "a", "inputSchema": {"type": "object", "properties": {"x": {"type": 7}}}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := mcpgen(t, "list", "--manifest", p)
	if code != 1 || !strings.Contains(errOut, "bad.json:1:") || !strings.Contains(errOut, "/tools/0/inputSchema/properties/x/type") {
		t.Errorf("malformed manifest: exit %d\n%s", code, errOut)
	}
}

// TestListReadOnlyDefaults: the destructive and idempotent defaults do not
// apply to a read-only tool, so they are not shown as if they did.
func TestListReadOnlyDefaults(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tools.json")
	os.WriteFile(p, []byte(`{"tools":[{"name":"peek","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},`+
		`{"name":"poke","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":true}}]}`), 0o644)
	code, out, errOut := mcpgen(t, "list", "--manifest", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"read-only: yes  destructive: n/a  idempotent: n/a  open-world: yes*\n",
		"read-only: yes  destructive: yes  idempotent: n/a  open-world: yes*\n", // what the server sent is shown
		"\nn/a: not sent, and meaningful only for a tool that is not read-only\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "destructive: yes*") {
		t.Errorf("a read-only tool shows the destructive default:\n%s", out)
	}
}
