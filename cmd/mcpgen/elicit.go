package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
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
// end of input cancels. Everything the server wrote is shown with its
// control characters escaped (termtext.go), its message quoted line by
// line ("  > "), so nothing it sends can clear, retitle or rewrite the
// screen or pass for mcpgen's own lines.
func terminalElicitation(in io.Reader, out io.Writer, server string) mcpgo.ElicitationHandler {
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
		fmt.Fprintf(out, "\nServer %q asks:\n", server)
		for _, l := range strings.Split(strings.TrimRight(req.Message, "\n"), "\n") {
			fmt.Fprintf(out, "  > %s\n", oneLine(strings.TrimSuffix(l, "\r")))
		}
		if req.Mode == "url" {
			return askURL(out, line, req.URL), nil
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
					fmt.Fprintf(out, "    %s\n", oneLine(err.Error()))
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

// askURL shows a url-mode request's URL and its host, and asks whether the
// person finished there. Only https URLs, and http ones on a loopback
// address, are offered; any other is refused with the reason and declined
// without asking.
func askURL(out io.Writer, line func() (string, error), raw string) mcpgo.ElicitationResponse {
	fmt.Fprintf(out, "  URL:  %s\n", oneLine(raw))
	u, why := offeredURL(raw)
	if why != "" {
		fmt.Fprintf(out, "  Not offered: %s. Declined.\n", why)
		return mcpgo.ElicitationResponse{Action: mcpgo.ElicitDecline}
	}
	fmt.Fprintf(out, "  host: %s\n", shownHost(u.Hostname()))
	if u.User != nil {
		fmt.Fprintf(out, "  note: the URL names a user (%s) before the host; the host is the one above\n", oneLine(u.User.Username()))
	}
	fmt.Fprint(out, "  Open it in your browser. Continue once done? [y/N] ")
	s, err := line()
	switch {
	case err != nil:
		return mcpgo.ElicitationResponse{Action: mcpgo.ElicitCancel}
	case strings.EqualFold(s, "y") || strings.EqualFold(s, "yes"):
		return mcpgo.ElicitationResponse{Action: mcpgo.ElicitAccept}
	}
	return mcpgo.ElicitationResponse{Action: mcpgo.ElicitDecline}
}

// offeredURL parses raw and says why it is not offered to open, or "".
func offeredURL(raw string) (*url.URL, string) {
	const only = "only https URLs, and http ones on a loopback address, are offered"
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "it is not a valid URL"
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "":
		return nil, "it is not an absolute URL (" + only + ")"
	case scheme != "https" && scheme != "http":
		return nil, fmt.Sprintf("scheme %q (%s)", oneLine(u.Scheme), only)
	case u.Opaque != "" || u.Hostname() == "":
		return nil, "it names no host"
	case scheme == "http" && !loopback(u.Hostname()):
		return nil, fmt.Sprintf("http to %s, which is not a loopback address (%s)", shownHost(u.Hostname()), only)
	}
	return u, ""
}

// loopback reports whether host is localhost or a loopback address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// shownHost is a host as a person should read it: letters outside ASCII,
// which may look like ASCII ones, are escaped (\u0430 for a Cyrillic а),
// and a name in punycode (xn--) is pointed out.
func shownHost(h string) string {
	var b strings.Builder
	ascii := true
	for _, r := range h {
		if r < 0x21 || r > 0x7e {
			ascii = false
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	s := b.String()
	switch {
	case !ascii:
		s += " (not all ASCII: letters may look like others)"
	case strings.HasPrefix(strings.ToLower(h), "xn--") || strings.Contains(strings.ToLower(h), ".xn--"):
		s += " (an internationalized name in punycode: check it is the one you expect)"
	}
	return s
}

// describeField is a field's prompt; every part of it is the server's, so
// it is kept on one line with its controls shown.
func describeField(f mcpgo.FormField) string {
	var b strings.Builder
	name := f.Name
	if f.Title != "" {
		name = f.Title
	}
	b.WriteString(oneLine(name))
	var notes []string
	if f.Type != "" {
		notes = append(notes, oneLine(f.Type))
	}
	if len(f.Enum) > 0 {
		notes = append(notes, "one of "+oneLine(strings.Join(f.Enum, ", ")))
	}
	if f.Description != "" {
		notes = append(notes, oneLine(f.Description))
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(notes, "; "))
	}
	if f.Default != nil {
		fmt.Fprintf(&b, " [%s]", oneLine(fmt.Sprint(f.Default)))
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
