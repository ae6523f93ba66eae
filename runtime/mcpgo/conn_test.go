package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server/servertest"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// transports connects to a fresh fixture server over every transport.
func transports(t *testing.T) map[string]func(t *testing.T) *mcpgo.Conn {
	return map[string]func(t *testing.T) *mcpgo.Conn{
		"stdio": func(t *testing.T) *mcpgo.Conn {
			return mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv("MCPGO_FIXTURE=stdio"), mcpgo.WithName("fixture"))
		},
		"http": func(t *testing.T) *mcpgo.Conn {
			ts := servertest.NewTestStreamableHTTPServer(fixture())
			t.Cleanup(ts.Close)
			return mcpgo.StreamableHTTP(ts.URL+"/mcp", mcpgo.WithName("fixture"))
		},
		"sse": func(t *testing.T) *mcpgo.Conn {
			ts := servertest.NewTestServer(fixture())
			t.Cleanup(ts.Close)
			return mcpgo.SSE(ts.URL+"/sse", mcpgo.WithName("fixture"))
		},
		"inprocess": func(t *testing.T) *mcpgo.Conn {
			return mcpgo.InProcess(fixture(), mcpgo.WithName("fixture"))
		},
	}
}

func closeConn(t *testing.T, c *mcpgo.Conn) {
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

func TestTransports(t *testing.T) {
	for name, dial := range transports(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := dial(t)
			closeConn(t, c)
			ctx := context.Background()

			t.Run("typed call", func(t *testing.T) {
				r, err := newWeather(c).Call(ctx, WeatherInput{City: "Oslo"})
				if err != nil {
					t.Fatal(err)
				}
				if r.Output != (WeatherOutput{Temperature: -3.5, Conditions: "snow"}) || r.Source != mcpruntime.FromStructuredContent {
					t.Errorf("output = %+v from %v", r.Output, r.Source)
				}
				var meta map[string]any
				if err := json.Unmarshal(r.Meta, &meta); err != nil || meta["io.example/source"] != "fixture" {
					t.Errorf("_meta = %s", r.Meta)
				}
				if len(r.Content) != 1 || r.Content[0].Type != mcpruntime.ContentText {
					t.Errorf("content = %+v", r.Content)
				}
			})

			t.Run("invalid typed input is not sent", func(t *testing.T) {
				_, err := newWeather(c).Call(ctx, WeatherInput{City: "Paris"})
				var ve *mcpruntime.ValidationError
				if !errors.As(err, &ve) || ve.Subject != "weather input" || ve.Violations[0].Pointer != "/city" {
					t.Fatalf("err = %v", err)
				}
			})

			t.Run("text fallback", func(t *testing.T) {
				r, err := newWeatherLike(textJSONDesc, c).Call(ctx, EmptyInput{})
				if err != nil {
					t.Fatal(err)
				}
				if r.Output != (WeatherOutput{Temperature: 7, Conditions: "rain"}) || r.Source != mcpruntime.FromTextContent {
					t.Errorf("output = %+v from %v", r.Output, r.Source)
				}
			})

			t.Run("malformed structuredContent", func(t *testing.T) {
				_, err := newWeatherLike(badOutputDesc, c).Call(ctx, EmptyInput{})
				var oe *mcpruntime.OutputError
				if !errors.As(err, &oe) {
					t.Fatalf("err = %v, want *OutputError", err)
				}
				if oe.Source != mcpruntime.FromStructuredContent || string(oe.Raw) != `{"temperature":"hot"}` ||
					len(oe.Violations) != 1 || oe.Violations[0].Pointer != "/temperature" {
					t.Errorf("OutputError = %+v", oe)
				}
				if oe.Result == nil || oe.Result.Text() != `{"temperature":"hot"}` {
					t.Errorf("the result is not kept: %+v", oe.Result)
				}
				m, err := newWeatherLike(badOutputDesc, c).Invoke(ctx, nil)
				if err != nil || !m.IsError || !strings.Contains(m.Text, "/temperature: expected a number, got JSON string") {
					t.Errorf("Invoke = %+v, %v", m, err)
				}
			})

			t.Run("missing structured output", func(t *testing.T) {
				_, err := newWeatherLike(noStructuredDesc, c).Call(ctx, EmptyInput{})
				var oe *mcpruntime.OutputError
				if !errors.As(err, &oe) || oe.Source != mcpruntime.FromNothing || !strings.Contains(err.Error(), "no structured output") {
					t.Fatalf("err = %v", err)
				}
			})

			t.Run("isError", func(t *testing.T) {
				_, err := newWeatherLike(failsDesc, c).Call(ctx, EmptyInput{})
				var te *mcpruntime.ToolError
				if !errors.As(err, &te) || te.Message != "the widget is jammed" || !te.Result.IsError {
					t.Fatalf("err = %v", err)
				}
				m, err := newWeatherLike(failsDesc, c).Invoke(ctx, json.RawMessage(`{}`))
				if err != nil || !m.IsError || m.Text != "the widget is jammed" {
					t.Errorf("Invoke = %+v, %v", m, err)
				}
			})

			t.Run("handler error", func(t *testing.T) {
				// mcp-go turns a handler's Go error into a JSON-RPC error
				// response or an isError result depending on the protocol
				// version; either way the model is told and the loop goes on.
				m, err := newPlain(handlerErrDesc, c).Invoke(ctx, nil)
				if err != nil || !m.IsError || !strings.Contains(m.Text, "database unavailable") {
					t.Errorf("Invoke = %+v, %v", m, err)
				}
			})

			t.Run("content kinds", func(t *testing.T) {
				r, err := newPlain(kindsDesc, c).Call(ctx, EmptyInput{})
				if err != nil {
					t.Fatal(err)
				}
				var kinds []string
				for _, b := range r.Content {
					kinds = append(kinds, b.Type)
				}
				if got := strings.Join(kinds, ","); got != "text,image,audio,resource_link,resource,resource" {
					t.Fatalf("kinds = %s", got)
				}
				if r.Content[1].Data != "iVBORw0KGgo=" || r.Content[3].Size == nil || *r.Content[3].Size != 3 ||
					r.Content[4].Resource.Text != "note" || !r.Content[5].Resource.IsBlob {
					t.Errorf("blocks = %+v", r.Content)
				}
				m, err := newPlain(kindsDesc, c).Invoke(ctx, nil)
				want := "four kinds follow\n[image: image/png, 8 bytes]\n[audio: audio/wav, 4 bytes]\n" +
					"[resource link: mem://doc \"doc\" (text/plain)]\n[embedded resource: mem://note (text/plain, text, 4 bytes)]\n" +
					"[embedded resource: mem://bin (application/octet-stream, blob, 3 bytes)]"
				if err != nil || m.IsError || m.Text != want {
					t.Errorf("Invoke = %q, %v", m.Text, err)
				}
			})

			t.Run("missing tool", func(t *testing.T) {
				_, err := newPlain(missingDesc, c).Call(ctx, EmptyInput{})
				var me *mcpruntime.MissingToolError
				if !errors.As(err, &me) {
					t.Fatalf("err = %v, want *MissingToolError", err)
				}
				want := `server fixture has no tool "not_there"; it offers "bad_output", "fails", "handler_error", "kinds", "no_structured", "sleep", "text_json", "weather"`
				if !strings.HasPrefix(me.Error(), want) {
					t.Errorf("error = %s\nwant prefix %s", me, want)
				}
				if err := mcpruntime.CheckTools(ctx, c, "weather", "not_there"); !errors.As(err, &me) || len(me.Tools) != 1 {
					t.Errorf("CheckTools = %v", err)
				}
			})

			t.Run("timeout", func(t *testing.T) {
				_, err := newPlain(sleepDesc, c, mcpruntime.WithTimeout(50*time.Millisecond)).Call(ctx, EmptyInput{})
				var te *mcpruntime.TimeoutError
				if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) || te.Tool != "sleep" {
					t.Fatalf("err = %v, want *TimeoutError", err)
				}
				m, err := newPlain(sleepDesc, c, mcpruntime.WithTimeout(50*time.Millisecond)).Invoke(ctx, nil)
				if err != nil || !m.IsError || !strings.Contains(m.Text, "did not answer within 50ms") {
					t.Errorf("Invoke = %+v, %v", m, err)
				}
				// The session survives a timed-out call.
				if _, err := newWeather(c).Call(ctx, WeatherInput{City: "Lima"}); err != nil {
					t.Errorf("call after timeout: %v", err)
				}
			})

			t.Run("cancellation", func(t *testing.T) {
				cctx, cancel := context.WithCancel(ctx)
				time.AfterFunc(50*time.Millisecond, cancel)
				// No per-call timeout: only the context ends the call.
				m, err := newPlain(sleepDesc, c, mcpruntime.WithTimeout(0)).Invoke(cctx, nil)
				var te *mcpruntime.TimeoutError
				if !errors.Is(err, context.Canceled) || errors.As(err, &te) {
					t.Fatalf("Invoke = %+v, %v; want a context.Canceled Go error", m, err)
				}
			})

			t.Run("model arguments", func(t *testing.T) {
				w := newWeather(c)
				for _, tc := range []struct{ args, want string }{
					{`{"city":"Lima"}`, `{"conditions":"fog","temperature":19}`},
					{`{"city":"Paris"}`, "Invalid arguments for tool \"weather\":\n- /city: must be one of \"Oslo\", \"Lima\"\nFix the arguments to match the tool's input schema and call it again."},
					{`{"city":"Lima","units":"F"}`, "- /units: unknown member (not in the schema)"},
					{`{"city":7}`, "- /city: expected a string, got JSON number"},
					{`["Lima"]`, "- /: arguments must be a JSON object, got an array"},
					{`{"city":`, "- /: not valid JSON"},
					{``, "- /city: must be one of"},
				} {
					m, err := w.Invoke(ctx, json.RawMessage(tc.args))
					if err != nil {
						t.Fatalf("Invoke(%s): %v", tc.args, err)
					}
					if !strings.Contains(m.Text, tc.want) || m.IsError == (tc.args == `{"city":"Lima"}`) {
						t.Errorf("Invoke(%s) = %+v\nwant text containing %q", tc.args, m, tc.want)
					}
				}
			})

			t.Run("toolset", func(t *testing.T) {
				ts, err := mcpruntime.NewToolset(newWeather(c), newPlain(kindsDesc, c))
				if err != nil {
					t.Fatal(err)
				}
				m, err := ts.Invoke(ctx, "weather", json.RawMessage(`{"city":"Oslo"}`))
				if err != nil || m.IsError || m.Text != `{"conditions":"snow","temperature":-3.5}` {
					t.Errorf("weather = %+v, %v", m, err)
				}
				m, err = ts.Invoke(ctx, "sleep", nil)
				if err != nil || !m.IsError || m.Text != `There is no tool "sleep" available to you. Available tools: kinds, weather.` {
					t.Errorf("sleep = %+v, %v", m, err)
				}
			})
		})
	}
}

func TestConcurrentFirstUse(t *testing.T) {
	c := mcpgo.Stdio(os.Args[0], nil, mcpgo.WithEnv("MCPGO_FIXTURE=stdio"))
	closeConn(t, c)
	w := newWeather(c)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			city := []string{"Oslo", "Lima"}[i%2]
			r, err := w.Call(context.Background(), WeatherInput{City: city})
			if err == nil && (r.Output.Conditions == "") {
				err = errors.New("empty output")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestLazyAndClosed(t *testing.T) {
	// Constructing never starts anything: a command that does not exist
	// only fails on first use, with the server named and the path hidden.
	c := mcpgo.Stdio("/nonexistent/secret-dir/server", []string{"--token=hunter2"})
	_, err := newPlain(kindsDesc, c).Call(context.Background(), EmptyInput{})
	if err == nil || !strings.Contains(err.Error(), "connect to server") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("first use: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	_, err = newPlain(kindsDesc, c).Call(context.Background(), EmptyInput{})
	if !errors.Is(err, mcpgo.ErrClosed) {
		t.Errorf("after close: %v", err)
	}

	// A URL's credentials never reach an error.
	h := mcpgo.StreamableHTTP("http://user:pw@127.0.0.1:1/mcp?key=sekrit", mcpgo.WithConnectTimeout(5*time.Second))
	defer h.Close()
	_, err = newPlain(kindsDesc, h).Call(context.Background(), EmptyInput{})
	if err == nil || strings.Contains(err.Error(), "sekrit") || strings.Contains(err.Error(), "pw@") {
		t.Errorf("http error leaks the URL: %v", err)
	}
}
