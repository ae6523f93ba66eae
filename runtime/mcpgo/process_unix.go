//go:build unix

package mcpgo

import (
	"os/exec"
	"syscall"
)

// A stdio server runs in a process group of its own, so that ending it
// also ends what it started (npx starts node, uvx starts python).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}
