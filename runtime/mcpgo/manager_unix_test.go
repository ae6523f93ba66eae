//go:build unix

package mcpgo_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpgen/mcpgen/runtime/manager"
)

func TestManagerRestartBetweenCalls(t *testing.T) {
	e := newEnv(t)
	e.stdio("fix", "serve", nil)
	m := e.manager()
	ts, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "fix", Tools: []string{"count"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := invoke(t, ts, "count", `{}`); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, e.file("fix.pids"))))
	if err != nil {
		t.Fatal(err)
	}
	// Killed between calls (an OOM kill, a deploy).
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot kill the server: %v", err)
		}
		t.Skipf("cannot kill the server: %v", err)
	}
	waitFor(t, "the killed server to be reaped", func() bool { return syscall.Kill(pid, 0) != nil })
	// Not idempotent, yet safe to send to a new process: the dead one never
	// got it.
	if r, err := invoke(t, ts, "count", `{}`); err != nil || r.Text != "counted" {
		t.Fatalf("call after the restart: %+v, %v", r, err)
	}
	if n := countLines(t, e.file("fix.count")); n != 2 {
		t.Errorf("count ran %d times, want 2", n)
	}
	// Reconnect starts yet another process on request.
	if err := m.Reconnect(context.Background(), "fix"); err != nil {
		t.Fatal(err)
	}
	if n := countLines(t, e.file("fix.pids")); n != 3 {
		t.Errorf("%d processes after Reconnect, want 3", n)
	}
}

func TestManagerKillsWhatTheServerStarted(t *testing.T) {
	e := newEnv(t)
	e.stdio("fix", "spawner", nil, "FIX_CHILD", e.file("child"))
	m := e.manager()
	if _, err := m.Toolset(context.Background(), "agent", []manager.ToolSource{{Server: "fix", Tools: []string{"echo"}}}); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, e.file("child"))))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the helper is not running: %v", err)
	}
	if err := m.CloseAll(); err != nil {
		t.Fatal(err)
	}
	// The helper ignores the end of its input; only the group kill ends it.
	// It is not this process's child, so it disappears once its parent's
	// exit hands it to init, which reaps it.
	waitFor(t, "the server's helper process to be killed with its group", func() bool { return syscall.Kill(pid, 0) != nil })
}
