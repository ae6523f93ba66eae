package gen

import (
	"encoding/json"
	"testing"

	"github.com/mcpgen/mcpgen/gen/internal/synth"
	"github.com/mcpgen/mcpgen/internal/testcorpus"
	"github.com/mcpgen/mcpgen/runtime/manager"
)

// TestSchemaHashMatchesRuntime: the hash compiled into descriptors must be
// the one the runtime's manager computes from a live listing, or every
// tool would look drifted.
func TestSchemaHashMatchesRuntime(t *testing.T) {
	var tools []json.RawMessage
	add := func(data []byte) {
		var tl struct{ Tools []json.RawMessage }
		if err := json.Unmarshal(data, &tl); err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tl.Tools...)
	}
	add(synth.ToolsList(20))
	// A subtest only to report a missing corpus: a SKIP line with the
	// reason, a failure under CI=true; the synthetic tools are checked anyway.
	t.Run("github-corpus", func(t *testing.T) { add(testcorpus.Require(t, testcorpus.GitHubTools)) })
	tools = append(tools,
		json.RawMessage(`{"name":"no_output","inputSchema":{"type":"object","properties":{"b":{},"a":{"type":"string","description":"<&>"}}}}`),
		json.RawMessage(`{"name":"odd","inputSchema":{"type":"object"},"outputSchema":{"type":"array","items":{"type":"number","maximum":1e3}}}`))
	for _, raw := range tools {
		var tool struct {
			Name                      string
			InputSchema, OutputSchema json.RawMessage
		}
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatal(err)
		}
		g, err := SchemaHash(raw)
		if err != nil {
			t.Fatal(err)
		}
		if r := manager.SchemaHash(tool.InputSchema, tool.OutputSchema); r != g {
			t.Errorf("%s: generator hash %s, runtime hash %s", tool.Name, g, r)
		}
	}
}
