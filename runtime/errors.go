package mcpruntime

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ToolError is a tools/call result with isError set: the tool ran and
// reported a failure. Nothing is decoded; Result holds everything the server
// sent.
type ToolError struct {
	Tool    string
	Message string // the server's text (non-text blocks as placeholders)
	Result  *Result
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("tool %q failed: %s", e.Tool, e.Message)
}

// OutputSource says where a typed output was decoded from.
type OutputSource int

const (
	// FromNothing: no typed output (the tool declares no output schema).
	FromNothing OutputSource = iota
	// FromStructuredContent: decoded from structuredContent, the source of
	// truth.
	FromStructuredContent
	// FromTextContent: structuredContent was absent and a text block held
	// JSON.
	FromTextContent
)

func (s OutputSource) String() string {
	switch s {
	case FromStructuredContent:
		return "structuredContent"
	case FromTextContent:
		return "text content"
	default:
		return "nothing"
	}
}

// OutputError reports a result whose structured output is missing or does
// not match the tool's output schema. Raw keeps the bytes that failed.
type OutputError struct {
	Tool       string
	Source     OutputSource // where Raw came from; FromNothing when no output was found
	Raw        []byte
	Violations []Violation
	Result     *Result
}

func (e *OutputError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tool %q returned output that does not match its output schema", e.Tool)
	if e.Source != FromNothing {
		fmt.Fprintf(&b, " (from %s)", e.Source)
	}
	writeViolations(&b, e.Violations)
	return b.String()
}

func writeViolations(b *strings.Builder, vs []Violation) {
	switch len(vs) {
	case 0:
	case 1:
		b.WriteString(": ")
		b.WriteString(vs[0].String())
	default:
		fmt.Fprintf(b, ": %d violations:", len(vs))
		for _, v := range vs {
			b.WriteString("\n  ")
			b.WriteString(v.String())
		}
	}
}

// TimeoutError reports that a call ran past its per-call timeout. It
// matches context.DeadlineExceeded with errors.Is.
type TimeoutError struct {
	Tool    string
	Timeout time.Duration
	// Err is what the connection reported as the time ran out (a
	// *ConnectError while still connecting), if anything.
	Err error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("tool %q did not answer within %s", e.Tool, e.Timeout)
}

// Unwrap makes errors.Is(err, context.DeadlineExceeded) true, and lets
// errors.As reach what the connection reported.
func (e *TimeoutError) Unwrap() []error {
	if e.Err != nil {
		return []error{context.DeadlineExceeded, e.Err}
	}
	return []error{context.DeadlineExceeded}
}
