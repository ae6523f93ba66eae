package crmtrace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	mcpotel "github.com/mcpgen/mcpgen/adapters/otel"
)

// helperEnv makes the test binary a helper process (resume_test.go).
const helperEnv = "MCPOTEL_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode))
	}
	os.Exit(m.Run())
}

// telemetry is an Observer over the SDK's in-memory exporter and manual
// reader.
type telemetry struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	obs    *mcpotel.Observer
}

func newTelemetry(opts ...mcpotel.Option) (*telemetry, error) {
	t := &telemetry{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	t.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(t.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(t.reader))
	obs, err := mcpotel.New(append([]mcpotel.Option{mcpotel.WithTracerProvider(t.tp), mcpotel.WithMeterProvider(mp)}, opts...)...)
	if err != nil {
		return nil, err
	}
	t.obs = obs
	return t, nil
}

func mustTelemetry(t *testing.T, opts ...mcpotel.Option) *telemetry {
	t.Helper()
	tel, err := newTelemetry(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tel
}

// span is what the tests read of a finished span; helper processes print
// theirs in this form.
type span struct {
	Name     string            `json:"name"`
	Start    time.Time         `json:"start"`
	Kind     string            `json:"kind"`
	TraceID  string            `json:"traceId"`
	SpanID   string            `json:"spanId"`
	Parent   string            `json:"parent,omitempty"`
	Links    []link            `json:"links,omitempty"`
	Attrs    map[string]string `json:"attrs"`
	Events   []event           `json:"events,omitempty"`
	Status   string            `json:"status"`
	StatusOf string            `json:"statusDescription,omitempty"`
}

type link struct {
	TraceID string            `json:"traceId"`
	SpanID  string            `json:"spanId"`
	Attrs   map[string]string `json:"attrs,omitempty"`
}

type event struct {
	Name  string            `json:"name"`
	Attrs map[string]string `json:"attrs,omitempty"`
}

func attrMap(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

func (t *telemetry) finished() []span {
	var out []span
	for _, s := range t.spans.GetSpans() {
		sp := span{Name: s.Name, Start: s.StartTime, Kind: s.SpanKind.String(), TraceID: s.SpanContext.TraceID().String(), SpanID: s.SpanContext.SpanID().String(),
			Attrs: attrMap(s.Attributes), Status: s.Status.Code.String(), StatusOf: s.Status.Description}
		if s.Parent.IsValid() {
			sp.Parent = s.Parent.SpanID().String()
		}
		for _, l := range s.Links {
			sp.Links = append(sp.Links, link{TraceID: l.SpanContext.TraceID().String(), SpanID: l.SpanContext.SpanID().String(), Attrs: attrMap(l.Attributes)})
		}
		for _, e := range s.Events {
			sp.Events = append(sp.Events, event{Name: e.Name, Attrs: attrMap(e.Attributes)})
		}
		out = append(out, sp)
	}
	return out
}

// named returns the one span called name.
func named(t *testing.T, spans []span, name string) span {
	t.Helper()
	var found []span
	for _, s := range spans {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q in %s", len(found), name, dump(spans))
	}
	return found[0]
}

func dump(spans []span) string {
	b, _ := json.MarshalIndent(spans, "", "  ")
	return string(b)
}

func (s span) event(name string) (event, bool) {
	for _, e := range s.Events {
		if e.Name == name {
			return e, true
		}
	}
	return event{}, false
}

func (s span) eventNames() []string {
	var n []string
	for _, e := range s.Events {
		n = append(n, e.Name)
	}
	return n
}

// wantAttrs checks that s has every attribute of want, with its value.
func wantAttrs(t *testing.T, s span, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got, ok := s.Attrs[k]; !ok || got != v {
			t.Errorf("span %q: attribute %s = %q (set %v), want %q", s.Name, k, got, ok, v)
		}
	}
}

// noSecret fails when the caller's token shows anywhere in spans.
func noSecret(t *testing.T, spans []span, secret string) {
	t.Helper()
	if strings.Contains(dump(spans), secret) {
		t.Errorf("the token %q is in the spans:\n%s", secret, dump(spans))
	}
}

// crm runs the example CRM server over streamable HTTP, logging the
// _meta of each request it receives to a file, and returns its endpoint
// and that file.
func crm(t *testing.T) (endpoint, metaLog string) {
	t.Helper()
	metaLog = filepath.Join(t.TempDir(), "meta.jsonl")
	cmd := exec.Command(crmtest.Build(t), "-http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "CRM_SERVER_META_LOG="+metaLog)
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
	return strings.TrimSpace(line), metaLog
}

// request is one request as the CRM server logged it.
type request struct {
	Method string         `json:"method"`
	Name   string         `json:"name"`
	URI    string         `json:"uri"`
	Meta   map[string]any `json:"meta"`
}

func requests(t *testing.T, metaLog string) []request {
	t.Helper()
	b, err := os.ReadFile(metaLog)
	if err != nil {
		t.Fatal(err)
	}
	var out []request
	for line := range bytes.Lines(b) {
		var r request
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("meta log line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// sent returns the requests the server received for method and target.
func sent(t *testing.T, metaLog, method, target string) []request {
	t.Helper()
	var out []request
	for _, r := range requests(t, metaLog) {
		if r.Method == method && (r.Name == target || r.URI == target) {
			out = append(out, r)
		}
	}
	return out
}

// traceparent is the W3C traceparent of a sampled span.
func traceparent(s span) string { return fmt.Sprintf("00-%s-%s-01", s.TraceID, s.SpanID) }

var background = context.Background()
