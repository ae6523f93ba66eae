package mcpruntime

import (
	"bytes"
	"encoding/json"
)

// Descriptor describes one tool as snapshotted: generated code emits one
// package-level value per tool and never mutates it.
type Descriptor struct {
	// Name is the tool's wire name, used on tools/call.
	Name string
	// GoName is the Go identifier the bindings use for the tool.
	GoName      string
	Title       string
	Description string
	Annotations Annotations
	// InputSchema is the JSON Schema a language model is shown for the
	// arguments (the tool's inputSchema).
	InputSchema json.RawMessage
	// OutputSchema is the tool's outputSchema; nil when it declares none.
	OutputSchema json.RawMessage
	// SchemaHash identifies the schemas the bindings were generated from,
	// so drift between a manifest and a live server can be detected.
	SchemaHash string
	// Server identifies the server whose manifest the bindings were
	// generated from: the manifest's id, "/", and its serverInfo name
	// ("crm/crm"); "" for a descriptor made without a manifest (the
	// connection manager's live tools, hand-written ones). Approvals are
	// bound to it as well as to the server label, so an approval made
	// through one server's bindings is not spent through another's when
	// their labels agree.
	Server string
	// TaskSupport is the tool's execution.taskSupport (task.go).
	TaskSupport TaskSupport
}

// Annotations are a tool's behaviour hints with the specification's
// defaults applied for hints the server did not send. They are hints from
// the server, not guarantees.
type Annotations struct {
	Title       string
	ReadOnly    bool // default false
	Destructive bool // default true; meaningful only when ReadOnly is false
	Idempotent  bool // default false
	OpenWorld   bool // default true
}

// DefaultAnnotations are the specification's defaults for a tool that sends
// no hints: not read-only, destructive, not idempotent, open-world.
func DefaultAnnotations() Annotations {
	return Annotations{Destructive: true, OpenWorld: true}
}

// HasOutputSchema reports whether the tool declares structured output.
func (d *Descriptor) HasOutputSchema() bool {
	b := bytes.TrimSpace(d.OutputSchema)
	return len(b) > 0 && !bytes.Equal(b, []byte("null"))
}

// closedInput reports whether the input schema's root forbids members it
// does not list (additionalProperties: false).
func (d *Descriptor) closedInput() bool {
	var s struct {
		AdditionalProperties json.RawMessage `json:"additionalProperties"`
	}
	if json.Unmarshal(d.InputSchema, &s) != nil {
		return false
	}
	return bytes.Equal(bytes.TrimSpace(s.AdditionalProperties), []byte("false"))
}
