package agent

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

func embedded(rc mcpruntime.ResourceContents) mcpruntime.Content {
	return mcpruntime.Content{Type: mcpruntime.ContentResource, Resource: &rc}
}

// Embedded resources become parts by what they hold, their text within
// MaxResourceText for the whole result, cut at a character boundary.
func TestEmbeddedResourceParts(t *testing.T) {
	pdf := base64.StdEncoding.EncodeToString([]byte("%PDF-1.7\n%%EOF\n"))
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	long := strings.Repeat("é", MaxResourceText) // two bytes each
	res := &mcpruntime.Result{StructuredContent: []byte(`{"n":1}`), Content: []mcpruntime.Content{
		{Type: mcpruntime.ContentText, Text: `{"n":1}`},
		embedded(mcpruntime.ResourceContents{URI: "file:///a/b/report.pdf", MIMEType: "application/octet-stream", Blob: pdf, IsBlob: true}),
		embedded(mcpruntime.ResourceContents{URI: "file:///chart", MIMEType: "image/jpeg", Blob: png, IsBlob: true}),
		embedded(mcpruntime.ResourceContents{URI: "file:///short.txt", Text: "short"}),
		embedded(mcpruntime.ResourceContents{URI: "file:///long.txt", MIMEType: "text/plain", Text: long}),
		embedded(mcpruntime.ResourceContents{URI: "file:///after.txt", Text: "after"}),
		embedded(mcpruntime.ResourceContents{URI: "file:///x.bin", Blob: "AAEC", IsBlob: true}),
		{Type: mcpruntime.ContentResource},
	}}
	r := toResult("c", "t", mcpruntime.ModelResult{Text: `{"n":1}`, Result: res})
	if len(r.Parts) != 8 {
		t.Fatalf("%d parts: %+v", len(r.Parts), r.Parts)
	}
	if p := r.Parts[1]; p.Kind != PartFile || p.MIMEType != "application/pdf" || p.Data != pdf || p.Name != "report.pdf" || p.URI != "file:///a/b/report.pdf" {
		t.Errorf("pdf: %+v", p)
	}
	if p := r.Parts[2]; p.Kind != PartImage || p.MIMEType != "image/png" {
		t.Errorf("image blob: %+v", p)
	}
	if p := r.Parts[3]; p.Kind != PartText || p.Text != "[embedded resource: file:///short.txt]\nshort" {
		t.Errorf("short: %+v", p)
	}
	p := r.Parts[4]
	shown, cut, ok := strings.Cut(strings.TrimPrefix(p.Text, "[embedded resource: file:///long.txt (text/plain)]\n"), "\n[cut: the first ")
	if !ok || !utf8.ValidString(shown) || len(shown) > MaxResourceText-len("short") || len(shown) < MaxResourceText-len("short")-1 || !strings.HasSuffix(cut, " of 32768 bytes are shown]") {
		t.Errorf("long: %d bytes shown, valid %v, %q", len(shown), utf8.ValidString(shown), cut)
	}
	if p := r.Parts[5]; p.Kind != PartText || !strings.HasPrefix(p.Text, "[embedded resource: file:///after.txt] not shown: 5 bytes") {
		t.Errorf("after the budget: %+v", p)
	}
	if p := r.Parts[6]; p.Kind != PartText || p.Text != "[embedded resource: file:///x.bin (unknown type, blob, 3 bytes)]" {
		t.Errorf("blob: %+v", p)
	}
	if p := r.Parts[7]; p.Text != "[embedded resource]" {
		t.Errorf("empty: %+v", p)
	}
	// A PDF over MaxResourceFile is described.
	big := base64.StdEncoding.EncodeToString(append([]byte("%PDF-1.7\n"), make([]byte, MaxResourceFile)...))
	r = toResult("c", "t", mcpruntime.ModelResult{Text: "x", Result: &mcpruntime.Result{Content: []mcpruntime.Content{
		embedded(mcpruntime.ResourceContents{URI: "file:///big.pdf", Blob: big, IsBlob: true})}}})
	if p := r.Parts[0]; p.Kind != PartText || !strings.HasPrefix(p.Text, "[embedded resource: file:///big.pdf") {
		t.Errorf("big pdf: %+v", p.Kind)
	}
}
