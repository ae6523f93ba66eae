package mcpruntime

import (
	"fmt"
	"strings"
)

// Violation is one way a value breaks its schema, at a JSON Pointer
// relative to the validated document ("" is the document itself).
type Violation struct {
	Pointer string
	Message string
}

func (v Violation) String() string {
	p := v.Pointer
	if p == "" {
		p = "/"
	}
	return p + ": " + v.Message
}

// ValidationError lists every violation found in one value, in the order the
// generated validator met them (schema order, so stable).
type ValidationError struct {
	// What was validated, e.g. "create_deal input".
	Subject    string
	Violations []Violation
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	if e.Subject != "" {
		b.WriteString(e.Subject)
		b.WriteString(": ")
	}
	switch len(e.Violations) {
	case 0:
		b.WriteString("invalid")
	case 1:
		b.WriteString(e.Violations[0].String())
	default:
		fmt.Fprintf(&b, "%d violations:", len(e.Violations))
		for _, v := range e.Violations {
			b.WriteString("\n  ")
			b.WriteString(v.String())
		}
	}
	return b.String()
}
