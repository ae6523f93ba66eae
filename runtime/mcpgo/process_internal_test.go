package mcpgo

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mark3labs/mcp-go/client/transport"
)

// chunks reads the given pieces one Read at a time.
type chunks struct{ parts []string }

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	if n < len(c.parts[0]) {
		c.parts[0] = c.parts[0][n:]
	} else {
		c.parts = c.parts[1:]
	}
	return n, nil
}

func TestLineLimitGarbage(t *testing.T) {
	for _, tc := range []struct {
		in       []string
		bad      string
		passesOn string // what the consumer gets before the end
	}{
		{[]string{`{"jsonrpc":"2.0"}` + "\n", "\n", `  {"a":1}` + "\r\n"}, "", `{"jsonrpc":"2.0"}` + "\n\n" + `  {"a":1}` + "\r\n"},
		{[]string{`{"a":`, `1}` + "\n" + "Server started\n"}, "Server started", `{"a":1}` + "\n"},
		{[]string{"oops\r\n"}, "oops", ""},
		{[]string{`{"x":1}`, "\n", "wel", "come\n"}, "welcome", `{"x":1}` + "\nwel"},
		{[]string{"  \t no brace\n"}, "no brace", ""},
		{[]string{"cut off"}, "cut off", "cut off"},
		{[]string{strings.Repeat("x", 500) + "\n"}, strings.Repeat("x", maxQuoted), ""},
	} {
		var reason error
		l := &lineLimit{r: &chunks{parts: append([]string(nil), tc.in...)}, limit: 1 << 20, checkStart: true,
			onErr: func(err error) { reason = err }}
		got, err := io.ReadAll(l)
		if err != nil {
			t.Fatalf("%q: ReadAll: %v (the end must look like io.EOF to the transport)", tc.in, err)
		}
		var ge *StdoutGarbageError
		switch {
		case tc.bad == "" && reason != io.EOF:
			t.Errorf("%q: reason %v, want a plain end", tc.in, reason)
		case tc.bad != "" && (!errors.As(reason, &ge) || ge.Line != tc.bad):
			t.Errorf("%q: reason %v, want the line %q quoted", tc.in, reason, tc.bad)
		}
		if tc.bad != "" && tc.passesOn != "" && !strings.HasPrefix(string(got), tc.passesOn) {
			t.Errorf("%q: consumer got %q, want it to start with %q", tc.in, got, tc.passesOn)
		}
		if tc.bad == "" && string(got) != tc.passesOn {
			t.Errorf("%q: consumer got %q, want %q", tc.in, got, tc.passesOn)
		}
	}
}

func TestLineLimitCapsWhileReading(t *testing.T) {
	var reason error
	src := iotest.OneByteReader(strings.NewReader(`{"a":"` + strings.Repeat("y", 1000)))
	l := &lineLimit{r: src, limit: 100, onErr: func(err error) { reason = err }}
	buf := make([]byte, 4096)
	total := 0
	for {
		n, err := l.Read(buf)
		total += n
		if err != nil {
			break
		}
	}
	var tl *MessageTooLargeError
	if !errors.As(reason, &tl) || tl.Limit != 100 || total > 101 {
		t.Errorf("reason %v after %d bytes, want a MessageTooLargeError within the limit", reason, total)
	}
}

// The tap must look like an HTTP connection to the client exactly when the
// wrapped transport is one: the client changes behaviour on it.
func TestTapInterfaces(t *testing.T) {
	sh, err := transport.NewStreamableHTTP("http://127.0.0.1:1/mcp")
	if err != nil {
		t.Fatal(err)
	}
	sse, err := transport.NewSSE("http://127.0.0.1:1/sse")
	if err != nil {
		t.Fatal(err)
	}
	for _, inner := range []transport.Interface{transport.NewIO(strings.NewReader(""), nopWriteCloser{}, nil), sh, sse} {
		_, want := inner.(transport.HTTPConnection)
		_, got := wrap(inner, nil, nil, false).(transport.HTTPConnection)
		if got != want {
			t.Errorf("%T: tap is HTTPConnection = %v, inner = %v", inner, got, want)
		}
	}
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }

func TestTidy(t *testing.T) {
	for in, want := range map[string]string{
		"transport error: failed to send request: failed to send request: Post x: refused": "transport error: failed to send request: Post x: refused",
		"a: b: a":  "a: b: a",
		"plain":    "plain",
		"x: x: x:": "x: x:",
	} {
		if got := tidy(in); got != want {
			t.Errorf("tidy(%q) = %q, want %q", in, got, want)
		}
	}
}
