//go:build !unix

package mcpgo

import (
	"os/exec"
	"syscall"
)

func ownGroup(*exec.Cmd) {}

// Without process groups only the server process itself is signalled.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	if sig == syscall.SIGKILL {
		_ = cmd.Process.Kill()
		return
	}
	_ = cmd.Process.Signal(sig)
}
