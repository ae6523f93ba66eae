package gen

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpgen/mcpgen/gen/internal/synth"
	"github.com/mcpgen/mcpgen/internal/testcorpus"
)

// TestCompactFastPath holds compact's json.Compact shortcut to the
// re-encoding it skips: the same bytes for every schema of the corpus and
// of a synthetic manifest, and for hand-picked texts on both sides of the
// shortcut's condition.
func TestCompactFastPath(t *testing.T) {
	texts := []string{
		`{ "a" : [ 1 , 2.50 , -0 , 1e10 , 1E-2 ] , "b" : { } , "c" : [ ] }`,
		`{"s": "plain ascii", "t": true, "f": false, "n": null}`,
		`{"u": "é, ☃ and 𝄞 written out"}`,
		`{"html": "<a href='x'>&amp;</a>"}`,
		`{"esc": "\u00e9 \n \" \\ \/ \u0041"}`,
		"{\"sep\": \"line\u2028para\u2029end\"}",
		"{\"bad\": \"\xff\xfe\"}",
	}
	add := func(list []byte) {
		var top struct {
			Tools []struct {
				InputSchema, OutputSchema json.RawMessage
			}
		}
		if err := json.Unmarshal(list, &top); err != nil {
			t.Fatal(err)
		}
		for _, tool := range top.Tools {
			for _, s := range []json.RawMessage{tool.InputSchema, tool.OutputSchema} {
				if s != nil {
					texts = append(texts, string(s))
				}
			}
		}
	}
	add(synth.ToolsList(40))
	check := func(t *testing.T, texts []string) {
		fast := 0
		for _, s := range texts {
			got, want := compact([]byte(s)), recode([]byte(s))
			if !bytes.Equal(got, want) {
				t.Errorf("compact(%.60q) = %.80q, want %.80q", s, got, want)
			}
			if !bytes.ContainsAny([]byte(s), "\\\u2028\u2029") {
				fast++
			}
		}
		if fast < len(texts)/2 {
			t.Errorf("only %d of %d texts take the shortcut", fast, len(texts))
		}
	}
	check(t, texts)
	t.Run("corpus", func(t *testing.T) {
		texts = nil
		add(testcorpus.Require(t, testcorpus.GitHubTools))
		check(t, texts)
	})
}
