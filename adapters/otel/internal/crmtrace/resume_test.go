package crmtrace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgen/mcpgen/adapters/internal/crmtest"
	mcpotel "github.com/mcpgen/mcpgen/adapters/otel"
	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/agent"
	"github.com/mcpgen/mcpgen/runtime/filestore"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// gatedSet is the CRM's tools for an agent, gated by a gate over the file
// store in dir, observed by obs.
func gatedSet(endpoint, dir string, obs *mcpotel.Observer, gopts ...mcpruntime.GateOption) (*agent.Set, *mcpruntime.Toolset, *mcpruntime.Gate, func(), error) {
	store, err := filestore.Open(dir)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	gate := mcpruntime.NewGate(store, gopts...)
	conn := mcpgo.StreamableHTTP(endpoint, mcpgo.WithName("crm"), obs.ConnOption())
	closeAll := func() { _ = conn.Close(); _ = store.Close() }
	ts, err := mcpruntime.NewToolset(crmapi.Invokers(conn, mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithGate(gate), mcpruntime.WithObserver(obs))...)
	if err != nil {
		closeAll()
		return nil, nil, nil, nil, err
	}
	set, err := agent.New(agent.DialectJSONSchema, agent.Source{Tools: ts})
	if err != nil {
		closeAll()
		return nil, nil, nil, nil, err
	}
	return set, ts, gate, closeAll, nil
}

// TestGatedCallAcrossProcesses: an agent's gated call pauses in this
// process, a person approves it, and another process resumes the pause.
// The held call's span says it is pending and was not sent; the decision
// is a span linked to it; the resuming process's span links to it too,
// makes the call once (its trace context is what the server received) and
// records the outcome; a later resume here replays the outcome without a
// request.
func TestGatedCallAcrossProcesses(t *testing.T) {
	endpoint, metaLog := crm(t)
	dir := filepath.Join(t.TempDir(), "approvals")
	tel := mustTelemetry(t)
	set, ts, gate, closeAll, err := gatedSet(endpoint, dir, tel.obs, mcpruntime.GateObserver(tel.obs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeAll)
	tracer := tel.tp.Tracer("test")

	ctx, root := tracer.Start(crmtest.Alice(), "invoke_agent crm-assistant")
	_, pause, err := set.DispatchAll(ctx, []agent.Call{{ID: "call_1", Name: "update_deal", Arguments: json.RawMessage(`{"deal_id":"D-2001","note":"traced"}`)}})
	root.End()
	if err != nil || pause == nil || pause.Results[0].Pending == nil {
		t.Fatalf("dispatch: %+v, %v", pause, err)
	}
	a := pause.Results[0].Pending
	held := named(t, tel.finished(), "tools/call update_deal")
	wantAttrs(t, held, map[string]string{"mcpgen.outcome": "pending", "mcpgen.approval.id": a.ID, "gen_ai.tool.call.id": "call_1"})
	if _, ok := held.Attrs["error.type"]; ok || held.Status != "Unset" {
		t.Errorf("a held call is reported as failed: %+v", held)
	}
	if e, ok := held.event(mcpotel.EventApprovalPending); !ok || e.Attrs["mcpgen.approval.id"] != a.ID || e.Attrs["mcpgen.approval.digest"] != a.Digest ||
		!strings.Contains(e.Attrs["mcpgen.approval.why"], "read-only") {
		t.Errorf("pending event: %v", held.Events)
	}
	if got := gateTrace(t, gate, a.ID); got != traceparent(held) {
		t.Errorf("the approval stores trace context %q, want the held call's %q", got, traceparent(held))
	}
	if r := sent(t, metaLog, "tools/call", "update_deal"); len(r) != 0 {
		t.Fatalf("the held call was sent: %+v", r)
	}

	rctx, review := tracer.Start(background, "review approvals")
	if err := gate.Approve(rctx, a.ID, a.Digest); err != nil {
		t.Fatal(err)
	}
	review.End()
	spans := tel.finished()
	approve := named(t, spans, "approve update_deal")
	if approve.Kind != "internal" || approve.Parent != named(t, spans, "review approvals").SpanID || !linksTo(approve, held) {
		t.Errorf("the decision's span: %+v", approve)
	}
	wantAttrs(t, approve, map[string]string{"mcpgen.approval.id": a.ID, "mcpgen.approval.state": "approved", "gen_ai.tool.name": "update_deal"})

	// Another process resumes the pause.
	pausePath := filepath.Join(t.TempDir(), "pause.json")
	b, err := json.Marshal(pause)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pausePath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=resume", "MCPOTEL_STORE="+dir, "MCPOTEL_ENDPOINT="+endpoint, "MCPOTEL_PAUSE="+pausePath)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("resuming process: %v\n%s", err, out)
	}
	var other helperOut
	if err := json.Unmarshal(out, &other); err != nil {
		t.Fatalf("resuming process printed %q: %v", out, err)
	}
	if other.Err != "" || len(other.Results) != 1 || other.Results[0].IsError || !strings.Contains(other.Results[0].Text, "alice: traced") {
		t.Fatalf("resume in the other process: %+v", other)
	}
	job := named(t, other.Spans, "resume crm-assistant")
	resumed := named(t, other.Spans, "tools/call update_deal")
	if resumed.TraceID != job.TraceID || resumed.Parent != job.SpanID || resumed.TraceID == held.TraceID || !linksTo(resumed, held) {
		t.Errorf("the resumed call's span: %+v\nheld: %+v", resumed, held)
	}
	wantAttrs(t, resumed, map[string]string{"mcpgen.outcome": "ok", "mcpgen.approval.id": a.ID, "gen_ai.tool.call.id": "call_1", "gen_ai.tool.name": "update_deal"})
	if got, want := strings.Join(resumed.eventNames(), " "), mcpotel.EventApprovalResumed+" "+mcpotel.EventTaint+" "+mcpotel.EventApprovalOutcome; got != want {
		t.Errorf("events of the resumed call: %s, want %s", got, want)
	}
	if e, _ := resumed.event(mcpotel.EventApprovalOutcome); e.Attrs["mcpgen.approval.state"] != "done" {
		t.Errorf("outcome event: %+v", e)
	}
	r := sent(t, metaLog, "tools/call", "update_deal")
	if len(r) != 1 || r[0].Meta["traceparent"] != traceparent(resumed) {
		t.Fatalf("the server received %+v, want one call with traceparent %s", r, traceparent(resumed))
	}

	// Resumed here again: the recorded outcome, no request.
	m, err := ts.Resume(crmtest.Alice(), "update_deal", a.ID)
	if err != nil || m.IsError {
		t.Fatalf("second resume: %+v, %v", m, err)
	}
	var replayed []span
	for _, s := range tel.finished() {
		if s.Name == "tools/call update_deal" && s.SpanID != held.SpanID {
			replayed = append(replayed, s)
		}
	}
	if len(replayed) != 1 || !linksTo(replayed[0], held) || strings.Join(replayed[0].eventNames(), " ") != mcpotel.EventApprovalReplayed+" "+mcpotel.EventTaint {
		t.Errorf("the replay's span: %s", dump(replayed))
	}
	if r := sent(t, metaLog, "tools/call", "update_deal"); len(r) != 1 {
		t.Errorf("the approved call reached the server %d times", len(r))
	}
	noSecret(t, append(tel.finished(), other.Spans...), "tok-alice")
}

func gateTrace(t *testing.T, g *mcpruntime.Gate, id string) string {
	t.Helper()
	a, err := g.Get(background, id)
	if err != nil {
		t.Fatal(err)
	}
	return a.Trace["traceparent"]
}

func linksTo(s, target span) bool {
	for _, l := range s.Links {
		if l.TraceID == target.TraceID && l.SpanID == target.SpanID {
			return true
		}
	}
	return false
}

// helperOut is what the resuming process prints.
type helperOut struct {
	Spans   []span         `json:"spans"`
	Results []agent.Result `json:"results"`
	Err     string         `json:"err,omitempty"`
}

// helperMain runs this test binary as a process of its own.
func helperMain(mode string) int {
	if mode != "resume" {
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		return 2
	}
	out, err := resumeMain()
	if err != nil {
		out.Err = err.Error()
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// resumeMain resumes the pause in the file MCPOTEL_PAUSE, as a worker
// process would, under a span of its own.
func resumeMain() (helperOut, error) {
	tel, err := newTelemetry()
	if err != nil {
		return helperOut{}, err
	}
	set, _, _, closeAll, err := gatedSet(os.Getenv("MCPOTEL_ENDPOINT"), os.Getenv("MCPOTEL_STORE"), tel.obs)
	if err != nil {
		return helperOut{}, err
	}
	defer closeAll()
	b, err := os.ReadFile(os.Getenv("MCPOTEL_PAUSE"))
	if err != nil {
		return helperOut{}, err
	}
	var p agent.Pause
	if err := json.Unmarshal(b, &p); err != nil {
		return helperOut{}, err
	}
	ctx, job := tel.tp.Tracer("test").Start(crmtest.Alice(), "resume crm-assistant", trace.WithSpanKind(trace.SpanKindInternal))
	results, still, err := set.Resume(ctx, &p)
	job.End()
	if err == nil && still != nil {
		err = errors.New("the pause is still undecided")
	}
	return helperOut{Spans: tel.finished(), Results: results}, err
}
