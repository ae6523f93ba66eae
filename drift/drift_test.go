package drift

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/manifest"
)

func m(t *testing.T, tools ...string) *manifest.Manifest {
	t.Helper()
	out := &manifest.Manifest{Format: 1, ID: "srv", ProtocolVersion: "2025-11-25"}
	for _, s := range tools {
		e, err := manifest.NewEntry(json.RawMessage(s), "name")
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		out.Tools = append(out.Tools, e)
	}
	return out
}

func tool(in string) string {
	return `{"name":"t","inputSchema":` + in + `}`
}

func toolOut(out string) string {
	return `{"name":"t","inputSchema":{"type":"object"},"outputSchema":` + out + `}`
}

func toolAnn(ann string) string {
	return `{"name":"t","inputSchema":{"type":"object"},"annotations":` + ann + `}`
}

func TestCompareTable(t *testing.T) {
	obj := func(props, req string) string {
		return `{"type":"object","properties":{` + props + `},"required":[` + req + `]}`
	}
	tests := []struct {
		name     string
		old, new string
		want     []string // "class ptr: message" substrings, in order
	}{
		{"identical", tool(obj(`"a":{"type":"string"}`, `"a"`)), tool(obj(`"a":{"type":"string"}`, `"a"`)), nil},
		{"required argument added", tool(obj(``, ``)), tool(obj(`"a":{"type":"string"}`, `"a"`)),
			[]string{`breaking /inputSchema/properties/a: required argument "a" added`}},
		{"optional argument added", tool(obj(``, ``)), tool(obj(`"a":{"type":"string"}`, ``)),
			[]string{`compatible /inputSchema/properties/a: optional argument "a" added`}},
		{"argument removed", tool(obj(`"a":{"type":"string"}`, ``)), tool(obj(``, ``)),
			[]string{`breaking /inputSchema/properties/a: argument "a" removed`}},
		{"argument became required", tool(obj(`"a":{"type":"string"}`, ``)), tool(obj(`"a":{"type":"string"}`, `"a"`)),
			[]string{`breaking /inputSchema/properties/a: argument "a" became required`}},
		{"argument became optional", tool(obj(`"a":{"type":"string"}`, `"a"`)), tool(obj(`"a":{"type":"string"}`, ``)),
			[]string{`compatible /inputSchema/properties/a: argument "a" became optional`}},
		{"argument type changed", tool(obj(`"a":{"type":"string"}`, ``)), tool(obj(`"a":{"type":"integer"}`, ``)),
			[]string{`breaking /inputSchema/properties/a/type: type changed from string to integer`}},
		{"input enum value removed", tool(obj(`"s":{"type":"string","enum":["open","closed"]}`, ``)), tool(obj(`"s":{"type":"string","enum":["open"]}`, ``)),
			[]string{`breaking /inputSchema/properties/s/enum: enum value "closed" removed`}},
		{"input enum value added", tool(obj(`"s":{"type":"string","enum":["open"]}`, ``)), tool(obj(`"s":{"type":"string","enum":["open","closed"]}`, ``)),
			[]string{`compatible /inputSchema/properties/s/enum: enum value "closed" added`}},
		{"output enum value added", toolOut(obj(`"s":{"type":"string","enum":["open"]}`, ``)), toolOut(obj(`"s":{"type":"string","enum":["open","closed"]}`, ``)),
			[]string{`breaking /outputSchema/properties/s/enum: enum value "closed" added`}},
		{"output enum value added to a one-value enum (a const)", toolOut(obj(`"s":{"type":"string","enum":["open"]}`, ``)), toolOut(obj(`"s":{"type":"string","enum":["open","shut"]}`, ``)),
			[]string{`breaking /outputSchema/properties/s/enum: enum value "shut" added`}},
		{"output enum value added: carried", toolOut(obj(`"s":{"type":"string","enum":["open","closed"]}`, ``)), toolOut(obj(`"s":{"type":"string","enum":["open","closed","held"]}`, ``)),
			[]string{`compatible /outputSchema/properties/s/enum: enum value "held" added: the bindings carry it (Valid reports false)`}},
		{"output enum value of another type added", toolOut(obj(`"n":{"enum":[1,2]}`, ``)), toolOut(obj(`"n":{"enum":[1,2,2.5]}`, ``)),
			[]string{`breaking /outputSchema/properties/n/enum: enum value 2.5 added`}},
		{"output enum value null added", toolOut(obj(`"s":{"enum":["a","b"]}`, ``)), toolOut(obj(`"s":{"enum":["a","b",null]}`, ``)),
			[]string{`breaking /outputSchema/properties/s/enum: enum value null added: may now be null`}},
		{"output enum removed: carried", toolOut(obj(`"s":{"type":"string","enum":["a","b"]}`, ``)), toolOut(obj(`"s":{"type":"string"}`, ``)),
			[]string{`compatible /outputSchema/properties/s/enum: enum removed: the bindings carry the values they do not list (Valid reports false)`}},
		{"output enum removed, wider type", toolOut(obj(`"n":{"type":"number","enum":[1,2]}`, ``)), toolOut(obj(`"n":{"type":"number"}`, ``)),
			[]string{`breaking /outputSchema/properties/n/enum: enum removed: any value of the type is now allowed`}},
		{"closed output gains a member", toolOut(`{"type":"object","properties":{},"additionalProperties":false}`), toolOut(`{"type":"object","properties":{"o":{"type":"array"}},"additionalProperties":false}`),
			[]string{`compatible /outputSchema/properties/o: output member "o" added`}},
		{"output member added against a schema of undeclared members", toolOut(`{"type":"object","properties":{},"additionalProperties":{"type":"string"}}`), toolOut(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":{"type":"string"}}`),
			[]string{`breaking /outputSchema/properties/n/type: type changed from string to integer`}},
		{"output undeclared members no longer restricted", toolOut(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}`), toolOut(`{"type":"object","properties":{"a":{"type":"string"}}}`),
			[]string{`breaking /outputSchema/additionalProperties: undeclared members are no longer restricted by a schema`}},
		{"input undeclared members restricted", tool(`{"type":"object","properties":{"a":{"type":"string"}}}`), tool(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}`),
			[]string{`breaking /inputSchema/additionalProperties: undeclared members are now restricted by a schema`}},
		{"output enum value removed", toolOut(obj(`"s":{"type":"string","enum":["open","closed"]}`, ``)), toolOut(obj(`"s":{"type":"string","enum":["open"]}`, ``)),
			[]string{`compatible /outputSchema/properties/s/enum: enum value "closed" removed`}},
		{"output member removed", toolOut(obj(`"a":{"type":"string"}`, ``)), toolOut(obj(``, ``)),
			[]string{`breaking /outputSchema/properties/a: output member "a" removed`}},
		{"output member added", toolOut(obj(``, ``)), toolOut(obj(`"a":{"type":"string"}`, ``)),
			[]string{`compatible /outputSchema/properties/a: output member "a" added`}},
		{"output member may be absent", toolOut(obj(`"a":{"type":"string"}`, `"a"`)), toolOut(obj(`"a":{"type":"string"}`, ``)),
			[]string{`breaking /outputSchema/properties/a: output member "a" may now be absent`}},
		{"output type changed", toolOut(obj(`"n":{"type":"integer"}`, ``)), toolOut(obj(`"n":{"type":"string"}`, ``)),
			[]string{`breaking /outputSchema/properties/n/type: type changed from integer to string`}},
		{"output became nullable", toolOut(obj(`"n":{"type":"integer"}`, ``)), toolOut(obj(`"n":{"type":["integer","null"]}`, ``)),
			[]string{`breaking /outputSchema/properties/n: may now be null`}},
		{"input accepts null via anyOf", tool(obj(`"n":{"type":"integer"}`, ``)), tool(obj(`"n":{"anyOf":[{"type":"integer"},{"type":"null"}]}`, ``)),
			[]string{`compatible /inputSchema/properties/n: now accepts null`}},
		{"output schema removed", toolOut(obj(``, ``)), tool(`{"type":"object"}`),
			[]string{`breaking /outputSchema: output schema removed`}},
		{"output schema added", tool(`{"type":"object"}`), toolOut(obj(``, ``)),
			[]string{`compatible /outputSchema: output schema added`}},
		{"maxLength tightened", tool(obj(`"a":{"type":"string","maxLength":10}`, ``)), tool(obj(`"a":{"type":"string","maxLength":5}`, ``)),
			[]string{`breaking /inputSchema/properties/a/maxLength: maxLength tightened from 10 to 5`}},
		{"minimum loosened", tool(obj(`"a":{"type":"integer","minimum":1}`, ``)), tool(obj(`"a":{"type":"integer","minimum":0}`, ``)),
			[]string{`compatible /inputSchema/properties/a/minimum: minimum loosened from 1 to 0`}},
		{"pattern changed", tool(obj(`"a":{"type":"string","pattern":"^a"}`, ``)), tool(obj(`"a":{"type":"string","pattern":"^b"}`, ``)),
			[]string{`breaking /inputSchema/properties/a/pattern: pattern changed from "^a" to "^b"`}},
		{"closed input", tool(`{"type":"object"}`), tool(`{"type":"object","additionalProperties":false}`),
			[]string{`breaking /inputSchema/additionalProperties: unknown members are now rejected`}},
		{"nested through $ref", tool(`{"type":"object","properties":{"u":{"$ref":"#/$defs/U"}},"$defs":{"U":{"type":"object","properties":{"id":{"type":"string"}}}}}`),
			tool(`{"type":"object","properties":{"u":{"$ref":"#/$defs/U"}},"$defs":{"U":{"type":"object","properties":{"id":{"type":"integer"}}}}}`),
			[]string{`breaking /inputSchema/properties/u/properties/id/type: type changed from string to integer`}},
		{"recursive $ref terminates", tool(`{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}}}`),
			tool(`{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}},"required":["next"]}}}`),
			[]string{`breaking /inputSchema/properties/next: argument "next" became required`}},
		{"array items", tool(obj(`"l":{"type":"array","items":{"type":"string"}}`, ``)), tool(obj(`"l":{"type":"array","items":{"type":"number"}}`, ``)),
			[]string{`breaking /inputSchema/properties/l/items/type: type changed from string to number`}},
		{"description only", `{"name":"t","description":"old","inputSchema":{"type":"object"}}`, `{"name":"t","description":"new","inputSchema":{"type":"object"}}`,
			[]string{`compatible /description: description changed`}},
		{"read-only became mutation", toolAnn(`{"readOnlyHint":true}`), toolAnn(`{}`),
			[]string{`breaking /annotations/readOnlyHint: read-only tool became a mutation`}},
		{"mutation became read-only", toolAnn(`{"readOnlyHint":false}`), toolAnn(`{"readOnlyHint":true}`),
			[]string{`compatible /annotations/readOnlyHint: tool became read-only`}},
		{"became destructive", toolAnn(`{"destructiveHint":false}`), toolAnn(`{}`),
			[]string{`breaking /annotations/destructiveHint: tool became destructive`}},
		{"absent hints equal spec defaults", toolAnn(`{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":true}`), toolAnn(`{}`), nil},
		{"no longer idempotent", toolAnn(`{"idempotentHint":true}`), toolAnn(`{"idempotentHint":false}`),
			[]string{`breaking /annotations/idempotentHint: tool is no longer idempotent`}},
		{"union variant added to output", toolOut(`{"oneOf":[{"type":"string"},{"type":"integer"}]}`), toolOut(`{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"boolean"}]}`),
			[]string{`breaking /outputSchema/oneOf: oneOf now has 3 variants (was 2)`}},
		{"non-object output", toolOut(`{"type":"array","items":{"type":"string"}}`), toolOut(`{"type":"string"}`),
			[]string{`breaking /outputSchema/type: type changed from array to string`}},
		{"true schema to typed input", tool(`true`), tool(`{"type":"object"}`),
			[]string{`breaking /inputSchema/type: type restricted from any to object`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(m(t, tt.old), m(t, tt.new))
			var lines []string
			for _, c := range got {
				if c.Kind != "tool" || c.Name != "t" {
					t.Errorf("change on %s %q, want tool t", c.Kind, c.Name)
				}
				lines = append(lines, c.Class.String()+" "+c.Pointer+": "+c.Message)
			}
			if len(lines) != len(tt.want) {
				t.Fatalf("got %d changes, want %d:\n%s", len(lines), len(tt.want), strings.Join(lines, "\n"))
			}
			for i := range lines {
				if !strings.HasPrefix(lines[i], tt.want[i]) {
					t.Errorf("change %d = %q, want prefix %q", i, lines[i], tt.want[i])
				}
			}
		})
	}
}

func TestCompareToolsAndOtherKinds(t *testing.T) {
	old := m(t, `{"name":"keep","inputSchema":{}}`, `{"name":"gone","inputSchema":{}}`)
	new := m(t, `{"name":"keep","inputSchema":{}}`, `{"name":"fresh","inputSchema":{}}`)
	old.Prompts = []manifest.Entry{mustEntry(t, `{"name":"p","arguments":[{"name":"a","required":true}]}`)}
	new.Prompts = []manifest.Entry{mustEntry(t, `{"name":"p","arguments":[{"name":"a","required":true},{"name":"b","required":true}]}`)}
	new.ProtocolVersion = "2026-07-28"
	got := Compare(old, new)
	var s []string
	for _, c := range got {
		s = append(s, c.String())
	}
	want := []string{
		`compatible: server /protocolVersion: protocol version changed from "2025-11-25" to "2026-07-28"`,
		`compatible: tool fresh: tool added`,
		`breaking: tool gone: tool removed`,
		`breaking: prompt p /arguments: required argument "b" added`,
	}
	if strings.Join(s, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(s, "\n"), strings.Join(want, "\n"))
	}
	if Max(got) != Breaking {
		t.Errorf("Max = %v", Max(got))
	}
	if Max(nil) != None {
		t.Error("Max(nil) != None")
	}
}

func mustEntry(t *testing.T, raw string) manifest.Entry {
	t.Helper()
	e, err := manifest.NewEntry(json.RawMessage(raw), "name")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestParseClass(t *testing.T) {
	for in, want := range map[string]Class{"breaking": Breaking, "compatible": Compatible, "any": Compatible} {
		if got, err := ParseClass(in); err != nil || got != want {
			t.Errorf("ParseClass(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseClass("all"); err == nil {
		t.Error("ParseClass accepted an unknown class")
	}
}

// FuzzCompare: arbitrary schemas (recursive, hostile, malformed) never make
// the comparison panic or loop, and comparing a schema with itself finds
// nothing.
func FuzzCompare(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"$ref":"#"}}}`, `{"type":["string","null"]}`)
	f.Add(`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`, `true`)
	f.Add(`{"anyOf":[{"type":"null"},{"enum":[1,"1",null]}]}`, `{"allOf":[{"minimum":1e400}]}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		var va, vb any
		if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
			return
		}
		ta, _ := json.Marshal(map[string]any{"name": "t", "inputSchema": va, "outputSchema": va})
		tb, _ := json.Marshal(map[string]any{"name": "t", "inputSchema": vb, "outputSchema": vb})
		Compare(m(t, string(ta)), m(t, string(tb)))
		if got := Compare(m(t, string(ta)), m(t, string(ta))); len(got) != 0 {
			t.Fatalf("self-comparison found changes: %v", got)
		}
	})
}
