package mcpruntime

import (
	"fmt"
	"testing"
)

func TestReportUnknownOnce(t *testing.T) {
	var got []Unknown
	SetUnknownHook(func(u Unknown) { got = append(got, u) })
	t.Cleanup(func() { SetUnknownHook(nil) })
	a := Unknown{Type: "T", Member: "a"}
	b := Unknown{Type: "T", Value: `"x"`}
	for range 3 {
		ReportUnknown(a)
		ReportUnknown(b)
	}
	if len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("reports: %v, want %v then %v once each", got, a, b)
	}
	// A new hook starts afresh.
	got = nil
	SetUnknownHook(func(u Unknown) { got = append(got, u) })
	ReportUnknown(a)
	if len(got) != 1 {
		t.Fatalf("after a new hook: %v", got)
	}
	// The remembered set is bounded: endless new names stop being reported.
	for i := range 2 * unknownLimit {
		ReportUnknown(Unknown{Type: "T", Member: fmt.Sprint(i)})
	}
	if len(got) != unknownLimit {
		t.Fatalf("%d reports, want the limit %d", len(got), unknownLimit)
	}
	SetUnknownHook(nil)
	ReportUnknown(Unknown{Type: "U"}) // no hook: nothing to call
}
