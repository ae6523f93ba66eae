package mcpruntime

import (
	"context"
	"encoding/json"
	"testing"
)

type structuredCaller struct{ sc string }

func (c structuredCaller) CallTool(context.Context, string, json.RawMessage) (*Result, error) {
	return &Result{StructuredContent: json.RawMessage(c.sc), Content: []Content{{Type: ContentText, Text: c.sc}}}, nil
}

type anyOutput struct{ V any }

func (o *anyOutput) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &o.V) }
func (*anyOutput) Validate() error                { return nil }

type noInput struct{}

func (*noInput) Validate() error { return nil }

func TestRendering(t *testing.T) {
	const sc = `{"deals":[{"id":"D-1","amount":10},{"id":"D-2","amount":20}],"total":2}`
	const lean = "deals[2]{id|amount}:\n  D-1|10\n  D-2|20\ntotal: 2"
	const described = "deals[2]{id|amount}:  # id: Deal id.\n  D-1|10\n  D-2|20\ntotal: 2"
	desc := func(name string) *Descriptor {
		return &Descriptor{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"deals":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string","description":"Deal id."}}}}}}`)}
	}
	c := structuredCaller{sc}
	plain := NewTool[noInput, anyOutput](desc("plain"), c)
	ownJSON := NewTool[noInput, anyOutput](desc("own_json"), c, WithRendering(RenderJSON))
	ownLean := NewTool[noInput, anyOutput](desc("own_lean"), c, WithRendering(RenderLean))
	goTool := &FuncTool{Desc: desc("go"), Func: func(context.Context, json.RawMessage) (ModelResult, error) {
		return ModelResult{Text: "x", Result: &Result{StructuredContent: json.RawMessage(sc)}}, nil
	}}
	failing := &FuncTool{Desc: desc("failing"), Func: func(context.Context, json.RawMessage) (ModelResult, error) {
		return ModelResult{IsError: true, Text: "no", Result: &Result{StructuredContent: json.RawMessage(sc)}}, nil
	}}
	ts, err := NewToolset(plain, ownJSON, ownLean, goTool, failing)
	if err != nil {
		t.Fatal(err)
	}
	text := func(ts *Toolset, name string) string {
		t.Helper()
		m, err := ts.Invoke(context.Background(), name, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m.Text
	}
	// The default is today's compact JSON; a tool's own option applies.
	for name, want := range map[string]string{"plain": sc, "own_json": sc, "own_lean": lean, "go": "x", "failing": "no"} {
		if got := text(ts, name); got != want {
			t.Errorf("default %s: %q, want %q", name, got, want)
		}
	}
	// A toolset-wide lean rendering leaves a tool's own choice alone and
	// errors as they are.
	leanTS, err := ts.WithRendering(RenderLean)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"plain": lean, "own_json": sc, "own_lean": lean, "go": lean, "failing": "no"} {
		if got := text(leanTS, name); got != want {
			t.Errorf("lean toolset %s: %q, want %q", name, got, want)
		}
	}
	// Named tools get the rendering whatever they were given.
	named, err := leanTS.WithRendering(RenderJSON, "plain", "own_lean")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"plain": sc, "own_json": sc, "own_lean": sc, "go": lean} {
		if got := text(named, name); got != want {
			t.Errorf("named %s: %q, want %q", name, got, want)
		}
	}
	described1, err := ts.WithRendering(RenderLeanDescribed, "plain")
	if err != nil {
		t.Fatal(err)
	}
	if got := text(described1, "plain"); got != described {
		t.Errorf("described: %q, want %q", got, described)
	}
	if got := text(ts, "plain"); got != sc {
		t.Errorf("WithRendering changed the original toolset: %q", got)
	}
	if _, err := ts.WithRendering(RenderLean, "nope"); err == nil {
		t.Error("an unknown tool was accepted")
	}
	if _, err := ts.WithRendering("yaml"); err == nil {
		t.Error("an unknown rendering was accepted")
	}
	// The typed result does not change.
	r, err := ownLean.Call(context.Background(), noInput{})
	if err != nil || r.Output.V.(map[string]any)["total"].(float64) != 2 || string(r.StructuredContent) != sc {
		t.Errorf("typed result: %+v, %v", r, err)
	}
	if _, err := named.Resume(context.Background(), "go", "id"); err == nil {
		t.Error("a FuncTool was resumed")
	}
}
