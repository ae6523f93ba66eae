package gen

import (
	godoc "go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgen/mcpgen/internal/testcorpus"
)

// Every comment the generator writes reads as it means to go doc: no
// heading where a description had a line on its own, lists and code
// blocks where the Markdown had them, already in the form gofmt gives a
// doc comment (printing it back changes nothing), and lines within 80
// columns unless one word is longer. Over the golden outputs and the real
// servers' schemas, whose descriptions are Markdown.
func TestDocComments(t *testing.T) {
	type input struct {
		name string
		cfg  Config
	}
	var ins []input
	for _, c := range loadCases(t) {
		ins = append(ins, input{"golden/" + c.name, c.cfg})
	}
	for _, p := range []string{"testdata/snapshots/notion-mcp-server.json", "testdata/snapshots/server-memory.json", "../bindings/mcp/everything.json"} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, input{p, Config{Package: "p", Inputs: []Input{{Name: "x.json", Data: data}}}})
	}
	t.Run("corpus/github", func(t *testing.T) {
		data := testcorpus.Require(t, testcorpus.GitHubTools)
		ins = append(ins, input{"corpus/github", Config{Package: "p", Inputs: []Input{{Name: "x.json", Data: data}}}})
	})
	groups := 0
	for _, in := range ins {
		files, err := Generate(in.cfg)
		if err != nil {
			continue // an error case
		}
		for name, src := range files {
			f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, cg := range f.Comments {
				groups++
				var lines []string
				for _, c := range cg.List {
					switch {
					case c.Text == "//":
						lines = append(lines, "")
					case strings.HasPrefix(c.Text, "// "):
						lines = append(lines, c.Text[3:])
					case strings.HasPrefix(c.Text, "//\t"):
						lines = append(lines, c.Text[2:])
					default:
						t.Errorf("%s %s: comment line %q", in.name, name, c.Text)
					}
				}
				text := strings.Join(lines, "\n")
				var p godoc.Parser
				d := p.Parse(text)
				for _, b := range d.Content {
					if h, ok := b.(*godoc.Heading); ok {
						t.Errorf("%s: a heading (%v) in\n%s", in.name, h.Text, text)
					}
				}
				var pr godoc.Printer
				if back := string(pr.Comment(d)); back != text+"\n" {
					t.Errorf("%s: the comment is not as gofmt writes it:\n%s\nprinted back:\n%s", in.name, text, back)
				}
				for _, l := range lines {
					if l != "" && l[0] != '\t' && utf8.RuneCountInString(l) > 77 && strings.Contains(strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "-0123456789.")), " ") {
						t.Errorf("%s: a line of %d characters: %q", in.name, utf8.RuneCountInString(l), l)
					}
				}
			}
		}
	}
	t.Logf("%d comments", groups)
}
