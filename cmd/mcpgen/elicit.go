package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// isTerminal reports whether f is a terminal (a character device), without
// a terminal library: enough to decide whether a person can answer.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	// /dev/null is a character device too: ask the terminal driver where
	// the system has one (terminal_*.go).
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && ttyDriver(f)
}

// terminalElicitation answers a server's elicitation by asking the person
// at the terminal, field by field, offering each field's default (Enter
// takes it). An empty answer to a field without a default leaves it out;
// end of input cancels.
func terminalElicitation(in io.Reader, out io.Writer) mcpgo.ElicitationHandler {
	var mu sync.Mutex // one question at a time
	r := bufio.NewReader(in)
	line := func() (string, error) {
		s, err := r.ReadString('\n')
		if err != nil && (s == "" || !errors.Is(err, io.EOF)) {
			return "", err
		}
		return strings.TrimSpace(s), nil
	}
	return func(ctx context.Context, req mcpgo.ElicitationRequest) (mcpgo.ElicitationResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, "\nThe server asks: %s\n", req.Message)
		if req.Mode == "url" {
			fmt.Fprintf(out, "  Open %s\n  Continue once done? [y/N] ", req.URL)
			s, err := line()
			switch {
			case err != nil:
				return mcpgo.ElicitationResponse{Action: mcpgo.ElicitCancel}, nil
			case strings.EqualFold(s, "y") || strings.EqualFold(s, "yes"):
				return mcpgo.ElicitationResponse{Action: mcpgo.ElicitAccept}, nil
			}
			return mcpgo.ElicitationResponse{Action: mcpgo.ElicitDecline}, nil
		}
		fields, err := mcpgo.FormFields(req.Schema)
		if err != nil {
			return mcpgo.ElicitationResponse{}, err
		}
		content := map[string]any{}
		for _, f := range fields {
			for {
				fmt.Fprintf(out, "  %s", describeField(f))
				s, err := line()
				if err != nil {
					fmt.Fprintln(out)
					return mcpgo.ElicitationResponse{Action: mcpgo.ElicitCancel}, nil
				}
				if s == "" {
					if f.Default == nil && f.Required {
						fmt.Fprintln(out, "    required")
						continue
					}
					break // the default, filled in by the session layer
				}
				v, err := parseField(f, s)
				if err != nil {
					fmt.Fprintf(out, "    %v\n", err)
					continue
				}
				content[f.Name] = v
				break
			}
		}
		fmt.Fprint(out, "  Send this answer? [Y/n] ")
		s, err := line()
		switch {
		case err != nil:
			return mcpgo.ElicitationResponse{Action: mcpgo.ElicitCancel}, nil
		case strings.EqualFold(s, "n") || strings.EqualFold(s, "no"):
			return mcpgo.ElicitationResponse{Action: mcpgo.ElicitDecline}, nil
		}
		return mcpgo.ElicitationResponse{Action: mcpgo.ElicitAccept, Content: content}, nil
	}
}

func describeField(f mcpgo.FormField) string {
	var b strings.Builder
	name := f.Name
	if f.Title != "" {
		name = f.Title
	}
	b.WriteString(name)
	var notes []string
	if f.Type != "" {
		notes = append(notes, f.Type)
	}
	if len(f.Enum) > 0 {
		notes = append(notes, "one of "+strings.Join(f.Enum, ", "))
	}
	if f.Description != "" {
		notes = append(notes, f.Description)
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(notes, "; "))
	}
	if f.Default != nil {
		fmt.Fprintf(&b, " [%v]", f.Default)
	} else if !f.Required {
		b.WriteString(" [skip]")
	}
	b.WriteString(": ")
	return b.String()
}

// parseField reads an answer as the field's type asks.
func parseField(f mcpgo.FormField, s string) (any, error) {
	if len(f.Enum) > 0 {
		for _, e := range f.Enum {
			if e == s {
				return s, nil
			}
		}
		return nil, fmt.Errorf("want one of %s", strings.Join(f.Enum, ", "))
	}
	switch f.Type {
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, errors.New("want an integer")
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errors.New("want a number")
		}
		return n, nil
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, errors.New("want yes or no")
	}
	return s, nil
}
