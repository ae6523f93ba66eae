//go:build unix

package gen

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used (user and system, every
// thread). Unlike wall time it hardly moves when other work shares the
// machine, so the benchmark reports it beside ns/tool.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
