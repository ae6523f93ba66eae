package crmapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/mcpgen/mcpgen/example/crmapi"
	"github.com/mcpgen/mcpgen/example/everything"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// estimateTokens is the token estimate docs/benchmarks.md describes: a
// run of letters counts one token per four letters (rounded up), a run of
// digits one per three, every other visible character one, a single space
// before a word nothing (tokenizers fold it into the word), and any other
// run of white space (a newline and its indentation) one.
func estimateTokens(s string) int {
	n := 0
	rs := []rune(s)
	for i := 0; i < len(rs); {
		j := i + 1
		switch r := rs[i]; {
		case unicode.IsLetter(r):
			for j < len(rs) && unicode.IsLetter(rs[j]) {
				j++
			}
			n += (j - i + 3) / 4
		case unicode.IsDigit(r):
			for j < len(rs) && unicode.IsDigit(rs[j]) {
				j++
			}
			n += (j - i + 2) / 3
		case unicode.IsSpace(r):
			for j < len(rs) && unicode.IsSpace(rs[j]) {
				j++
			}
			if !(r == ' ' && j == i+1 && j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]))) {
				n++
			}
		default:
			n++
		}
		i = j
	}
	return n
}

func TestEstimateTokens(t *testing.T) {
	for s, want := range map[string]int{"": 0, "hello world": 4, `{"a":12345}`: 8, "a\n  b": 3} {
		if got := estimateTokens(s); got != want {
			t.Errorf("estimateTokens(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestLeanTokens measures what the lean rendering saves on the real
// results of the CRM server and server-everything; docs/benchmarks.md
// shows the table it logs (go test -run LeanTokens -v).
func TestLeanTokens(t *testing.T) {
	ctx := context.Background()
	type sample struct {
		label string
		ts    *mcpruntime.Toolset
		tool  string
		args  string
	}
	crm, err := crmapi.NewClient(stdioConn(t)).Toolset(crmapi.ToolSearchDeals, crmapi.ToolGetDeal, crmapi.ToolGetContact)
	if err != nil {
		t.Fatal(err)
	}
	samples := []sample{
		{"crm search_deals (all 4 deals)", crm, "search_deals", `{}`},
		{"crm search_deals stage=proposal", crm, "search_deals", `{"stage":"proposal"}`},
		{"crm get_deal D-2001", crm, "get_deal", `{"deal_id":"D-2001"}`},
		{"crm get_contact C-1001", crm, "get_contact", `{"contact_id":"C-1001"}`},
	}
	if ev := everythingConn(t); ev != nil {
		ts, err := everything.NewClient(ev).Toolset(everything.ToolGetStructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, sample{"everything get-structured-content", ts, "get-structured-content", `{"location":"New York"}`})
	}
	var b strings.Builder
	b.WriteString("| result | json bytes | json tokens | lean bytes | lean tokens | saved | lean-described tokens | saved |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var total [3]int
	pct := func(a, b int) string { return fmt.Sprintf("%.0f%%", 100*float64(a-b)/float64(a)) }
	for _, s := range samples {
		var texts [3]string
		for i, r := range []mcpruntime.Rendering{mcpruntime.RenderJSON, mcpruntime.RenderLean, mcpruntime.RenderLeanDescribed} {
			ts, err := s.ts.WithRendering(r)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ts.Invoke(ctx, s.tool, json.RawMessage(s.args))
			if err != nil || m.IsError {
				t.Fatalf("%s: %+v, %v", s.label, m, err)
			}
			texts[i] = m.Text
			total[i] += estimateTokens(m.Text)
		}
		if !json.Valid([]byte(texts[0])) {
			t.Errorf("%s: the json rendering is not JSON: %q", s.label, texts[0])
		}
		tj, tl, td := estimateTokens(texts[0]), estimateTokens(texts[1]), estimateTokens(texts[2])
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %s | %d | %s |\n", s.label, len(texts[0]), tj, len(texts[1]), tl, pct(tj, tl), td, pct(tj, td))
		t.Logf("%s, lean:\n%s\nlean-described:\n%s", s.label, texts[1], texts[2])
		if tl >= tj {
			t.Errorf("%s: lean %d tokens, json %d: nothing saved", s.label, tl, tj)
		}
	}
	fmt.Fprintf(&b, "| total | | %d | | %d | %s | %d | %s |\n", total[0], total[1], pct(total[0], total[1]), total[2], pct(total[0], total[2]))
	t.Logf("token estimate:\n%s", b.String())
}

func stdioConn(t *testing.T) *mcpgo.Conn {
	c, _ := stdio(t)
	return c
}

// everythingConn starts server-everything over stdio; without node or the
// package it returns nil (and fails under CI=true).
func everythingConn(t *testing.T) *mcpgo.Conn {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "tools", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	missing := ""
	if err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(script); err != nil {
		missing = "server-everything is not installed (run npm ci --prefix tools/npm)"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(missing)
		}
		t.Log("skipping server-everything: " + missing)
		return nil
	}
	c := mcpgo.Stdio(node, []string{script, "stdio"}, mcpgo.WithName("everything"))
	t.Cleanup(func() { _ = c.Close() })
	return c
}
