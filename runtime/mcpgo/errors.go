package mcpgo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
)

// discardLogger keeps transport logs (which can include URLs carrying
// secrets) out of the user's terminal; every failure is returned instead.
var discardLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// exitWait is how long an error waits for a stdio server whose output
// ended to exit, so that it can say how ("exit status 1").
const exitWait = 500 * time.Millisecond

// stderrLines is how many lines of a stdio server's stderr an error shows.
const stderrLines = 20

// connectError describes a failed connection: the process's facts first
// (a garbage line, a message too large, its exit and stderr), then what the
// client saw.
func (c *Conn) connectError(l *link, err error) error {
	var ce *mcpruntime.ConnectError
	if errors.As(err, &ce) {
		return err
	}
	e := &mcpruntime.ConnectError{Server: c.cfg.name, Attempts: 1}
	cause := c.facts(l, err, &e.Exit, &e.Stderr)
	e.Err = cause
	var pe *manager.PermanentError
	if errors.As(cause, &pe) {
		// Retrying cannot help; the marker goes outside, so the manager
		// sees it and the message stays the ConnectError's.
		return &manager.PermanentError{Err: e}
	}
	return e
}

// requestError describes a failed request on an established connection.
func (c *Conn) requestError(ctx context.Context, l *link, what string, err error) error {
	if cerr := settle(ctx); cerr != nil {
		// The caller's context ended: that, not what the transport made of
		// it, is the reason.
		return fmt.Errorf("server %q: %s: %w", c.cfg.name, what, cerr)
	}
	if errors.Is(err, transport.ErrSessionTerminated) {
		l.lose(err)
	}
	if l.isDone() || errors.Is(err, transport.ErrTransportClosed) || errors.Is(err, errLinkEnded) {
		// The connection is gone, whether or not its end was noticed yet:
		// the next request must not be sent on it.
		l.lose(nil)
		e := &mcpruntime.ConnectionLostError{Server: c.cfg.name, Request: what, NotSent: errors.Is(err, manager.ErrNotSent)}
		e.Err = c.facts(l, err, &e.Exit, &e.Stderr)
		var tl *MessageTooLargeError
		if errors.As(e.Err, &tl) {
			// The same answer would come again: retrying cannot help.
			return &manager.PermanentError{Err: e}
		}
		return e
	}
	cleaned := c.clean(err)
	if errors.Is(err, manager.ErrNotSent) {
		return &notSent{fmt.Errorf("server %q: %s: %w", c.cfg.name, what, cleaned)}
	}
	return fmt.Errorf("server %q: %s: %w", c.cfg.name, what, cleaned)
}

// lostBefore describes a request refused because the connection had
// already ended.
func (c *Conn) lostBefore(l *link, what string) error {
	e := &mcpruntime.ConnectionLostError{Server: c.cfg.name, Request: what, NotSent: true}
	e.Err = c.facts(l, errLinkEnded, &e.Exit, &e.Stderr)
	return e
}

// facts returns the most telling cause of a failure on l, and fills in a
// stdio server's exit status and stderr tail.
func (c *Conn) facts(l *link, err error, exit, stderr *string) error {
	cause := error(nil)
	l.mu.Lock()
	why := l.why
	l.mu.Unlock()
	if telling(why) {
		cause = why
	}
	if p := l.proc; p != nil {
		ended := p.isGone() || errors.Is(err, transport.ErrTransportClosed) || l.isDone()
		if ended {
			*exit = p.exitStatus(exitWait)
			if r := p.reason(); telling(r) {
				cause = r
			} else if cause == nil {
				if *exit != "" {
					cause = fmt.Errorf("the server process exited (%s)", *exit)
				} else {
					cause = r
				}
			}
		}
		*stderr = c.redact(p.stderr.tail(stderrLines))
	}
	if cause == nil {
		cause = err
		// A generic symptom says less than why the connection ended.
		generic := err == nil || errors.Is(err, transport.ErrTransportClosed) || errors.Is(err, errLinkEnded) || errors.Is(err, context.Canceled)
		if generic && why != nil && !errors.Is(why, ErrClosed) {
			cause = why
		}
	}
	return c.clean(cause)
}

// redact hides every secret the Conn knows of in s, those of its secret
// sources as they are now included.
func (c *Conn) redact(s string) string {
	for _, h := range c.cfg.hide {
		if h.value != "" {
			s = strings.ReplaceAll(s, h.value, h.marker)
		}
	}
	for _, f := range c.cfg.live {
		vs := slices.Clone(f())
		slices.SortFunc(vs, func(a, b string) int { return len(b) - len(a) })
		for _, v := range vs {
			if v != "" {
				s = strings.ReplaceAll(s, v, "[redacted]")
			}
		}
	}
	return s
}

// clean returns err with its message tidied (each phrase once) and
// redacted. The result holds no part of err's chain that could carry a
// secret (a *url.Error quotes the URL): only the sentinels and the
// project's own types, so errors.Is and errors.As still work and printing
// it with any verb shows nothing hidden.
func (c *Conn) clean(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	var ue *url.Error
	var re *redirectError
	if errors.As(err, &ue) && errors.As(ue.Err, &re) {
		// The refusal names the target's origin; net/http's wrapper would
		// quote its whole URL.
		text = strings.Replace(text, ue.Error(), re.Error(), 1)
	}
	msg := c.redact(tidy(text))
	if strings.Contains(msg, "unexpected content type: text/html") {
		msg += " (is the URL the server's MCP endpoint? A web page, a sign-in page or a proxy answered)"
	}
	var kinds []error
	for _, k := range sentinels {
		if errors.Is(err, k) {
			kinds = append(kinds, k)
		}
	}
	var (
		tl *MessageTooLargeError
		ge *StdoutGarbageError
		be *manager.BlockedAddressError
		ht *handshakeTimeout
		pe *manager.PermanentError
		ar *transport.AuthorizationRequiredError
		ee *exec.Error
		vm *VersionMismatchError
		uv *UnknownVersionError
	)
	switch {
	case errors.As(err, &tl):
		kinds = append(kinds, tl)
	case errors.As(err, &ge):
		kinds = append(kinds, &StdoutGarbageError{Server: ge.Server, Line: c.redact(ge.Line)})
	case errors.As(err, &be):
		kinds = append(kinds, be)
	case errors.As(err, &ht):
		kinds = append(kinds, ht)
	case errors.As(err, &ar):
		kinds = append(kinds, ar)
	case errors.As(err, &ee):
		kinds = append(kinds, ee.Err)
	case errors.As(err, &vm):
		kinds = append(kinds, vm)
	case errors.As(err, &uv):
		kinds = append(kinds, uv)
	}
	if errors.As(err, &pe) {
		kinds = append(kinds, &manager.PermanentError{Err: errors.New(msg)})
	}
	if len(kinds) == 1 && kinds[0].Error() == msg {
		return kinds[0]
	}
	return &cleanError{msg: msg, kinds: kinds}
}

var sentinels = []error{
	context.Canceled, context.DeadlineExceeded, transport.ErrTransportClosed, transport.ErrSessionTerminated,
	transport.ErrLegacySSEServer, manager.ErrNotSent, ErrClosed, io.EOF, io.ErrUnexpectedEOF, exec.ErrNotFound,
	os.ErrNotExist, os.ErrPermission, syscall.ECONNREFUSED, syscall.ECONNRESET, errProcessExited,
}

type cleanError struct {
	msg   string
	kinds []error
}

func (e *cleanError) Error() string   { return e.msg }
func (e *cleanError) Unwrap() []error { return e.kinds }

// tidy drops a phrase that repeats the one before it: mcp-go wraps some
// errors twice ("failed to send request: failed to send request: …").
func tidy(msg string) string {
	parts := strings.Split(msg, ": ")
	out := parts[:1]
	for _, p := range parts[1:] {
		if p != out[len(out)-1] {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}

// UnknownVersionError is a pin (WithProtocolVersion) to a version the
// session layer does not speak.
type UnknownVersionError struct {
	Pinned string
}

func (e *UnknownVersionError) Error() string {
	return fmt.Sprintf("the protocol version is pinned to %q, which mcpgen does not speak (it speaks %s)", e.Pinned, strings.Join(ProtocolVersions, ", "))
}

// VersionMismatchError is a connection pinned to one protocol version
// (WithProtocolVersion) whose server settled on another.
type VersionMismatchError struct {
	Pinned, Server string
}

func (e *VersionMismatchError) Error() string {
	return fmt.Sprintf("the protocol version is pinned to %s, but the server speaks %s (a pin does not negotiate: pin %s or leave the version to negotiation)",
		e.Pinned, e.Server, e.Server)
}
