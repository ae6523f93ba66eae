package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
	// PartFile is an embedded binary resource a provider can be given as
	// a file: a PDF (see Result.Parts).
	PartFile PartKind = "file"
)

// MaxResourceText bounds the text of the embedded text resources one
// result gives the model, in bytes: the text past it is cut (at a
// character boundary) and the model is told how much it was shown, and a
// resource that starts past it is described instead.
const MaxResourceText = 16 << 10

// MaxResourceFile bounds the decoded size of an embedded file (a PDF)
// given to the model as a file; a larger one is described instead.
const MaxResourceFile = 8 << 20

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
	// Resource link: its URI and name (MIMEType is the link's). File: the
	// embedded resource's URI, the last segment of its path as Name, and
	// MIMEType and Data as for an image (the type read from the bytes).
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
	// Parts is the result as content parts, in the server's order:
	// text blocks as text, images whose bytes are PNG, JPEG, GIF or WebP as
	// images, resource links as links, and embedded resources by what they
	// hold: text as text under a line naming the resource (at most
	// MaxResourceText bytes of it for one result, the cut said), an image
	// blob as an image, a PDF blob as a file (at most MaxResourceFile
	// bytes), anything else described in one line. This is what adapters
	// send; Text is the runtime's text, where embedded resources are
	// described.
	Parts []Part `json:"parts,omitempty"`
	// Pending is set when the call is gated and was not made: the loop
	// must pause (see Pause) rather than answer the model.
	Pending *mcpruntime.Approval `json:"pending,omitempty"`
	// Model is the tool's result as the runtime returned it (not
	// serialized).
	Model mcpruntime.ModelResult `json:"-"`
}

// Dispatch runs one tool call. Everything the model can fix or should know
// (an unknown tool, a tool its server does not offer now although the
// bindings have it, invalid arguments, a tool error, a denial) is a Result
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
	if me := missing(err, e); me != nil {
		text := fmt.Sprintf("The tool %q is not available: its server does not offer it now. Available tools: %s.", c.Name, s.offered(e.source, me))
		return Result{CallID: c.ID, Name: c.Name, IsError: true, Text: text, Parts: []Part{{Kind: PartText, Text: text}}}, nil
	}
	if err != nil {
		return Result{}, callError(c.Name, e.wire, err)
	}
	return toResult(c.ID, c.Name, m), nil
}

// callError adds the model's call to err, once: an error that names the
// tool already (the runtime's do, `tool "x": ...`) gets the call's name
// only when it is another (a prefixed one).
func callError(name, wire string, err error) error {
	if strings.Contains(err.Error(), "tool "+strconv.Quote(wire)) && name == wire {
		return err
	}
	return fmt.Errorf("call %q: %w", name, err)
}

// missing is err when it says that the server behind e does not offer e's
// tool: the bindings (a snapshot) list tools a live server may lack.
func missing(err error, e *entry) *mcpruntime.MissingToolError {
	var me *mcpruntime.MissingToolError
	if errors.As(err, &me) && slices.Contains(me.Tools, e.wire) {
		return me
	}
	return nil
}

// offered lists the set's tools but those of source that its server does
// not offer (me.Available is what it does).
func (s *Set) offered(source int, me *mcpruntime.MissingToolError) string {
	var names []string
	for _, e := range s.entries {
		if e.source != source || slices.Contains(me.Available, e.wire) {
			names = append(names, e.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
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
	budget := MaxResourceText
	for _, c := range res.Content {
		switch c.Type {
		case mcpruntime.ContentResource:
			// Not in structuredContent either way: the model gets it.
			r.Parts = append(r.Parts, resourcePart(c, &budget))
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
	switch t := sniff(data); t {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return t, true
	}
	return "", false
}

// sniff is the media type of valid base64 data, read from its bytes; ""
// when it is not valid base64.
func sniff(data string) string {
	n := min(len(data), 64) / 4 * 4
	head, err := base64.StdEncoding.DecodeString(data[:n])
	if err != nil || len(head) == 0 {
		return ""
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil {
		return ""
	}
	return http.DetectContentType(head)
}

// resourcePart is an embedded resource as a part; budget is what is left
// of MaxResourceText for the result.
func resourcePart(c mcpruntime.Content, budget *int) Part {
	rc := c.Resource
	if rc == nil {
		return Part{Kind: PartText, Text: c.Placeholder()}
	}
	if rc.IsBlob {
		switch t := sniff(rc.Blob); {
		case t == "image/png" || t == "image/jpeg" || t == "image/gif" || t == "image/webp":
			return Part{Kind: PartImage, Text: c.Placeholder(), MIMEType: t, Data: rc.Blob, URI: rc.URI}
		case t == "application/pdf" && base64.StdEncoding.DecodedLen(len(rc.Blob)) <= MaxResourceFile:
			return Part{Kind: PartFile, Text: c.Placeholder(), MIMEType: t, Data: rc.Blob, URI: rc.URI, Name: fileName(rc.URI)}
		}
		return Part{Kind: PartText, Text: c.Placeholder()}
	}
	head := "[embedded resource: " + rc.URI
	if rc.MIMEType != "" {
		head += " (" + rc.MIMEType + ")"
	}
	head += "]"
	if *budget <= 0 {
		return Part{Kind: PartText, Text: fmt.Sprintf("%s not shown: %d bytes, and this result already gave the model the %d bytes of resource text it may", head, len(rc.Text), MaxResourceText)}
	}
	text := rc.Text
	if len(text) > *budget {
		cut := *budget
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = fmt.Sprintf("%s\n[cut: the first %d of %d bytes are shown]", text[:cut], cut, len(rc.Text))
		*budget = 0
	} else {
		*budget -= len(text)
	}
	return Part{Kind: PartText, Text: head + "\n" + text}
}

// fileName is the last segment of a URI's path, for a provider that shows
// a file's name.
func fileName(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Path != "" {
		if b := path.Base(u.Path); b != "/" && b != "." {
			return b
		}
	}
	return "resource"
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
