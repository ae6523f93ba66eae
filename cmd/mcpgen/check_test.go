package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckDrift snapshots the test server, then points the config at its
// "next release" and checks that mcpgen check sees each change with the
// right class, in text and JSON, with the documented exit codes.
func TestCheckDrift(t *testing.T) {
	dir := t.TempDir()
	cfgBody := `version: 1
servers:
  - id: crm
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: "@MODE@"}}
`
	cfg := writeConfig(t, dir, strings.ReplaceAll(cfgBody, "@MODE@", "rich"))
	if code, _, errOut := mcpgen(t, "snapshot", "--config", cfg, "--quiet"); code != 0 {
		t.Fatalf("snapshot: exit %d:\n%s", code, errOut)
	}

	code, out, errOut := mcpgen(t, "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "crm: no drift from ") || errOut != "" {
		t.Fatalf("unchanged server: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// No drift is an empty list in JSON, not null.
	code, out, _ = mcpgen(t, "check", "--config", cfg, "--json")
	if code != 0 || !strings.Contains(out, `"changes": []`) || strings.Contains(out, "null") {
		t.Errorf("--json without drift: exit %d:\n%s", code, out)
	}

	writeConfig(t, dir, strings.ReplaceAll(cfgBody, "@MODE@", "drifted"))
	code, out, errOut = mcpgen(t, "check", "--config", cfg)
	if code != 1 {
		t.Fatalf("drifted server: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	manifestPath := relSlash(filepath.Join(dir, "mcp", "crm.json"))
	want := `crm: 10 changes from ` + manifestPath + ` (5 breaking, 5 compatible)
  tool archive_deal
    compatible tool added
  tool create_deal
    compatible /inputSchema/properties/currency/enum: enum value "JPY" added
  tool delete_deal
    breaking   tool removed
  tool get_deal
    breaking   /inputSchema/properties/tenant: required argument "tenant" added
    breaking   /outputSchema/properties/history: output member "history" removed
    breaking   Go identifier GetDealOutputHistoryItem of tool "get_deal" would be removed
    compatible /description: description changed
    compatible /outputSchema/properties/owner: output member "owner" added
  tool ping
    compatible /description: description changed
  tool search_contacts
    breaking   /annotations/readOnlyHint: read-only tool became a mutation (readOnlyHint true → false)
`
	if out != want {
		t.Errorf("report:\n%s\nwant:\n%s", out, want)
	}

	// --json carries the same changes for machines.
	code, out, _ = mcpgen(t, "check", "--config", cfg, "--json")
	var rep struct {
		Max     string
		Servers []struct {
			ID      string
			Max     string
			Changes []struct{ Class, Kind, Name, Pointer, Message string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 {
		t.Fatalf("--json: exit %d, %v:\n%s", code, err, out)
	}
	if rep.Max != "breaking" || len(rep.Servers) != 1 || len(rep.Servers[0].Changes) != 10 || rep.Servers[0].Changes[0].Class != "compatible" || rep.Servers[0].Changes[0].Name != "archive_deal" {
		t.Errorf("--json report: %+v", rep)
	}

	// --update accepts the drift: the manifest is rewritten and a second
	// check is clean.
	code, out, _ = mcpgen(t, "check", "--config", cfg, "--update")
	if code != 0 || !strings.Contains(out, "updated "+manifestPath+"; run mcpgen generate") {
		t.Fatalf("--update: exit %d:\n%s", code, out)
	}
	code, out, _ = mcpgen(t, "check", "--config", cfg, "--fail-on", "any")
	if code != 0 || !strings.Contains(out, "no drift") {
		t.Errorf("after --update: exit %d:\n%s", code, out)
	}
}

// TestCheckRemovedIdentifiers: a change the schema rules call compatible
// but which would remove an exported Go identifier of the generated
// package (here variants the committed manifest titled, which the server
// no longer does: their constructors and methods are renamed) is
// breaking, and says which identifier; adding a tool that shares shapes
// with the others (what renamed the reference memory server's types)
// removes none and stays compatible.
func TestCheckRemovedIdentifiers(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: crm
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: rich}}
`)
	if code, _, errOut := mcpgen(t, "snapshot", "--config", cfg, "--quiet"); code != 0 {
		t.Fatalf("snapshot: exit %d:\n%s", code, errOut)
	}
	mpath := filepath.Join(dir, "mcp", "crm.json")
	orig, err := os.ReadFile(mpath)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(orig, &m); err != nil {
		t.Fatal(err)
	}
	for _, tool := range m["tools"].([]any) {
		if tool := tool.(map[string]any); tool["name"] == "create_deal" {
			owner := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)["owner"].(map[string]any)
			owner["oneOf"].([]any)[0].(map[string]any)["title"] = "Person"
		}
	}
	titled, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(mpath, titled, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := mcpgen(t, "check", "--config", cfg)
	for _, want := range []string{
		`breaking   Go identifier CreateDealInputOwner.AsPerson of tool "create_deal" would be removed`,
		`breaking   Go identifier CreateDealInputOwnerOfPerson of tool "create_deal" would be removed`,
		`breaking   Go identifier CreateDealInputOwnerPerson of tool "create_deal" would be removed`,
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("exit %d, want 1 and %q in:\n%s%s", code, want, out, errOut)
		}
	}
	if strings.Contains(out, "CreateDealInputOwnerPerson.") {
		t.Errorf("the methods of a removed type are listed:\n%s", out)
	}

	// The committed manifest without a tool the server has: a tool added,
	// no identifier removed, compatible.
	m = nil
	if err := json.Unmarshal(orig, &m); err != nil {
		t.Fatal(err)
	}
	tools := m["tools"].([]any)
	m["tools"] = tools[1:]
	less, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(mpath, less, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = mcpgen(t, "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "(0 breaking, 1 compatible)") || strings.Contains(out, "Go identifier") {
		t.Errorf("a tool added: exit %d:\n%s%s", code, out, errOut)
	}
}

// TestCheckFailOn: a server whose only change is compatible exits 0 by
// default and 1 with --fail-on any.
func TestCheckFailOn(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: crm
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: rich}}
`)
	if code, _, errOut := mcpgen(t, "snapshot", "--config", cfg, "--quiet"); code != 0 {
		t.Fatalf("snapshot: exit %d:\n%s", code, errOut)
	}
	// Make the committed manifest lack a tool the server has: that tool
	// shows up as added, a compatible change.
	p := filepath.Join(dir, "mcp", "crm.json")
	var m map[string]any
	if err := json.Unmarshal(read(t, p), &m); err != nil {
		t.Fatal(err)
	}
	tools := m["tools"].([]any)
	var kept []any
	for _, tl := range tools {
		if tl.(map[string]any)["name"] != "ping" {
			kept = append(kept, tl)
		}
	}
	m["tools"] = kept
	b, _ := json.Marshal(m)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := mcpgen(t, "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "compatible tool added") {
		t.Errorf("default --fail-on: exit %d:\n%s", code, out)
	}
	code, _, _ = mcpgen(t, "check", "--config", cfg, "--fail-on", "any")
	if code != 1 {
		t.Errorf("--fail-on any: exit %d, want 1", code)
	}
}

func TestCheckErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: fresh
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: rich}}
  - id: dead
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: exit}}
`)
	if _, err := writeFile(filepath.Join(dir, "mcp", "dead.json"), []byte(`{"mcpgenManifest":1,"tools":[]}`)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := mcpgen(t, "check", "--config", cfg)
	if code != 2 {
		t.Errorf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{`fresh: error: server "fresh": no committed manifest to compare with (run mcpgen snapshot first)`, `dead: error: connect to server "dead": the server process exited`} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	for _, args := range [][]string{
		{"check", "--config", cfg, "--fail-on", "compatible"},
		{"check", "--config", cfg, "--server", "nope"},
		{"check", "--config", filepath.Join(dir, "missing.yaml")},
		{"check", "stray"},
	} {
		if code, _, _ := mcpgen(t, args...); code != 2 {
			t.Errorf("mcpgen %q: exit %d, want 2", args, code)
		}
	}
}
