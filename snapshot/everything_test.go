package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/internal/testserver"
	"github.com/mcpgen/mcpgen/manifest"
)

// everything returns how to run the reference server-everything, skipping
// the test locally when Node or the npm package is missing. In CI the
// integration must run, so a missing piece fails the test instead.
func everything(t *testing.T) (node, script, preload string) {
	t.Helper()
	node, script, preload, err := testserver.Everything()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but the reference server cannot run: %v", err)
		}
		t.Skipf("skipping the server-everything integration test: %v", err)
	}
	return node, script, preload
}

// checkEverything checks what any capture of server-everything must hold.
func checkEverything(t *testing.T, m *manifest.Manifest) {
	t.Helper()
	// The pinned server release speaks the protocol version the client
	// asks for; anything else means the negotiation (or the pin) changed.
	if m.ProtocolVersion != "2025-11-25" {
		t.Errorf("negotiated protocol version %q, want 2025-11-25", m.ProtocolVersion)
	}
	var info struct{ Name string }
	if err := json.Unmarshal(m.ServerInfo, &info); err != nil || info.Name == "" {
		t.Errorf("serverInfo = %s", m.ServerInfo)
	}
	names := map[string]json.RawMessage{}
	for _, e := range m.Tools {
		names[e.Key] = e.Raw
	}
	for _, want := range []string{"echo", "get-sum"} {
		if names[want] == nil {
			t.Errorf("tool %q missing; got %v", want, keys(m.Tools))
		}
	}
	if len(m.Resources) == 0 || len(m.Prompts) == 0 || len(m.ResourceTemplates) == 0 {
		t.Errorf("got %d resources, %d templates, %d prompts; server-everything offers all three",
			len(m.Resources), len(m.ResourceTemplates), len(m.Prompts))
	}
	// Its zod-generated schemas carry "$schema", which mcp-go's client
	// drops; the raw capture keeps it.
	if !bytes.Contains(names["echo"], []byte(`"$schema"`)) {
		t.Errorf("echo's schema lost $schema: %s", names["echo"])
	}
}

func TestServerEverythingStdio(t *testing.T) {
	node, script, _ := everything(t)
	src := Source{ID: "everything", Transport: Stdio, Command: node, Args: []string{script, "stdio"}}
	a := snap(t, src, Options{Timeout: 60 * time.Second})
	checkEverything(t, a)
	b := snap(t, src, Options{Timeout: 60 * time.Second})
	if x, y := encode(t, a), encode(t, b); !bytes.Equal(x, y) {
		t.Errorf("two snapshots of server-everything differ")
	}
}

func TestServerEverythingStreamableHTTP(t *testing.T) {
	node, script, preload := everything(t)
	port := freePort(t)
	cmd := exec.Command(node, "--require", preload, script, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	waitListening(t, addr, &stderr)
	// The preload must have kept the server off other interfaces.
	t.Run("loopback only", func(t *testing.T) {
		ip := outboundIP()
		if ip == "" {
			t.Skip("this host has no non-loopback IPv4 address to try the server on")
		}
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, strconv.Itoa(port)), time.Second); err == nil {
			c.Close()
			t.Errorf("server-everything is reachable on %s; it must listen on 127.0.0.1 only", ip)
		}
	})
	m := snap(t, Source{ID: "everything", Transport: HTTP, URL: "http://" + addr + "/mcp"}, Options{Timeout: 60 * time.Second})
	checkEverything(t, m)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitListening polls until addr accepts connections. It is a readiness
// wait, not a timed assertion: the bound only turns a broken start into a
// failure instead of a hang.
func waitListening(t *testing.T, addr string, stderr *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("server-everything did not start listening on %s; stderr:\n%s", addr, stderr.String())
}

// outboundIP returns a non-loopback address of this host, or "".
func outboundIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}
