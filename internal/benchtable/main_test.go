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

// The table judges absolute rows against their limit and ratio rows
// against their target, and marks what did not run.
func TestTable(t *testing.T) {
	in := `BenchmarkGenerateCommand/github-x100-2   1   26090549536 ns/op   22.00 files   4.988 max-file-MB   895.9 peak-RSS-MB
BenchmarkLoad/toolset-invoke/stdio-2   1   40401745087 ns/op   404017 ns/call
BenchmarkLoad/raw/stdio-2   1   38232732025 ns/op   382327 ns/call
BenchmarkGenerate/github-corpus-2   3   236655357 ns/op   179.4 lines/tool   2022695 ns/tool
`
	var out strings.Builder
	table(&out, parse(strings.NewReader(in), nil))
	for _, want := range []string{
		"| mcpgen generate process, github ×100 (11,700 tools) | 26.09 s | | | ≤ 3.5 s | no |",
		"| peak RSS, github ×100 | 896 MB | | | ≤ 1 GiB | yes |",
		"| largest generated file, github ×100 | 5.0 MB | | | ≤ 8 MB | yes |",
		"| generated code, github corpus | 179 lines/tool | | | ≤ 100 lines/tool | no |",
		"| Toolset.Invoke vs raw mcp-go, stdio, 50 goroutines × 2,000 calls | 404.0 µs | 382.3 µs | 1.06× | ≤ 1.1× | yes |",
		"| Manager.Caller vs raw mcp-go, streamable HTTP, same load | not run |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}
