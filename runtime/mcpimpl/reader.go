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
// variables, and its result is what Read<Name> returns, as text. The
// model's values are checked as untrusted (CheckTemplateValues)
// before anything is sent. The read takes the accessor's path: ReadTemplate
// (values percent-encoded as the operator says), the size limit, identity
// and the taint record, with opts; a gate among them
// (mcpruntime.WithToolOptions(mcpruntime.WithGate(g))) holds calls as it
// holds a tool's (see mcpruntime.ReaderGate), and ResumeInvoke makes an
// approved read once. In a Toolset the reader is a tool with a gate, so
// its held reads pause and resume through runtime/agent as a tool's calls.
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
	name           string
	list, optional bool
}

type resourceReader struct {
	// The gate, embedded so that a Toolset finds it (see
	// mcpruntime.ReaderGate).
	*mcpruntime.ReaderGate
	desc  *mcpruntime.Descriptor
	rd    *mcpruntime.ResourceDescriptor
	check func([]byte) error
	c     mcpruntime.Caller
	opts  []mcpruntime.ReadOption
	tmpl  *mcpruntime.URITemplate
	vars  []readerVar
	err   error
}

func newReader(desc *mcpruntime.Descriptor, rd *mcpruntime.ResourceDescriptor, check func([]byte) error, c mcpruntime.Caller, opts []mcpruntime.ReadOption) *resourceReader {
	r := &resourceReader{ReaderGate: mcpruntime.NewReaderGate(desc, c, opts...), desc: desc, rd: rd, check: check, c: c, opts: opts}
	if rd.URITemplate == "" {
		return r
	}
	t, err := mcpruntime.ParseURITemplate(rd.URITemplate)
	if err != nil {
		r.err = fmt.Errorf("tool %q: %w", desc.Name, err)
		return r
	}
	r.tmpl = t
	// As the generator types the accessor's parameters: the first
	// appearance decides; explode makes a list, a query operator optional.
	seen := map[string]bool{}
	for _, v := range t.Variables() {
		if seen[v.Name] {
			continue
		}
		seen[v.Name] = true
		r.vars = append(r.vars, readerVar{name: v.Name, list: v.Explode, optional: v.Operator == "?" || v.Operator == "&"})
	}
	return r
}

// Descriptor implements mcpruntime.Invoker.
func (r *resourceReader) Descriptor() *mcpruntime.Descriptor { return r.desc }

// Invoke reads the resource the model's arguments name. Invalid arguments,
// a resource the server does not have or refuses, one over the size limit,
// content not matching its bound schema and a timeout are model-facing
// failures; the Go error is for what the model cannot fix (a missing
// principal, transport failures, cancellation). A call the gate holds
// comes back with Pending set, nothing read.
func (r *resourceReader) Invoke(ctx context.Context, args json.RawMessage) (mcpruntime.ModelResult, error) {
	if r.err != nil {
		return mcpruntime.ModelResult{}, r.err
	}
	// Checked before the gate, so no approval is asked for a read that
	// would be refused.
	if _, vs := r.decode(args); len(vs) > 0 {
		return mcpruntime.ModelResult{IsError: true, Text: argumentsText(r.desc.Name, vs)}, nil
	}
	return r.run(ctx, args, "")
}

// ResumeInvoke implements mcpruntime.Resumer: the read a person approved,
// made once; a denial is a failed result with the person's reason. A read
// whose outcome the store could not record comes with an error wrapping
// mcpruntime.ErrOutcomeNotRecorded, as from Tool.ResumeInvoke.
func (r *resourceReader) ResumeInvoke(ctx context.Context, id string) (mcpruntime.ModelResult, error) {
	if r.err != nil {
		return mcpruntime.ModelResult{}, r.err
	}
	return r.run(ctx, nil, id)
}

// run reads through the gate: the live result when the read is made now,
// the recorded one when a resume finds it made.
func (r *resourceReader) run(ctx context.Context, args json.RawMessage, approval string) (mcpruntime.ModelResult, error) {
	var live *mcpruntime.ModelResult
	rec, prov, err := r.GateRead(ctx, args, approval, func(ctx context.Context, args json.RawMessage) (*mcpruntime.Result, *mcpruntime.Provenance, error) {
		m, rec, err := r.read(ctx, args)
		if err != nil {
			return nil, nil, err
		}
		live = &m
		return rec, m.Provenance, nil
	})
	var are *mcpruntime.ApprovalRequiredError
	var ae *mcpruntime.ApprovalError
	switch {
	case errors.As(err, &are):
		// The words a tool's held call gets.
		return mcpruntime.ModelResult{Pending: are.Approval, Text: fmt.Sprintf("The call to %q needs a person's approval and has not been made yet (approval %s). Do not call it again; the result will follow once a person has decided.", are.Approval.Tool, are.Approval.ID)}, nil
	case errors.As(err, &ae) && errors.Is(ae.Err, mcpruntime.ErrApprovalDenied):
		reason := ae.Detail
		if reason == "" {
			reason = "no reason was given"
		}
		return mcpruntime.ModelResult{IsError: true, Text: fmt.Sprintf("A person reviewing this call to %q denied it, so it was not made. Reason: %s", ae.Tool, reason)}, nil
	case err != nil && rec != nil && errors.Is(err, mcpruntime.ErrOutcomeNotRecorded):
		// The read was made and its outcome could not be recorded: this is
		// the only copy, for the model, with the error for the caller.
		if live != nil {
			return *live, err
		}
		return r.replay(rec, prov), err
	case err != nil:
		return mcpruntime.ModelResult{}, err
	case live != nil:
		return *live, nil
	}
	return r.replay(rec, prov), nil
}

// read makes the read for args, returning the model's result and the one
// to record: each contents item as an embedded resource, or the failure's
// text with IsError.
func (r *resourceReader) read(ctx context.Context, args json.RawMessage) (mcpruntime.ModelResult, *mcpruntime.Result, error) {
	vars, vs := r.decode(args)
	if len(vs) > 0 {
		// Approved arguments are the checked ones; this is for a store
		// that changed them.
		return r.failed(argumentsText(r.desc.Name, vs), nil)
	}
	var res *mcpruntime.ResourceResult
	var err error
	if r.rd.URITemplate == "" {
		res, err = mcpruntime.ReadResource(ctx, r.c, r.rd, r.opts...)
	} else {
		res, err = mcpruntime.ReadTemplate(ctx, r.c, r.rd, vars, r.opts...)
	}
	if err != nil {
		text, timedOut, ferr := failure(ctx, err)
		if ferr != nil {
			return mcpruntime.ModelResult{}, nil, ferr
		}
		m, rec, _ := r.failed(text, nil)
		m.TimedOut = timedOut
		return m, rec, nil
	}
	prov := res.Provenance
	if r.check != nil {
		check := func(b []byte) (struct{}, error) { return struct{}{}, r.check(b) }
		if _, err := mcpruntime.DecodeResource(res, r.rd, check); err != nil {
			return r.failed("The resource was read, but its content is not what its schema declares, so it was not used: "+err.Error(), &prov)
		}
	}
	rec := &mcpruntime.Result{Content: make([]mcpruntime.Content, len(res.Contents))}
	for i := range res.Contents {
		rec.Content[i] = mcpruntime.Content{Type: mcpruntime.ContentResource, Resource: &res.Contents[i]}
	}
	return r.replay(rec, &prov), rec, nil
}

func (r *resourceReader) failed(text string, prov *mcpruntime.Provenance) (mcpruntime.ModelResult, *mcpruntime.Result, error) {
	rec := &mcpruntime.Result{IsError: true, Content: []mcpruntime.Content{{Type: mcpruntime.ContentText, Text: text}}}
	return r.replay(rec, prov), rec, nil
}

// replay makes the model's result of a recorded read (see read).
func (r *resourceReader) replay(rec *mcpruntime.Result, prov *mcpruntime.Provenance) mcpruntime.ModelResult {
	if rec.IsError {
		return mcpruntime.ModelResult{IsError: true, Text: rec.Text(), Provenance: prov}
	}
	var items []mcpruntime.ResourceContents
	for _, c := range rec.Content {
		if c.Type == mcpruntime.ContentResource && c.Resource != nil {
			items = append(items, *c.Resource)
		}
	}
	if r.check != nil && len(items) == 1 {
		text := items[0].Text
		var compact bytes.Buffer
		if json.Compact(&compact, []byte(text)) != nil {
			compact.Reset()
			compact.WriteString(text)
		}
		out := &mcpruntime.Result{StructuredContent: compact.Bytes(), Content: []mcpruntime.Content{{Type: mcpruntime.ContentText, Text: text}}}
		return mcpruntime.ModelResult{Text: out.ModelText(), Result: out, Provenance: prov}
	}
	out := &mcpruntime.Result{}
	var text []string
	for i := range items {
		c := &items[i]
		if c.IsBlob {
			b := mcpruntime.Content{Type: mcpruntime.ContentResource, Resource: c}
			if strings.HasPrefix(c.MIMEType, "image/") {
				// An image a provider can show; agent.Dispatch checks its bytes.
				b = mcpruntime.Content{Type: mcpruntime.ContentImage, Data: c.Blob, MIMEType: c.MIMEType}
			}
			out.Content = append(out.Content, b)
			text = append(text, mcpruntime.Content{Type: mcpruntime.ContentResource, Resource: c}.Placeholder())
			continue
		}
		out.Content = append(out.Content, mcpruntime.Content{Type: mcpruntime.ContentText, Text: c.Text})
		if len(items) > 1 {
			text = append(text, fmt.Sprintf("[%s]\n%s", c.URI, c.Text))
		} else {
			text = append(text, c.Text)
		}
	}
	if len(text) == 0 {
		text = []string{"(the resource has no contents)"}
	}
	return mcpruntime.ModelResult{Text: strings.Join(text, "\n"), Result: out, Provenance: prov}
}

// messageCapError is a connection's refusal of a message over its cap
// (mcpgo.MessageTooLargeError): over stdio it also ends the connection,
// but for the read it is an answer too large, which a model can act on.
type messageCapError interface {
	error
	MessageCap() int64
}

// failure turns what a model can act on into a failed result's text;
// anything else stays a Go error.
func failure(ctx context.Context, err error) (text string, timedOut bool, _ error) {
	var tl *mcpruntime.ResourceTooLargeError
	var ee *mcpruntime.ResourceExpiredError
	var pe *mcpruntime.ProtocolError
	var mc messageCapError
	switch {
	case ctx.Err() != nil:
	case errors.As(err, &mc):
		return fmt.Sprintf("The resource was not read: the server's answer is over the connection's limit of %d bytes for one message. Read something smaller.", mc.MessageCap()), false, nil
	case errors.As(err, &tl) && tl.Size == tl.Limit+1:
		return fmt.Sprintf("The resource was not read: it is over the limit of %d bytes.", tl.Limit), false, nil
	case errors.As(err, &tl):
		return fmt.Sprintf("The resource was not read: it is %d bytes, over the limit of %d bytes.", tl.Size, tl.Limit), false, nil
	case errors.As(err, &ee):
		msg := ""
		if errors.As(ee.Err, &pe) {
			msg = " (" + pe.Message + ")"
		}
		return fmt.Sprintf("The server has no resource %s%s. Check the arguments.", ee.URI, msg), false, nil
	case errors.As(err, &pe):
		return "The server refused the read: " + pe.Message, false, nil
	case errors.Is(err, context.DeadlineExceeded):
		return "The read did not finish in time. Try again later.", true, nil
	}
	return "", false, err
}

// decode checks the model's arguments and makes the template's values of
// them: the JSON shape here, the values themselves by
// CheckTemplateValues (what percent-encoding leaves able to change
// the URI once a server decodes it, and the length limits).
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
			vars[v.name] = list
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			vs = append(vs, mcpruntime.Violation{Pointer: ptr, Message: "expected a string"})
			continue
		}
		vars[v.name] = s
	}
	if r.tmpl != nil {
		vs = append(vs, CheckTemplateValues(r.tmpl, vars)...)
	}
	return vars, vs
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
