package crmtrace

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

var update = flag.Bool("update", false, "rewrite the trace in docs/observability.md")

// TestObservabilityDoc: the trace and metrics docs/observability.md shows
// are the ones this CRM session produces, rendered from the in-memory
// exporter and the manual reader (random ids, the port and times replaced
// by names). -update rewrites them.
func TestObservabilityDoc(t *testing.T) {
	endpoint, metaLog := crm(t)
	dir := filepath.Join(t.TempDir(), "approvals")
	tel := mustTelemetry(t)
	set, _, gate, closeAll, err := gatedSet(endpoint, dir, tel.obs, mcpruntime.GateObserver(tel.obs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeAll)
	tracer := tel.tp.Tracer("example/cmd/agent")

	// The agent's run: a lookup, a read and a change, which the gate holds.
	ctx := mcpruntime.WithRun(crmtest.Alice(), mcpruntime.NewRun("run-1"))
	ctx, run := tracer.Start(ctx, "invoke_agent crm-assistant", trace.WithSpanKind(trace.SpanKindInternal))
	if _, _, err := set.DispatchAll(ctx, []agent.Call{{ID: "call_1", Name: "get_deal", Arguments: json.RawMessage(`{"deal_id":"D-2001"}`)}}); err != nil {
		t.Fatal(err)
	}
	conn := mcpgo.StreamableHTTP(endpoint, mcpgo.WithName("crm"), tel.obs.ConnOption())
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := crmapi.ReadDealContract(ctx, conn, "D-2001", mcpruntime.ReadObserver(tel.obs)); err != nil {
		t.Fatal(err)
	}
	_, pause, err := set.DispatchAll(ctx, []agent.Call{{ID: "call_2", Name: "update_deal", Arguments: json.RawMessage(`{"deal_id":"D-2001","stage":"negotiation"}`)}})
	run.End()
	if err != nil || pause == nil {
		t.Fatalf("the change was not held: %+v, %v", pause, err)
	}
	a := pause.Results[0].Pending

	// A person approves it; a worker resumes the run later.
	rctx, review := tracer.Start(background, "POST /approvals/{id}/approve", trace.WithSpanKind(trace.SpanKindServer))
	if err := gate.Approve(rctx, a.ID, a.Digest); err != nil {
		t.Fatal(err)
	}
	review.End()
	wctx, job := tracer.Start(crmtest.Alice(), "resume crm-assistant", trace.WithSpanKind(trace.SpanKindInternal))
	if _, still, err := set.Resume(wctx, pause); err != nil || still != nil {
		t.Fatalf("resume: %v", err)
	}
	job.End()

	u, _ := url.Parse(endpoint)
	spans := tel.finished()
	noSecret(t, spans, "tok-alice")
	var b strings.Builder
	renderTrace(&b, spans, map[string]string{u.Port(): "PORT", a.ID: "APPROVAL"})
	b.WriteString("\nWhat the server received in params._meta.traceparent:\n")
	for _, r := range requests(t, metaLog) {
		if tp, ok := r.Meta["traceparent"]; ok {
			fmt.Fprintf(&b, "  %s %s%s: %s\n", r.Method, r.Name, r.URI, label(spans, tp))
		}
	}
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(background, &rm); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\nmcp.client.operation.duration (s), count by attributes:\n")
	renderHistogram(&b, histogram(t, rm, "mcp.client.operation.duration"), u.Port())

	_, file, _, _ := runtime.Caller(0)
	doc := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "docs", "observability.md")
	checkBlock(t, doc, b.String())
}

const (
	blockStart = "<!-- trace: rendered by TestObservabilityDoc in adapters/otel/internal/crmtrace -->\n```text\n"
	blockEnd   = "```\n"
)

// checkBlock compares the rendered block of doc with want, or rewrites it.
func checkBlock(t *testing.T, doc, want string) {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, blockStart)
	j := -1
	if i >= 0 {
		j = strings.Index(s[i+len(blockStart):], blockEnd)
	}
	if i < 0 || j < 0 {
		t.Fatalf("%s has no rendered trace block", doc)
	}
	got := s[i+len(blockStart) : i+len(blockStart)+j]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(doc, []byte(s[:i+len(blockStart)]+want+s[i+len(blockStart)+j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the trace in %s is not the one the CRM session produces (go test -run TestObservabilityDoc -update rewrites it):\n%s", doc, want)
}

// numbering orders spans by their start and numbers them and their
// traces from 1.
func numbering(spans []span) (ordered []span, byID, traces map[string]int) {
	ordered = slices.Clone(spans)
	slices.SortStableFunc(ordered, func(x, y span) int { return x.Start.Compare(y.Start) })
	byID, traces = map[string]int{}, map[string]int{}
	for i, s := range ordered {
		byID[s.SpanID] = i + 1
		if _, ok := traces[s.TraceID]; !ok {
			traces[s.TraceID] = len(traces) + 1
		}
	}
	return ordered, byID, traces
}

// renderTrace writes the spans as trees, one per trace, in the order
// they started; ids become [n] and T1, T2…, and the values in names are
// replaced by their names.
func renderTrace(b *strings.Builder, spans []span, names map[string]string) {
	ordered, byID, traces := numbering(spans)
	children := map[string][]span{}
	var roots []span
	for _, s := range ordered {
		if _, ok := byID[s.Parent]; ok {
			children[s.Parent] = append(children[s.Parent], s)
		} else {
			roots = append(roots, s)
		}
	}
	clean := func(v string) string {
		for k, n := range names {
			v = strings.ReplaceAll(v, k, n)
		}
		return v
	}
	var walk func(s span, depth int)
	walk = func(s span, depth int) {
		pad := strings.Repeat("    ", depth)
		fmt.Fprintf(b, "%s[%d] %s (%s, trace T%d)", pad, byID[s.SpanID], s.Name, s.Kind, traces[s.TraceID])
		if s.Status == "Error" {
			b.WriteString(" status=Error")
		}
		b.WriteString("\n")
		keys := make([]string, 0, len(s.Attrs))
		for k := range s.Attrs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(b, "%s      %s = %s\n", pad, k, clean(s.Attrs[k]))
		}
		for _, l := range s.Links {
			fmt.Fprintf(b, "%s      link → [%d] (trace T%d)\n", pad, byID[l.SpanID], traces[l.TraceID])
		}
		for _, e := range s.Events {
			fmt.Fprintf(b, "%s      event %s", pad, e.Name)
			keys := make([]string, 0, len(e.Attrs))
			for k := range e.Attrs {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				v := clean(e.Attrs[k])
				if k == "mcpgen.approval.expires" {
					v = "(24 h later)"
				}
				fmt.Fprintf(b, " %s=%s", k, v)
			}
			b.WriteString("\n")
		}
		for _, c := range children[s.SpanID] {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
}

// label names a traceparent by the trace and span it carries.
func label(spans []span, tp any) string {
	s, _ := tp.(string)
	parts := strings.Split(s, "-")
	if len(parts) != 4 {
		return fmt.Sprintf("%q", s)
	}
	_, byID, traces := numbering(spans)
	if n, ok := byID[parts[2]]; ok && traces[parts[1]] > 0 {
		return fmt.Sprintf("00-{T%d}-{[%d]}-%s", traces[parts[1]], n, parts[3])
	}
	return fmt.Sprintf("%q (no span of the trace)", s)
}

func renderHistogram(b *strings.Builder, h metricdata.Histogram[float64], port string) {
	var lines []string
	for _, p := range h.DataPoints {
		var kv []string
		for _, a := range p.Attributes.ToSlice() {
			v := a.Value.Emit()
			if a.Key == attribute.Key("server.port") && v == port {
				v = "PORT"
			}
			kv = append(kv, string(a.Key)+"="+v)
		}
		lines = append(lines, fmt.Sprintf("  {%s} count=%d\n", strings.Join(kv, ", "), p.Count))
	}
	slices.Sort(lines)
	for _, l := range lines {
		b.WriteString(l)
	}
}
