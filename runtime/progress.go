package mcpruntime

import "context"

// Progress is one progress notification of a call in flight.
type Progress struct {
	// Progress grows with each notification; Total, when the server knows
	// it (0 otherwise), is what Progress reaches at the end.
	Progress, Total float64
	Message         string
}

type progressKey struct{}

// WithProgress asks for progress notifications on the calls made with the
// returned context: the session layer sends a progress token with each and
// calls fn (from its own goroutine, in order) with every notification the
// server sends for it. The mcpgo session layer also delivers one that
// arrives up to 500 ms after the answer (a server may write its last
// notification after the answer), so fn may run just after the call has
// returned; for a task (Tool.Start), until the task is seen to end.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ProgressFrom returns the callback WithProgress put in ctx, or nil. Session
// layers call it.
func ProgressFrom(ctx context.Context) func(Progress) {
	fn, _ := ctx.Value(progressKey{}).(func(Progress))
	return fn
}
