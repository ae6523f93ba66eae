package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/internal/testserver"
)

// The test binary doubles as the hostile server (internal/testserver);
// checked before TestMain.
func init() {
	if os.Getenv(testserver.HostileEnv) != "" {
		os.Exit(testserver.HostileMain(os.Stdin, os.Stdout))
	}
}

const hostileConfig = `version: 1
servers:
  - id: evil
    stdio: {command: "BIN", env: {MCPGEN_HOSTILE: "1"}}
`

// TestElicitDefaultsCall: mcpgen call --elicit-defaults against the hostile
// server sends only the defaults that fit their fields, declines (saying
// why) a form whose required member has none, and answers a url-mode
// request, which it does not declare, with -32602.
func TestElicitDefaultsCall(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, hostileConfig)
	const schema = `{"type":"object","properties":{"name":{"type":"string","default":"Ada"},` +
		`"status":{"type":"string","enum":["active","inactive"],"default":"retired"},"age":{"type":"integer","default":"forty"},` +
		`"count":{"type":"number","maximum":3,"default":7},"ok":{"type":"boolean","default":true}}REQUIRED}`
	for _, proto := range []string{"2026-07-28", "2025-11-25"} {
		code, out, errOut := mcpgen(t, "call", "--config", cfg, "--protocol", proto, "--elicit-defaults", "evil", "ask",
			`{"message":"defaults?","schema":`+strings.Replace(schema, "REQUIRED", "", 1)+`}`)
		if code != 0 || out != `{"action":"accept","content":{"name":"Ada","ok":true}}`+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s", proto, code, out, errOut)
		}
		code, out, errOut = mcpgen(t, "call", "--config", cfg, "--protocol", proto, "--elicit-defaults", "evil", "ask",
			`{"message":"defaults?","schema":`+strings.Replace(schema, "REQUIRED", `,"required":["status","ok"]`, 1)+`}`)
		if code != 0 || !strings.Contains(out, `{"action":"decline"`) ||
			!strings.Contains(errOut, `mcpgen: declined server "evil"'s question (--elicit-defaults): requested schema: required member "status" has no usable default`) {
			t.Errorf("%s, required: exit %d, stdout %q, stderr:\n%s", proto, code, out, errOut)
		}
	}
	code, out, errOut := mcpgen(t, "call", "--config", cfg, "--protocol", "2025-11-25", "--elicit-defaults", "evil", "ask",
		`{"mode":"url","message":"open","url":"https://example.test/"}`)
	if code != 0 || !strings.Contains(out, `"code":-32602`) {
		t.Errorf("url mode: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	code, _, errOut = mcpgen(t, "call", "--config", cfg, "--elicit-defaults", "evil", "ask",
		`{"mode":"url","message":"open","url":"https://example.test/"}`)
	if code != 1 || !strings.Contains(errOut, `server error -32602: elicitation/create: mode "url" is not declared in the client's capabilities`) {
		t.Errorf("url mode, 2026-07-28: exit %d, stderr:\n%s", code, errOut)
	}
}

// controls returns the runes of s a terminal would act on (C0 but newline
// and tab, DEL, C1, bidirectional controls).
func controls(s string) []rune {
	var out []rune
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			out = append(out, r)
		}
	}
	return out
}

// TestListAndCheckShowControls: a server whose tool name and description
// hold control sequences and a newline: list and check print them escaped,
// the name on its one line, and check --json stays valid JSON that decodes
// to the server's name.
func TestListAndCheckShowControls(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, hostileConfig)
	const odd = "odd\x1b[2J\u202ename\nmcpgen: fake"
	if code, _, errOut := mcpgen(t, "snapshot", "--config", cfg); code != 0 {
		t.Fatalf("snapshot: exit %d:\n%s", code, errOut)
	}
	code, out, errOut := mcpgen(t, "list", "--config", cfg)
	if code != 0 || len(controls(out+errOut)) > 0 || !strings.Contains(out, `  odd\u001b[2J\u202ename\u000amcpgen: fake  Odd2JNameMcpgenFake(ctx, `) {
		t.Errorf("list: exit %d, controls %q:\n%s%s", code, controls(out+errOut), out, errOut)
	}
	// The committed manifest lacks the tool: check reports it added.
	path := filepath.Join(dir, "mcp", "evil.json")
	var m map[string]any
	if err := json.Unmarshal(read(t, path), &m); err != nil {
		t.Fatal(err)
	}
	var kept []any
	for _, tool := range m["tools"].([]any) {
		if tool.(map[string]any)["name"] != odd {
			kept = append(kept, tool)
		}
	}
	m["tools"] = kept
	b, _ := json.Marshal(m)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = mcpgen(t, "check", "--config", cfg)
	if code != 0 || len(controls(out+errOut)) > 0 || !strings.Contains(out, "  tool odd\\u001b[2J\\u202ename\\u000amcpgen: fake\n    compatible tool added\n") {
		t.Errorf("check: exit %d, controls %q:\n%s%s", code, controls(out+errOut), out, errOut)
	}
	code, out, _ = mcpgen(t, "check", "--config", cfg, "--json")
	var report struct {
		Servers []struct {
			Changes []struct{ Name string }
		}
	}
	if code != 0 || len(controls(out)) > 0 || json.Unmarshal([]byte(out), &report) != nil || len(report.Servers) != 1 ||
		len(report.Servers[0].Changes) != 1 || report.Servers[0].Changes[0].Name != odd {
		t.Errorf("check --json: exit %d, controls %q:\n%s", code, controls(out), out)
	}
}
