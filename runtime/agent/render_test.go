package agent

import (
	"context"
	"encoding/json"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

func TestSourceRendering(t *testing.T) {
	const sc = `{"rows":[{"a":1,"b":"x"},{"a":2,"b":"y"}]}`
	tool := goTool("list", `{"type":"object"}`, func(context.Context, json.RawMessage) (mcpruntime.ModelResult, error) {
		res := &mcpruntime.Result{StructuredContent: json.RawMessage(sc), Content: []mcpruntime.Content{{Type: mcpruntime.ContentText, Text: sc}}}
		return mcpruntime.ModelResult{Text: res.ModelText(), Result: res}, nil
	})
	for _, c := range []struct {
		r    mcpruntime.Rendering
		want string
	}{{"", sc}, {mcpruntime.RenderJSON, sc}, {mcpruntime.RenderLean, "rows[2]{a|b}:\n  1|x\n  2|y"}} {
		s, err := New(DialectJSONSchema, Source{Tools: toolset(t, tool), Rendering: c.r})
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Dispatch(context.Background(), Call{ID: "1", Name: "list"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Text != c.want || len(r.Parts) != 1 || r.Parts[0].Text != c.want {
			t.Errorf("rendering %q: %q, parts %+v", c.r, r.Text, r.Parts)
		}
	}
	if _, err := New(DialectJSONSchema, Source{Tools: toolset(t, tool), Rendering: "xml"}); err == nil {
		t.Error("an unknown rendering was accepted")
	}
}
