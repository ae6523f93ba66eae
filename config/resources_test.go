package config

import (
	"strings"
	"testing"
)

func TestResourceBindings(t *testing.T) {
	cfg, err := Parse("mcpgen.yaml", []byte(`version: 1
servers:
  - id: crm
    stdio: {command: crm-server}
    resources:
      bind:
        "crm://pipeline":
          schema:
            type: array
            items: {type: object, properties: {stage: {type: string}}}
        "crm://deals/{deal_id}/summary": {goName: Summary, schema: {type: object}}
        "crm://logo": {goName: Logo}
`))
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Servers[0].Resources.Bind
	if len(b) != 3 {
		t.Fatalf("bindings %+v", b)
	}
	if got := string(b["crm://pipeline"].Schema); got != `{"type":"array","items":{"type":"object","properties":{"stage":{"type":"string"}}}}` {
		t.Errorf("pipeline schema %s", got)
	}
	if s := b["crm://deals/{deal_id}/summary"]; s.GoName != "Summary" || string(s.Schema) != `{"type":"object"}` || s.Pos.Line != 11 {
		t.Errorf("summary %+v", s)
	}
	if l := b["crm://logo"]; l.GoName != "Logo" || l.Schema != nil {
		t.Errorf("logo %+v", l)
	}
}

func TestResourceBindingErrors(t *testing.T) {
	_, err := Parse("mcpgen.yaml", []byte(`version: 1
servers:
  - id: crm
    stdio: {command: crm-server}
    resources:
      bind:
        "crm://a": {schema: [not, a, mapping]}
        "crm://b": {goName: lower}
        "crm://c": {}
        "crm://d": {schema: {type: object}, mime: json}
      other: 1
`))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`mcpgen.yaml:7:29: servers[0].resources.bind.crm://a.schema: a schema must be a mapping (a JSON Schema object), found a list (server "crm")`,
		`mcpgen.yaml:8:29: servers[0].resources.bind.crm://b.goName: goName "lower" must be an exported Go identifier (server "crm")`,
		`mcpgen.yaml:9:20: servers[0].resources.bind.crm://c: empty binding: set schema, goName or tool (server "crm")`,
		`mcpgen.yaml:10:45: servers[0].resources.bind.crm://d: unknown key "mime"`,
		`mcpgen.yaml:11:7: servers[0].resources: unknown key "other"`,
	}
	got := strings.Split(err.Error(), "\n")
	if len(got) != len(want) {
		t.Fatalf("errors:\n%s", err)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

func TestResourceTools(t *testing.T) {
	cfg, err := Parse("mcpgen.yaml", []byte(`version: 1
servers:
  - id: crm
    stdio: {command: crm-server}
    resources:
      bind:
        "crm://deals/{deal_id}/contract": {tool: true}
        "crm://deals/{deal_id}/summary": {toolName: deal_summary, schema: {type: object}}
        "crm://pipeline": {tool: false, goName: Pipe}
`))
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Servers[0].Resources.Bind
	if c := b["crm://deals/{deal_id}/contract"]; !c.Tool || c.ToolName != "" || c.Pos.String() != "mcpgen.yaml:7:9" {
		t.Errorf("contract %+v", c)
	}
	if s := b["crm://deals/{deal_id}/summary"]; !s.Tool || s.ToolName != "deal_summary" {
		t.Errorf("summary %+v", s)
	}
	if p := b["crm://pipeline"]; p.Tool {
		t.Errorf("pipeline %+v", p)
	}

	_, err = Parse("mcpgen.yaml", []byte(`version: 1
servers:
  - id: crm
    stdio: {command: crm-server}
    resources:
      bind:
        "crm://a": {tool: yes please}
        "crm://b": {toolName: read.contract}
        "crm://c": {tool: false, toolName: read_c}
`))
	want := []string{
		`mcpgen.yaml:7:27: servers[0].resources.bind.crm://a.tool: tool must be true or false, found the string "yes please"`,
		`mcpgen.yaml:8:31: servers[0].resources.bind.crm://b.toolName: toolName "read.contract": a tool name every model provider accepts`,
		`mcpgen.yaml:9:44: servers[0].resources.bind.crm://c.toolName: toolName "read_c" with tool: false`,
	}
	if err == nil {
		t.Fatal("no error")
	}
	got := strings.Split(err.Error(), "\n")
	if len(got) != len(want) {
		t.Fatalf("errors:\n%s", err)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}
