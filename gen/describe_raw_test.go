package gen

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Describe lists every member kept as raw JSON with its reason, for
// mcpgen list.
func TestDescribeRawFields(t *testing.T) {
	in := `{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"any":{},"list":{"type":"array","items":{"enum":["a",1]}},"ok":{"type":"string"}},"required":["token"]},
	"outputSchema":{"type":"object","properties":{"v":{"anyOf":[{"minimum":1},{"type":"string"}]}}}}]}`
	tools, err := Describe(Config{Inputs: []Input{{Name: "t.json", Data: []byte(in)}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []RawField{
		{Role: "Input", Pointer: "/properties/any", Reason: "the schema does not restrict the type"},
		{Role: "Input", Pointer: "/properties/list/items", Reason: "the enum mixes JSON types"},
		{Role: "Input", Pointer: "/required", Reason: "required member without a schema"},
		{Role: "Output", Pointer: "/properties/v", Reason: "a variant does not say its JSON type, so the variants cannot be told apart and the value is kept as raw JSON and not checked"},
	}
	if d := cmp.Diff(want, tools[0].Raw); d != "" {
		t.Errorf("raw fields (-want +got):\n%s", d)
	}
}
