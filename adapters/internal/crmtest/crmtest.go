// Package crmtest runs the example CRM server as a real process for the
// adapters' tests, and builds the typed, gated toolsets over it that the
// scripted model servers in those tests drive.
package crmtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/filestore"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

var (
	buildOnce sync.Once
	bin       string
	buildErr  error
)

// exampleDir is the example module, found from this file.
func exampleDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "example")
}

// Build builds ./example/crm-server once per test binary.
func Build(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "crmtest")
		if err != nil {
			buildErr = err
			return
		}
		bin = filepath.Join(dir, "crm-server")
		cmd := exec.Command("go", "build", "-o", bin, "./crm-server")
		cmd.Dir = exampleDir()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./crm-server: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// Server starts a CRM server process over streamable HTTP and returns its
// endpoint; it is stopped when the test ends. Several connections to one
// endpoint share the CRM's state, as separate agent processes would.
func Server(t testing.TB) string {
	t.Helper()
	return ServerWith(t)
}

// ServerWith is Server with crm-server's -fault flags, e.g.
// "-fault", "without=export_contacts" for an older release lacking a tool.
func ServerWith(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(Build(t), append([]string{"-http", "127.0.0.1:0"}, args...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("crm-server did not print its endpoint: %v", err)
	}
	return strings.TrimSpace(line)
}

// Conn connects to a CRM server endpoint.
func Conn(t testing.TB, url string) *mcpgo.Conn { return NamedConn(t, url, "crm") }

// NamedConn connects to a CRM server endpoint under a server label of its
// own (approvals are bound to it: two gated servers need two labels).
func NamedConn(t testing.TB, url, name string) *mcpgo.Conn {
	t.Helper()
	c := mcpgo.StreamableHTTP(url, mcpgo.WithName(name))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Alice is the context of a run acting for alice, who owns deal D-2001.
func Alice() context.Context {
	return mcpruntime.WithPrincipal(context.Background(), "alice", mcpruntime.Secret("tok-alice"))
}

// Toolset is every CRM tool over c, acting for the context's principal,
// gated by g when it is not nil (update_deal and send_email need approval).
func Toolset(t testing.TB, c mcpruntime.Caller, g *mcpruntime.Gate) *mcpruntime.Toolset {
	t.Helper()
	opts := []mcpruntime.Option{mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)}
	if g != nil {
		opts = append(opts, mcpruntime.WithGate(g))
	}
	ts, err := mcpruntime.NewToolset(crmapi.Invokers(c, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// FileGate is a gate over a file store in dir, as a process would open it.
func FileGate(t testing.TB, dir string) *mcpruntime.Gate {
	t.Helper()
	return mcpruntime.NewGate(FileStore(t, dir))
}

// FileStore opens the file store in dir; it is closed when the test ends.
func FileStore(t testing.TB, dir string) *filestore.FileStore {
	t.Helper()
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// ClosingStore is the connection c closing store as each call returns,
// after the server has answered: the outcome of an approved call made
// through it cannot be recorded (mcpruntime.ErrOutcomeNotRecorded).
func ClosingStore(c *mcpgo.Conn, store io.Closer) mcpruntime.Caller {
	return closing{c, store}
}

type closing struct {
	*mcpgo.Conn
	store io.Closer
}

func (c closing) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpruntime.Result, error) {
	res, err := c.Conn.CallTool(ctx, name, args)
	_ = c.store.Close()
	return res, err
}

// Notes counts the notes on a deal with exactly the given text ("alice: "
// is the CRM's prefix for alice's notes).
func Notes(t testing.TB, c mcpruntime.Caller, deal, text string) int {
	t.Helper()
	r, err := crmapi.NewGetDeal(c).Call(context.Background(), crmapi.GetDealInput{DealID: deal})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, note := range r.Output.Notes {
		if note == "alice: "+text {
			n++
		}
	}
	return n
}

// RoundTrip encodes v as JSON and decodes it into a fresh value, as a
// pause stored by one process and read by another.
func RoundTrip[T any](t testing.TB, v *T) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}
