package sequentialthinking_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/bindings"
	"github.com/mcpgen/mcpgen/bindings/internal/livetest"
	"github.com/mcpgen/mcpgen/bindings/sequentialthinking"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// server is the pinned release, started once for the package's tests.
var server = &livetest.Server{ID: "sequentialthinking", Env: []string{"DISABLE_THOUGHT_LOGGING=true"}}

func TestMain(m *testing.M) { os.Exit(server.Run(m)) }

func TestLiveListingMatchesManifest(t *testing.T) { server.Check(t) }

func TestDoc(t *testing.T) {
	livetest.CheckDoc(t, bindings.SequentialThinkingPackage.String(), sequentialthinking.Descriptors())
}

// TestThoughts: a sequence with a branch, through typed calls; the server's
// typed answers count what it has kept.
func TestThoughts(t *testing.T) {
	c := sequentialthinking.NewClient(server.Need(t))
	ctx := context.Background()
	think := func(js string) sequentialthinking.SequentialthinkingOutput {
		t.Helper()
		r, err := c.Sequentialthinking(ctx, livetest.Input(t, sequentialthinking.DecodeSequentialthinkingInput, js))
		if err != nil {
			t.Fatal(err)
		}
		if r.Source != mcpruntime.FromStructuredContent {
			t.Errorf("output from %v, want structuredContent", r.Source)
		}
		return r.Output
	}
	first := think(`{"thought": "List the servers.", "thoughtNumber": 1, "totalThoughts": 3, "nextThoughtNeeded": true}`)
	if first.ThoughtNumber != 1 || first.TotalThoughts != 3 || !first.NextThoughtNeeded {
		t.Errorf("first thought: %+v", first)
	}
	think(`{"thought": "Pin each one.", "thoughtNumber": 2, "totalThoughts": 3, "nextThoughtNeeded": true}`)
	branch := think(`{"thought": "Or vendor them.", "thoughtNumber": 3, "totalThoughts": 3, "nextThoughtNeeded": false,
		"branchFromThought": 2, "branchId": "vendor"}`)
	if !slices.Contains(branch.Branches, "vendor") || branch.NextThoughtNeeded || branch.ThoughtHistoryLength < 3 {
		t.Errorf("branching thought: %+v", branch)
	}
	// The same thought over more steps than planned: totalThoughts grows.
	more := think(`{"thought": "One more check.", "thoughtNumber": 5, "totalThoughts": 3, "nextThoughtNeeded": false}`)
	if more.TotalThoughts != 5 || more.ThoughtHistoryLength != branch.ThoughtHistoryLength+1 {
		t.Errorf("a thought past the estimate: %+v", more)
	}
}

// TestModelCalls: a model's JSON through the toolset; arguments that break
// the schema go back to the model without reaching the server.
func TestModelCalls(t *testing.T) {
	tools, err := sequentialthinking.NewClient(server.Need(t)).Toolset(sequentialthinking.ToolSequentialthinking)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, err := tools.Invoke(ctx, "sequentialthinking", json.RawMessage(`{"thought": "Start.", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": "false"}`))
	if err != nil || m.IsError || !strings.Contains(m.Text, `"nextThoughtNeeded":false`) {
		t.Errorf("a valid call (nextThoughtNeeded as a string, as the schema allows): %+v, %v", m, err)
	}
	m, err = tools.Invoke(ctx, "sequentialthinking", json.RawMessage(`{"thought": "Start.", "thoughtNumber": 0, "totalThoughts": 1, "nextThoughtNeeded": false}`))
	if err != nil || !m.IsError || !strings.Contains(m.Text, "/thoughtNumber") || m.Result != nil {
		t.Errorf("thoughtNumber 0 (minimum 1): %+v, %v", m, err)
	}
}
