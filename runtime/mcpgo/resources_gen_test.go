package mcpgo_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgen/mcpgen/gen"
	"github.com/mcpgen/mcpgen/manifest"
	"github.com/mcpgen/mcpgen/snapshot"
)

// Generated accessors, live: snapshot the real server, generate bindings
// from the snapshot, build a program that calls the generated resource,
// template and prompt functions against the same server, and run it.

func TestGeneratedResourcesLiveCRM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program (skipped with -short)")
	}
	bin := crmServer(t)
	data := captureManifest(t, snapshot.Source{ID: "crm", Transport: snapshot.Stdio, Command: bin})
	files, err := gen.Generate(gen.Config{Package: "crmres", Inputs: []gen.Input{{Name: "crm.json", Data: data}},
		Resources: map[string]gen.ResourceBinding{
			"crm://pipeline": {Schema: json.RawMessage(`{"type":"array","items":{"type":"object",
				"properties":{"stage":{"type":"string"},"deals":{"type":"integer","minimum":0},"value":{"type":"number"}},
				"required":["stage","deals","value"],"additionalProperties":false}}`)},
			"crm://deals/{deal_id}/summary": {GoName: "Summary", Schema: json.RawMessage(`{"type":"object",
				"properties":{"id":{"type":"string"},"title":{"type":"string"},"stage":{"type":"string"},"amount":{"type":"number"},"currency":{"type":"string"}},
				"required":["id","title","stage","amount","currency"]}`)},
		}})
	if err != nil {
		t.Fatal(err)
	}
	runDriver(t, "crmres", files, crmDriver, bin)
}

func TestGeneratedResourcesLiveEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program (skipped with -short)")
	}
	node, args := everythingServer(t)
	data := captureManifest(t, snapshot.Source{ID: "everything", Transport: snapshot.Stdio, Command: node, Args: args})
	m, err := manifest.Parse("everything.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if r, tm, p := len(m.Manifest.Resources), len(m.Manifest.ResourceTemplates), len(m.Manifest.Prompts); r != 7 || tm != 2 || p != 4 {
		t.Errorf("server-everything lists %d resources, %d templates, %d prompts; want 7, 2, 4", r, tm, p)
	}
	files, err := gen.Generate(gen.Config{Package: "everything", Inputs: []gen.Input{{Name: "everything.json", Data: data}}})
	if err != nil {
		t.Fatal(err)
	}
	runDriver(t, "everything", files, everythingDriver, append([]string{node}, args...)...)
}

func captureManifest(t *testing.T, src snapshot.Source) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := snapshot.Capture(ctx, src, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := manifest.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// runDriver writes the generated package and a driver program into a
// module of their own, builds it with go vet's checks, and runs it against
// the server command.
func runDriver(t *testing.T, pkg string, files map[string][]byte, driver string, server ...string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", []byte("module gentest\n\ngo 1.26.0\n\nrequire github.com/mcpgen/mcpgen v0.0.0\n\nreplace github.com/mcpgen/mcpgen => "+root+"\n"))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", sum)
	for name, src := range files {
		write(pkg+"/"+name, src)
	}
	write("driver/main.go", []byte(driver))
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off")
	// The driver runs sessions of its own: raced too under -race.
	build := append(append([]string{"build"}, raceFlag()...), "-o", "driver.bin", "./driver")
	for _, args := range [][]string{{"vet", "./..."}, build} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	cmd := exec.Command(filepath.Join(dir, "driver.bin"), server...)
	out, err := cmd.CombinedOutput()
	t.Logf("driver output:\n%s", out)
	if err != nil {
		t.Fatalf("driver: %v", err)
	}
}

// The drivers print one line per check and exit 1 after any failure.

const driverHead = `package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"strings"
	"time"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

var failed bool

func check(ok bool, format string, args ...any) {
	if !ok {
		failed = true
		fmt.Print("FAIL ")
	} else {
		fmt.Print("ok   ")
	}
	fmt.Printf(format+"\n", args...)
}

var (
	_ = bytes.NewReader
	_ = errors.As
	_ = png.Decode
	_ = strings.Contains
)
`

var crmDriver = driverHead + `
func main() {
	c := mcpgo.Stdio(os.Args[1], os.Args[2:], mcpgo.WithName("crm"))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := mcpruntime.NewRun("")
	ctx = mcpruntime.WithRun(ctx, run)

	p, err := crmres.ReadPipeline(ctx, c)
	check(err == nil && len(p.Content) == 6 && p.Content[0].Stage == "lead", "typed pipeline: %v %+v", err, p)

	s, err := crmres.ReadSummary(ctx, c, "D-2001")
	check(err == nil && s.Content.ID == "D-2001" && s.Content.Title != "", "typed template summary: %v %+v", err, s)

	k, err := crmres.ReadDealContract(ctx, c, "D-2001")
	var text string
	if err == nil {
		text, err = k.Text()
	}
	check(err == nil && strings.HasPrefix(text, "# Contract D-2001") && k.URI == "crm://deals/D-2001/contract", "template contract: %v %q", err, text)

	// A value with reserved characters stays one path segment: the server
	// gets the encoded URI and finds no such deal, rather than a path
	// pointing elsewhere.
	_, err = crmres.ReadDealContract(ctx, c, "D-2001/../../pipeline")
	check(err != nil, "hostile deal id: %v", err)

	ch, err := crmres.ReadPipelineChart(ctx, c)
	var img []byte
	if err == nil {
		img, err = ch.Blob()
	}
	if err == nil {
		_, err = png.Decode(bytes.NewReader(img))
	}
	check(err == nil, "blob chart: %v", err)
	_, err = ch.Text()
	var ce *mcpruntime.ResourceContentError
	check(errors.As(err, &ce), "blob read as text is an error: %v", err)

	_, err = crmres.ReadPipeline(ctx, c, mcpruntime.MaxReadSize(16))
	var tl *mcpruntime.ResourceTooLargeError
	check(errors.As(err, &tl) && tl.Limit == 16, "size limit: %v", err)

	f, err := crmres.GetFollowUpPrompt(ctx, c, "D-2001", nil)
	check(err == nil && len(f.Messages) == 1 && f.Messages[0].Role == "user" && strings.Contains(f.Messages[0].Content.Text, "formal"), "prompt, optional left out: %v %+v", err, f)
	friendly := "friendly"
	f, err = crmres.GetFollowUpPrompt(ctx, c, "D-2001", &friendly)
	check(err == nil && strings.Contains(f.Messages[0].Content.Text, "friendly"), "prompt, optional given: %v", err)

	r, err := crmres.GetDealReviewPrompt(ctx, c, "D-2001", nil)
	check(err == nil && len(r.Messages) == 3 && r.Messages[1].Content.Type == mcpruntime.ContentResource &&
		r.Messages[1].Content.Resource != nil && strings.HasPrefix(r.Messages[1].Content.Resource.Text, "# Contract") &&
		r.Messages[2].Role == "assistant", "prompt with an embedded resource and roles: %v %+v", err, r)

	var resources, prompts int
	for _, p := range run.Ledger() {
		if p.Resource != "" {
			resources++
		}
		if p.Prompt != "" {
			prompts++
		}
	}
	check(resources >= 4 && prompts == 3, "ledger: %d resource reads, %d prompts", resources, prompts)
	if failed {
		os.Exit(1)
	}
}
`

var everythingDriver = driverHead + `
func main() {
	c := mcpgo.Stdio(os.Args[1], os.Args[2:], mcpgo.WithName("everything"))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	for name, read := range map[string]func(context.Context, mcpruntime.Caller, ...mcpruntime.ReadOption) (*mcpruntime.ResourceResult, error){
		"architecture.md": everything.ReadArchitectureMd,
		"extension.md":    everything.ReadExtensionMd,
		"features.md":     everything.ReadFeaturesMd,
		"how-it-works.md": everything.ReadHowItWorksMd,
		"instructions.md": everything.ReadInstructionsMd,
		"startup.md":      everything.ReadStartupMd,
		"structure.md":    everything.ReadStructureMd,
	} {
		res, err := read(ctx, c)
		var text string
		if err == nil {
			text, err = res.Text()
		}
		check(err == nil && text != "" && res.Contents[0].MIMEType == "text/markdown", "resource %s: %v (%d bytes)", name, err, len(text))
	}

	tr, err := everything.ReadDynamicTextResource(ctx, c, "7")
	var text string
	if err == nil {
		text, err = tr.Text()
	}
	check(err == nil && strings.HasPrefix(text, "Resource 7:"), "text template: %v %q", err, text)

	br, err := everything.ReadDynamicBlobResource(ctx, c, "3")
	var blob []byte
	if err == nil {
		blob, err = br.Blob()
	}
	check(err == nil && strings.HasPrefix(string(blob), "Resource 3:"), "blob template: %v %q", err, blob)

	_, err = everything.ReadArchitectureMd(ctx, c, mcpruntime.MaxReadSize(64))
	var tl *mcpruntime.ResourceTooLargeError
	check(errors.As(err, &tl), "size limit: %v", err)

	s, err := everything.GetSimplePrompt(ctx, c)
	check(err == nil && len(s.Messages) == 1 && s.Messages[0].Content.Text != "", "simple-prompt: %v", err)
	a, err := everything.GetArgsPrompt(ctx, c, "Lisbon", nil)
	check(err == nil && strings.Contains(a.Messages[0].Content.Text, "Lisbon?"), "args-prompt without state: %v %+v", err, a)
	state := "Ohio"
	a, err = everything.GetArgsPrompt(ctx, c, "Columbus", &state)
	check(err == nil && strings.Contains(a.Messages[0].Content.Text, "Columbus, Ohio"), "args-prompt with state: %v", err)
	cp, err := everything.GetCompletablePrompt(ctx, c, "Sales", "Eve")
	check(err == nil && strings.Contains(cp.Messages[0].Content.Text, "Eve"), "completable-prompt: %v", err)
	rp, err := everything.GetResourcePrompt(ctx, c, "Text", "2")
	check(err == nil && len(rp.Messages) == 2 && rp.Messages[1].Content.Type == mcpruntime.ContentResource, "resource-prompt: %v %+v", err, rp)

	// The same through the Client: its Caller, its options, then the
	// read's own.
	cl := everything.NewClient(c, mcpruntime.WithTimeout(time.Minute))
	a, err = cl.GetArgsPrompt(ctx, "Lisbon", nil)
	check(err == nil && strings.Contains(a.Messages[0].Content.Text, "Lisbon?"), "Client.GetArgsPrompt: %v", err)
	_, err = cl.ReadArchitectureMd(ctx, mcpruntime.MaxReadSize(64))
	check(errors.As(err, &tl), "Client read with a size limit: %v", err)

	// A template value the server rejects: its error, not a guess.
	_, err = everything.ReadDynamicTextResource(ctx, c, "../x")
	check(err != nil, "bad resource id: %v", err)
	if failed {
		os.Exit(1)
	}
}
`

func init() {
	crmDriver = strings.Replace(crmDriver, "\tmcpruntime ", "\t\"gentest/crmres\"\n\tmcpruntime ", 1)
	everythingDriver = strings.Replace(everythingDriver, "\tmcpruntime ", "\t\"gentest/everything\"\n\tmcpruntime ", 1)
}
