package mcpruntime

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/runtime/internal/callresult"
)

// ParseResult reads results with the runtime's scanner and leaves what it
// does not take to encoding/json (parseResultJSON, the decoder it
// replaced). These tests hold the two to the same answer: the same Result,
// or the same error.

// resultCases are edge cases of tools/call results; fast marks those the
// scanner must take itself (the common shapes), so the fast path cannot
// quietly stop being used.
var resultCases = []struct {
	in   string
	fast bool
}{
	{everyKind, true},
	{`{"content":[]}`, true},
	{` {"content":[{"type":"text","text":"hi"}]}` + "\n\t", true},
	{`{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1},"isError":false}`, true},
	{`{"isError":true,"content":[{"type":"text","text":"boom"}]}`, true},
	{`{"content":[{"type":"text","text":"a\nb\u00e9\ud83d\ude00\/\\\"\b\f\r\t"}]}`, true},
	{`{"content":[{"type":"text","text":"lone \ud800 surrogate \udc00"}]}`, true},
	{"{\"content\":[{\"type\":\"text\",\"text\":\"bad \xff\xfe utf-8 \xc3\"}]}", true},
	{"{\"content\":[{\"type\":\"text\",\"text\":\"ok é 日本\"}]}", true},
	{`{"\u0063ontent":[{"type":"te\u0078t","text":"escaped names"}]}`, true},
	{`{"content":[{"type":"","x":1}]}`, true},
	{`{"content":[{"type":"hologram","text":7,"size":"big","resource":5,"type2":null}]}`, true},
	{`{"content":[{"type":"text","text":"a","resource":5,"annotations":null,"_meta":null}]}`, true},
	{`{"content":[{"type":"text","text":null,"title":null,"size":null}]}`, true},
	{`{"content":[],"structuredContent":null,"_meta":null,"isError":null}`, true},
	{`{"content":[],"structuredContent":[1,"two",{"3":[]}],"_meta":"m","extra":{"deep":[[[]]]}}`, true},
	{`{"content":[],"structuredContent":{"n":12345678901234567890,"f":-0.0e-0,"g":1E+2}}`, true},
	{`{"content":[{"type":"resource_link","uri":"u","name":"n","size":-0},{"type":"resource_link","uri":"u","size":9223372036854775807}]}`, true},
	{`{"content":[{"type":"resource_link","uri":"u","size":-9223372036854775808}]}`, true},
	{`{"content":[{"type":"resource","resource":{"uri":"u","text":"t","blob":"b"}}]}`, true},
	{`{"content":[{"type":"resource","resource":{"uri":"u","text":"t","blob":null}}]}`, true},
	{`{"content":[{"type":"resource","resource":{"uri":"u","blob":""}}]}`, true},
	{`{"content":[{"type":"resource","resource":{}}]}`, true},
	{`{"content":[{"type":"resource","resource":{"uri":"u","mimeType":null,"_meta":{"a":[1]},"x":[]}}]}`, true},
	{`{"content":[{"type":"text","text":"1"},{"type":"text","text":"2"},{"type":"text","text":"3"},{"type":"text","text":"4"},{"type":"text","text":"5"},{"type":"image","data":"AA==","mimeType":"image/png"}]}`, true},
	{`{"content":[],"":1}`, true},

	// Left to encoding/json, decoded or rejected as it does.
	{`{"Content":[{"type":"text","text":"folded name"}]}`, false},
	{`{"content":[{"TYPE":"text","Text":"folded"}]}`, false},
	{`{"content":[],"\u017ftructuredContent":{"long s":1}}`, false},
	{`{"content":[{"type":"resource_link","uri":"u","\u017fize":3}]}`, false},
	{`{"content":[],"isErro\u0072":true,"donn\u00e9es":1}`, false},
	{`{"content":[],"content":[{"type":"text","text":"last wins"}]}`, false},
	{`{"content":[{"type":"text","text":"a","text":null}]}`, false},
	{`{"content":[],"isError":true,"isError":null}`, false},
	{`{"content":[{"type":"text","type":null}]}`, false},
	{`{"content":[{"type":"resource","resource":null}]}`, false},
	{`{"content":[{"type":"resource","resource":{"uri":"u","text":5,"blob":"b"}}]}`, false},
	{`{"content":[{"type":"resource","resource":"x"}]}`, false},
	{`{"content":[{"type":"resource"}]}`, false},
	{`{"content":[{"type":"text","text":5}]}`, false},
	{`{"content":[{"type":"image","data":5}]}`, false},
	{`{"content":[{"type":"resource_link","uri":"u","size":1.5}]}`, false},
	{`{"content":[{"type":"resource_link","uri":"u","size":1e2}]}`, false},
	{`{"content":[{"type":"resource_link","uri":"u","size":"5"}]}`, false},
	{`{"content":[{"type":"resource_link","uri":"u","size":9223372036854775808}]}`, false},
	{`{"content":[{"type":5}]}`, false},
	{`{"content":[{"type":null}]}`, false},
	{`{"content":[{"text":"no type"}]}`, false},
	{`{"content":[5]}`, false},
	{`{"content":[null]}`, false},
	{`{"content":[[]]}`, false},
	{`{"content":["x"]}`, false},
	{`{"content":null}`, false},
	{`{"content":{}}`, false},
	{`{"content":"x"}`, false},
	{`{"isError":true}`, false},
	{`{"content":[],"isError":"yes"}`, false},
	{`{"content":[],"isError":1}`, false},
	{`{"content":[],"isError":truex}`, false},
	{`{"content":[]} x`, false},
	{`{"content":[]}{}`, false},
	{`{"content":[],}`, false},
	{`{"content":[,]}`, false},
	{`{"content":[{"type":"text","text":"a"},]}`, false},
	{`{"content":[],"structuredContent":01}`, false},
	{`{"content":[],"structuredContent":1.}`, false},
	{`{"content":[],"structuredContent":-}`, false},
	{`{"content":[],"structuredContent":+1}`, false},
	{`{"content":[],"structuredContent":.5}`, false},
	{`{"content":[],"structuredContent":tru}`, false},
	{"{\"content\":[{\"type\":\"text\",\"text\":\"ctl \x01\"}]}", false},
	{`{"content":[{"type":"text","text":"bad \x escape"}]}`, false},
	{`{"content":[{"type":"text","text":"short \u12"}]}`, false},
	{"\xef\xbb\xbf{\"content\":[]}", false},
	{`[]`, false},
	{`null`, false},
	{`"x"`, false},
	{`5`, false},
	{``, false},
	{`   `, false},
	{`{`, false},
	{`{"content"`, false},
	{`{"content":`, false},
	{`{"content":[`, false},
	{`{"content":[{"type":"text"`, false},
	{`{content:[]}`, false},
}

// nested returns v inside n arrays.
func nested(n int, v string) string {
	return strings.Repeat("[", n) + v + strings.Repeat("]", n)
}

// deepCases test the nesting limit (10,000 levels, as encoding/json) at
// every level the scanner reads: the result's members, a block's, a
// resource's.
func deepCases() []string {
	var out []string
	for _, d := range []int{9998, 9999, 10000} {
		out = append(out,
			`{"content":[],"structuredContent":`+nested(d, "1")+`}`,
			`{"content":[{"type":"text","text":"t","x":`+nested(d-2, "1")+`}]}`,
			`{"content":[{"type":"hologram","x":`+nested(d-2, "1")+`}]}`,
			`{"content":[{"type":"resource","resource":{"uri":"u","x":`+nested(d-3, "1")+`}}]}`,
		)
	}
	return out
}

// sameAsJSON fails t unless ParseResult and encoding/json agree on data.
func sameAsJSON(t *testing.T, data []byte) {
	t.Helper()
	got, gerr := ParseResult(data)
	want, werr := parseResultJSON(data, bytes.Clone(bytesTrim(data)))
	switch {
	case (gerr == nil) != (werr == nil):
		t.Fatalf("ParseResult(%.200q): error %v, encoding/json: %v", data, gerr, werr)
	case gerr != nil:
		if gerr.Error() != werr.Error() {
			t.Fatalf("ParseResult(%.200q): error %q, encoding/json: %q", data, gerr, werr)
		}
	case !reflect.DeepEqual(got, want):
		t.Fatalf("ParseResult(%.200q):\n got %s\nwant %s", data, describe(got), describe(want))
	}
}

// describe shows a Result with its raw members as text.
func describe(r *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "structured=%q meta=%q isError=%v raw=%.80q", r.StructuredContent, r.Meta, r.IsError, r.Raw)
	for i, c := range r.Content {
		size := "nil"
		if c.Size != nil {
			size = fmt.Sprint(*c.Size)
		}
		fmt.Fprintf(&b, "\n  [%d] type=%q text=%q data=%q mime=%q uri=%q name=%q title=%q desc=%q size=%s annotations=%q meta=%q raw=%q",
			i, c.Type, c.Text, c.Data, c.MIMEType, c.URI, c.Name, c.Title, c.Description, size, c.Annotations, c.Meta, c.Raw)
		if rc := c.Resource; rc != nil {
			fmt.Fprintf(&b, " resource={uri=%q mime=%q text=%q blob=%q isBlob=%v meta=%q raw=%q}", rc.URI, rc.MIMEType, rc.Text, rc.Blob, rc.IsBlob, rc.Meta, rc.Raw)
		}
	}
	return b.String()
}

func bytesTrim(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

func TestParseResultMatchesEncodingJSON(t *testing.T) {
	for _, tc := range resultCases {
		sameAsJSON(t, []byte(tc.in))
		_, ok := callresult.Parse[Content, ResourceContents](bytesTrim([]byte(tc.in)))
		if ok != tc.fast {
			t.Errorf("scanner took %.200q: %v, want %v", tc.in, ok, tc.fast)
		}
	}
	for _, in := range deepCases() {
		sameAsJSON(t, []byte(in))
	}
}

func FuzzParseResult(f *testing.F) {
	for _, tc := range resultCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(sameAsJSON)
}

// The raw members share one copy of the input: the caller may reuse its
// buffer, and appending to one member cannot overwrite the next.
func TestParseResultOwnsItsBytes(t *testing.T) {
	in := []byte(`{"content":[{"type":"text","text":"a","_meta":{"m":1}},{"type":"hologram"}],"structuredContent":{"s":2},"_meta":{"t":3}}`)
	r, err := ParseResult(in)
	if err != nil {
		t.Fatal(err)
	}
	want := string(in)
	for i := range in {
		in[i] = 'x'
	}
	if string(r.Raw) != want {
		t.Errorf("Raw = %s after the input changed", r.Raw)
	}
	_ = append(r.Content[0].Meta, "!!!!"...)
	_ = append(r.Content[0].Raw, "!!!!"...)
	_ = append(r.StructuredContent, "!!!!"...)
	if string(r.Raw) != want || string(r.Content[1].Raw) != `{"type":"hologram"}` || string(r.Meta) != `{"t":3}` {
		t.Errorf("an append overwrote a neighbour: %s", r.Raw)
	}
}

// The digest is of the bytes the server sent, not of a re-encoding; a
// Result built in code is hashed in its tools/call encoding.
func TestDigestIsOfTheBytesSent(t *testing.T) {
	sent := `{ "content": [{"type": "text", "text": "hi", "extra": 1}], "isError": false }`
	r, err := ParseResult([]byte("\n" + sent + " "))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(sent))
	if want := "sha256:" + hex.EncodeToString(sum[:]); r.Digest() != want {
		t.Errorf("Digest() = %s, want %s (the bytes as sent)", r.Digest(), want)
	}
	built := &Result{Content: []Content{{Type: ContentText, Text: "hi"}}}
	enc, _ := encodeResult(built)
	sum = sha256.Sum256(enc)
	if want := "sha256:" + hex.EncodeToString(sum[:]); built.Digest() != want || string(enc) != `{"content":[{"text":"hi","type":"text"}]}` {
		t.Errorf("built result: Digest() = %s over %s, want %s", built.Digest(), enc, want)
	}
	// What a gate records as the outcome is what the server sent, and reads
	// back to the same digest.
	if out, _ := encodeResult(r); string(out) != sent {
		t.Errorf("recorded outcome = %s, want %s", out, sent)
	} else if again, err := ParseResult(out); err != nil || again.Digest() != r.Digest() {
		t.Errorf("replayed digest = %v, %v", again, err)
	}
}

// benchResult is a typical structured result: the JSON once as
// structuredContent and once, escaped, as the text block beside it.
func benchResult() []byte {
	var deals []string
	for i := range 12 {
		deals = append(deals, fmt.Sprintf(`{"id":"D-%d","title":"Renewal for account %d","amount":%d.5,"stage":"proposal","owner":{"login":"owner%d","id":%d},"tags":["q3","emea"]}`, i, i, 1000*i, i, i))
	}
	doc := `{"region":"emea","quarter":"2026-Q3","total":123456.5,"deals":[` + strings.Join(deals, ",") + `]}`
	text, _ := json.Marshal(doc)
	return []byte(`{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` + doc + `}`)
}

func BenchmarkParseResult(b *testing.B) {
	data := benchResult()
	b.Run("scanner", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ParseResult(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := parseResultJSON(data, bytes.Clone(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
