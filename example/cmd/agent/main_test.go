package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// The example runs offline against its scripted model and the CRM server
// as a real process: a typed call, a pause, the decision, the answer.
func TestAgentOffline(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "crm-server")
	build := exec.Command("go", "build", "-o", bin, "./crm-server")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./crm-server: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		approve bool
		want    []string
	}{
		{true, []string{"assistant calls search_deals", "assistant calls get_deal", "paused: 1 call(s)", "a person approves it", "resumed in a fresh loop", "Done:", `stage negotiation with notes ["Wants a pilot first." "alice: Pilot agreed."]`}},
		{false, []string{"a person denies it", "The change was not made", "the pilot is not signed yet", `stage proposal with notes ["Wants a pilot first."]`}},
	} {
		url, stop, err := startScriptedModel()
		if err != nil {
			t.Fatal(err)
		}
		c := anthropic.NewClient(option.WithBaseURL(url), option.WithAPIKey("offline"), option.WithMaxRetries(0))
		var out bytes.Buffer
		err = run(context.Background(), &out, c.Messages, "scripted", bin, nil, tc.approve)
		stop()
		if err != nil {
			t.Fatalf("run: %v\n%s", err, out.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("approve=%v: output lacks %q:\n%s", tc.approve, w, out.String())
			}
		}
	}
}
