// Package par runs independent pieces of the generator's work on every
// core. Results go to slots the caller indexes, so the output never depends
// on which piece finished first.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Do calls fn(i) for every i in [0, n), on up to GOMAXPROCS goroutines, and
// returns when all calls have. A panic in fn is raised again in the caller
// (the first one, if several), where the generator's recover turns it into
// an error; on another goroutine it would end the process.
func Do(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var failed atomic.Bool
	var once sync.Once
	var panicked any
	work := func() {
		defer func() {
			if r := recover(); r != nil {
				once.Do(func() { panicked = r })
				failed.Store(true)
			}
		}()
		for !failed.Load() {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			fn(i)
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if failed.Load() {
		panic(panicked)
	}
}
