package gen

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/config"
)

// Every config key the generator's messages and comments name ("(config
// tools.rename)", "in the config (names: ...)") is one mcpgen.yaml takes:
// each is written in a server entry that config.Parse accepts.
func TestHintsNameConfigKeys(t *testing.T) {
	uses := map[string]string{
		"tools.rename":                 "tools: {rename: {a: b}}",
		"names":                        `names: {"a#/inputSchema": A}`,
		"resources.bind[<uri>].goName": `resources: {bind: {"x://y": {goName: Y}}}`,
		"resources.bind[...].goName":   `resources: {bind: {"x://y": {goName: Y}}}`,
		"inputExtras":                  "inputExtras: true",
		"keepShapesApart":              "keepShapesApart: true",
		"checkFormats":                 "checkFormats: true",
		"identity.argument":            "identity: {argument: token}",
	}
	mention := regexp.MustCompile(`\(config ([a-zA-Z][a-zA-Z.\[\]<>]*)|in the config \((names)\b`)
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.HasSuffix(p, ".mcp.go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue // the generator's comments, not its messages
			}
			for _, m := range mention.FindAllStringSubmatch(line, -1) {
				key := m[1] + m[2]
				seen[key] = true
				if _, ok := uses[key]; !ok {
					t.Errorf("%s names config key %q, which this test does not know mcpgen.yaml takes", p, key)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key, body := range uses {
		if !seen[key] {
			continue
		}
		cfg := "version: 1\nservers:\n  - id: s\n    stdio: {command: s}\n    " + body + "\n"
		if _, err := config.Parse("mcpgen.yaml", []byte(cfg)); err != nil {
			t.Errorf("config key %s: %v", key, err)
		}
	}
}
