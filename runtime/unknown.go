package mcpruntime

import (
	"sync"
	"sync/atomic"
)

// Unknown is something a server sent that the generated bindings do not
// know: a member of an output object the schema does not declare, or an
// output enum value it does not list. A newer, compatible release of a
// server sends such things; decoding keeps them (in the struct's
// AdditionalProperties, or in the enum-typed field, whose Valid reports
// false) and never fails because of them.
type Unknown struct {
	// Type is the generated Go type that received it, e.g. "GetDealOutput".
	Type string
	// Member is the undeclared member's name; "" for an enum value.
	Member string
	// Value is the JSON text of the enum value; "" for a member.
	Value string
}

// unknownLimit bounds the set of reports remembered: a server that sends
// endless new names cannot grow it without limit; past the limit new
// names are no longer reported.
const unknownLimit = 1024

var unknownHook struct {
	f    atomic.Pointer[func(Unknown)]
	mu   sync.Mutex
	seen map[Unknown]bool
}

// SetUnknownHook installs f to be told about everything the bindings
// received and do not know, once per process for each distinct Unknown,
// e.g. to log that the bindings are due for regeneration. nil removes the
// hook. Setting a hook forgets what was already reported. f is called
// from the goroutine decoding the result and must not block.
func SetUnknownHook(f func(Unknown)) {
	unknownHook.mu.Lock()
	defer unknownHook.mu.Unlock()
	unknownHook.seen = nil
	if f == nil {
		unknownHook.f.Store(nil)
		return
	}
	unknownHook.f.Store(&f)
}

// ReportUnknown is called by generated decoders (through package mcpimpl)
// for each unknown member or enum value; it calls the hook the first time
// it sees u. Without a hook it costs one atomic load.
func ReportUnknown(u Unknown) {
	f := unknownHook.f.Load()
	if f == nil {
		return
	}
	unknownHook.mu.Lock()
	if unknownHook.seen[u] || len(unknownHook.seen) >= unknownLimit {
		unknownHook.mu.Unlock()
		return
	}
	if unknownHook.seen == nil {
		unknownHook.seen = map[Unknown]bool{}
	}
	unknownHook.seen[u] = true
	unknownHook.mu.Unlock()
	(*f)(u)
}
