package mcpgo_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgen/mcpgen/internal/testserver"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// The test binary doubles as the hostile server (internal/testserver):
// checked here, before TestMain, so the fixture's modes stay as they are.
func init() {
	if os.Getenv(testserver.HostileEnv) != "" {
		os.Exit(testserver.HostileMain(os.Stdin, os.Stdout))
	}
}

// protocols are the two eras of server-to-client requests: 2026-07-28's
// input_required results, and requests on the stream before it.
var protocols = []string{"", mcp.ProtocolVersion20251125}

func hostileConn(t *testing.T, version string, opts ...mcpgo.Option) *mcpgo.Conn {
	t.Helper()
	opts = append([]mcpgo.Option{mcpgo.WithEnv(testserver.HostileEnv + "=1"), mcpgo.WithName("hostile")}, opts...)
	if version != "" {
		opts = append(opts, mcpgo.WithProtocolVersion(version))
	}
	c := mcpgo.Stdio(os.Args[0], nil, opts...)
	closeConn(t, c)
	return c
}

type HostileArgs map[string]any

func (*HostileArgs) Validate() error { return nil }

// hostileTool is a hostile tool called with the caller's token in its
// "token" argument, which the server echoes where it is told to.
func hostileTool(c mcpruntime.Caller, name string) *mcpruntime.Tool[HostileArgs, mcpruntime.NoOutput] {
	return mcpruntime.NewTool[HostileArgs, mcpruntime.NoOutput](desc(name, `{"type":"object","additionalProperties":true}`, ""), c,
		mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithIdentityArgument("token"))
}

// secrets of one test: a caller's token with characters JSON escapes, and
// a declared secret.
type secrets struct {
	token  mcpruntime.Secret
	secret string
}

func newSecrets(t *testing.T) secrets {
	n := time.Now().UnixNano()
	return secrets{token: mcpruntime.Secret(fmt.Sprintf(`tok-"q"<&>-%d`, n)), secret: fmt.Sprintf("declared-s3cret-%d", n)}
}

// leak reports which form of which secret s shows, or "".
func (k secrets) leak(s string) string {
	for _, v := range []string{string(k.token), k.secret} {
		b, _ := json.Marshal(v)
		for _, form := range []string{v, string(b[1 : len(b)-1]), strings.NewReplacer(`"`, `\"`).Replace(v)} {
			if strings.Contains(s, form) {
				return form
			}
		}
	}
	return ""
}

// logRecorder is an slog.Handler that keeps every record's message and
// attributes as text.
type logRecorder struct {
	mu   sync.Mutex
	recs []string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecorder) WithGroup(string) slog.Handler            { return r }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s msg=%s", rec.Level, rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value.Any())
		return true
	})
	r.mu.Lock()
	r.recs = append(r.recs, b.String())
	r.mu.Unlock()
	return nil
}

func (r *logRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.recs...)
}

// TestServerSentScrubbed: a server echoes the caller's token and a
// declared secret (raw and JSON-escaped) in log messages (the data, as a
// string and as an object, and the logger), a progress message, a
// resource-updated URI and a notification of its own (params, _meta and
// nested values): none of it reaches the program's logger, callbacks or
// notification handler unscrubbed, and all of it arrives.
func TestServerSentScrubbed(t *testing.T) {
	for _, version := range protocols {
		t.Run(cmp.Or(version, "negotiated"), func(t *testing.T) {
			t.Parallel()
			k := newSecrets(t)
			logs := &logRecorder{}
			var mu sync.Mutex
			var notes []string
			c := hostileConn(t, version, mcpgo.WithSecrets(k.secret), mcpgo.WithLogger(slog.New(logs)),
				mcpgo.WithNotificationHandler(func(n mcp.JSONRPCNotification) {
					b, _ := json.Marshal(n)
					mu.Lock()
					notes = append(notes, string(b))
					mu.Unlock()
				}))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			uri := "mem://doc?key=" + k.secret
			var uris []string
			unsubscribe, err := c.Subscribe(ctx, uri, func(u string) {
				mu.Lock()
				uris = append(uris, u)
				mu.Unlock()
			})
			if err != nil {
				t.Fatal(err)
			}
			defer unsubscribe(ctx)
			var progress []string
			pctx := mcpruntime.WithProgress(mcpruntime.WithPrincipal(ctx, "alice", k.token), func(p mcpruntime.Progress) {
				mu.Lock()
				progress = append(progress, p.Message)
				mu.Unlock()
			})
			say := hostileTool(c, "say")
			for _, args := range []string{
				`{"log":"the token is {token}, the secret ` + k.secret + `", "logger":"auth-{token}", "level":"critical",
				  "progress":"working for {token} (` + k.secret + `)", "uri":"` + uri + `", "echo":"{token} ` + k.secret + `", "text":"done"}`,
				`{"logdata":{"token":"{token}","json":"{tokenjson}","secret":"` + k.secret + `"}, "logger":"{tokenjson}", "text":"done"}`,
				`{"log":"as JSON: {tokenjson}", "text":"done"}`,
			} {
				m, err := say.Invoke(pctx, json.RawMessage(args))
				if err != nil || m.Text != "done" {
					t.Fatalf("say: %+v, %v", m, err)
				}
			}
			// The notifications come before each answer; a moment for the
			// handlers that run on their own goroutines.
			time.Sleep(100 * time.Millisecond)

			mu.Lock()
			defer mu.Unlock()
			seen := map[string][]string{"log": logs.all(), "progress": progress, "uri": uris, "notification": notes}
			for what, got := range seen {
				if len(got) == 0 {
					t.Errorf("no %s reached the program", what)
				}
				for _, s := range got {
					if f := k.leak(s); f != "" {
						t.Errorf("%s shows %q: %s", what, f, s)
					}
				}
			}
			all := strings.Join(logs.all(), "\n")
			for _, want := range []string{"msg=the token is [redacted], the secret [redacted]", "logger=auth-[redacted]", "mcpLevel=critical",
				`"token":"[redacted]"`, `"secret":"[redacted]"`, "logger=[redacted]", "msg=as JSON: [redacted]"} {
				if !strings.Contains(all, want) {
					t.Errorf("the logs lack %q:\n%s", want, all)
				}
			}
			if len(progress) == 0 || progress[0] != "working for [redacted] ([redacted])" {
				t.Errorf("progress messages %q", progress)
			}
			if len(uris) == 0 || uris[0] != "mem://doc?key=[redacted]" {
				t.Errorf("resource updates %q", uris)
			}
			var hostile []string
			for _, n := range notes {
				if strings.Contains(n, "notifications/hostile") {
					hostile = append(hostile, n)
				}
			}
			if len(hostile) == 0 || strings.Count(hostile[0], "[redacted] [redacted]") != 3 {
				t.Errorf("the notification handler saw %q", hostile)
			}
		})
	}
}

// TestElicitationAndSamplingScrubbed: elicitation and sampling requests
// reach the handlers with the token and the declared secret scrubbed from
// every string: message, URL, schema (defaults included), sampling
// messages, system prompt and the raw params.
func TestElicitationAndSamplingScrubbed(t *testing.T) {
	for _, version := range protocols {
		t.Run(cmp.Or(version, "negotiated"), func(t *testing.T) {
			t.Parallel()
			k := newSecrets(t)
			var mu sync.Mutex
			var seen []string
			note := func(v any) {
				b, _ := json.Marshal(v)
				mu.Lock()
				seen = append(seen, string(b))
				mu.Unlock()
			}
			c := hostileConn(t, version, mcpgo.WithSecrets(k.secret),
				mcpgo.WithElicitation(func(_ context.Context, r mcpgo.ElicitationRequest) (mcpgo.ElicitationResponse, error) {
					note(r)
					note(r.Message + " " + r.URL + " " + string(r.Schema))
					return mcpgo.ElicitationResponse{Action: mcpgo.ElicitDecline}, nil
				}, true),
				mcpgo.WithSampling(func(_ context.Context, r mcpgo.SamplingRequest) (mcpgo.SamplingResponse, error) {
					note(r)
					for _, m := range r.Messages {
						for _, b := range m.Content {
							note(b.Text)
						}
					}
					note(r.SystemPrompt + " " + string(r.Raw))
					return mcpgo.SamplingResponse{Content: mcpruntime.Content{Type: "text", Text: "fine"}, Model: "m", StopReason: "endTurn"}, nil
				}))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ctx = mcpruntime.WithPrincipal(ctx, "alice", k.token)
			for _, tc := range []struct{ tool, args string }{
				{"ask", `{"message":"give {token} and ` + k.secret + `", "schema":{"type":"object","properties":{"name":{"type":"string","title":"{token}","description":"` + k.secret + `","default":"{token}"}}}}`},
				{"ask", `{"mode":"url", "message":"open", "url":"https://example.test/?t={token}&s=` + k.secret + `"}`},
				{"flood", `{"n":1, "prompt":"say {token} and {tokenjson} and ` + k.secret + `", "system":"you are {token}"}`},
			} {
				m, err := hostileTool(c, tc.tool).Invoke(ctx, json.RawMessage(tc.args))
				if err != nil || m.IsError {
					t.Fatalf("%s: %+v, %v", tc.tool, m, err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) < 7 {
				t.Fatalf("the handlers saw %d things: %q", len(seen), seen)
			}
			for _, s := range seen {
				if f := k.leak(s); f != "" {
					t.Errorf("a handler saw %q: %s", f, s)
				}
			}
			all := strings.Join(seen, "\n")
			for _, want := range []string{"give [redacted] and [redacted]", `\"default\":\"[redacted]\"`, "t=[redacted]\\u0026s=[redacted]",
				"say [redacted] and [redacted] and [redacted]", "you are [redacted]"} {
				if !strings.Contains(all, want) {
					t.Errorf("the handlers did not see %q:\n%s", want, all)
				}
			}
		})
	}
}

// TestUndeclaredURLElicitation: a client that declared form mode only
// answers a url-mode request with JSON-RPC error -32602, without asking
// its handler; on 2026-07-28 (the request inside a result) the call fails
// with that error. A mode the specification does not know is refused the
// same way.
func TestUndeclaredURLElicitation(t *testing.T) {
	for _, version := range protocols {
		t.Run(cmp.Or(version, "negotiated"), func(t *testing.T) {
			t.Parallel()
			var asked atomic.Int32
			c := hostileConn(t, version, mcpgo.WithElicitation(func(context.Context, mcpgo.ElicitationRequest) (mcpgo.ElicitationResponse, error) {
				asked.Add(1)
				return mcpgo.ElicitationResponse{Action: mcpgo.ElicitDecline}, nil
			}, false))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ask := newPlain(desc("ask", `{"type":"object"}`, ""), c)
			for _, mode := range []string{"url", "telepathy"} {
				args := json.RawMessage(`{"mode":"` + mode + `","message":"open this","url":"https://example.test/consent"}`)
				res, err := ask.Invoke(ctx, args)
				if version == "" {
					// 2026-07-28: the request came inside the result.
					if err == nil || !strings.Contains(err.Error(), "-32602") || !strings.Contains(err.Error(), "not declared") {
						t.Errorf("mode %s: %+v, %v", mode, res, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("mode %s: %v", mode, err)
				}
				var got struct {
					Error string
					Wire  struct {
						Code    int
						Message string
					}
				}
				if json.Unmarshal([]byte(res.Text), &got) != nil || got.Wire.Code != -32602 || !strings.Contains(got.Wire.Message, "not declared") {
					t.Errorf("mode %s: the server got %s", mode, res.Text)
				}
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("the handler was asked %d times", n)
			}
		})
	}
}

// TestSamplingLimit: a server that sends 500 sampling requests at once
// gets at most the limit answered at the same time; the rest are refused
// at once with an error that says why, which the server sees.
func TestSamplingLimit(t *testing.T) {
	for _, tc := range []struct {
		version string
		limit   int // 0: the default
	}{{mcp.ProtocolVersion20251125, 0}, {mcp.ProtocolVersion20251125, 2}, {"", 3}} {
		t.Run(fmt.Sprintf("%s/%d", cmp.Or(tc.version, "negotiated"), tc.limit), func(t *testing.T) {
			t.Parallel()
			var now, peak, calls atomic.Int32
			release := make(chan struct{})
			opts := []mcpgo.Option{mcpgo.WithSampling(func(ctx context.Context, _ mcpgo.SamplingRequest) (mcpgo.SamplingResponse, error) {
				calls.Add(1)
				n := now.Add(1)
				defer now.Add(-1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				select {
				case <-release:
				case <-ctx.Done():
				}
				return mcpgo.SamplingResponse{Content: mcpruntime.Content{Type: "text", Text: "ok"}, Model: "m"}, nil
			})}
			limit := mcpgo.DefaultSamplingLimit
			if tc.limit > 0 {
				limit = tc.limit
				opts = append(opts, mcpgo.WithSamplingLimit(tc.limit))
			}
			// The handlers hold their places until the server has been
			// refused all the others (it says how many so far after each
			// refusal), so that exactly limit are answered whatever the
			// machine's speed. Over 2026-07-28 the first refusal fails the
			// call, and the context's end lets the handlers go.
			var once sync.Once
			opts = append(opts, mcpgo.WithNotificationHandler(func(n mcp.JSONRPCNotification) {
				if n.Method != "notifications/flood" {
					return
				}
				if r, _ := n.Params.AdditionalFields["refused"].(float64); int(r) >= 500-limit {
					once.Do(func() { close(release) })
				}
			}))
			c := hostileConn(t, tc.version, opts...)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := newPlain(desc("flood", `{"type":"object"}`, ""), c).Invoke(ctx, json.RawMessage(`{"n":500}`))
			if p := peak.Load(); p > int32(limit) {
				t.Errorf("%d sampling requests were answered at once; the limit is %d", p, limit)
			}
			want := fmt.Sprintf("the client answers at most %d sampling request", limit)
			if tc.version == "" {
				// 2026-07-28: the requests came inside the result, and the
				// call fails with the refusal.
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("flood: %+v, %v", res, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				OK     int
				Errors []string
			}
			if err := json.Unmarshal([]byte(res.Text), &got); err != nil {
				t.Fatalf("%v: %s", err, res.Text)
			}
			if got.OK != limit || len(got.Errors) != 500-limit {
				t.Errorf("%d answered, %d refused", got.OK, len(got.Errors))
			}
			for _, e := range got.Errors {
				if !strings.Contains(e, want) {
					t.Errorf("the server was told %q", e)
					break
				}
			}
			if n := calls.Load(); n != int32(got.OK) {
				t.Errorf("the handler ran %d times for %d answers", n, got.OK)
			}
		})
	}
}

// TestElicitDefaultsFit: only a default that fits its own field (type,
// enum, bounds) is sent, by ElicitDefaults and when a handler leaves a
// member out; a form whose required member has no usable default is
// declined by ElicitDefaults.
func TestElicitDefaultsFit(t *testing.T) {
	const schema = `{"type":"object","properties":{
		"name":{"type":"string","default":"Ada"},
		"status":{"type":"string","enum":["active","inactive"],"default":"retired"},
		"color":{"type":"string","oneOf":[{"const":"#f00","title":"Red"}],"default":"#0f0"},
		"age":{"type":"integer","default":"forty"},
		"half":{"type":"integer","default":4.5},
		"count":{"type":"number","minimum":1,"maximum":9,"default":0},
		"short":{"type":"string","maxLength":3,"default":"toolong"},
		"ok":{"type":"boolean","default":"yes"},
		"verified":{"type":"boolean","default":true},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"default":["a","z"]},
		"picks":{"type":"array","items":{"anyOf":[{"const":"x"},{"const":"y"}]},"maxItems":2,"default":["y"]}
	}REQUIRED}`
	for _, version := range protocols {
		t.Run(cmp.Or(version, "negotiated"), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ask := func(c *mcpgo.Conn, required string) (action string, content map[string]any) {
				t.Helper()
				args := `{"message":"defaults?","schema":` + strings.Replace(schema, "REQUIRED", required, 1) + `}`
				m, err := newPlain(desc("ask", `{"type":"object"}`, ""), c).Invoke(ctx, json.RawMessage(args))
				if err != nil || m.IsError {
					t.Fatalf("ask: %+v, %v", m, err)
				}
				var got struct {
					Action  string
					Content map[string]any
				}
				if err := json.Unmarshal([]byte(m.Text), &got); err != nil {
					t.Fatalf("%v: %s", err, m.Text)
				}
				return got.Action, got.Content
			}
			want := map[string]any{"name": "Ada", "verified": true, "picks": []any{"y"}}
			defaults := hostileConn(t, version, mcpgo.WithElicitation(mcpgo.ElicitDefaults, false))
			if action, content := ask(defaults, ""); action != "accept" || !reflect.DeepEqual(content, want) {
				t.Errorf("ElicitDefaults sent %s %v, want accept %v", action, content, want)
			}
			for _, req := range []string{`,"required":["status"]`, `,"required":["age","name"]`} {
				if action, content := ask(defaults, req); action != "decline" || content != nil {
					t.Errorf("ElicitDefaults with %s: %s %v, want decline", req, action, content)
				}
			}
			// A handler that accepts with nothing gets the usable defaults
			// filled in, no others.
			empty := hostileConn(t, version, mcpgo.WithElicitation(func(context.Context, mcpgo.ElicitationRequest) (mcpgo.ElicitationResponse, error) {
				return mcpgo.ElicitationResponse{Action: mcpgo.ElicitAccept}, nil
			}, false))
			if action, content := ask(empty, `,"required":["age"]`); action != "accept" || !reflect.DeepEqual(content, want) {
				t.Errorf("filled in %s %v, want accept %v", action, content, want)
			}
		})
	}
}

// A secret that appears after the connection was made (an OAuth client's
// renewed token, WithSecretSource) is scrubbed from what the server sends
// from then on: its log messages, progress and notifications.
func TestServerSentScrubbedLiveSecret(t *testing.T) {
	var mu sync.Mutex
	var live []string
	logs := &logRecorder{}
	var progress []string
	c := hostileConn(t, "", mcpgo.WithLogger(slog.New(logs)), mcpgo.WithSecretSource(func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(live)
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx = mcpruntime.WithPrincipal(ctx, "alice", "tok-alice")
	say := hostileTool(c, "say")
	if _, err := say.Invoke(ctx, json.RawMessage(`{"text":"done"}`)); err != nil {
		t.Fatal(err)
	}
	renewed := fmt.Sprintf("renewed-tok-%d", time.Now().UnixNano())
	mu.Lock()
	live = append(live, renewed)
	mu.Unlock()
	pctx := mcpruntime.WithProgress(ctx, func(p mcpruntime.Progress) {
		mu.Lock()
		progress = append(progress, p.Message)
		mu.Unlock()
	})
	m, err := say.Invoke(pctx, json.RawMessage(`{"log":"renewed `+renewed+`","logger":"`+renewed+`","progress":"for `+renewed+`","text":"done"}`))
	if err != nil || m.Text != "done" {
		t.Fatalf("say: %+v, %v", m, err)
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(append(logs.all(), progress...), "\n")
	if strings.Contains(all, renewed) || !strings.Contains(all, "renewed [redacted]") || len(progress) == 0 {
		t.Errorf("a renewed secret reached the program (or nothing arrived):\n%s", all)
	}
}
