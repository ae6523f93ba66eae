package mcpgo_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// A hostile server cannot make the client allocate far past a limit: the
// limits are enforced while reading. Over streamable HTTP a read's own
// limit cuts the response off (and the connection stays usable); over
// stdio, where one stream carries every answer, the connection's message
// cap does (and ends the connection).
// fixtureProcess starts the fixture over streamable HTTP in a process of
// its own and returns its endpoint.
func fixtureProcess(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MCPGO_FIXTURE=http")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + strings.TrimSpace(addr) + "/mcp"
}

func TestSizeLimitsWhileReading(t *testing.T) {
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	ctx := context.Background()
	// What reading up to the limit costs (buffers growing to an 8 MiB
	// line, one string conversion): a small multiple of the limit, and
	// nothing like the several copies of the 20 MiB reading it whole costs
	// (over 100 MiB).
	const budget = uint64(5 * mcpruntime.DefaultMaxReadSize)

	t.Run("http", func(t *testing.T) {
		// The server runs in a process of its own: only the client's
		// allocations are counted.
		c := mcpgo.StreamableHTTP(fixtureProcess(t), mcpgo.WithName("fixture"))
		closeConn(t, c)
		if _, err := c.ToolNames(ctx); err != nil {
			t.Fatal(err)
		}
		var err error
		n := allocated(func() { _, err = mcpruntime.ReadURI(ctx, c, "mem://big") })
		var tl *mcpruntime.ResourceTooLargeError
		if !errors.As(err, &tl) || tl.Limit != mcpruntime.DefaultMaxReadSize {
			t.Fatalf("read of 20 MiB: %v", err)
		}
		if n > budget {
			t.Errorf("refusing a 20 MiB resource allocated %d MiB; the limit is %d MiB", n>>20, mcpruntime.DefaultMaxReadSize>>20)
		}
		if _, err := c.ToolNames(ctx); err != nil {
			t.Errorf("the connection did not survive a refused read: %v", err)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		c := mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv("MCPGO_FIXTURE=stdio"), mcpgo.WithName("fixture"))
		closeConn(t, c)
		if _, err := c.ToolNames(ctx); err != nil {
			t.Fatal(err)
		}
		var err error
		n := allocated(func() { _, err = mcpruntime.ReadURI(ctx, c, "mem://big") })
		var tl *mcpgo.MessageTooLargeError
		if !errors.As(err, &tl) || tl.Limit != mcpgo.DefaultMaxMessageBytes {
			t.Fatalf("read of 20 MiB: %v", err)
		}
		if n > budget {
			t.Errorf("refusing a 20 MiB resource allocated %d MiB; the cap is %d MiB", n>>20, mcpgo.DefaultMaxMessageBytes>>20)
		}
		// The next call gets a new connection.
		if _, err := c.ToolNames(ctx); err != nil {
			t.Errorf("no new connection after the oversized message: %v", err)
		}
	})
}
