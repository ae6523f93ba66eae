package everything_test

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/bindings"
	"github.com/mcpgen/mcpgen/bindings/everything"
	"github.com/mcpgen/mcpgen/bindings/internal/livetest"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// server is the pinned release, started once for the package's tests with
// the client capabilities the manifest was captured with, answered here:
// elicitation with the forms' defaults, one root, and sampling with a
// fixed completion.
var server = &livetest.Server{ID: "everything", ConnOptions: []mcpgo.Option{
	mcpgo.WithElicitation(mcpgo.ElicitDefaults, true),
	mcpgo.WithRoots(mcpgo.Root{URI: "file:///tmp", Name: "tmp"}),
	mcpgo.WithSampling(func(_ context.Context, req mcpgo.SamplingRequest) (mcpgo.SamplingResponse, error) {
		return mcpgo.SamplingResponse{Content: mcpruntime.Content{Type: "text", Text: "sampled"}, Model: "test-model"}, nil
	}),
}}

func TestMain(m *testing.M) { os.Exit(server.Run(m)) }

func TestLiveListingMatchesManifest(t *testing.T) { server.Check(t) }

func TestDoc(t *testing.T) {
	livetest.CheckDoc(t, bindings.EverythingPackage.String(), everything.Descriptors())
}

func TestTools(t *testing.T) {
	ev := everything.NewClient(server.Need(t))
	ctx := context.Background()

	w, err := ev.GetStructuredContent(ctx, everything.GetStructuredContentInput{Location: everything.GetStructuredContentInputLocationChicago})
	if err != nil || w.Output.Temperature != 36 || w.Output.Conditions != "Light rain / drizzle" || w.Source != mcpruntime.FromStructuredContent {
		t.Errorf("get-structured-content: %+v from %v, %v", w.Output, w.Source, err)
	}
	sum, err := ev.GetSum(ctx, everything.GetSumInput{A: 2, B: 40})
	if text, _ := textOf(sum); err != nil || !strings.Contains(text, "42") {
		t.Errorf("get-sum: %q, %v", text, err)
	}
	echo, err := ev.Echo(ctx, everything.EchoInput{Message: "hi"})
	if text, _ := textOf(echo); err != nil || text != "Echo: hi" {
		t.Errorf("echo: %q, %v", text, err)
	}
	img, err := ev.GetTinyImage(ctx, everything.GetTinyImageInput{})
	if err != nil {
		t.Fatal(err)
	}
	var png []byte
	for _, b := range img.Content {
		if b.Type == mcpruntime.ContentImage && b.MIMEType == "image/png" {
			png, _ = base64.StdEncoding.DecodeString(b.Data)
		}
	}
	if !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("get-tiny-image: no PNG in %+v", img.Content)
	}
	roots, err := ev.GetRootsList(ctx, everything.GetRootsListInput{})
	if text, _ := textOf(roots); err != nil || !strings.Contains(text, "file:///tmp") {
		t.Errorf("get-roots-list: %q, %v", text, err)
	}
	// A tool that asks the client to sample: the handler's answer comes back.
	s, err := ev.TriggerSamplingRequest(ctx, everything.TriggerSamplingRequestInput{Prompt: "Say something."})
	if text, _ := textOf(s); err != nil || !strings.Contains(text, "sampled") {
		t.Errorf("trigger-sampling-request: %q, %v", text, err)
	}
}

func TestResourcesAndPrompts(t *testing.T) {
	ev := everything.NewClient(server.Need(t))
	ctx := context.Background()
	r, err := ev.ReadDynamicTextResource(ctx, "7")
	if err != nil || len(r.Contents) != 1 || !strings.Contains(r.Contents[0].Text, "7") {
		t.Errorf("read the dynamic text resource 7: %+v, %v", r, err)
	}
	doc, err := ev.ReadFeaturesMd(ctx)
	if err != nil || len(doc.Contents) != 1 || doc.Contents[0].Text == "" {
		t.Errorf("read features.md: %+v, %v", doc, err)
	}
	state := "CA"
	p, err := ev.GetArgsPrompt(ctx, "San Francisco", &state)
	if err != nil || len(p.Messages) == 0 || !strings.Contains(p.Messages[0].Content.Text, "San Francisco") {
		t.Errorf("args-prompt: %+v, %v", p, err)
	}
}

// textOf joins a result's text blocks.
func textOf[O any](r *mcpruntime.TypedResult[O]) (string, bool) {
	if r == nil {
		return "", false
	}
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == mcpruntime.ContentText {
			b.WriteString(c.Text)
		}
	}
	return b.String(), true
}

// The reference server's tool that runs only as a task, through the
// generated binding: Call refuses it before anything is sent, Start and
// Wait run it to its result, and so does the Client's method, which starts
// the task rather than refusing.
func TestTaskTool(t *testing.T) {
	c := server.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tool := everything.NewSimulateResearchQuery(c)
	in := everything.SimulateResearchQueryInput{Topic: "task augmentation"}
	if _, err := tool.Call(ctx, in); !errors.Is(err, mcpruntime.ErrNotSent) {
		t.Fatalf("Call of a tool that runs only as a task: %v", err)
	}
	task, err := tool.Start(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if task.Ref().ID == "" {
		t.Fatalf("no task id: %+v", task.Ref())
	}
	res, err := task.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := textOf(res); !strings.Contains(strings.ToLower(text), "task augmentation") {
		t.Errorf("result: %q", text)
	}

	task, err = everything.NewClient(c).SimulateResearchQuery(ctx, everything.SimulateResearchQueryInput{Topic: "client tasks"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err = task.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if text, _ := textOf(res); !strings.Contains(strings.ToLower(text), "client tasks") {
		t.Errorf("result through the Client: %q", text)
	}
}
