package mcpruntime

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Provenance says where one tool result came from. It holds no content,
// only a digest of it, and never the caller's token.
type Provenance struct {
	Server string `json:"server,omitempty"`
	Tool   string `json:"tool"`
	// Resource is the URI of a resource read and Prompt the name of a
	// prompt got (see ReadURI, GetPrompt); Tool is "" for those.
	Resource string    `json:"resource,omitempty"`
	Prompt   string    `json:"prompt,omitempty"`
	Time     time.Time `json:"time"`
	// Digest is "sha256:" and the hex SHA-256 of the result as the server
	// sent it (Result.Digest: the bytes of the JSON-RPC result member), or
	// of the JSON-RPC error (code, message, data) when the server answered
	// with one: its message reaches the model too.
	Digest string `json:"digest"`
	// External marks content from outside the program: every MCP tool
	// result, and the output of Go tools that declare it. External content
	// taints the run.
	External bool `json:"external"`
	// IsError marks a result the tool flagged as failed, or a JSON-RPC
	// error; its text is still external content.
	IsError bool `json:"isError,omitempty"`
}

// source names what brought the content in, for approval reasons: the
// tool, the resource read or the prompt got.
func (p Provenance) source() string {
	switch {
	case p.Resource != "":
		return fmt.Sprintf("resource %q", p.Resource)
	case p.Prompt != "":
		return fmt.Sprintf("prompt %q", p.Prompt)
	}
	return fmt.Sprintf("tool %q", p.Tool)
}

// Run is the ledger of one agent run: the provenance of every result the
// run ingested, in order. Carry it in the run's context with WithRun; each
// run has its own, so concurrent runs never see each other's records. A
// Run is safe for concurrent use.
type Run struct {
	id string

	mu      sync.Mutex
	records []Provenance
}

// NewRun returns an empty ledger. An empty id gets a random one.
func NewRun(id string) *Run {
	if id == "" {
		id = randomID()
	}
	return &Run{id: id}
}

// ID returns the run's id.
func (r *Run) ID() string { return r.id }

type runKey struct{}

// WithRun returns a context whose tool calls are recorded in r.
func WithRun(ctx context.Context, r *Run) context.Context {
	return context.WithValue(ctx, runKey{}, r)
}

// RunFrom returns the run carried by ctx, or nil.
func RunFrom(ctx context.Context) *Run {
	r, _ := ctx.Value(runKey{}).(*Run)
	return r
}

// Record adds p to the ledger. Tools record their results themselves; Go
// code that brings other content into a run records it here.
func (r *Run) Record(p Provenance) {
	r.mu.Lock()
	r.records = append(r.records, p)
	r.mu.Unlock()
}

// Ledger returns the records so far, oldest first.
func (r *Run) Ledger() []Provenance {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.records)
}

// Tainted reports whether the run has ingested external content, and the
// first record that brought it in.
func (r *Run) Tainted() (Provenance, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.records {
		if p.External {
			return p, true
		}
	}
	return Provenance{}, false
}

// recordTaint is the innermost guard: every result a server returns is
// recorded, whichever path (call, invoke, resume) made the call.
func recordTaint(next handler) handler {
	return func(ctx context.Context, c *call) (*Result, error) {
		res, err := next(ctx, c)
		rec, pe := res, (*ProtocolError)(nil)
		if c.op == opStatus || c.op == opCancel {
			// A task's status is no result, unless its outcome came with it.
			rec, pe = c.inline, c.inlineErr
			if rec == nil && pe == nil {
				return res, err
			}
		}
		switch {
		case rec != nil:
			c.prov = &Provenance{Digest: resultDigest(rec), IsError: rec.IsError}
		case pe != nil || errors.As(err, &pe):
			// A JSON-RPC error's message is the server's text and is shown
			// to the model ("The server rejected the call: …"), so it is
			// external content like a result.
			c.prov = &Provenance{Digest: protocolDigest(pe), IsError: true}
		default:
			return res, err
		}
		c.prov.Server, c.prov.Tool, c.prov.Time, c.prov.External = c.server, c.desc.Name, time.Now().UTC(), true
		if r := RunFrom(ctx); r != nil {
			r.Record(*c.prov)
		}
		if c.obs != nil {
			c.obs.Event(ctx, &Event{Kind: EventTaint, Provenance: c.prov})
		}
		return res, err
	}
}

// Digest is "sha256:" and the hex SHA-256 of Raw, the result exactly as the
// server sent it: the digest provenance records carry. A Result without Raw
// (built in code) is hashed as ParseResult would read it back: encoded as a
// tools/call result (each block's raw JSON, structuredContent, _meta,
// isError).
func (r *Result) Digest() string { return resultDigest(r) }

// protocolDigest is the digest of a JSON-RPC error as the server sent it
// (code, message, data).
func protocolDigest(e *ProtocolError) string {
	b, _ := json.Marshal(struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{e.Code, e.Message, e.Data})
	return digestOf(b)
}

// resultDigest hashes the bytes the runtime already holds; only a Result
// built in code is encoded first.
func resultDigest(r *Result) string {
	if r.Raw != nil {
		return digestOf(r.Raw)
	}
	b, err := encodeResult(r)
	if err != nil {
		b = []byte(fmt.Sprint(err)) // cannot happen: every part is already JSON
	}
	return digestOf(b)
}

// digestOf is "sha256:" and the hex SHA-256 of b, in one allocation.
func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	var d [len("sha256:") + 2*sha256.Size]byte
	copy(d[:], "sha256:")
	hex.Encode(d[len("sha256:"):], sum[:])
	return string(d[:])
}

// encodeResult encodes r as a tools/call result that ParseResult reads back
// to an equal Result: a copy of Raw, the bytes as sent, when it has them.
func encodeResult(r *Result) (json.RawMessage, error) {
	if r.Raw != nil {
		return cloneRaw(r.Raw), nil
	}
	w := struct {
		Content           []Content       `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
		Meta              json.RawMessage `json:"_meta,omitempty"`
		IsError           bool            `json:"isError,omitempty"`
	}{Content: r.Content, StructuredContent: r.StructuredContent, Meta: r.Meta, IsError: r.IsError}
	if w.Content == nil {
		w.Content = []Content{}
	}
	return json.Marshal(w)
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// FuncTool is a tool written in Go, offered to a model next to MCP tools.
// It declares whether its output is external: output that comes from
// outside the program (a web page, a file a user uploaded) taints the run
// like an MCP result does; output the program computed itself does not.
type FuncTool struct {
	Desc *Descriptor
	// External marks the tool's output as coming from outside the program.
	External bool
	Func     func(ctx context.Context, args json.RawMessage) (ModelResult, error)
}

// Descriptor implements Invoker.
func (f *FuncTool) Descriptor() *Descriptor { return f.Desc }

// Invoke runs the function and records its output in the run's ledger.
func (f *FuncTool) Invoke(ctx context.Context, args json.RawMessage) (ModelResult, error) {
	if f.Func == nil {
		return ModelResult{}, fmt.Errorf("tool %q: FuncTool without a Func", f.Desc.Name)
	}
	m, err := f.Func(ctx, args)
	if err != nil {
		return m, err
	}
	p := Provenance{Tool: f.Desc.Name, Time: time.Now().UTC(), External: f.External, IsError: m.IsError}
	if m.Result != nil {
		p.Digest = resultDigest(m.Result)
	} else {
		p.Digest = digestOf([]byte(m.Text))
	}
	m.Provenance = &p
	if r := RunFrom(ctx); r != nil {
		r.Record(p)
	}
	return m, nil
}
