package gen

import (
	"regexp"
	"slices"
	"testing"
)

// Each tool's and reader's descriptor names the server whose manifest the
// bindings come from, so that approvals made through one server's bindings
// are not spent through another's of the same tool and schema.
func TestDescriptorsNameTheServer(t *testing.T) {
	manifest := func(id, info string) []byte {
		return []byte(`{"mcpgenManifest":1,"id":"` + id + `","protocolVersion":"2025-11-25","serverInfo":` + info + `,"capabilities":{},
"tools":[{"name":"move","inputSchema":{"type":"object"}}],"resources":[],"resourceTemplates":[{"uriTemplate":"doc:///{name}","name":"doc"}],"prompts":[]}`)
	}
	for _, c := range []struct {
		id, info, want string
	}{
		{"ledger_eu", `{"name":"ledger","version":"1"}`, `"ledger_eu/ledger"`},
		{"ledger_us", `{"name":"ledger","version":"2"}`, `"ledger_us/ledger"`},
		{"ledger", `{}`, `"ledger/"`},
		{"", `{"name":"ledger"}`, `"/ledger"`},
		{"", `{}`, ""},
	} {
		files, err := Generate(Config{Package: "ledger", Inputs: []Input{{Name: "ledger.json", Data: manifest(c.id, c.info)}},
			Resources: map[string]ResourceBinding{"doc:///{name}": {Tool: true}}})
		if err != nil {
			t.Fatal(err)
		}
		src := string(files["ledger.mcp.go"])
		all := regexp.MustCompile(`(?m)^\tServer: +(.*),$`).FindAllStringSubmatch(src, -1)
		var got []string
		for _, m := range all {
			got = append(got, m[1])
		}
		want := []string{c.want, c.want} // the tool's and the reader's
		if c.want == "" {
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q %s: descriptors name %q, want %q", c.id, c.info, got, want)
		}
	}
}
