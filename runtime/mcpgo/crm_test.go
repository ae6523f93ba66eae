package mcpgo_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// The example CRM server, built once from the example module and run as a
// real process over stdio and streamable HTTP.

var crmBuild struct {
	once sync.Once
	path string
	err  error
}

func crmServer(t *testing.T) string {
	t.Helper()
	crmBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "crm-server")
		if err != nil {
			crmBuild.err = err
			return
		}
		crmBuild.path = filepath.Join(dir, "crm-server")
		// Under -race the server is raced too: the tests that resume one
		// approval from many goroutines and processes drive its concurrent
		// handlers.
		cmd := exec.Command("go", append(append([]string{"build"}, raceFlag()...), "-o", crmBuild.path, "./crm-server")...)
		cmd.Dir = filepath.Join("..", "..", "example")
		if out, err := cmd.CombinedOutput(); err != nil {
			crmBuild.err = errors.New("go build ./crm-server: " + err.Error() + "\n" + string(out))
		}
	})
	if crmBuild.err != nil {
		t.Fatal(crmBuild.err)
	}
	return crmBuild.path
}

// raceFlag is the go build flag that builds a helper binary the way this
// test binary was built: with the race detector or without.
func raceFlag() []string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return []string{"-race"}
			}
		}
	}
	return nil
}

// crmHTTP starts the CRM server on a free port and returns its endpoint.
func crmHTTP(t *testing.T) string { return startCRM(t).endpoint }

type crmProcess struct {
	endpoint string
	// hangs receives the tool name and id arguments ("update_deal
	// deal_id=D-2001") of each call that starts hanging (see the server's
	// -fault flag).
	hangs chan string
}

// startCRM starts the CRM server over streamable HTTP with extra flags.
func startCRM(t *testing.T, args ...string) *crmProcess {
	t.Helper()
	p := &crmProcess{hangs: make(chan string, 64)}
	cmd := exec.Command(crmServer(t), append([]string{"-http", "127.0.0.1:0"}, args...)...)
	cmd.Stderr = &stderrLines{hangs: p.hangs}
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
	p.endpoint = strings.TrimSpace(line)
	return p
}

// stderrLines passes the server's stderr on, line by line, and reports the
// lines that say a call is hanging.
type stderrLines struct {
	buf   []byte
	hangs chan string
}

func (w *stderrLines) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		if tool, ok := strings.CutSuffix(strings.TrimPrefix(line, "crm-server: "), ": hanging until cancelled"); ok {
			select {
			case w.hangs <- tool:
			default:
			}
			continue
		}
		os.Stderr.WriteString(line + "\n")
	}
}

type GetDealInput struct {
	DealID string `json:"deal_id"`
}

func (in *GetDealInput) Validate() error {
	if !strings.HasPrefix(in.DealID, "D-") {
		return &mcpruntime.ValidationError{Violations: []mcpruntime.Violation{{Pointer: "/deal_id", Message: "must match ^D-[0-9]{4}$"}}}
	}
	return nil
}

type Deal struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	ContactID string   `json:"contact_id"`
	Stage     string   `json:"stage"`
	Amount    float64  `json:"amount"`
	Currency  string   `json:"currency"`
	Owner     string   `json:"owner"`
	Notes     []string `json:"notes"`
}

func (d *Deal) Validate() error { return nil }

type SearchDealsInput struct {
	MinAmount *float64 `json:"min_amount,omitempty"`
	Limit     *int     `json:"limit,omitempty"`
}

func (*SearchDealsInput) Validate() error { return nil }

type SearchDealsOutput struct {
	Deals []struct {
		ID     string  `json:"id"`
		Amount float64 `json:"amount"`
	} `json:"deals"`
	Total int `json:"total"`
}

func (*SearchDealsOutput) Validate() error { return nil }

type UpdateDealInput struct {
	CallerToken string  `json:"caller_token"`
	DealID      string  `json:"deal_id"`
	Stage       *string `json:"stage,omitempty"`
}

func (in *UpdateDealInput) Validate() error {
	var vs []mcpruntime.Violation
	if in.CallerToken == "" {
		vs = append(vs, mcpruntime.Violation{Pointer: "/caller_token", Message: "must not be empty"})
	}
	if in.Stage != nil && !strings.Contains(" lead qualified proposal negotiation won lost ", " "+*in.Stage+" ") {
		vs = append(vs, mcpruntime.Violation{Pointer: "/stage", Message: "not an allowed stage"})
	}
	if vs != nil {
		return &mcpruntime.ValidationError{Violations: vs}
	}
	return nil
}

var (
	getDealDesc       = desc("get_deal", `{"type":"object","additionalProperties":false}`, `{"type":"object"}`)
	searchDealsDesc   = desc("search_deals", `{"type":"object","additionalProperties":false}`, `{"type":"object"}`)
	updateDealDesc    = desc("update_deal", `{"type":"object","additionalProperties":false}`, `{"type":"object"}`)
	pipelineChartDesc = desc("pipeline_chart", emptyIn, "")
	exportDesc        = desc("export_contacts", emptyIn, "")
)

func TestCRM(t *testing.T) {
	for name, dial := range map[string]func(t *testing.T) *mcpgo.Conn{
		"stdio": func(t *testing.T) *mcpgo.Conn { return mcpgo.Stdio(crmServer(t), nil) },
		"http":  func(t *testing.T) *mcpgo.Conn { return mcpgo.StreamableHTTP(crmHTTP(t)) },
	} {
		t.Run(name, func(t *testing.T) {
			c := dial(t)
			closeConn(t, c)
			ctx := context.Background()

			r, err := mcpruntime.NewTool[GetDealInput, Deal](getDealDesc, c).Call(ctx, GetDealInput{DealID: "D-2001"})
			if err != nil {
				t.Fatal(err)
			}
			if r.Output.Stage != "proposal" || r.Output.Amount != 48000 || len(r.Content) != 2 ||
				r.Content[1].Type != mcpruntime.ContentResourceLink || r.Content[1].URI != "crm://deals/D-2001/contract" {
				t.Errorf("get_deal = %+v, content %+v", r.Output, r.Content)
			}

			minAmount := 20000.0
			s, err := mcpruntime.NewTool[SearchDealsInput, SearchDealsOutput](searchDealsDesc, c).Call(ctx, SearchDealsInput{MinAmount: &minAmount})
			if err != nil {
				t.Fatal(err)
			}
			if s.Output.Total != 3 || len(s.Output.Deals) != 3 || s.Output.Deals[0].ID != "D-2002" {
				t.Errorf("search_deals = %+v", s.Output)
			}

			// The caller's identity rides in an argument; the server decides.
			update := mcpruntime.NewTool[UpdateDealInput, Deal](updateDealDesc, c)
			won := "won"
			_, err = update.Call(ctx, UpdateDealInput{CallerToken: "tok-bob", DealID: "D-2001", Stage: &won})
			var te *mcpruntime.ToolError
			if !errors.As(err, &te) || !strings.Contains(te.Message, "permission denied: bob may not change deal D-2001") {
				t.Errorf("update by non-owner: %v", err)
			}
			u, err := update.Call(ctx, UpdateDealInput{CallerToken: "tok-alice", DealID: "D-2001", Stage: &won})
			if err != nil || u.Output.Stage != "won" {
				t.Errorf("update by owner: %+v, %v", u, err)
			}
			m, err := update.Invoke(ctx, json.RawMessage(`{"caller_token":"","deal_id":"D-2001","stage":"closed","priority":1}`))
			if err != nil || !m.IsError || m.Result != nil ||
				!strings.Contains(m.Text, "- /priority: unknown member (not in the schema)") {
				t.Errorf("invalid model arguments: %+v, %v", m, err)
			}

			chart, err := newPlain(pipelineChartDesc, c).Call(ctx, EmptyInput{})
			if err != nil {
				t.Fatal(err)
			}
			img := chart.Content[1]
			raw, err := base64.StdEncoding.DecodeString(img.Data)
			if err != nil || img.Type != mcpruntime.ContentImage || img.MIMEType != "image/png" {
				t.Fatalf("image block %+v: %v", img.Type, err)
			}
			if cfg, err := png.DecodeConfig(bytes.NewReader(raw)); err != nil || cfg.Width != 120 {
				t.Errorf("png: %+v, %v", cfg, err)
			}

			ex, err := newPlain(exportDesc, c).Call(ctx, EmptyInput{})
			if err != nil {
				t.Fatal(err)
			}
			if res := ex.Content[1].Resource; res == nil || res.MIMEType != "text/csv" || !strings.HasPrefix(res.Text, "id,name,email,company,owner\nC-1001,") {
				t.Errorf("export: %+v", ex.Content)
			}

			// Resources and prompts go through the mcp-go client.
			cli, err := c.Client(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rr, err := cli.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "crm://deals/D-2003/contract"}})
			if err != nil {
				t.Fatal(err)
			}
			if tc, ok := rr.Contents[0].(mcp.TextResourceContents); !ok || !strings.Contains(tc.Text, "Cipher audit for Bletchley Systems") {
				t.Errorf("contract = %+v", rr.Contents)
			}
			p, err := cli.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "follow_up", Arguments: map[string]string{"deal_id": "D-2002", "tone": "friendly"}}})
			if err != nil || len(p.Messages) != 1 {
				t.Fatalf("prompt: %+v, %v", p, err)
			}
		})
	}
}
