package emit

import (
	godoc "go/doc/comment"
	"strings"
	"testing"
)

// docText writes Markdown as the Go doc comment that says the same: the
// cases are the shapes of real servers' descriptions.
func TestDocText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"long lines are broken, short ones kept",
			"Notion | Create comment\nError Responses:\n400: Bad request\nThe complete new page content as enhanced Markdown, which replaces everything on the page.",
			"Notion | Create comment\nError Responses:\n400: Bad request\nThe complete new page content as enhanced Markdown, which replaces everything\non the page."},
		{"headings are paragraphs",
			"Search issues.\n\n## Usage\n\nPass a query.\n\n# Notes #\nNone.",
			"Search issues.\n\nUsage\nPass a query.\n\nNotes\nNone."},
		{"a line go doc would take for a heading joins the next paragraph",
			"Create a page.\n\nError Responses\n\n400 means a bad request.",
			"Create a page.\n\nError Responses\n400 means a bad request."},
		{"lists are indented, nesting flattened, continuations joined",
			"Outcomes:\n- a pull request\n  with changes\n* a comment\n    - nested\n1. first\n2) second",
			"Outcomes:\n\n  - a pull request with changes\n  - a comment\n  - nested\n  - 1. first\n  - 2. second"},
		{"numbered lists", "Steps:\n1. first\n2. second, which is long enough to go on past the end of the first line of it",
			"Steps:\n\n 1. first\n 2. second, which is long enough to go on past the end of the first line of\n    it"},
		{"a long item wraps under its text",
			"- https://docs.github.com/en/copilot/concepts/agents/cloud-agent/about-cloud-agent and a word or two more",
			"  - https://docs.github.com/en/copilot/concepts/agents/cloud-agent/about-cloud-agent\n    and a word or two more"},
		{"fenced and indented code is kept as written",
			"Example:\n```json\n{\"a\": 1,\n  \"b\": 2}\n```\nor\n\n    x := 1\n    y := 2\n\nend",
			"Example:\n\n\t{\"a\": 1,\n\t  \"b\": 2}\n\nor\n\n\tx := 1\n\ty := 2\n\nend"},
		{"a wrapped line never starts a list or a heading",
			"Values are one of a b c d e f g h i j k l m n o p q r s t u v w x y z aa bb - and # more.",
			"Values are one of a b c d e f g h i j k l m n o p q r s t u v w x y z aa bb -\nand # more."},
		{"tabs and control characters", "a\tb\x07c\u2028", "a bc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(docText(tc.in, docWidth), "\n")
			if got != tc.want {
				t.Errorf("docText(%q) =\n%s\nwant\n%s", tc.in, got, tc.want)
			}
			// As go doc reads it: no heading, and gofmt would not change it.
			var p godoc.Parser
			d := p.Parse(got)
			for _, b := range d.Content {
				if _, ok := b.(*godoc.Heading); ok {
					t.Errorf("a heading in\n%s", got)
				}
			}
			var pr godoc.Printer
			if out := string(pr.Comment(d)); out != got+"\n" {
				t.Errorf("not in gofmt's form:\n%q\nprinted back as\n%q", got, out)
			}
		})
	}
}
