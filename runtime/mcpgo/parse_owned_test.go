package mcpgo

import (
	"reflect"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// The sink's bytes become the Result's without a copy, and a result the
// scanner leaves reads as ParseResult reads it.
func TestParseOwnedKeepsTheBytes(t *testing.T) {
	raw := []byte(` {"content":[{"type":"text","text":"hi"}],"structuredContent":{"a":1}} `)
	r, err := parseOwned(raw)
	if err != nil {
		t.Fatal(err)
	}
	if &r.Raw[0] != &raw[1] || cap(r.Raw) != len(r.Raw) || string(r.StructuredContent) != `{"a":1}` || r.Text() != "hi" {
		t.Errorf("Raw = %q (cap %d), not the sink's bytes", r.Raw, cap(r.Raw))
	}
	want, werr := mcpruntime.ParseResult(raw)
	if werr != nil || !reflect.DeepEqual(r, want) {
		t.Errorf("parseOwned differs from ParseResult: %+v, %+v (%v)", r, want, werr)
	}
	for _, in := range []string{`{"Content":[]}`, `{"content":[{"type":"text","text":5}]}`, `[]`} {
		got, gerr := parseOwned([]byte(in))
		want, werr := mcpruntime.ParseResult([]byte(in))
		if !reflect.DeepEqual(got, want) || (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Errorf("%s: parseOwned = %+v, %v; ParseResult = %+v, %v", in, got, gerr, want, werr)
		}
	}
}
