package mcpgo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// resumeServer speaks the 2025-03-26 streamable HTTP protocol the way the
// conformance suite's sse-retry scenario does: a tools/call stream sends an
// event ID and a retry time (500 ms), then ends before the answer, and the answer
// goes out on the next GET stream to open, whichever it is. Its first GET,
// the client's standalone stream, is read late (stallFirstGet), as happens
// when the GET and the call arrive together.
type resumeServer struct {
	stallFirstGet time.Duration

	mu      sync.Mutex
	gets    int
	pending json.RawMessage // the id of a call not answered yet
	order   []string
}

func (s *resumeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		s.mu.Lock()
		s.gets++
		first := s.gets == 1
		s.mu.Unlock()
		if first {
			time.Sleep(s.stallFirstGet)
		}
		s.mu.Lock()
		s.order = append(s.order, "GET")
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Mcp-Session-Id", "s1")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "id: g%d\nretry: 100\ndata: \n\n", s.gets)
		if s.pending != nil {
			fmt.Fprintf(w, "event: message\nid: a1\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"answered\"}]}}\n\n", s.pending)
			s.pending = nil
		}
		s.mu.Unlock()
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case http.MethodPost:
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &m)
		s.mu.Lock()
		s.order = append(s.order, m.Method)
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", "s1")
		reply := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,%s}`, m.ID, result)
		}
		switch {
		case m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "initialize":
			reply(`"result":{"protocolVersion":"2025-03-26","serverInfo":{"name":"resume","version":"1"},"capabilities":{"tools":{}}}`)
		case m.Method == "tools/list":
			reply(`"result":{"tools":[{"name":"slow","inputSchema":{"type":"object"}}]}`)
		case m.Method == "tools/call":
			s.mu.Lock()
			s.pending = m.ID
			s.mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, "id: c1\nretry: 500\ndata: \n\n")
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		case m.Method == "ping" || m.Method == "logging/setLevel":
			reply(`"result":{}`)
		default:
			reply(`"error":{"code":-32601,"message":"method not found"}`)
		}
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
	}
}

// A server that answers a call on whichever GET stream opens next (the
// conformance suite's sse-retry scenario) must not get the call before the
// client's standalone GET stream: mcp-go ignores answers on that stream,
// so the call would wait forever. The session layer holds requests until
// the server has answered the standalone GET.
func TestCallWaitsForTheStandaloneStream(t *testing.T) {
	srv := &resumeServer{stallFirstGet: 200 * time.Millisecond}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c := mcpgo.StreamableHTTP(hs.URL, mcpgo.WithName("resume"))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, "slow", json.RawMessage(`{}`))
	if err != nil {
		srv.mu.Lock()
		t.Fatalf("call: %v (the server saw %v)", err, srv.order)
	}
	if res.Text() != "answered" {
		t.Errorf("result %q", res.Text())
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, m := range srv.order {
		if m == "tools/call" {
			t.Errorf("the call went out before the standalone GET was answered: %v", srv.order)
		}
		if m == "GET" || m == "tools/call" {
			break
		}
	}
}
