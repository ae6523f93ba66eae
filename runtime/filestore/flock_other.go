//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package filestore

import (
	"errors"
	"os"
)

// Without flock the store cannot keep two processes from both winning a
// resume, so it refuses to open rather than offer a weaker guarantee.
func flock(*os.File) error {
	return errors.New("the file approval store needs flock, which this system lacks; use another ApprovalStore")
}

func funlock(*os.File) {}

func tryFlock(*os.File) (bool, error) { return false, flock(nil) }
