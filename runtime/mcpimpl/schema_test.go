package mcpimpl

import (
	"encoding/json"
	"testing"
)

func TestStripProperty(t *testing.T) {
	in := `{"type":"object","properties":{"caller_token":{"type":"string"},"deal_id":{"type":"string"},"note":{"maxLength":5}},"required":["caller_token","deal_id"],"additionalProperties":false}`
	out, found, err := StripProperty(json.RawMessage(in), "caller_token")
	want := `{"type":"object","properties":{"deal_id":{"type":"string"},"note":{"maxLength":5}},"required":["deal_id"],"additionalProperties":false}`
	if err != nil || !found || string(out) != want {
		t.Errorf("strip = %s, %v, %v", out, found, err)
	}
	out, found, err = StripProperty(json.RawMessage(`{"properties":{"z":{},"t":{}},"required":["t"],"title":"<x>"}`), "t")
	if err != nil || !found || string(out) != `{"properties":{"z":{}},"title":"<x>"}` {
		t.Errorf("strip emptying required = %s, %v, %v", out, found, err)
	}
	if _, found, err := StripProperty(json.RawMessage(`{"properties":{"a":{}}}`), "t"); found || err != nil {
		t.Errorf("absent property: %v, %v", found, err)
	}
	for _, bad := range []string{`[]`, `{"properties":[]}`, `{"required":"t"}`, `{"a":1} x`, `{"a":`} {
		if _, _, err := StripProperty(json.RawMessage(bad), "t"); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
