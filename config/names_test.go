package config

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	cfg, err := Parse("mcpgen.yaml", []byte(`version: 1
servers:
  - id: notion
    stdio: {command: notion-server}
    names:
      "*#/inputSchema/$defs/parentRequest": ParentRequest
      "API-post-page#/inputSchema/properties/parent/anyOf/1": Text
`))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Servers[0]
	if s.Names["*#/inputSchema/$defs/parentRequest"] != "ParentRequest" || s.Names["API-post-page#/inputSchema/properties/parent/anyOf/1"] != "Text" {
		t.Errorf("names %v", s.Names)
	}
	if p := s.NamesPos["*#/inputSchema/$defs/parentRequest"]; p.String() != "mcpgen.yaml:6:7" {
		t.Errorf("position %v", p)
	}
	tools := map[string]json.RawMessage{
		"API-post-page": json.RawMessage(`{"name":"API-post-page","inputSchema":{"$defs":{"parentRequest":{}},"properties":{"parent":{"anyOf":[{},{}]}}}}`),
		"API-get-self":  json.RawMessage(`{"name":"API-get-self","inputSchema":{}}`),
	}
	if err := s.CheckNames(tools); err != nil {
		t.Errorf("CheckNames: %v", err)
	}
	delete(tools, "API-post-page")
	err = s.CheckNames(tools)
	want := []string{
		`mcpgen.yaml:6:7: servers[0].names: "*#/inputSchema/$defs/parentRequest": no tool in mcp/notion.json has anything at /inputSchema/$defs/parentRequest (server "notion")`,
		`mcpgen.yaml:7:7: servers[0].names: "API-post-page#/inputSchema/properties/parent/anyOf/1": "API-post-page" names no tool in mcp/notion.json (API-get-self) (server "notion")`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("CheckNames: %v\nwant\n%s", err, strings.Join(want, "\n"))
	}
	tools["API-post-page"] = json.RawMessage(`{"name":"API-post-page","inputSchema":{"$defs":{"parentRequest":{}},"properties":{"parent":{"anyOf":[{}]}}}}`)
	if err := s.CheckNames(tools); err == nil || !strings.Contains(err.Error(), `mcpgen.yaml:7:7: servers[0].names: "API-post-page#/inputSchema/properties/parent/anyOf/1": tool "API-post-page" has nothing at /inputSchema/properties/parent/anyOf/1`) {
		t.Errorf("CheckNames: %v", err)
	}
}

func TestNamesErrors(t *testing.T) {
	_, err := Parse("mcpgen.yaml", []byte(`version: 1
servers:
  - id: crm
    stdio: {command: crm-server}
    tools: {exclude: ["*_debug"]}
    names:
      get_deal: Deal
      "get deal#/inputSchema": Deal
      "get_deal#/properties/id": Deal
      "get_deal#/inputSchema/~2": Deal
      "get_debug#/inputSchema": Debug
      "get_deal#/inputSchema/properties/id": dealID
      "get_deal#/outputSchema": [Deal]
`))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`mcpgen.yaml:7:7: servers[0].names: key "get_deal": expected <tool>#<JSON Pointer>`,
		`mcpgen.yaml:8:7: servers[0].names: key "get deal#/inputSchema": "get deal" is not a valid tool name`,
		`mcpgen.yaml:9:7: servers[0].names: key "get_deal#/properties/id": the JSON Pointer must be within the tool's /inputSchema or /outputSchema`,
		`mcpgen.yaml:10:7: servers[0].names: key "get_deal#/inputSchema/~2": "/inputSchema/~2" is not a JSON Pointer`,
		`mcpgen.yaml:11:7: servers[0].names.get_debug#/inputSchema: tool "get_debug" is filtered out by include/exclude`,
		`mcpgen.yaml:12:46: servers[0].names.get_deal#/inputSchema/properties/id: "dealID" must be an exported Go identifier`,
		`mcpgen.yaml:13:33: servers[0].names.get_deal#/outputSchema: expected a string, found a list`,
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
