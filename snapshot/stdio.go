package snapshot

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// Shutdown pacing for a stdio server: closing stdin is the polite signal;
// a server that ignores it is terminated, then killed.
const (
	stdinGrace = 1 * time.Second
	termGrace  = 1 * time.Second
	// waitDelay bounds how long Wait waits for pipes held open by
	// grandchildren after the server itself has exited.
	waitDelay = 2 * time.Second
)

// stdioConn runs the server process itself, rather than letting mcp-go do
// it, so that the capture can tell an exited process and garbage on stdout
// from a slow server, keep its stderr, and kill the whole process group on
// every path.
type stdioConn struct {
	cmd     *exec.Cmd
	tr      *transport.Stdio
	stdin   io.WriteCloser
	outW    *io.PipeWriter
	stderr  *tailBuffer
	done    chan struct{} // closed when the process has been waited for
	waitErr error
	once    sync.Once
}

// startStdio starts src's command. onGarbage is called (once) with the first
// stdout line that cannot be a JSON-RPC message.
func startStdio(src *Source, onGarbage func(line string)) (*stdioConn, error) {
	path := src.Command
	// A relative path with a separator is relative to the server's working
	// directory, as it would be in a shell started there.
	if src.Dir != "" && !filepath.IsAbs(path) && strings.ContainsRune(path, filepath.Separator) {
		path = filepath.Join(src.Dir, path)
	}
	cmd := exec.Command(path, src.Args...)
	cmd.Dir = src.Dir
	cmd.Env = append(os.Environ(), src.Env...)
	setProcessGroup(cmd)
	cmd.WaitDelay = waitDelay

	outR, outW := io.Pipe()
	c := &stdioConn{cmd: cmd, outW: outW, stderr: newTailBuffer(64 << 10), done: make(chan struct{})}
	cmd.Stdout = &lineWatcher{w: outW, onBad: onGarbage}
	cmd.Stderr = c.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	c.stdin = stdin
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start server command: %w", err)
	}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.done)
		// Every byte the process wrote has been copied by now, so the client
		// sees all responses before the end of stream.
		outW.Close()
	}()
	c.tr = transport.NewIO(outR, stdin, io.NopCloser(strings.NewReader("")))
	return c, nil
}

// exited reports whether the process has ended, and how.
func (c *stdioConn) exited() (bool, string) {
	select {
	case <-c.done:
	default:
		return false, ""
	}
	if c.waitErr == nil {
		return true, "exit status 0"
	}
	return true, c.waitErr.Error()
}

// close shuts the server down and always leaves no process behind.
func (c *stdioConn) close() {
	c.once.Do(func() {
		_ = c.tr.Close() // closes stdin
		if !wait(c.done, stdinGrace) {
			signalGroup(c.cmd, false)
			if !wait(c.done, termGrace) {
				signalGroup(c.cmd, true)
				<-c.done
			}
		}
		// Children the server left behind in its group go too.
		signalGroup(c.cmd, true)
	})
}

func wait(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// lineWatcher passes stdout through and reports the first line that does
// not start like a JSON object. The MCP stdio transport allows nothing but
// JSON-RPC messages on stdout; mcp-go skips such lines silently, which would
// turn a misconfigured server into a wait for the timeout.
type lineWatcher struct {
	w       io.Writer
	onBad   func(string)
	midLine bool // inside a line whose start was fine
	bad     []byte
	inBad   bool
	fired   bool
}

func (l *lineWatcher) Write(p []byte) (int, error) {
	if !l.fired {
		l.scan(p)
	}
	return l.w.Write(p)
}

func (l *lineWatcher) scan(p []byte) {
	for _, b := range p {
		switch {
		case l.inBad:
			if b == '\n' || len(l.bad) >= 200 {
				l.report()
				return
			}
			l.bad = append(l.bad, b)
		case b == '\n':
			l.midLine = false
		case l.midLine:
		case b == ' ' || b == '\t' || b == '\r':
		case b == '{':
			l.midLine = true
		default:
			l.inBad = true
			l.bad = append(l.bad, b)
		}
	}
}

func (l *lineWatcher) report() {
	l.fired = true
	if l.onBad != nil {
		l.onBad(string(bytes.TrimRight(l.bad, "\r")))
	}
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
