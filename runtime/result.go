package mcpruntime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpgen/mcpgen/runtime/internal/callresult"
	"github.com/mcpgen/mcpgen/runtime/internal/jsonscan"
)

// Content block kinds defined by MCP. Other kinds are kept with their raw
// JSON in Content.Raw.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource" // an embedded resource
)

// Result is everything a server sent back for one tools/call, kept
// losslessly: every content block (unknown kinds included), the raw
// structuredContent and _meta bytes, and isError.
type Result struct {
	// Content holds the content blocks in the order the server sent them.
	Content []Content
	// StructuredContent is the structuredContent member exactly as sent;
	// nil when absent (a JSON null is kept as the four bytes "null").
	StructuredContent json.RawMessage
	// Meta is the _meta member exactly as sent; nil when absent.
	Meta json.RawMessage
	// IsError reports a tool-level failure (the call reached the tool and
	// the tool says it failed).
	IsError bool
	// Raw is the whole result as received (ParseResult sets it; the raw
	// members above share its bytes), and what Digest hashes.
	Raw json.RawMessage
}

// Content is one content block. The fields for the block's kind are set;
// Raw always holds the block exactly as received, so kinds this package does
// not know, and members it has no field for, are not lost.
type Content struct {
	Type string

	// text
	Text string

	// image, audio: base64 data as sent. MIMEType is also used by
	// resource_link.
	Data     string
	MIMEType string

	// resource_link
	URI         string
	Name        string
	Title       string
	Description string
	Size        *int64

	// resource (embedded)
	Resource *ResourceContents

	Annotations json.RawMessage
	Meta        json.RawMessage

	// Raw is the whole block as received.
	Raw json.RawMessage
}

// ResourceContents is the resource of an embedded resource block: text or a
// base64 blob.
type ResourceContents struct {
	URI      string
	MIMEType string
	Text     string
	Blob     string
	// IsBlob tells a blob from text (an empty text is still text).
	IsBlob bool
	Meta   json.RawMessage
	Raw    json.RawMessage
}

type wireResult struct {
	Content           *[]json.RawMessage `json:"content"`
	StructuredContent json.RawMessage    `json:"structuredContent"`
	Meta              json.RawMessage    `json:"_meta"`
	IsError           *bool              `json:"isError"`
}

// ParseResult decodes the JSON of a tools/call result (the JSON-RPC "result"
// member). Use it when bringing your own client: hand it the raw bytes and
// nothing the server sent is lost. It keeps one copy of data, which Raw and
// the other raw members share; data may be reused afterwards.
func ParseResult(data []byte) (*Result, error) {
	// One copy, which the raw members share, read once by the scanner; what
	// it leaves (malformed results included) goes to encoding/json.
	raw := bytes.Clone(jsonscan.Trim(data))
	if p, ok := callresult.Parse[Content, ResourceContents](raw); ok {
		return &Result{Content: p.Content, StructuredContent: p.StructuredContent, Meta: p.Meta, IsError: p.IsError, Raw: raw}, nil
	}
	return parseResultJSON(data, raw)
}

// parseResultJSON is ParseResult by encoding/json, whose errors it
// returns; raw is the copy of data for Result.Raw.
func parseResultJSON(data, raw []byte) (*Result, error) {
	var w wireResult
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("tools/call result: %w", err)
	}
	if w.Content == nil {
		return nil, errors.New("tools/call result: missing content member")
	}
	r := &Result{
		StructuredContent: cloneRaw(w.StructuredContent),
		Meta:              cloneRaw(w.Meta),
		IsError:           w.IsError != nil && *w.IsError,
		Raw:               raw,
	}
	for i, raw := range *w.Content {
		var c Content
		if err := c.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("tools/call result: /content/%d: %w", i, err)
		}
		r.Content = append(r.Content, c)
	}
	return r, nil
}

func cloneRaw(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

type wireContent struct {
	Type        *string         `json:"type"`
	Text        string          `json:"text"`
	Data        string          `json:"data"`
	MIMEType    string          `json:"mimeType"`
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Size        *int64          `json:"size"`
	Resource    json.RawMessage `json:"resource"`
	Annotations json.RawMessage `json:"annotations"`
	Meta        json.RawMessage `json:"_meta"`
}

// UnmarshalJSON decodes a content block. Only a missing or non-string type
// is an error; members of unexpected types in a block of unknown kind are
// left in Raw.
func (c *Content) UnmarshalJSON(data []byte) error {
	var probe struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return fmt.Errorf("content block: %w", err)
	}
	if probe.Type == nil {
		return errors.New("content block without a type")
	}
	*c = Content{Type: *probe.Type, Raw: cloneRaw(data)}
	switch c.Type {
	case ContentText, ContentImage, ContentAudio, ContentResourceLink, ContentResource:
	default:
		return nil
	}
	var w wireContent
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("%s content block: %w", c.Type, err)
	}
	c.Text, c.Data, c.MIMEType = w.Text, w.Data, w.MIMEType
	c.URI, c.Name, c.Title, c.Description, c.Size = w.URI, w.Name, w.Title, w.Description, w.Size
	c.Annotations, c.Meta = cloneRaw(w.Annotations), cloneRaw(w.Meta)
	if c.Type == ContentResource {
		if len(w.Resource) == 0 {
			return errors.New("resource content block without a resource")
		}
		var rc ResourceContents
		if err := rc.UnmarshalJSON(w.Resource); err != nil {
			return fmt.Errorf("resource content block: %w", err)
		}
		c.Resource = &rc
	}
	return nil
}

// MarshalJSON returns Raw when set (the block as received), else encodes
// the fields for the block's kind.
func (c Content) MarshalJSON() ([]byte, error) {
	if len(c.Raw) > 0 {
		return c.Raw, nil
	}
	w := map[string]any{"type": c.Type}
	put := func(k, v string) {
		if v != "" {
			w[k] = v
		}
	}
	switch c.Type {
	case ContentText:
		w["text"] = c.Text
	case ContentImage, ContentAudio:
		w["data"], w["mimeType"] = c.Data, c.MIMEType
	case ContentResourceLink:
		w["uri"], w["name"] = c.URI, c.Name
		put("title", c.Title)
		put("description", c.Description)
		put("mimeType", c.MIMEType)
		if c.Size != nil {
			w["size"] = *c.Size
		}
	case ContentResource:
		if c.Resource != nil {
			w["resource"] = c.Resource
		}
	}
	if len(c.Annotations) > 0 {
		w["annotations"] = c.Annotations
	}
	if len(c.Meta) > 0 {
		w["_meta"] = c.Meta
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes embedded resource contents; a string "blob" member
// makes it a blob, otherwise it is text.
func (r *ResourceContents) UnmarshalJSON(data []byte) error {
	var w struct {
		URI      string          `json:"uri"`
		MIMEType string          `json:"mimeType"`
		Text     *string         `json:"text"`
		Blob     *string         `json:"blob"`
		Meta     json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*r = ResourceContents{URI: w.URI, MIMEType: w.MIMEType, Meta: cloneRaw(w.Meta), Raw: cloneRaw(data)}
	switch {
	case w.Blob != nil:
		r.Blob, r.IsBlob = *w.Blob, true
	case w.Text != nil:
		r.Text = *w.Text
	}
	return nil
}

// MarshalJSON returns Raw when set, else encodes the fields.
func (r ResourceContents) MarshalJSON() ([]byte, error) {
	if len(r.Raw) > 0 {
		return r.Raw, nil
	}
	w := map[string]any{"uri": r.URI}
	if r.MIMEType != "" {
		w["mimeType"] = r.MIMEType
	}
	if r.IsBlob {
		w["blob"] = r.Blob
	} else {
		w["text"] = r.Text
	}
	if len(r.Meta) > 0 {
		w["_meta"] = r.Meta
	}
	return json.Marshal(w)
}

// Text returns the text blocks joined with newlines.
func (r *Result) Text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == ContentText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// HasStructuredContent reports whether structuredContent was sent (a JSON
// null counts as absent).
func (r *Result) HasStructuredContent() bool {
	b := bytes.TrimSpace(r.StructuredContent)
	return len(b) > 0 && !bytes.Equal(b, []byte("null"))
}

// ModelText is what a language model should see for this result:
// structuredContent as compact JSON when present (and not an error),
// otherwise the text blocks joined with newlines, with a one-line
// placeholder for each non-text block.
func (r *Result) ModelText() string {
	if !r.IsError && r.HasStructuredContent() {
		var b bytes.Buffer
		if json.Compact(&b, r.StructuredContent) == nil {
			return b.String()
		}
	}
	var lines []string
	for _, c := range r.Content {
		if c.Type == ContentText {
			lines = append(lines, c.Text)
		} else {
			lines = append(lines, c.Placeholder())
		}
	}
	if len(lines) == 0 {
		return "(the tool returned no content)"
	}
	return strings.Join(lines, "\n")
}

// Placeholder is a one-line description of a non-text block for a model
// that cannot see it.
func (c Content) Placeholder() string {
	switch c.Type {
	case ContentText:
		return c.Text
	case ContentImage, ContentAudio:
		return fmt.Sprintf("[%s: %s, %d bytes]", c.Type, orUnknown(c.MIMEType), base64Len(c.Data))
	case ContentResourceLink:
		s := "[resource link: " + c.URI
		if c.Name != "" {
			s += fmt.Sprintf(" %q", c.Name)
		}
		if c.MIMEType != "" {
			s += " (" + c.MIMEType + ")"
		}
		return s + "]"
	case ContentResource:
		if c.Resource == nil {
			return "[embedded resource]"
		}
		kind, n := "text", len(c.Resource.Text)
		if c.Resource.IsBlob {
			kind, n = "blob", base64Len(c.Resource.Blob)
		}
		return fmt.Sprintf("[embedded resource: %s (%s, %s, %d bytes)]", c.Resource.URI, orUnknown(c.Resource.MIMEType), kind, n)
	default:
		return fmt.Sprintf("[%q content block]", c.Type)
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// base64Len is the decoded size of standard base64 text, without decoding.
func base64Len(s string) int {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	return len(s) * 3 / 4
}
