package mcpgo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcpgen/mcpgen/runtime/manager"
)

// DefaultMaxMessageBytes caps one message from a server: a stdio line, an
// SSE line, or a JSON response body.
const DefaultMaxMessageBytes = 8 << 20

// MessageTooLargeError reports a server message over the cap. mcp-go reads
// whole messages into memory, so without a cap a server could exhaust it
// with one endless line; the cap ends the connection instead, while the
// message is still being read.
type MessageTooLargeError struct {
	Server string
	Limit  int64
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("the server sent a message larger than %d bytes; the connection was closed", e.Limit)
}

// MessageCap returns Limit: resource readers (runtime/mcpimpl) find the
// error by this method and tell the model the answer was too large.
func (e *MessageTooLargeError) MessageCap() int64 { return e.Limit }

// StdoutGarbageError reports a line on a stdio server's stdout that cannot
// be a JSON-RPC message. The stdio transport allows nothing else there, and
// mcp-go would skip such lines silently, turning a misconfigured server
// (one that logs to stdout) into a wait for the timeout.
type StdoutGarbageError struct {
	Server string
	Line   string // the start of the line, redacted
}

func (e *StdoutGarbageError) Error() string {
	return fmt.Sprintf("the server wrote a line to stdout that is not JSON-RPC (MCP stdio servers must log to stderr): %q", e.Line)
}

// maxQuoted bounds how much of a garbage line an error quotes.
const maxQuoted = 200

// lineLimit passes a server's output through, ending it (as io.EOF, so the
// transport shuts down quietly) once a line grows past limit or a line
// starts with something a JSON-RPC message cannot start with. The reason
// goes to onErr, once, before the end is returned.
type lineLimit struct {
	r     io.Reader
	limit int64
	run   int64 // bytes since the last newline
	// garbage detection (stdio only): the bad line being collected
	checkStart bool
	midLine    bool // past the first non-blank byte of the current line
	inBad      bool
	bad        []byte
	pendingN   int   // bytes of the current chunk still to hand out before failing
	err        error // sticky: what the consumer sees (io.EOF after a failure)
	onErr      func(error)
	// failWith, when set, turns a failure into the error the consumer sees
	// instead of io.EOF (a read's own limit, which the request reports).
	failWith func(error) error
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	// Never read more than the line may still grow by (plus the newline),
	// so memory stays bounded whatever the server sends.
	if room := l.limit - l.run + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	for i, c := range p[:n] {
		if l.inBad {
			if c == '\n' || len(l.bad) >= maxQuoted {
				l.fail(&StdoutGarbageError{Line: string(bytes.TrimRight(l.bad, "\r"))})
				return l.cut(i), nil
			}
			l.bad = append(l.bad, c)
			continue
		}
		if c == '\n' {
			l.run, l.midLine = 0, false
			continue
		}
		l.run++
		if l.checkStart && !l.midLine && c != ' ' && c != '\t' && c != '\r' {
			l.midLine = true
			if c != '{' {
				l.inBad = true
				l.bad = append(l.bad, c)
			}
		}
	}
	if l.run > l.limit {
		l.fail(&MessageTooLargeError{Limit: l.limit})
		return 0, l.err
	}
	if err != nil {
		if l.inBad && len(l.bad) > 0 {
			// The output ended inside the bad line: still the reason.
			l.fail(&StdoutGarbageError{Line: string(bytes.TrimRight(l.bad, "\r"))})
			return n, nil
		}
		if !errors.Is(err, io.EOF) {
			l.fail(err)
			return n, nil
		}
		l.err = io.EOF
		if l.onErr != nil {
			l.onErr(io.EOF)
			l.onErr = nil
		}
	}
	return n, err
}

// cut hands out the complete lines before the bad one in the current
// chunk; the failure is returned by the next Read.
func (l *lineLimit) cut(i int) int {
	// i is the offset of the byte ending the bad line; the line started
	// len(l.bad) bytes before it (or in an earlier chunk).
	start := i - len(l.bad)
	return max(start, 0)
}

func (l *lineLimit) fail(err error) {
	l.err = io.EOF
	if l.failWith != nil {
		l.err = l.failWith(err)
	}
	if l.onErr != nil {
		l.onErr(err)
		l.onErr = nil
	}
}

// notSent marks an error where the request provably did not reach the
// server.
type notSent struct{ err error }

func (e *notSent) Error() string { return e.err.Error() }
func (e *notSent) Unwrap() error { return e.err }
func (e *notSent) Is(target error) bool {
	return target == manager.ErrNotSent
}

// pipeWriter marks write errors on the server's stdin as not sent: a
// request is one line, and a line whose end was not written is never read
// as a request.
type pipeWriter struct{ w io.WriteCloser }

func (p pipeWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if err != nil {
		err = &notSent{err}
	}
	return n, err
}

func (p pipeWriter) Close() error { return p.w.Close() }

// process is a stdio server. The session layer starts it itself (rather
// than through mcp-go's stdio transport) so that it runs in a process group
// of its own, its stderr tail is kept, its output lines are capped and
// checked, its exit is known at once, and a request that was never written
// is told from one that was.
type process struct {
	*transport.Stdio
	cmd    *exec.Cmd
	grace  time.Duration
	stderr *tailBuffer

	gone     chan struct{} // closed when stdout ended or the process exited
	goneOnce sync.Once
	mu       sync.Mutex
	why      error // why it is gone (the first telling reason)
	exited   chan struct{}
	waitErr  error
}

type processSpec struct {
	server  string
	command string
	args    []string
	env     []string
	dir     string
	stderr  io.Writer // also receives the stderr; may be nil
	limit   int64
	grace   time.Duration
}

// stderrTail is how much of a server's stderr is kept for error messages.
const stderrTail = 64 << 10

func startProcess(spec processSpec) (*process, error) {
	path := spec.command
	// A relative path with a separator is relative to the server's working
	// directory, as it would be in a shell started there.
	if spec.dir != "" && !filepath.IsAbs(path) && strings.ContainsRune(path, filepath.Separator) {
		path = filepath.Join(spec.dir, path)
	}
	cmd := exec.Command(path, spec.args...)
	cmd.Env = append(os.Environ(), spec.env...)
	cmd.Dir = spec.dir
	tail := newTailBuffer(stderrTail)
	if spec.stderr != nil {
		cmd.Stderr = io.MultiWriter(tail, spec.stderr)
	} else {
		cmd.Stderr = tail
	}
	// Grandchildren holding stderr open must not keep Wait from returning.
	cmd.WaitDelay = time.Second
	ownGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		err = fmt.Errorf("cannot start the server command %q: %w", filepath.Base(spec.command), unwrapExec(err))
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
			return nil, &manager.PermanentError{Err: err}
		}
		return nil, err
	}
	p := &process{cmd: cmd, grace: spec.grace, stderr: tail, gone: make(chan struct{}), exited: make(chan struct{})}
	out := &lineLimit{r: stdout, limit: spec.limit, checkStart: true, onErr: func(err error) {
		var tl *MessageTooLargeError
		var ge *StdoutGarbageError
		switch {
		case errors.As(err, &tl):
			tl.Server = spec.server
		case errors.As(err, &ge):
			ge.Server = spec.server
		}
		// The reason first: the kill below ends the process, and its exit
		// must not be taken for the reason.
		p.lose(err)
		if tl != nil || ge != nil {
			// The server is misbehaving; it gets no further input.
			signalGroup(cmd, syscall.SIGKILL)
		}
	}}
	p.Stdio = transport.NewIO(out, pipeWriter{stdin}, nil)
	go func() {
		p.waitErr = cmd.Wait()
		// Children it left behind go with it, at once: the group id is
		// the server's pid, which is free for reuse from now on.
		signalGroup(cmd, syscall.SIGKILL)
		close(p.exited)
		p.lose(errProcessExited)
	}()
	return p, nil
}

// unwrapExec drops exec's own "exec: \"name\": " prefix, which repeats the
// command the caller names anyway.
func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

var errProcessExited = errors.New("the server process exited")

// lose records why the process is gone. A message too large or a garbage
// line is more telling than the exit or end of output it causes, so it is
// kept over them.
func (p *process) lose(why error) {
	p.mu.Lock()
	if p.why == nil || (telling(why) && !telling(p.why)) {
		p.why = why
	}
	p.mu.Unlock()
	p.goneOnce.Do(func() { close(p.gone) })
}

func telling(err error) bool {
	var tl *MessageTooLargeError
	var ge *StdoutGarbageError
	return errors.As(err, &tl) || errors.As(err, &ge)
}

// isGone reports whether the process has gone.
func (p *process) isGone() bool {
	select {
	case <-p.gone:
		return true
	default:
		return false
	}
}

// exitStatus waits briefly for the exit of a process whose output ended
// and returns how it ended ("exit status 1"), or "" while it runs on.
func (p *process) exitStatus(wait time.Duration) string {
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
		}
	}
	select {
	case <-p.exited:
	default:
		return ""
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	if p.waitErr != nil {
		return p.waitErr.Error()
	}
	return "exit status 0"
}

// reason says why the process is gone: an oversized message or a garbage
// line, else that it closed its output (its exit status, when it has
// exited, is reported beside this by the caller).
func (p *process) reason() error {
	p.mu.Lock()
	why := p.why
	p.mu.Unlock()
	switch {
	case telling(why):
		return why
	case errors.Is(why, io.EOF):
		return errors.New("the server closed its output")
	case why == nil || errors.Is(why, errProcessExited):
		return errProcessExited
	}
	return why
}

// SendRequest refuses at once, as not sent, once the process is gone, and
// ends a request in flight as soon as the process goes.
func (p *process) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if p.isGone() {
		return nil, &notSent{transport.ErrTransportClosed}
	}
	return p.Stdio.SendRequest(ctx, req)
}

// Close ends the session: stdin closes, and a process that does not exit
// within the grace period is terminated, then killed, with its process
// group (children it started).
func (p *process) Close() error {
	err := p.Stdio.Close()
	select {
	case <-p.exited:
		return err
	case <-time.After(p.grace):
	}
	signalGroup(p.cmd, syscall.SIGTERM)
	select {
	case <-p.exited:
		return err
	case <-time.After(p.grace):
	}
	signalGroup(p.cmd, syscall.SIGKILL)
	<-p.exited
	return err
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// tail returns up to n last lines, each cut to a readable length.
func (t *tailBuffer) tail(n int) string {
	t.mu.Lock()
	s := string(t.buf)
	t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(s, "\r\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, ln := range lines {
		ln = strings.TrimRight(ln, "\r")
		if len(ln) > 300 {
			ln = ln[:300] + "…"
		}
		lines[i] = ln
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
