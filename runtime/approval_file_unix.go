//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package mcpruntime

import (
	"errors"
	"os"
	"syscall"
)

func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func funlock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
