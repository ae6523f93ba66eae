//go:build !unix

package gen

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
