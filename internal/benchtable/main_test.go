package main

import (
	"strings"
	"testing"
)

func TestParseMedian(t *testing.T) {
	in := `goos: linux
BenchmarkCall/typed/inprocess-2   	    2000	    460066 ns/op	   86235 B/op	    1216 allocs/op
BenchmarkCall/typed/inprocess-2   	    2000	    400000 ns/op	   86235 B/op	    1216 allocs/op
BenchmarkCall/typed/inprocess-2   	    2000	    500000 ns/op	   86235 B/op	    1216 allocs/op
BenchmarkGenerate/synthetic-1000-2	       1	8568743043 ns/op	   8568743 ns/tool	       905.2 peak-heap-MB
PASS
`
	s := parse(strings.NewReader(in), nil)
	if m, ok := s.median("BenchmarkCall/typed/inprocess", "ns/op"); !ok || m != 460066 {
		t.Errorf("median = %v, %v", m, ok)
	}
	if m, ok := s.median("BenchmarkGenerate/synthetic-1000", "peak-heap-MB"); !ok || m != 905.2 {
		t.Errorf("custom metric = %v, %v", m, ok)
	}
	if _, ok := s.median("BenchmarkNope", "ns/op"); ok {
		t.Error("missing benchmark reported")
	}
}
