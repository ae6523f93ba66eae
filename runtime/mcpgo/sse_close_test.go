package mcpgo_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// goroutines returns the stacks of the live goroutines by id.
func goroutines() map[int]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[int]string{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		head, _, _ := strings.Cut(string(g), " [")
		id, err := strconv.Atoi(strings.TrimPrefix(head, "goroutine "))
		if err == nil {
			out[id] = string(g)
		}
	}
	return out
}

// connStates records the last state the server saw of each connection.
type connStates struct {
	mu sync.Mutex
	m  map[net.Conn]http.ConnState
}

func (s *connStates) track(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[net.Conn]http.ConnState{}
	}
	s.m[c] = st
}

func (s *connStates) open() (n, all int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.m {
		if st != http.StateClosed && st != http.StateHijacked {
			n++
		}
	}
	return n, len(s.m)
}

// TestSSECloseLeavesNothing: after Close, an SSE connection (and a
// streamable HTTP one) leaves no goroutine of its own and no connection
// open, also when a call was just given up (its cancellation would
// otherwise go out on a keep-alive connection that stays idle for 90 s
// after the idle ones were closed); the server sees every connection
// closed.
func TestSSECloseLeavesNothing(t *testing.T) {
	for _, sse := range []bool{true, false} {
		for _, version := range []string{"", mcp.ProtocolVersion20251125} {
			for round := range 3 {
				name := fmt.Sprintf("%s/%s#%d", map[bool]string{true: "sse", false: "http"}[sse], cmp.Or(version, "negotiated"), round)
				t.Run(name, func(t *testing.T) { closeRound(t, sse, version) })
			}
		}
	}
}

func closeRound(t *testing.T, sse bool, version string) {
	states := &connStates{}
	var h http.Handler
	var sseServer *server.SSEServer
	if sse {
		sseServer = server.NewSSEServer(fixture())
		h = sseServer
	} else {
		h = server.NewStreamableHTTPServer(fixture())
	}
	// The server takes its time over a cancellation, so that one sent as
	// the connection closes is still under way when Close returns.
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			if bytes.Contains(b, []byte("notifications/cancelled")) {
				time.Sleep(300 * time.Millisecond)
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(w, r)
	})
	ts := httptest.NewUnstartedServer(slow)
	ts.Config.ConnState = states.track
	ts.Start()
	defer ts.Close()
	if sse {
		server.WithBaseURL(ts.URL)(sseServer)
	}

	before := goroutines()
	opts := []mcpgo.Option{mcpgo.WithName("fixture")}
	if version != "" {
		opts = append(opts, mcpgo.WithProtocolVersion(version))
	}
	c := mcpgo.StreamableHTTP(ts.URL+"/mcp", opts...)
	if sse {
		c = mcpgo.SSE(ts.URL+"/sse", opts...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Several requests, so that the POSTs' keep-alive connections exist.
	for range 3 {
		if _, err := newWeather(c).Call(ctx, WeatherInput{City: "Oslo"}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := states.open(); n == 0 {
		t.Fatal("the server saw no open connection while connected")
	}
	// A call given up on just before Close: its cancellation goes out
	// as the connection closes.
	callCtx, giveUp := context.WithCancel(ctx)
	inFlight := make(chan error, 1)
	go func() {
		_, err := newPlain(sleepDesc, c).Call(callCtx, EmptyInput{})
		inFlight <- err
	}()
	time.Sleep(100 * time.Millisecond)
	giveUp()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-inFlight:
		if err == nil {
			t.Error("the call in flight at Close succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call in flight at Close did not end")
	}

	// What Close stopped gets a moment to finish, far below the 90 s an
	// idle connection would last; then nothing may be left.
	deadline := time.Now().Add(2 * time.Second)
	var left []string
	var open int
	for {
		left = left[:0]
		for id, st := range goroutines() {
			if _, ok := before[id]; ok {
				continue
			}
			// The client's side: its HTTP connections, mcp-go's transport
			// and the Conn's own goroutines. The test server's side shows
			// in the connection states.
			if strings.Contains(st, "net/http.(*persistConn)") || strings.Contains(st, "mcp-go/client") ||
				strings.Contains(st, "mcpgen/runtime/mcpgo.") {
				left = append(left, st)
			}
		}
		open, _ = states.open()
		if (len(left) == 0 && open == 0) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("%d goroutines of the connection outlive Close:\n%s", len(left), strings.Join(left, "\n\n"))
	}
	if open > 0 {
		t.Errorf("the server still sees %d connections open after Close", open)
	}
}
