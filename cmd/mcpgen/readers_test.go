package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerateResourceReaders: one line of config makes a template a tool;
// a reader named like one of the server's tools is an error at its place
// in the config.
func TestGenerateResourceReaders(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: crm
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: rich}}
    resources:
      bind:
        "mem://deals/{id}": {tool: true}
`)
	if code, _, errOut := mcpgen(t, "snapshot", "--config", cfg, "--quiet"); code != 0 {
		t.Fatalf("snapshot: exit %d:\n%s", code, errOut)
	}
	if code, _, errOut := mcpgen(t, "generate", "--config", cfg); code != 0 {
		t.Fatalf("generate: exit %d:\n%s", code, errOut)
	}
	src := string(read(t, filepath.Join(dir, "crm", "crm.mcp.go")))
	for _, want := range []string{"func NewDealReader(", `Name:        "read_deal"`, "func Readers("} {
		if !strings.Contains(src, want) {
			t.Errorf("generated code lacks %q", want)
		}
	}

	writeConfig(t, dir, `version: 1
servers:
  - id: crm
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: rich}}
    resources:
      bind:
        "mem://deals/{id}": {toolName: get_deal}
`)
	code, _, errOut := mcpgen(t, "generate", "--config", cfg)
	if want := cfg + `:7:9: resources.bind["mem://deals/{id}"].toolName: tool name "get_deal" is already a tool of the server`; code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d: %s\nwant %s", code, errOut, want)
	}
}
