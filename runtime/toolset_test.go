package mcpruntime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

type strictInput struct {
	N int `json:"n"`
}

// UnmarshalJSON stands in for a generated strict decoder: it reports every
// problem as a *ValidationError.
func (in *strictInput) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	var vs []Violation
	for _, k := range []string{"x", "y"} {
		if _, ok := m[k]; ok {
			vs = append(vs, Violation{Pointer: "/" + k, Message: "unknown member"})
		}
	}
	if err := json.Unmarshal(m["n"], &in.N); err != nil {
		vs = append(vs, Violation{Pointer: "/n", Message: "expected an integer"})
	}
	if vs != nil {
		return &ValidationError{Violations: vs}
	}
	return nil
}

func (in *strictInput) Validate() error {
	if in.N < 0 {
		return &ValidationError{Violations: []Violation{{Pointer: "/n", Message: "must be >= 0"}}}
	}
	return nil
}

func TestToolset(t *testing.T) {
	ro := &Descriptor{Name: "read", Annotations: Annotations{ReadOnly: true}, InputSchema: json.RawMessage(`{"type":"object"}`)}
	rw := &Descriptor{Name: "write", Annotations: DefaultAnnotations(), InputSchema: json.RawMessage(`{"type":"object"}`)}
	// No Caller: these tools can only fail before calling, which is what is
	// tested here.
	read := NewTool[strictInput, NoOutput](ro, nil)
	write := NewTool[strictInput, NoOutput](rw, nil)

	if _, err := NewToolset(read, read); err == nil || err.Error() != `toolset: tool "read" given twice` {
		t.Errorf("duplicate: %v", err)
	}
	all, err := NewToolset(write, read)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(all.Names(), ","); got != "read,write" {
		t.Errorf("names = %s", got)
	}
	readOnly := all.Filter(func(d *Descriptor) bool { return d.Annotations.ReadOnly })
	m, err := readOnly.Invoke(context.Background(), "write", json.RawMessage(`{"n":1}`))
	if err != nil || !m.IsError || m.Text != `There is no tool "write" available to you. Available tools: read.` {
		t.Errorf("filtered out tool: %+v, %v", m, err)
	}

	// Every violation the type's decoder reports reaches the model.
	m, err = readOnly.Invoke(context.Background(), "read", json.RawMessage(`{"n":"1","x":1,"y":2}`))
	want := "Invalid arguments for tool \"read\" (3 problems):\n- /x: unknown member\n- /y: unknown member\n- /n: expected an integer\n" +
		"Fix the arguments to match the tool's input schema and call it again."
	if err != nil || !m.IsError || m.Text != want {
		t.Errorf("got %q, %v\nwant %q", m.Text, err, want)
	}
	// Validation runs on what decoded.
	m, _ = readOnly.Invoke(context.Background(), "read", json.RawMessage(`{"n":-1}`))
	if !strings.Contains(m.Text, "- /n: must be >= 0") {
		t.Errorf("validation: %q", m.Text)
	}
	// A typed call without a Caller fails clearly instead of panicking.
	if _, err := read.Call(context.Background(), strictInput{N: 1}); err == nil || !strings.Contains(err.Error(), "no Caller") {
		t.Errorf("nil caller: %v", err)
	}
}
