package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode"

	"github.com/mcpgen/mcpgen/internal/testserver"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

type ShapeArgs struct {
	Kind string `json:"kind"`
}

func (*ShapeArgs) Validate() error { return nil }

type ShapeOut map[string]any

func (*ShapeOut) Validate() error { return nil }

// visible is what a model's text may hold raw: graphic characters and
// the ASCII space (no control, format, separator or private-use
// character, no other space).
func visible(r rune) bool { return r == ' ' || unicode.IsGraphic(r) && !unicode.Is(unicode.Zs, r) }

// leanQuote is a string as the lean rendering quotes it: a JSON string
// literal with every character that is not visible as an escape.
func leanQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case visible(r):
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// The hostile server process answers with results crafted against the
// lean rendering (deep nesting, wide and sparse tables, line-breaking and
// invisible characters, look-alike scalars) under an output schema whose
// descriptions hold U+2028 and its kin. Through an agent set with each
// rendering, what the model gets is within the documented size bound,
// costs a bounded amount of memory beyond the call itself, holds no
// line-breaking or invisible character raw, and quotes every look-alike.
func TestLeanRenderingOfHostileResults(t *testing.T) {
	var listed json.RawMessage
	c := hostileConn(t, "", mcpgo.WithRawObserver(func(method string, result json.RawMessage) {
		if method == "tools/list" {
			listed = bytes.Clone(result)
		}
	}))
	ctx := context.Background()
	if _, err := c.ToolNames(ctx); err != nil {
		t.Fatal(err)
	}
	// The descriptor as the server lists it, descriptions included.
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(listed, &list); err != nil {
		t.Fatal(err)
	}
	var d *mcpruntime.Descriptor
	for _, tl := range list.Tools {
		if tl.Name == "shape" {
			d = &mcpruntime.Descriptor{Name: tl.Name, Description: tl.Description, Annotations: mcpruntime.Annotations{ReadOnly: true},
				InputSchema: tl.InputSchema, OutputSchema: tl.OutputSchema}
		}
	}
	if d == nil || !strings.Contains(string(d.OutputSchema), "\u2028") && !strings.Contains(string(d.OutputSchema), `\u2028`) {
		t.Fatalf("the shape tool as listed: %+v", d)
	}
	ts, err := mcpruntime.NewToolset(mcpruntime.NewTool[ShapeArgs, ShapeOut](d, c))
	if err != nil {
		t.Fatal(err)
	}
	sets := map[mcpruntime.Rendering]*agent.Set{}
	for _, r := range []mcpruntime.Rendering{mcpruntime.RenderJSON, mcpruntime.RenderLean, mcpruntime.RenderLeanDescribed} {
		if sets[r], err = agent.New(agent.DialectJSONSchema, agent.Source{Tools: ts, Rendering: r}); err != nil {
			t.Fatal(err)
		}
	}
	dispatch := func(t *testing.T, r mcpruntime.Rendering, kind string) (agent.Result, uint64) {
		t.Helper()
		var res agent.Result
		var err error
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err = sets[r].Dispatch(ctx, agent.Call{ID: "1", Name: "shape", Arguments: json.RawMessage(`{"kind":"` + kind + `"}`)})
		runtime.ReadMemStats(&after)
		if err != nil || res.IsError || res.Model.Result == nil {
			t.Fatalf("%s %s: %+v, %v", r, kind, res, err)
		}
		return res, after.TotalAlloc - before.TotalAlloc
	}

	shapes := testserver.Shapes()
	for _, kind := range []string{"deep", "indent", "sparse", "wide", "strings", "lookalikes"} {
		t.Run(kind, func(t *testing.T) {
			var compact bytes.Buffer
			if err := json.Compact(&compact, []byte(shapes[kind])); err != nil {
				t.Fatal(err)
			}
			in := compact.Len()
			_, plain := dispatch(t, mcpruntime.RenderJSON, kind)
			for _, r := range []mcpruntime.Rendering{mcpruntime.RenderLean, mcpruntime.RenderLeanDescribed} {
				res, n := dispatch(t, r, kind)
				if got := len(res.Model.Result.StructuredContent); got != in {
					t.Fatalf("%s: the server sent %d bytes of structured content, want %d", r, got, in)
				}
				// The fallback's bound (escaped compact JSON); lean text
				// proper is within two times plus 64.
				if len(res.Text) > 3*in+64 {
					t.Errorf("%s: %d bytes of JSON rendered to %d", r, in, len(res.Text))
				}
				if !json.Valid([]byte(res.Text)) && len(res.Text) > 2*in+64 {
					t.Errorf("%s: %d bytes of JSON rendered lean to %d", r, in, len(res.Text))
				}
				// What the rendering adds to the call (decoding the
				// answer, the JSON text) is linear in the result (not
				// measured under the race detector, which inflates it).
				if extra, limit := int64(n)-int64(plain), int64(64*in+1<<20); extra > limit && !raceDetector {
					t.Errorf("%s: the rendering allocated %d bytes more than the JSON text, over %d for %d bytes", r, extra, limit, in)
				}
				for _, part := range append([]agent.Part{{Text: res.Text}}, res.Parts...) {
					for i, c := range part.Text {
						if c != '\n' && !visible(c) {
							t.Fatalf("%s: raw U+%04X at byte %d of %.300q", r, c, i, part.Text)
						}
					}
				}
				if strings.Contains(res.Text, "forged") && kind != "strings" {
					t.Errorf("%s: a description's forged text shows: %.300q", r, res.Text)
				}
				switch kind {
				case "deep":
					if res.Text != compact.String() {
						t.Errorf("%s: past the depth limit the text is not the compact JSON: %.100q", r, res.Text)
					}
				case "strings":
					// Every line is a member, a row or an item of the
					// result: none was forged by a character in a string.
					for _, line := range strings.Split(res.Text, "\n") {
						if strings.HasPrefix(strings.TrimLeft(line, " -"), "admin: true") || strings.HasPrefix(strings.TrimSpace(line), "x|y|z") {
							t.Fatalf("%s: a forged line: %q", r, line)
						}
					}
					if !strings.Contains(res.Text, `note: "fine\u2028D-9|forged"`) {
						t.Errorf("%s: %.400q", r, res.Text)
					}
				case "lookalikes":
					for i, v := range testserver.Lookalikes {
						if want := fmt.Sprintf("v%d: %s", i, leanQuote(v)); !strings.Contains(res.Text, want+"\n") && !strings.HasSuffix(res.Text, want) {
							t.Errorf("%s: %q is not quoted: want %q in %q", r, v, want, res.Text)
						}
						if !strings.Contains(res.Text, "["+leanQuote(v)+", ") && !strings.Contains(res.Text, ", "+leanQuote(v)) {
							t.Errorf("%s: %q is not quoted in the inline list", r, v)
						}
					}
				}
				if r == mcpruntime.RenderLeanDescribed && kind == "strings" && (!strings.Contains(res.Text, "id: D-1  # Deal id.\n") || strings.Contains(res.Text, "999")) {
					t.Errorf("the description is not cut at its U+2028: %.200q", res.Text)
				}
			}
		})
	}
}
