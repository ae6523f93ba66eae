package crmapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// seenRequest is one JSON-RPC request the server was sent: its method and
// the Authorization header it came with.
type seenRequest struct{ Method, Auth string }

// recordingProxy starts the CRM server over streamable HTTP behind a
// reverse proxy that records every request's method and Authorization
// header, and returns a connection through it.
func recordingProxy(t *testing.T) (*mcpgo.Conn, func() []seenRequest) {
	t.Helper()
	cmd := exec.Command(serverBin, "-http", "127.0.0.1:0")
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
	target, err := url.Parse(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []seenRequest
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	proxy.FlushInterval = -1 // event streams pass through as they come
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
			mu.Lock()
			seen = append(seen, seenRequest{msg.Method, r.Header.Get("Authorization")})
			mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	c := mcpgo.StreamableHTTP(ts.URL+target.Path, mcpgo.WithName("crm"))
	t.Cleanup(func() { _ = c.Close() })
	return c, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenRequest(nil), seen...)
	}
}

// last returns the last request of method.
func last(seen []seenRequest, method string) (seenRequest, bool) {
	for i := len(seen) - 1; i >= 0; i-- {
		if seen[i].Method == method {
			return seen[i], true
		}
	}
	return seenRequest{}, false
}

// TestClientReads: the Client's resource and prompt methods go through its
// Caller with its options, so the identity given to NewClient reaches the
// server with every read and get, as it does with tool calls.
func TestClientReads(t *testing.T) {
	conn, seen := recordingProxy(t)
	crm := crmapi.NewClient(conn, identity)

	p, err := crm.ReadPipeline(as("alice"))
	if err != nil {
		t.Fatal(err)
	}
	if text, err := p.Text(); err != nil || !strings.Contains(text, "lead") {
		t.Errorf("pipeline: %v %q", err, text)
	}
	if r, ok := last(seen(), "resources/read"); !ok || r.Auth != "Bearer tok-alice" {
		t.Errorf("Client.ReadPipeline sent %+v, want alice's bearer token", r)
	}
	k, err := crm.ReadDealContract(as("bob"), "D-2001")
	if text, _ := k.Text(); err != nil || !strings.HasPrefix(text, "# Contract D-2001") {
		t.Errorf("contract: %v %q", err, text)
	}
	if r, _ := last(seen(), "resources/read"); r.Auth != "Bearer tok-bob" {
		t.Errorf("Client.ReadDealContract sent %+v, want bob's bearer token", r)
	}
	f, err := crm.GetFollowUpPrompt(as("carol"), "D-2001", nil)
	if err != nil || len(f.Messages) == 0 {
		t.Fatalf("follow_up: %v %+v", err, f)
	}
	if r, ok := last(seen(), "prompts/get"); !ok || r.Auth != "Bearer tok-carol" {
		t.Errorf("Client.GetFollowUpPrompt sent %+v, want carol's bearer token", r)
	}
	// Without a principal the read fails before anything is sent, as a
	// tool call does.
	n := len(seen())
	if _, err := crm.ReadPipeline(t.Context()); !errors.Is(err, mcpruntime.ErrNoPrincipal) {
		t.Errorf("read without a principal: %v", err)
	}
	if len(seen()) != n {
		t.Error("a read without a principal reached the server")
	}
	// The package-level accessor takes only the options it is given.
	if _, err := crmapi.ReadPipeline(as("alice"), conn); err != nil {
		t.Fatal(err)
	}
	if r, _ := last(seen(), "resources/read"); r.Auth != "" {
		t.Errorf("package-level ReadPipeline without options sent %+v", r)
	}
}

// TestClientLinksAndResume: the Client gives the resource links of a
// result (to read through it) and resumes an approved call, typed.
func TestClientLinksAndResume(t *testing.T) {
	conn, seen := recordingProxy(t)
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), crmapi.GateOptions()...)
	crm := crmapi.NewClient(conn, identity, mcpruntime.WithGate(gate))
	ctx := as("alice")

	in := crmapi.GetDealInput{DealID: "D-2001"}
	r, err := crm.GetDeal(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	links := crm.GetDealLinks(in, r)
	if len(links) != 1 || links[0].Tool != "get_deal" || links[0].URI != "crm://deals/D-2001/contract" {
		t.Fatalf("links: %+v", links)
	}
	k, err := crm.ReadLink(ctx, links[0])
	if text, _ := k.Text(); err != nil || !strings.HasPrefix(text, "# Contract D-2001") {
		t.Errorf("ReadLink: %v %q", err, text)
	}
	if r, _ := last(seen(), "resources/read"); r.Auth != "Bearer tok-alice" {
		t.Errorf("Client.ReadLink sent %+v, want alice's bearer token", r)
	}

	note := "Approved by finance."
	_, err = crm.UpdateDeal(ctx, crmapi.UpdateDealInput{DealID: "D-2001", Note: &note})
	var pending *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &pending) {
		t.Fatalf("update_deal: want a pending approval, got %v", err)
	}
	if err := gate.Approve(ctx, pending.Approval.ID, pending.Approval.Digest); err != nil {
		t.Fatal(err)
	}
	var calls int
	for range 2 {
		u, err := crm.ResumeUpdateDeal(ctx, pending.Approval.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.Output.Notes; len(got) == 0 || got[len(got)-1] != "alice: "+note {
			t.Errorf("resumed update_deal: notes %q", got)
		}
	}
	for _, s := range seen() {
		if s.Method == "tools/call" {
			calls++
		}
	}
	if calls != 2 { // get_deal, and update_deal once for two resumes
		t.Errorf("the server saw %d tool calls, want 2", calls)
	}
}
