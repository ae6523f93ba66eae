//go:build unix

package snapshot

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the server in its own process group, so that
// wrappers like `go run` or `npx` are cleaned up along with what they start.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func signalGroup(cmd *exec.Cmd, kill bool) {
	if cmd.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
