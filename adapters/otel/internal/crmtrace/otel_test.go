package crmtrace

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	mcpotel "github.com/mcpgen/mcpgen/adapters/otel"
	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// TestCRMTrace drives the CRM server process through an agent set, a
// generated client's reads and a prompt, and reads the spans and metrics
// the SDK recorded: one CLIENT span per operation, named and attributed as
// the conventions say, under the agent's span, its trace context in the
// request's _meta as the server received it.
func TestCRMTrace(t *testing.T) {
	endpoint, metaLog := crm(t)
	u, _ := url.Parse(endpoint)
	tel := mustTelemetry(t)
	conn := mcpgo.StreamableHTTP(endpoint, mcpgo.WithName("crm"), tel.obs.ConnOption())
	t.Cleanup(func() { _ = conn.Close() })
	opts := []mcpruntime.Option{mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithObserver(tel.obs)}
	ts, err := mcpruntime.NewToolset(crmapi.Invokers(conn, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	set, err := agent.New(agent.DialectJSONSchema, agent.Source{Tools: ts})
	if err != nil {
		t.Fatal(err)
	}
	ctx := mcpruntime.WithRun(crmtest.Alice(), mcpruntime.NewRun("run-1"))
	ctx, root := tel.tp.Tracer("test").Start(ctx, "invoke_agent crm-assistant")
	results, pause, err := set.DispatchAll(ctx, []agent.Call{
		{ID: "call_1", Name: "get_deal", Arguments: json.RawMessage(`{"deal_id":"D-2001"}`)},
		{ID: "call_2", Name: "get_deal", Arguments: json.RawMessage(`{"deal_id":"D-9999"}`)},
	})
	if err != nil || pause != nil || len(results) != 2 || results[0].IsError || !results[1].IsError {
		t.Fatalf("dispatch: %+v, %v, %v", results, pause, err)
	}
	client := crmapi.NewClient(conn, opts...)
	if _, err := client.ReadPipeline(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := client.GetFollowUpPrompt(ctx, "D-2001", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.GetFollowUpPrompt(ctx, "D-9999", nil); err == nil {
		t.Fatal("a prompt for a deal the CRM lacks succeeded")
	}
	root.End()

	spans := tel.finished()
	noSecret(t, spans, "tok-alice")
	agentSpan := named(t, spans, "invoke_agent crm-assistant")
	var calls, prompts []span
	for _, s := range spans {
		switch s.Name {
		case "tools/call get_deal":
			calls = append(calls, s)
		case "prompts/get follow_up":
			prompts = append(prompts, s)
		}
	}
	if len(calls) != 2 || len(prompts) != 2 {
		t.Fatalf("spans: %s", dump(spans))
	}
	transport := map[string]string{
		"network.transport": "tcp", "network.protocol.name": "http", "server.address": u.Hostname(), "server.port": u.Port(),
		"mcp.protocol.version": conn.ProtocolVersion(), "mcpgen.server": "crm",
	}
	for _, s := range append(append(slices.Clone(calls), prompts...), named(t, spans, "resources/read")) {
		if s.Kind != "client" || s.Parent != agentSpan.SpanID || s.TraceID != agentSpan.TraceID {
			t.Errorf("span %q: kind %s, parent %s in trace %s; want a client span under %s in %s", s.Name, s.Kind, s.Parent, s.TraceID, agentSpan.SpanID, agentSpan.TraceID)
		}
		wantAttrs(t, s, transport)
		if _, ok := s.Attrs["gen_ai.tool.call.arguments"]; ok {
			t.Errorf("span %q records arguments without RecordArguments", s.Name)
		}
	}

	done, failed := calls[0], calls[1]
	if done.Attrs["gen_ai.tool.call.id"] != "call_1" {
		done, failed = failed, done
	}
	wantAttrs(t, done, map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_deal",
		"gen_ai.tool.call.id": "call_1", "mcpgen.outcome": "ok", "mcpgen.run.id": "run-1", "mcpgen.run.tainted": "false",
	})
	if _, ok := done.Attrs["error.type"]; ok || done.Status != "Unset" {
		t.Errorf("a successful call: %+v", done)
	}
	if e, found := done.event(mcpotel.EventTaint); !found || e.Attrs["mcpgen.taint.source"] != "tool" || e.Attrs["mcpgen.taint.external"] != "true" ||
		!strings.HasPrefix(e.Attrs["mcpgen.taint.digest"], "sha256:") {
		t.Errorf("taint event of a call: %v", done.Events)
	}
	// The failed call comes after the first result tainted the run.
	wantAttrs(t, failed, map[string]string{"gen_ai.tool.call.id": "call_2", "error.type": "tool_error", "mcpgen.outcome": "tool_error", "mcpgen.run.tainted": "true"})
	if failed.Status != "Error" || failed.StatusOf != "" {
		t.Errorf("a tool error's status: %s %q", failed.Status, failed.StatusOf)
	}

	read := named(t, spans, "resources/read")
	wantAttrs(t, read, map[string]string{"mcp.method.name": "resources/read", "mcp.resource.uri": "crm://pipeline", "mcpgen.outcome": "ok"})
	if _, ok := read.Attrs["gen_ai.operation.name"]; ok {
		t.Error("a read is marked execute_tool")
	}
	if e, found := read.event(mcpotel.EventTaint); !found || e.Attrs["mcpgen.taint.source"] != "resource" {
		t.Errorf("taint event of a read: %v", read.Events)
	}
	good, bad := prompts[0], prompts[1]
	if good.Attrs["mcpgen.outcome"] != "ok" {
		good, bad = bad, good
	}
	wantAttrs(t, good, map[string]string{"mcp.method.name": "prompts/get", "gen_ai.prompt.name": "follow_up", "mcpgen.outcome": "ok"})
	code := bad.Attrs["rpc.response.status_code"]
	if n, err := strconv.Atoi(code); err != nil || n >= 0 || bad.Attrs["error.type"] != code || bad.Attrs["mcpgen.outcome"] != "error" || bad.Status != "Error" {
		t.Errorf("a JSON-RPC error: %+v", bad)
	}
	if bad.StatusOf != "" {
		t.Errorf("the server's error message is recorded without RecordResults: %q", bad.StatusOf)
	}

	// Each request carried its span's trace context to the server.
	for _, c := range []struct {
		method, target string
		spans          []span
	}{{"tools/call", "get_deal", calls}, {"resources/read", "crm://pipeline", []span{read}}, {"prompts/get", "follow_up", prompts}} {
		var got, want []string
		for _, r := range sent(t, metaLog, c.method, c.target) {
			tp, _ := r.Meta["traceparent"].(string)
			got = append(got, tp)
		}
		for _, s := range c.spans {
			want = append(want, traceparent(s))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s %s: the server received traceparent %q, want %q", c.method, c.target, got, want)
		}
	}

	// The duration histogram, by tool, server and outcome.
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(background, &rm); err != nil {
		t.Fatal(err)
	}
	h := histogram(t, rm, "mcp.client.operation.duration")
	counts := map[string]uint64{}
	for _, p := range h.DataPoints {
		get := func(k string) string { v, _ := p.Attributes.Value(attribute.Key(k)); return v.Emit() }
		key := strings.Join([]string{get("mcp.method.name"), get("gen_ai.tool.name") + get("gen_ai.prompt.name"), get("mcpgen.server"), get("mcpgen.outcome"), get("error.type")}, " ")
		counts[key] += p.Count
		if !slices.Equal(p.Bounds, mcpotel.DurationBuckets) {
			t.Errorf("buckets %v", p.Bounds)
		}
	}
	want := map[string]uint64{
		"tools/call get_deal crm ok ":                   1,
		"tools/call get_deal crm tool_error tool_error": 1,
		"resources/read  crm ok ":                       1,
		"prompts/get follow_up crm ok ":                 1,
		"prompts/get follow_up crm error " + code:       1,
	}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%d operations %q, want %d (all: %v)", counts[k], k, n, counts)
		}
	}
}

func histogram(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.Histogram[float64] {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				if m.Unit != "s" || sm.Scope.Name != mcpotel.ScopeName {
					t.Errorf("metric %s: unit %q, scope %q", name, m.Unit, sm.Scope.Name)
				}
				h, ok := m.Data.(metricdata.Histogram[float64])
				if !ok {
					t.Fatalf("metric %s is a %T", name, m.Data)
				}
				return h
			}
		}
	}
	t.Fatalf("no metric %s in %+v", name, rm)
	return metricdata.Histogram[float64]{}
}

// TestRecordArguments: arguments and results are recorded only when asked
// for, and never with the caller's token, though the server got it in the
// call's identity argument.
func TestRecordArguments(t *testing.T) {
	endpoint, metaLog := crm(t)
	tel := mustTelemetry(t, mcpotel.RecordArguments(), mcpotel.RecordResults())
	conn := mcpgo.StreamableHTTP(endpoint, mcpgo.WithName("crm"), tel.obs.ConnOption())
	t.Cleanup(func() { _ = conn.Close() })
	update := crmapi.NewUpdateDeal(conn, mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithObserver(tel.obs))
	m, err := update.Invoke(crmtest.Alice(), json.RawMessage(`{"deal_id":"D-2001","note":"recorded","caller_token":"tok-model"}`))
	if err != nil || m.IsError {
		t.Fatalf("update: %+v, %v", m, err)
	}
	s := named(t, tel.finished(), "tools/call update_deal")
	noSecret(t, []span{s}, "tok-alice")
	noSecret(t, []span{s}, "tok-model")
	var args map[string]any
	if err := json.Unmarshal([]byte(s.Attrs["gen_ai.tool.call.arguments"]), &args); err != nil || args["note"] != "recorded" || args["deal_id"] != "D-2001" || len(args) != 2 {
		t.Errorf("recorded arguments %q (%v)", s.Attrs["gen_ai.tool.call.arguments"], err)
	}
	if r := s.Attrs["gen_ai.tool.call.result"]; !strings.Contains(r, `alice: recorded`) {
		t.Errorf("recorded result %q", r)
	}
	if r := sent(t, metaLog, "tools/call", "update_deal"); len(r) != 1 || r[0].Meta["traceparent"] != traceparent(s) {
		t.Errorf("requests %+v, span %s", r, traceparent(s))
	}
}
