package mcpimpl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// NewResourceReader is a resource template (or a concrete resource) as a
// tool a language model can call: its arguments are the template's
// variables, and its result is what Read<Name> returns, as text. The read
// takes the accessor's path: ReadTemplate (values percent-encoded as the
// operator says), the size limit, identity and the taint record, with
// opts.
func NewResourceReader(desc *mcpruntime.Descriptor, rd *mcpruntime.ResourceDescriptor, c mcpruntime.Caller, opts ...mcpruntime.ReadOption) mcpruntime.Invoker {
	return newReader(desc, rd, nil, c, opts)
}

// NewTypedResourceReader is NewResourceReader for a resource whose content
// the config binds to a schema: the content is decoded and validated by
// decode (a generated Decode<Name>Content) as the typed accessor does,
// and given to the model as structured content (so a toolset's rendering
// applies to it).
func NewTypedResourceReader[T any](desc *mcpruntime.Descriptor, rd *mcpruntime.ResourceDescriptor, decode func([]byte) (T, error), c mcpruntime.Caller, opts ...mcpruntime.ReadOption) mcpruntime.Invoker {
	return newReader(desc, rd, func(b []byte) error { _, err := decode(b); return err }, c, opts)
}

type readerVar struct {
	name, op       string
	list, optional bool
}

type resourceReader struct {
	desc  *mcpruntime.Descriptor
	rd    *mcpruntime.ResourceDescriptor
	check func([]byte) error
	c     mcpruntime.Caller
	opts  []mcpruntime.ReadOption
	vars  []readerVar
	err   error
}

func newReader(desc *mcpruntime.Descriptor, rd *mcpruntime.ResourceDescriptor, check func([]byte) error, c mcpruntime.Caller, opts []mcpruntime.ReadOption) *resourceReader {
	r := &resourceReader{desc: desc, rd: rd, check: check, c: c, opts: opts}
	if rd.URITemplate == "" {
		return r
	}
	t, err := mcpruntime.ParseURITemplate(rd.URITemplate)
	if err != nil {
		r.err = fmt.Errorf("tool %q: %w", desc.Name, err)
		return r
	}
	// As the generator types the accessor's parameters: the first
	// appearance decides; explode makes a list, a query operator optional.
	seen := map[string]bool{}
	for _, v := range t.Variables() {
		if seen[v.Name] {
			continue
		}
		seen[v.Name] = true
		r.vars = append(r.vars, readerVar{name: v.Name, op: v.Operator, list: v.Explode, optional: v.Operator == "?" || v.Operator == "&"})
	}
	return r
}

// Descriptor implements mcpruntime.Invoker.
func (r *resourceReader) Descriptor() *mcpruntime.Descriptor { return r.desc }

// Invoke reads the resource the model's arguments name. Invalid arguments,
// a resource the server does not have or refuses, one over the size limit,
// content not matching its bound schema and a timeout are model-facing
// failures; the Go error is for what the model cannot fix (a missing
// principal, transport failures, cancellation).
func (r *resourceReader) Invoke(ctx context.Context, args json.RawMessage) (mcpruntime.ModelResult, error) {
	if r.err != nil {
		return mcpruntime.ModelResult{}, r.err
	}
	vars, vs := r.decode(args)
	if len(vs) > 0 {
		return mcpruntime.ModelResult{IsError: true, Text: argumentsText(r.desc.Name, vs)}, nil
	}
	var res *mcpruntime.ResourceResult
	var err error
	if r.rd.URITemplate == "" {
		res, err = mcpruntime.ReadResource(ctx, r.c, r.rd, r.opts...)
	} else {
		res, err = mcpruntime.ReadTemplate(ctx, r.c, r.rd, vars, r.opts...)
	}
	if err != nil {
		return failure(ctx, err)
	}
	prov := res.Provenance
	if r.check != nil {
		return r.typed(res, &prov), nil
	}
	out := &mcpruntime.Result{}
	var text []string
	for _, c := range res.Contents {
		if c.IsBlob {
			b := mcpruntime.Content{Type: mcpruntime.ContentResource, Resource: &c}
			if strings.HasPrefix(c.MIMEType, "image/") {
				// An image a provider can show; agent.Dispatch checks its bytes.
				b = mcpruntime.Content{Type: mcpruntime.ContentImage, Data: c.Blob, MIMEType: c.MIMEType}
			}
			out.Content = append(out.Content, b)
			text = append(text, mcpruntime.Content{Type: mcpruntime.ContentResource, Resource: &c}.Placeholder())
			continue
		}
		out.Content = append(out.Content, mcpruntime.Content{Type: mcpruntime.ContentText, Text: c.Text})
		if len(res.Contents) > 1 {
			text = append(text, fmt.Sprintf("[%s]\n%s", c.URI, c.Text))
		} else {
			text = append(text, c.Text)
		}
	}
	if len(text) == 0 {
		text = []string{"(the resource has no contents)"}
	}
	return mcpruntime.ModelResult{Text: strings.Join(text, "\n"), Result: out, Provenance: &prov}, nil
}

func (r *resourceReader) typed(res *mcpruntime.ResourceResult, prov *mcpruntime.Provenance) mcpruntime.ModelResult {
	check := func(b []byte) (struct{}, error) { return struct{}{}, r.check(b) }
	if _, err := mcpruntime.DecodeResource(res, r.rd, check); err != nil {
		return mcpruntime.ModelResult{IsError: true, Provenance: prov,
			Text: "The resource was read, but its content is not what its schema declares, so it was not used: " + err.Error()}
	}
	text := res.Contents[0].Text
	var compact bytes.Buffer
	if json.Compact(&compact, []byte(text)) != nil {
		compact.Reset()
		compact.WriteString(text)
	}
	out := &mcpruntime.Result{StructuredContent: compact.Bytes(), Content: []mcpruntime.Content{{Type: mcpruntime.ContentText, Text: text}}}
	return mcpruntime.ModelResult{Text: out.ModelText(), Result: out, Provenance: prov}
}

// failure turns what a model can act on into a failed result.
func failure(ctx context.Context, err error) (mcpruntime.ModelResult, error) {
	var tl *mcpruntime.ResourceTooLargeError
	var ee *mcpruntime.ResourceExpiredError
	var pe *mcpruntime.ProtocolError
	fail := func(format string, args ...any) (mcpruntime.ModelResult, error) {
		return mcpruntime.ModelResult{IsError: true, Text: fmt.Sprintf(format, args...)}, nil
	}
	switch {
	case ctx.Err() != nil:
	case errors.As(err, &tl):
		return fail("The resource was not read: it is %d bytes, over the limit of %d bytes.", tl.Size, tl.Limit)
	case errors.As(err, &ee):
		msg := ""
		if errors.As(ee.Err, &pe) {
			msg = " (" + pe.Message + ")"
		}
		return fail("The server has no resource %s%s. Check the arguments.", ee.URI, msg)
	case errors.As(err, &pe):
		return fail("The server refused the read: %s", pe.Message)
	case errors.Is(err, context.DeadlineExceeded):
		m, _ := fail("The read did not finish in time. Try again later.")
		m.TimedOut = true
		return m, nil
	}
	return mcpruntime.ModelResult{}, err
}

// decode checks the model's arguments and makes the template's values of
// them. Values are percent-encoded by the expansion; what is refused here
// is what encoding leaves able to change the URI's path: an empty value,
// and a value that is (or, where reserved characters pass, holds) a "."
// or ".." segment.
func (r *resourceReader) decode(args json.RawMessage) (mcpruntime.TemplateVars, []mcpruntime.Violation) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	}
	var m map[string]json.RawMessage
	if args[0] != '{' || json.Unmarshal(args, &m) != nil {
		return nil, []mcpruntime.Violation{{Message: "arguments must be a JSON object of the template's variables"}}
	}
	var vs []mcpruntime.Violation
	known := map[string]bool{}
	var names []string
	for _, v := range r.vars {
		known[v.name] = true
		names = append(names, v.name)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !known[k] {
			want := "it has none"
			if len(names) > 0 {
				want = "they are " + strings.Join(names, ", ")
			}
			vs = append(vs, mcpruntime.Violation{Pointer: "/" + pointerEscape(k), Message: "unknown member: not a variable of the template (" + want + ")"})
		}
	}
	vars := mcpruntime.TemplateVars{}
	for _, v := range r.vars {
		ptr := "/" + v.name
		raw, ok := m[v.name]
		if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			if !v.optional {
				vs = append(vs, mcpruntime.Violation{Pointer: ptr, Message: "required: the template needs this variable"})
			}
			continue
		}
		if v.list {
			var list []string
			if json.Unmarshal(raw, &list) != nil {
				vs = append(vs, mcpruntime.Violation{Pointer: ptr, Message: "expected an array of strings"})
				continue
			}
			if len(list) == 0 && !v.optional {
				vs = append(vs, mcpruntime.Violation{Pointer: ptr, Message: "must have at least one item"})
			}
			for i, s := range list {
				if msg := checkValue(s, v); msg != "" {
					vs = append(vs, mcpruntime.Violation{Pointer: fmt.Sprintf("%s/%d", ptr, i), Message: msg})
				}
			}
			vars[v.name] = list
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			vs = append(vs, mcpruntime.Violation{Pointer: ptr, Message: "expected a string"})
			continue
		}
		if msg := checkValue(s, v); msg != "" {
			vs = append(vs, mcpruntime.Violation{Pointer: ptr, Message: msg})
			continue
		}
		vars[v.name] = s
	}
	return vars, vs
}

func checkValue(s string, v readerVar) string {
	switch v.op {
	case "?", "&", ";":
		return "" // a named value: the expansion encodes it whole
	}
	if s == "" {
		return "must not be empty: it would leave a gap in the resource's path"
	}
	reserved := v.op == "+" || v.op == "#"
	segs := []string{s}
	if reserved {
		segs = strings.Split(s, "/")
	}
	for _, seg := range segs {
		d := seg
		if reserved {
			// Reserved expansion passes pct-encoded triplets through, and
			// a server may decode "%2E" to ".".
			d = strings.ReplaceAll(strings.ReplaceAll(seg, "%2E", "."), "%2e", ".")
		}
		if d == "." || d == ".." {
			return fmt.Sprintf("%q would change the resource's path (a %q segment)", s, seg)
		}
	}
	return ""
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// argumentsText is the runtime's message for invalid arguments, so a
// model reads one form whatever the tool.
func argumentsText(tool string, vs []mcpruntime.Violation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Invalid arguments for tool %q", tool)
	if len(vs) > 1 {
		fmt.Fprintf(&b, " (%d problems)", len(vs))
	}
	b.WriteString(":")
	for _, v := range vs {
		b.WriteString("\n- ")
		b.WriteString(v.String())
	}
	b.WriteString("\nFix the arguments to match the tool's input schema and call it again.")
	return b.String()
}
