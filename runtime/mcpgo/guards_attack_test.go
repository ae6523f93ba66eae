package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
	"github.com/mcpgen/mcpgen/runtime/mcpimpl"
)

// Regression tests for holes independent tests found in the guards, each
// against a real server process: this test binary re-executed as the
// attack server (selected by attackModeEnv, before TestMain).

const attackModeEnv = "MCPGEN_ATTACK_FIXTURE"

func init() {
	switch os.Getenv(attackModeEnv) {
	case "":
		return
	case "serve":
		if err := server.NewStdioServer(attackServer()).Listen(context.Background(), os.Stdin, os.Stdout); err != nil && !errors.Is(err, io.EOF) {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "exit":
		// A server that dies at start, counting its starts.
		appendLine(os.Getenv("FIX_PIDS"), fmt.Sprint(os.Getpid()))
		fmt.Fprintln(os.Stderr, "fatal: cannot open database")
		os.Exit(3)
	}
	fmt.Fprintln(os.Stderr, "unknown attack fixture mode")
	os.Exit(2)
}

func attackStdio() *mcpgo.Conn {
	return mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv(attackModeEnv+"=serve"), mcpgo.WithName("attack"))
}

// attackServer is an mcp-go server whose tools take the caller's token in
// access_token: whoami decodes its arguments into a struct with mcp-go's
// typed handler (encoding/json, as most Go servers do) and reports the
// token it was given; the echo tools put the token everywhere a result
// can hold a string.
func attackServer() *server.MCPServer {
	s := server.NewMCPServer("attack", "1.0.0", server.WithToolCapabilities(false), server.WithResourceCapabilities(false, false))
	type whoamiArgs struct {
		AccessToken string `json:"access_token"`
		Note        string `json:"note"`
	}
	// The input schema is open, as most servers' are.
	s.AddTool(mcp.NewTool("whoami", mcp.WithString("access_token"), mcp.WithString("note"), mcp.WithReadOnlyHintAnnotation(true)),
		mcp.NewTypedToolHandler(func(_ context.Context, _ mcp.CallToolRequest, a whoamiArgs) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("access_token=" + a.AccessToken + " note=" + a.Note), nil
		}))
	blocks := func(tok string) []mcp.Content {
		return []mcp.Content{
			mcp.NewTextContent("blocks follow"),
			mcp.NewImageContent(tok, "image/"+tok),
			mcp.NewAudioContent(tok, tok),
			mcp.NewResourceLink("mem://link", "link", "a link", tok),
			mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "mem://blob", MIMEType: tok, Blob: tok}),
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "mem://text", MIMEType: tok, Text: "text"}),
		}
	}
	echo := func(name string, isError bool) {
		s.AddTool(mcp.NewTool(name, mcp.WithString("access_token"), mcp.WithReadOnlyHintAnnotation(true)),
			func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: blocks(req.GetString("access_token", "")), IsError: isError}, nil
			})
	}
	echo("echo_blocks", false)
	echo("echo_blocks_error", true)
	s.AddTool(mcp.NewTool("echo_rpc", mcp.WithString("access_token"), mcp.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errors.New("rejected token " + req.GetString("access_token", ""))
		})
	// For approval outcomes: count counts its executions in $ATTACK_COUNT;
	// block says on stderr that the request arrived, then never answers;
	// fail answers with a JSON-RPC error.
	plain := func(name string, h server.ToolHandlerFunc) {
		s.AddTool(mcp.NewTool(name, mcp.WithString("note")), h)
	}
	plain("count", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		appendLine(os.Getenv("ATTACK_COUNT"), "count")
		return mcp.NewToolResultText("counted"), nil
	})
	plain("block", func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		appendLine(os.Getenv("ATTACK_COUNT"), "block")
		fmt.Fprintln(os.Stderr, "arrived: block")
		<-ctx.Done()
		return nil, ctx.Err()
	})
	plain("fail", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		appendLine(os.Getenv("ATTACK_COUNT"), "fail")
		return nil, errors.New("ledger locked")
	})
	for uri, text := range map[string]string{"mem://nope": "nope", "mem://name": "name=alpha", "mem://null": "null"} {
		s.AddResource(mcp.NewResource(uri, strings.TrimPrefix(uri, "mem://"), mcp.WithMIMEType("application/json")),
			func(_ context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "application/json", Text: text}}, nil
			})
	}
	return s
}

// attackDesc is a tool's descriptor as generated: access_token stripped.
func attackDesc(t *testing.T, name string) *mcpruntime.Descriptor {
	t.Helper()
	schema, found, err := mcpimpl.StripProperty(json.RawMessage(`{"type":"object","properties":{"access_token":{"type":"string"},"note":{"type":"string"}}}`), "access_token")
	if err != nil || !found {
		t.Fatal(found, err)
	}
	d := desc(name, string(schema), "")
	d.Annotations.ReadOnly = true
	return d
}

type NoteArgs struct {
	Note string `json:"note,omitempty"`
}

func (*NoteArgs) Validate() error { return nil }

func attackTool(t *testing.T, c mcpruntime.Caller, name string) *mcpruntime.Tool[NoteArgs, mcpruntime.NoOutput] {
	return mcpruntime.NewTool[NoteArgs, mcpruntime.NoOutput](attackDesc(t, name), c,
		mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithIdentityArgument("access_token"))
}

// A model cannot pass its own token under a name the server's decoder
// folds to the identity argument: the server, decoding into a struct with
// encoding/json, sees the caller's token every time.
func TestIdentityFoldedNames(t *testing.T) {
	c := attackStdio()
	closeConn(t, c)
	whoami := attackTool(t, c, "whoami")
	ctx := mcpruntime.WithPrincipal(context.Background(), "alice", token("tok-alice-"))
	for _, key := range []string{
		"access_token", "ACCESS_TOKEN", "Access_Token",
		"acce\u017fs_token", "access_to\u212aen", // long s, Kelvin sign (escaped)
		"acceſs_token", "access_toKen", // the same, as UTF-8
		"accessToken", "access-token",
	} {
		m, err := whoami.Invoke(ctx, json.RawMessage(`{"note":"n","`+key+`":"tok-evil"}`))
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		// The server echoes the token it bound; the runtime scrubs the
		// caller's, so the caller's shows as [redacted].
		if m.IsError || m.Text != "access_token=[redacted] note=n" {
			t.Errorf("member %q: the server saw %q", key, m.Text)
		}
	}
	// A folded member alone is dropped too.
	m, err := whoami.Invoke(ctx, json.RawMessage(`{"acce\u017fs_to\u212aen":"tok-evil"}`))
	if err != nil || m.Text != "access_token=[redacted] note=" {
		t.Errorf("lone folded member: %+v, %v", m, err)
	}
}

// A JSON-RPC error's message reaches the model, so it taints the run like
// a result does, and the taint-aware gate holds the next mutation.
func TestTaintFromProtocolError(t *testing.T) {
	c := mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv("MCPGO_FIXTURE=stdio"), mcpgo.WithName("fixture"))
	closeConn(t, c)
	run := mcpruntime.NewRun("")
	ctx := mcpruntime.WithRun(context.Background(), run)

	m, err := newPlain(handlerErrDesc, c).Invoke(ctx, nil)
	if err != nil || !m.IsError || !strings.Contains(m.Text, "The server rejected the call: ") || !strings.Contains(m.Text, "database unavailable") {
		t.Fatalf("handler_error: %+v, %v", m, err)
	}
	p, ok := run.Tainted()
	if !ok || p.Tool != "handler_error" || p.Server != "fixture" || !p.IsError || !strings.HasPrefix(p.Digest, "sha256:") {
		t.Fatalf("a JSON-RPC error shown to the model left the run untainted: %+v, %v", p, ok)
	}
	if m.Provenance == nil || *m.Provenance != p {
		t.Errorf("model result provenance = %+v, want %+v", m.Provenance, p)
	}

	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), mcpruntime.GateDefault(mcpruntime.GateNever), mcpruntime.GateAfterTaint())
	mutation := newPlain(kindsDesc, c, mcpruntime.WithGate(gate)) // not annotated read-only
	gated, err := mutation.Invoke(ctx, nil)
	if err != nil || gated.Pending == nil || !strings.Contains(gated.Pending.Why, `(from tool "handler_error")`) {
		t.Errorf("mutation after a JSON-RPC error reached the model: %+v, %v", gated, err)
	}
	// A fresh run is not tainted.
	if _, err := mutation.Invoke(mcpruntime.WithRun(context.Background(), mcpruntime.NewRun("")), nil); err != nil {
		t.Errorf("fresh run: %v", err)
	}
}

// verbs are the fmt verbs a program prints values with.
var verbs = []string{"%v", "%+v", "%#v", "%s", "%q"}

// printed returns v under every verb, and the same for what v points to
// and, for errors, everything the error wraps and errors.As finds.
func printed(v any) []string {
	var out []string
	add := func(x any) {
		for _, verb := range verbs {
			out = append(out, fmt.Sprintf(verb, x))
		}
	}
	var walk func(e error)
	walk = func(e error) {
		if e == nil {
			return
		}
		add(e)
		out = append(out, e.Error())
		var te *mcpruntime.ToolError
		if errors.As(e, &te) {
			add(*te)
			if te.Result != nil {
				add(*te.Result)
			}
		}
		var pe *mcpruntime.ProtocolError
		if errors.As(e, &pe) {
			add(*pe)
			out = append(out, string(pe.Data))
		}
		var ae *mcpruntime.ApprovalError
		if errors.As(e, &ae) {
			add(*ae)
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, w := range u.Unwrap() {
				walk(w)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	switch x := v.(type) {
	case error:
		walk(x)
	case mcpruntime.ModelResult:
		add(x)
		if x.Result != nil {
			add(*x.Result)
			b, _ := json.Marshal(x.Result.Content)
			out = append(out, string(b))
		}
	case *mcpruntime.TypedResult[mcpruntime.NoOutput]:
		if x != nil {
			add(*x)
			add(x.Result)
			b, _ := json.Marshal(x.Content)
			out = append(out, string(b))
		}
	default:
		add(v)
	}
	return out
}

// The token a server echoes into any field of any block (mime types,
// image and audio data, embedded blobs), in a failed result or in a
// JSON-RPC error, reaches no returned value and no error, under any verb.
func TestSecretsEchoedEverywhere(t *testing.T) {
	c := attackStdio()
	closeConn(t, c)
	canary := token("canary-")
	ctx := mcpruntime.WithPrincipal(context.Background(), "alice", canary)
	var outputs []string
	for _, name := range []string{"echo_blocks", "echo_blocks_error", "echo_rpc"} {
		tl := attackTool(t, c, name)
		m, err := tl.Invoke(ctx, json.RawMessage(`{}`))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name != "echo_blocks" && !m.IsError {
			t.Errorf("%s did not fail: %+v", name, m)
		}
		outputs = append(outputs, printed(m)...)
		tr, err := tl.Call(ctx, NoteArgs{})
		if (err == nil) != (name == "echo_blocks") {
			t.Errorf("%s: call error %v", name, err)
		}
		outputs = append(outputs, printed(tr)...)
		outputs = append(outputs, printed(err)...)
		if name == "echo_blocks" && (tr == nil || len(tr.Content) != 6 || tr.Content[1].MIMEType == "image/") {
			t.Fatalf("the server did not echo the token (so this test would prove nothing): %+v", tr.Content)
		}
	}
	for _, o := range outputs {
		if strings.Contains(o, string(canary)) {
			t.Errorf("token leaked: %s", o)
		}
	}
}

type pipelineContent struct {
	Stages []string `json:"stages"`
}

// decodePipeline decodes as a generated Decode<Name>Content does.
func decodePipeline(b []byte) (pipelineContent, error) {
	var v pipelineContent
	var vs mcpimpl.Violations
	mcpimpl.Decode(b, &v, "", &vs)
	return v, vs.Err("pipeline content")
}

// Resource text that is not JSON is reported for what it is, whatever its
// first letter; and a resource read that taints a run is named in the
// approval reason of the next mutation.
func TestResourceNotJSONAndTaintReason(t *testing.T) {
	c := attackStdio()
	closeConn(t, c)
	run := mcpruntime.NewRun("")
	ctx := mcpruntime.WithRun(context.Background(), run)
	for uri, want := range map[string]string{
		"mem://nope": `got text that is not JSON (it starts "nope")`,
		"mem://name": `got text that is not JSON (it starts "name=alpha")`,
		"mem://null": "unexpected null", // JSON null is what it says
	} {
		d := &mcpruntime.ResourceDescriptor{URI: uri, Name: strings.TrimPrefix(uri, "mem://"), MIMEType: "application/json"}
		res, err := mcpruntime.ReadResource(ctx, c, d)
		if err != nil {
			t.Fatal(err)
		}
		_, err = mcpruntime.DecodeResource(res, d, decodePipeline)
		var rce *mcpruntime.ResourceContentError
		if !errors.As(err, &rce) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want it to say %q", uri, err, want)
		}
		if uri != "mem://null" && strings.Contains(err.Error(), "null") {
			t.Errorf("%s: %v", uri, err)
		}
	}
	if p, ok := run.Tainted(); !ok || p.Resource == "" {
		t.Fatalf("a resource read did not taint the run: %+v", p)
	}
	first, _ := run.Tainted()
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), mcpruntime.GateDefault(mcpruntime.GateNever), mcpruntime.GateAfterTaint())
	gated, err := newPlain(kindsDesc, c, mcpruntime.WithGate(gate)).Invoke(ctx, nil)
	if err != nil || gated.Pending == nil || !strings.Contains(gated.Pending.Why, fmt.Sprintf("(from resource %q)", first.Resource)) {
		t.Errorf("approval reason after a resource read: %+v, %v", gated, err)
	}
}
