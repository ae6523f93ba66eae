package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// call runs task-backed tools: a tool that runs only as a task is started
// as one, with a status line on stderr as it changes and its result on
// stdout, on both protocol generations; --task starts an optional one; a
// failed task and one past --timeout (cancelled) exit 1 saying so.
func TestCallTask(t *testing.T) {
	bin := "'" + os.Args[0] + "'"
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(proto, func(t *testing.T) {
			base := []string{"call", "--protocol", proto, "--stdio", bin, "--env", "MCPGEN_TESTSERVER_MODE=tasks"}
			code, out, errOut := mcpgen(t, append(base, "slow", `{"text":"hi","ms":600}`)...)
			if code != 0 || out != "slow: hi\n" {
				t.Fatalf("exit %d\nstdout: %q\nstderr: %s", code, out, errOut)
			}
			for _, want := range []string{`of tool "slow": working`, `of tool "slow": completed`} {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			code, _, errOut = mcpgen(t, append(base, "doomed")...)
			if code != 1 || !strings.Contains(errOut, "failed") || !strings.Contains(errOut, "out of fuel") {
				t.Errorf("a failed task: exit %d: %s", code, errOut)
			}
			code, _, errOut = mcpgen(t, append(base, "--timeout", "700ms", "slow", `{"ms":5000}`)...)
			if code != 1 || !strings.Contains(errOut, "did not end in time") || !strings.Contains(errOut, "it was cancelled") {
				t.Errorf("a task past --timeout: exit %d: %s", code, errOut)
			}
			code, out, errOut = mcpgen(t, append(base, "--task", "quick", `{"text":"now"}`)...)
			if code != 0 || out != "quick: now\n" || !strings.Contains(errOut, "at once, not as a task") {
				t.Errorf("--task on a plain tool: exit %d, stdout %q: %s", code, out, errOut)
			}
		})
	}
}

// Ad hoc servers are named after the command or host, not "call"; a
// server without tools says so; a pinned version the server does not
// speak fails naming both, and writes no manifest.
func TestCallAdHocWording(t *testing.T) {
	bin := "'" + os.Args[0] + "'"
	code, _, errOut := mcpgen(t, "call", "--stdio", bin, "--env", "MCPGEN_TESTSERVER_MODE=empty", "nope")
	if code != 1 || !strings.Contains(errOut, "it offers no tools") || strings.Contains(errOut, `server "call"`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if want := `server "` + adHocID(bin, "", "") + `"`; !strings.Contains(errOut, want) {
		t.Errorf("stderr does not name the server %s: %s", want, errOut)
	}
	for _, c := range []struct{ stdio, http, want string }{
		{"'/usr/bin/crm-server' --db x", "", "crm_server"},
		{"", "https://mcp.example.com/mcp", "mcp_example_com"},
		{"", "http://127.0.0.1:8080/mcp", "host_127_0_0_1"},
		{"'/bin/9'", "", "server"},
	} {
		if got := adHocID(c.stdio, c.http, ""); got != c.want {
			t.Errorf("adHocID(%q, %q) = %q, want %q", c.stdio, c.http, got, c.want)
		}
	}

	out := filepath.Join(t.TempDir(), "old.json")
	for _, pin := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		code, _, errOut = mcpgen(t, "snapshot", "--protocol", pin, "--stdio", bin, "--env", "MCPGEN_TESTSERVER_MODE=old", "--id", "old", "-o", out)
		if code != 1 || !strings.Contains(errOut, pin) || !strings.Contains(errOut, "2024-11-05") {
			t.Errorf("snapshot pinned to %s of a 2024-11-05 server: exit %d: %s", pin, code, errOut)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("a manifest was written for pin %s", pin)
		}
	}
}
