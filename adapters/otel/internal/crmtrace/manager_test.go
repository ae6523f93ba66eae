package crmtrace

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	mcpotel "github.com/mcpgen/mcpgen/adapters/otel"
	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// dropper is a proxy in front of the CRM server that closes the
// connection of the next drop tools/call requests without passing them
// on: a transport failure the manager retries for an idempotent tool.
type dropper struct {
	drop  atomic.Int32
	proxy *httputil.ReverseProxy
}

func (d *dropper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if bytes.Contains(body, []byte(`"method":"tools/call"`)) && d.drop.Add(-1) >= 0 {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	d.proxy.ServeHTTP(w, r)
}

// TestManagerRetriesAndBreaker: under the connection manager, the retries
// of a call are events of its span, and so is the breaker opening; the
// call the open breaker refuses says so in error.type. The server received
// the call that got through with the span's trace context.
func TestManagerRetriesAndBreaker(t *testing.T) {
	endpoint, metaLog := crm(t)
	target, _ := url.Parse(endpoint)
	d := &dropper{proxy: httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})}
	d.proxy.FlushInterval = -1 // the SSE streams go through as they come
	front := httptest.NewServer(d)
	t.Cleanup(front.Close)

	tel := mustTelemetry(t)
	policy := manager.Policy{AllowPrivateNetworks: true}
	store := manager.NewMemoryServerStore()
	reg := manager.NewRegistry(store, policy)
	if _, err := reg.Save(background, manager.ServerConfig{ID: "crm", MaxRetries: 2,
		Transport: manager.Transport{Kind: manager.TransportHTTP, URL: front.URL + target.Path}}); err != nil {
		t.Fatal(err)
	}
	m := manager.NewManager(reg, mcpgo.NewConnector(policy, mcpgo.WithConnOptions(tel.obs.ConnOption())),
		manager.WithObserver(tel.obs),
		manager.WithBreaker(manager.BreakerConfig{FailureThreshold: 1, CoolDown: time.Hour}),
		manager.WithSleep(func(ctx context.Context, _ time.Duration) error { return ctx.Err() }))
	t.Cleanup(func() { _ = m.CloseAll() })
	ts, err := m.Toolset(background, "assistant", []manager.ToolSource{{Server: "crm", Tools: []string{"get_deal"}, Bind: crmapi.Invokers,
		Options: []mcpruntime.Option{mcpruntime.WithIdentity(mcpruntime.ContextPrincipal)}}})
	if err != nil {
		t.Fatal(err)
	}
	call := func() (mcpruntime.ModelResult, error) {
		return ts.Invoke(crmtest.Alice(), "get_deal", json.RawMessage(`{"deal_id":"D-2001"}`))
	}

	d.drop.Store(2)
	if r, err := call(); err != nil || r.IsError {
		t.Fatalf("a call that got through on the third attempt: %+v, %v", r, err)
	}
	d.drop.Store(3)
	if _, err := call(); err == nil {
		t.Fatal("a call whose three attempts were dropped succeeded")
	}
	d.drop.Store(0)
	if _, err := call(); err == nil {
		t.Fatal("a call with the breaker open succeeded")
	}

	var calls []span
	for _, s := range tel.finished() {
		if s.Name == "tools/call get_deal" {
			calls = append(calls, s)
		}
	}
	if len(calls) != 3 {
		t.Fatalf("spans: %s", dump(tel.finished()))
	}
	retried, failed, refused := calls[0], calls[1], calls[2]
	wantAttrs(t, retried, map[string]string{"mcpgen.server": "crm", "mcpgen.outcome": "ok", "server.address": "127.0.0.1", "network.transport": "tcp"})
	var attempts []string
	for _, e := range retried.Events {
		if e.Name == mcpotel.EventRetry {
			attempts = append(attempts, e.Attrs["mcpgen.retry.attempt"])
			if e.Attrs["error.type"] == "" {
				t.Errorf("a retry without error.type: %+v", e)
			}
		}
	}
	if len(attempts) != 2 || attempts[0] != "1" || attempts[1] != "2" {
		t.Errorf("retry events %v of %+v", attempts, retried)
	}
	if r := sent(t, metaLog, "tools/call", "get_deal"); len(r) != 1 || r[0].Meta["traceparent"] != traceparent(retried) {
		t.Errorf("the server received %+v, want one call with %s", r, traceparent(retried))
	}

	if failed.Attrs["mcpgen.outcome"] != "error" || failed.Attrs["error.type"] == "" || failed.Status != "Error" {
		t.Errorf("the failed call: %+v", failed)
	}
	e, ok := failed.event(mcpotel.EventBreaker)
	if !ok || e.Attrs["mcpgen.breaker.from"] != "closed" || e.Attrs["mcpgen.breaker.to"] != "open" || e.Attrs["gen_ai.tool.name"] != "get_deal" {
		t.Errorf("breaker event of the failing call: %v", failed.Events)
	}
	wantAttrs(t, refused, map[string]string{"error.type": "circuit_open", "mcpgen.outcome": "error"})
	if len(refused.Events) != 0 {
		t.Errorf("the refused call has events %v", refused.eventNames())
	}
}
