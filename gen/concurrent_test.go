package gen

import (
	"bytes"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/mcpgen/mcpgen/gen/internal/synth"
	"github.com/mcpgen/mcpgen/internal/testcorpus"
)

// TestConcurrentDeterminism generates the same inputs several times at once
// (emit also formats on every core inside each run) and requires the same
// bytes every time: neither scheduling nor another run in the same process
// may show in the output. The synthetic manifest is split into parts so
// the join of groups across files is covered too.
func TestConcurrentDeterminism(t *testing.T) {
	inputs := map[string]func(t *testing.T) []byte{
		"synthetic-300": func(*testing.T) []byte { return synth.ToolsList(300) },
		"github-corpus": func(t *testing.T) []byte { return testcorpus.Require(t, testcorpus.GitHubTools) },
	}
	// Not parallel: it changes splitBytes (as TestSplit does).
	defer func(n int) { splitBytes = n }(splitBytes)
	splitBytes = 256 << 10
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Package: "p", Inputs: []Input{{Name: "in.json", Data: data(t)}}}
			want, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			const runs = 4
			got := make([]map[string][]byte, runs)
			errs := make([]error, runs)
			var wg sync.WaitGroup
			for i := range runs {
				wg.Go(func() { got[i], errs[i] = Generate(cfg) })
			}
			wg.Wait()
			for i := range runs {
				if errs[i] != nil {
					t.Fatalf("run %d: %v", i, errs[i])
				}
				if !slices.Equal(slices.Sorted(maps.Keys(got[i])), slices.Sorted(maps.Keys(want))) {
					t.Fatalf("run %d: files %v, want %v", i, slices.Sorted(maps.Keys(got[i])), slices.Sorted(maps.Keys(want)))
				}
				for name, src := range want {
					if !bytes.Equal(got[i][name], src) {
						t.Errorf("run %d: %s differs from the first run's", i, name)
					}
				}
			}
			if name == "synthetic-300" && len(want) < 2 {
				t.Errorf("%d file(s); the test wants the output split", len(want))
			}
		})
	}
}
