package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// raceFlag is the go build flag that builds the server the way this test
// binary was built: with the race detector or without.
func raceFlag() []string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return []string{"-race"}
			}
		}
	}
	return nil
}

// TestDemo runs the demo against the real CRM server process and checks
// what it shows, including that the approved mutation ran exactly once.
func TestDemo(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "crm-server")
	if out, err := exec.Command("go", append(append([]string{"build"}, raceFlag()...), "-o", bin, "../../crm-server")...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var out bytes.Buffer
	if err := run(context.Background(), &out, bin, nil); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"== A typed call",
		`get_deal "deal 7": not sent: `,
		"== A sequence on one session: search, get, update",
		"tools offered to the model: ",
		"update_deal D-2001 as alice: paused for approval",
		"resume 1 after approval: ",
		"denied update_deal → model: ",
		"not before the quarterly review",
		`taint ledger of run "demo":`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("demo output lacks %q:\n%s", want, got)
		}
	}
	// Both resumes report the same notes: one execution.
	var r1, r2 string
	for _, line := range strings.Split(got, "\n") {
		if rest, ok := strings.CutPrefix(line, "resume 1 after approval: "); ok {
			r1 = rest
		}
		if rest, ok := strings.CutPrefix(line, "resume 2 after approval: "); ok {
			r2 = rest
		}
	}
	if r1 == "" || r1 != r2 {
		t.Errorf("resumes differ (%q vs %q): the approved call ran twice?", r1, r2)
	}
	if strings.Contains(got, "tok-alice") || strings.Contains(got, "tok-bob") {
		t.Error("a caller token appears in the demo output")
	}
}
