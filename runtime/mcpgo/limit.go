package mcpgo

import (
	"github.com/mcpgen/mcpgen/runtime/manager"

	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// DefaultMaxMessageBytes caps one message from a managed server: a stdio
// line, an SSE line, or a JSON response body.
const DefaultMaxMessageBytes = 8 << 20

// MessageTooLargeError reports a server message over the cap. mcp-go's
// stdio reader reads whole lines into memory, so without a cap a server
// could exhaust it with one endless line; the cap ends the connection
// instead.
type MessageTooLargeError struct {
	Server string
	Limit  int64
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("server %q sent a message larger than %d bytes; the connection was closed", e.Server, e.Limit)
}

// lineLimit passes reads through and fails once more than limit bytes come
// without a newline.
type lineLimit struct {
	r     io.Reader
	limit int64
	run   int64 // bytes since the last newline
	err   error // sticky
	// bad counts lines that cannot be JSON-RPC (not starting with '{'), to
	// explain a server that never answers.
	bad atomic.Int64
	// onErr runs once, before the error is returned, so the session knows
	// why the connection ended before the transport does.
	onErr func(error)
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
	for _, c := range p[:n] {
		switch {
		case c == '\n':
			l.run = 0
		case l.run == 0 && c != '{' && c != ' ' && c != '\t' && c != '\r':
			l.bad.Add(1)
			l.run++
		default:
			l.run++
		}
	}
	if l.run > l.limit {
		l.fail(&MessageTooLargeError{Limit: l.limit})
		return 0, l.err
	}
	if err != nil {
		l.fail(err)
	}
	return n, err
}

func (l *lineLimit) fail(err error) {
	l.err = err
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

// process is a stdio server this package starts itself (rather than
// through mcp-go's stdio transport) so that it can cap the line length,
// know when the process has gone, and tell a request that was never
// written from one that was.
type process struct {
	*transport.Stdio
	out   *lineLimit
	cmd   *exec.Cmd
	grace time.Duration

	gone     chan struct{} // closed when stdout ended or the process exited
	goneOnce sync.Once
	mu       sync.Mutex
	why      error // why it is gone
	exited   chan struct{}
	waitErr  error
}

type processSpec struct {
	server  string
	command string
	args    []string
	env     []string
	dir     string
	stderr  io.Writer
	limit   int64
	grace   time.Duration
}

func startProcess(spec processSpec) (*process, error) {
	cmd := exec.Command(spec.command, spec.args...)
	cmd.Env = append(os.Environ(), spec.env...)
	cmd.Dir = spec.dir
	cmd.Stderr = spec.stderr
	if cmd.Stderr == nil {
		cmd.Stderr = io.Discard
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
		if errors.Is(err, exec.ErrNotFound) {
			return nil, &manager.PermanentError{Err: fmt.Errorf("start %s: %w", spec.command, err)}
		}
		return nil, fmt.Errorf("start %s: %w", spec.command, err)
	}
	p := &process{cmd: cmd, grace: spec.grace, gone: make(chan struct{}), exited: make(chan struct{})}
	out := &lineLimit{r: stdout, limit: spec.limit, onErr: func(err error) {
		var tl *MessageTooLargeError
		if errors.As(err, &tl) {
			tl.Server = spec.server
			// The server is misbehaving; it gets no further input.
			signalGroup(cmd, syscall.SIGKILL)
		}
		p.lose(err)
	}}
	p.out = out
	p.Stdio = transport.NewIO(out, pipeWriter{stdin}, nil)
	go func() {
		p.waitErr = cmd.Wait()
		// Children it left behind go with it, at once: the group id is
		// the server's pid, which is free for reuse from now on.
		signalGroup(cmd, syscall.SIGKILL)
		close(p.exited)
		p.lose(exitError(p.waitErr))
	}()
	return p, nil
}

func exitError(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("the server process exited (%s)", ee.ProcessState)
	}
	if err != nil {
		return fmt.Errorf("the server process ended: %w", err)
	}
	return errors.New("the server process exited")
}

// lose records why the process is gone; the first reason wins, except
// that an oversized message is more telling than the exit it causes.
func (p *process) lose(why error) {
	p.mu.Lock()
	var tl *MessageTooLargeError
	if p.why == nil || errors.As(why, &tl) {
		if p.why == nil || !errors.As(p.why, &tl) {
			p.why = why
		}
	}
	p.mu.Unlock()
	p.goneOnce.Do(func() { close(p.gone) })
}

// reason says why the process is gone. An end of output is usually the
// process exiting, so its exit status is waited for briefly: "exited
// (exit status 1)" tells more than "closed its output".
func (p *process) reason() error {
	p.mu.Lock()
	why := p.why
	p.mu.Unlock()
	var tl *MessageTooLargeError
	if errors.As(why, &tl) {
		return why
	}
	t := time.NewTimer(500 * time.Millisecond)
	defer t.Stop()
	select {
	case <-p.exited:
		return exitError(p.waitErr)
	case <-t.C:
	}
	if errors.Is(why, io.EOF) {
		return errors.New("the server closed its output")
	}
	return why
}

// SendRequest refuses at once, as not sent, once the process is gone.
func (p *process) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	select {
	case <-p.gone:
		return nil, &notSent{fmt.Errorf("%w: %v", transport.ErrTransportClosed, p.reason())}
	default:
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
