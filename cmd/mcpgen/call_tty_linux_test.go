package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY returns a pseudo-terminal's controlling side and its terminal.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

func TestIsTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Error("/dev/null counts as a terminal")
	}
	_, tty := openPTY(t)
	if !isTerminal(tty) {
		t.Error("a pseudo-terminal does not count as a terminal")
	}
}

// TestCallGateTerminal: on a terminal, a held call is asked about; yes
// calls it, no sends nothing.
func TestCallGateTerminal(t *testing.T) {
	dir := t.TempDir()
	snapshotTestServer(t, dir)
	cfg := writeConfig(t, dir, `version: 1
servers:
  - id: crm
    stdio: {command: "BIN", env: {MCPGEN_TESTSERVER_MODE: rich}}
    out: internal/crm
    gate: {default: annotations}
`)
	for answer, want := range map[string]string{"y": "ok: delete_deal\n", "n": ""} {
		master, tty := openPTY(t)
		stdin := os.Stdin
		os.Stdin = tty
		// The terminal's line discipline holds the answer until it is read.
		if _, err := master.Write([]byte(answer + "\n")); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := mcpgen(t, "call", "--config", cfg, "crm", "delete_deal", `{"id": "D-1"}`)
		os.Stdin = stdin
		if !strings.Contains(errOut, `Tool "delete_deal" of server "crm" needs approval (gate.default is "annotations" and the tool is not annotated read-only in the config).`) {
			t.Errorf("answer %s: no question asked:\n%s", answer, errOut)
		}
		if out != want || (answer == "y") != (code == 0) {
			t.Errorf("answer %s: exit %d, stdout %q, stderr:\n%s", answer, code, out, errOut)
		}
		if answer == "n" && !strings.Contains(errOut, "mcpgen: not approved: nothing was sent") {
			t.Errorf("answer n: %s", errOut)
		}
	}
}
