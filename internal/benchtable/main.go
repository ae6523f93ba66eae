// Command benchtable reads `go test -bench` output on stdin and prints
// mcpgen's benchmark table: each measure next to its baseline from the same
// run, the ratio, and the target. With -count > 1 it uses medians. Rows
// whose benchmarks did not run are marked as such.
//
//	go test -run '^$' -bench . -benchmem -count 5 ./... | go run ./internal/benchtable
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// samples maps benchmark name (without the -GOMAXPROCS suffix) to unit to
// the values seen.
type samples map[string]map[string][]float64

var line = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

func parse(r io.Reader, echo io.Writer) samples {
	s := samples{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if echo != nil {
			fmt.Fprintln(echo, sc.Text())
		}
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			if s[m[1]] == nil {
				s[m[1]] = map[string][]float64{}
			}
			s[m[1]][f[i+1]] = append(s[m[1]][f[i+1]], v)
		}
	}
	return s
}

func (s samples) median(name, unit string) (float64, bool) {
	vs := s[name][unit]
	if len(vs) == 0 {
		return 0, false
	}
	vs = slices.Clone(vs)
	slices.Sort(vs)
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2, true
	}
	return vs[len(vs)/2], true
}

// row is one line of the table: a measure over a baseline, or an absolute
// measure against a limit.
type row struct {
	what      string
	measure   string // benchmark name
	baseline  string // "" for absolute rows
	unit      string
	target    string
	targetMax float64 // ratio must be <= this (0: no ratio target)
	targetMin float64 // ratio must be >= this (baseline/measure), for speedups
	limit     float64 // absolute rows: the value must be <= this (0: none)
}

var rows = []row{
	{what: "generate, github corpus (117 tools)", measure: "BenchmarkGenerate/github-corpus", unit: "ns/tool", target: "≤ 0.3 ms/tool", limit: 0.3e6},
	{what: "generate, github corpus, CPU of all threads", measure: "BenchmarkGenerate/github-corpus", unit: "cpu-ns/tool"},
	{what: "generate, 1,000 synthetic tools", measure: "BenchmarkGenerate/synthetic-1000", unit: "ns/tool", target: "≤ 0.3 ms/tool", limit: 0.3e6},
	{what: "generate, 10,000 synthetic tools", measure: "BenchmarkGenerate/synthetic-10000", unit: "ns/tool", target: "≤ 0.3 ms/tool", limit: 0.3e6},
	{what: "generate, 10,000 vs 1,000 tools (per tool)", measure: "BenchmarkGenerate/synthetic-10000", baseline: "BenchmarkGenerate/synthetic-1000", unit: "ns/tool", target: "≈ 1.0 (linear)", targetMax: 1.2},
	{what: "peak heap, 10,000 synthetic tools", measure: "BenchmarkGenerate/synthetic-10000", unit: "peak-heap-MB", target: "≤ 1 GiB", limit: 1024},
	{what: "generated code, github corpus", measure: "BenchmarkGenerate/github-corpus", unit: "lines/tool", target: "≤ 100 lines/tool", limit: 100},
	{what: "mcpgen generate process, github corpus", measure: "BenchmarkGenerateCommand/github", unit: "ns/op"},
	{what: "mcpgen generate process, github ×100 (11,700 tools)", measure: "BenchmarkGenerateCommand/github-x100", unit: "ns/op", target: "≤ 3.5 s", limit: 3.5e9},
	{what: "peak RSS, github ×100", measure: "BenchmarkGenerateCommand/github-x100", unit: "peak-RSS-MB", target: "≤ 1 GiB", limit: 1024},
	{what: "largest generated file, github ×100", measure: "BenchmarkGenerateCommand/github-x100", unit: "max-file-MB", target: "≤ 8 MB", limit: 8},
	{what: "go build of the generated github package after a change", measure: "BenchmarkCompileGenerated", unit: "ns/op", target: "≤ 2 s", limit: 2e9},
	{what: "compiled generated github package (archive)", measure: "BenchmarkCompileGenerated", unit: "archive-MB"},
	{what: "typed call vs raw mcp-go, in-process", measure: "BenchmarkCall/typed/inprocess", baseline: "BenchmarkCall/raw/inprocess", unit: "ns/op", target: "≤ 1.05×", targetMax: 1.05},
	{what: "typed call vs raw mcp-go, stdio", measure: "BenchmarkCall/typed/stdio", baseline: "BenchmarkCall/raw/stdio", unit: "ns/op", target: "≤ 1.05×", targetMax: 1.05},
	{what: "typed call vs raw mcp-go, in-process, allocations", measure: "BenchmarkCall/typed/inprocess", baseline: "BenchmarkCall/raw/inprocess", unit: "allocs/op"},
	{what: "typed call vs raw mcp-go after tools/list, in-process", measure: "BenchmarkCall/typed/inprocess", baseline: "BenchmarkCall/raw-listed/inprocess", unit: "ns/op"},
	{what: "typed call vs raw mcp-go after tools/list, stdio", measure: "BenchmarkCall/typed/stdio", baseline: "BenchmarkCall/raw-listed/stdio", unit: "ns/op"},
	{what: "Toolset.Invoke vs raw mcp-go, stdio, 50 goroutines × 2,000 calls", measure: "BenchmarkLoad/toolset-invoke/stdio", baseline: "BenchmarkLoad/raw/stdio", unit: "ns/call", target: "≤ 1.1×", targetMax: 1.1},
	{what: "Manager.Caller vs raw mcp-go, streamable HTTP, same load", measure: "BenchmarkLoad/manager-caller/http", baseline: "BenchmarkLoad/raw/http", unit: "ns/call", target: "≤ 1.1×", targetMax: 1.1},
	{what: "rehydrate 1 KiB: generated vs map[string]any", measure: "BenchmarkRehydrate/generated-decode+validate", baseline: "BenchmarkRehydrate/json-map", unit: "ns/op", target: "≤ 0.35×", targetMax: 0.35},
	{what: "rehydrate 1 KiB, allocations: generated vs map[string]any", measure: "BenchmarkRehydrate/generated-decode+validate", baseline: "BenchmarkRehydrate/json-map", unit: "allocs/op"},
	{what: "rehydrate 1 KiB: generated vs plain struct", measure: "BenchmarkRehydrate/generated-decode+validate", baseline: "BenchmarkRehydrate/json-struct", unit: "ns/op"},
	{what: "validate (valid): jsonschema vs generated", measure: "BenchmarkValidate/generated/valid", baseline: "BenchmarkValidate/jsonschema/valid", unit: "ns/op", target: "≥ 20× faster", targetMin: 20},
	{what: "validate (invalid): jsonschema vs generated", measure: "BenchmarkValidate/generated/invalid", baseline: "BenchmarkValidate/jsonschema/invalid", unit: "ns/op", target: "≥ 20× faster", targetMin: 20},
	{what: "snapshot server-everything vs bare listing", measure: "BenchmarkSnapshotEverything/capture", baseline: "BenchmarkSnapshotEverything/bare-list", unit: "ns/op", target: "≤ 1.1×", targetMax: 1.1},
}

func human(v float64, unit string) string {
	switch unit {
	case "ns/op", "ns/tool", "ns/call", "cpu-ns/tool":
		switch {
		case v >= 1e9:
			return fmt.Sprintf("%.2f s", v/1e9)
		case v >= 1e6:
			return fmt.Sprintf("%.2f ms", v/1e6)
		case v >= 1e3:
			return fmt.Sprintf("%.1f µs", v/1e3)
		}
		return fmt.Sprintf("%.0f ns", v)
	case "peak-heap-MB", "peak-RSS-MB":
		return fmt.Sprintf("%.0f MB", v)
	case "max-file-MB":
		return fmt.Sprintf("%.1f MB", v)
	case "lines/tool":
		return fmt.Sprintf("%.0f lines/tool", v)
	case "allocs/op":
		return fmt.Sprintf("%.0f allocs", v)
	case "archive-MB":
		return fmt.Sprintf("%.1f MB", v)
	}
	return fmt.Sprintf("%g %s", v, unit)
}

func main() {
	var echo io.Writer
	if len(os.Args) > 1 && os.Args[1] == "-echo" {
		echo = os.Stderr
	}
	table(os.Stdout, parse(os.Stdin, echo))
}

func table(w io.Writer, s samples) {
	fmt.Fprintln(w, "| measure | mcpgen | baseline | ratio | target | met |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rows {
		m, ok := s.median(r.measure, r.unit)
		if !ok {
			fmt.Fprintf(w, "| %s | not run | | | %s | |\n", r.what, r.target)
			continue
		}
		if r.baseline == "" {
			met := ""
			if r.limit > 0 {
				met = verdict(m <= r.limit)
			}
			fmt.Fprintf(w, "| %s | %s | | | %s | %s |\n", r.what, human(m, r.unit), r.target, met)
			continue
		}
		base, ok := s.median(r.baseline, r.unit)
		if !ok || base == 0 || m == 0 {
			fmt.Fprintf(w, "| %s | %s | not run | | %s | |\n", r.what, human(m, r.unit), r.target)
			continue
		}
		ratio, met := m/base, ""
		shown := fmt.Sprintf("%.2f×", ratio)
		switch {
		case r.targetMin > 0:
			ratio = base / m
			shown = fmt.Sprintf("%.1f× faster", ratio)
			met = verdict(ratio >= r.targetMin)
		case r.targetMax > 0:
			met = verdict(ratio <= r.targetMax)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.what, human(m, r.unit), human(base, r.unit), shown, r.target, met)
	}
}

func verdict(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}
