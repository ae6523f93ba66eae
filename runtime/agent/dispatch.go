package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// Call is a model's request to call a tool.
type Call struct {
	// ID is the provider's call id (tool_use id, tool_call_id), echoed in
	// the Result so the adapter can answer the right call.
	ID string `json:"id"`
	// Name is the model-facing name (see Set.Names).
	Name string `json:"name"`
	// Arguments are the model's JSON arguments as sent.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// PartKind is the kind of a content part.
type PartKind string

const (
	PartText  PartKind = "text"
	PartImage PartKind = "image"
	PartLink  PartKind = "resource_link"
)

// Part is one piece of a tool result as a model can be shown it.
type Part struct {
	Kind PartKind `json:"kind"`
	// Text is the text of a text part, and for the other kinds a one-line
	// description, for providers that cannot show them.
	Text string `json:"text"`
	// Image: the media type, checked against the bytes (image/png,
	// image/jpeg, image/gif or image/webp; any other image is a text part),
	// and the base64 data as the server sent it.
	MIMEType string `json:"mimeType,omitempty"`
	Data     string `json:"data,omitempty"`
	// Resource link: its URI and name (MIMEType is the link's).
	URI  string `json:"uri,omitempty"`
	Name string `json:"name,omitempty"`
}

// Result is the answer to one Call.
type Result struct {
	CallID string `json:"callId"`
	Name   string `json:"name"`
	// IsError marks a failed call; adapters pass it on as the tool
	// result's error flag.
	IsError bool `json:"isError,omitempty"`
	// Text is the whole result as text (ModelResult.Text).
	Text string `json:"text"`
	// Parts is the result as content parts, in the server's order.
	Parts []Part `json:"parts,omitempty"`
	// Pending is set when the call is gated and was not made: the loop
	// must pause (see Pause) rather than answer the model.
	Pending *mcpruntime.Approval `json:"pending,omitempty"`
	// Model is the tool's result as the runtime returned it (not
	// serialized).
	Model mcpruntime.ModelResult `json:"-"`
}

// Dispatch runs one tool call. Everything the model can fix or should know
// (an unknown tool, invalid arguments, a tool error, a denial) is a Result
// with IsError; a gated call is a Result with Pending. The Go error is for
// what only the program can handle: transport failures, cancellation, a
// failing approval store.
func (s *Set) Dispatch(ctx context.Context, c Call) (Result, error) {
	e, ok := s.byName[c.Name]
	if !ok {
		avail := strings.Join(s.Names(), ", ")
		if avail == "" {
			avail = "none"
		}
		text := fmt.Sprintf("There is no tool %q available to you. Available tools: %s.", c.Name, avail)
		return Result{CallID: c.ID, Name: c.Name, IsError: true, Text: text, Parts: []Part{{Kind: PartText, Text: text}}}, nil
	}
	args := c.Arguments
	if v := s.views[c.Name]; v.strict && s.dialect == DialectStrict {
		args = stripNulls(args, v.nulls)
	}
	m, err := e.tool.Invoke(mcpruntime.WithToolCallID(ctx, c.ID), args)
	if err != nil {
		return Result{}, fmt.Errorf("tool %q: %w", c.Name, err)
	}
	return toResult(c.ID, c.Name, m), nil
}

// DispatchAll runs a turn's calls in order. When some are gated it returns
// a Pause holding every call's result or approval; otherwise the results.
// The calls that are not gated are made at once either way.
func (s *Set) DispatchAll(ctx context.Context, calls []Call) ([]Result, *Pause, error) {
	out := make([]Result, 0, len(calls))
	pending := false
	for _, c := range calls {
		r, err := s.Dispatch(ctx, c)
		if err != nil {
			return nil, nil, err
		}
		pending = pending || r.Pending != nil
		out = append(out, r)
	}
	if pending {
		return nil, &Pause{Version: PauseVersion, Results: out}, nil
	}
	return out, nil, nil
}

func toResult(id, name string, m mcpruntime.ModelResult) Result {
	r := Result{CallID: id, Name: name, IsError: m.IsError, Text: m.Text, Pending: m.Pending, Model: m}
	res := m.Result
	if res == nil || m.IsError || m.Pending != nil {
		r.Parts = []Part{{Kind: PartText, Text: m.Text}}
		return r
	}
	structured := res.HasStructuredContent()
	if structured {
		r.Parts = append(r.Parts, Part{Kind: PartText, Text: m.Text})
	}
	for _, c := range res.Content {
		switch c.Type {
		case mcpruntime.ContentText:
			if !structured {
				r.Parts = append(r.Parts, Part{Kind: PartText, Text: c.Text})
			}
		case mcpruntime.ContentImage:
			if mt, ok := imageType(c.Data); ok {
				c.MIMEType = mt // described as what the bytes are
				r.Parts = append(r.Parts, Part{Kind: PartImage, Text: c.Placeholder(), MIMEType: mt, Data: c.Data})
			} else if !structured {
				r.Parts = append(r.Parts, Part{Kind: PartText, Text: c.Placeholder()})
			}
		case mcpruntime.ContentResourceLink:
			r.Parts = append(r.Parts, Part{Kind: PartLink, Text: c.Placeholder(), URI: c.URI, Name: c.Name, MIMEType: c.MIMEType})
		default:
			if !structured {
				r.Parts = append(r.Parts, Part{Kind: PartText, Text: c.Placeholder()})
			}
		}
	}
	if len(r.Parts) == 0 {
		r.Parts = []Part{{Kind: PartText, Text: m.Text}}
	}
	return r
}

// imageType sniffs base64 image data: providers take png, jpeg, gif and
// webp, and refuse a media type that does not match the bytes, so the type
// is read from the bytes, not from what the server declared.
func imageType(data string) (string, bool) {
	n := min(len(data), 64) / 4 * 4
	head, err := base64.StdEncoding.DecodeString(data[:n])
	if err != nil || len(head) == 0 {
		return "", false
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil {
		return "", false
	}
	switch t := http.DetectContentType(head); t {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return t, true
	}
	return "", false
}

// TextOf joins the text of parts, describing non-text ones, for providers
// whose tool results take text only.
func TextOf(parts []Part) string {
	var b bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
	}
	return b.String()
}
