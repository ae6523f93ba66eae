package crmapi_test

import (
	"github.com/mcpgen/mcpgen/runtime/manager"

	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// TestManagerWithGeneratedBindings registers the CRM server (an operator-
// allowed stdio command), builds an agent's toolset from the generated
// Invokers through the connection manager, and calls through it: the
// typed tools validate arguments, the agent gets only the tools named, and
// an agent the server is not open to is refused before any call.
func TestManagerWithGeneratedBindings(t *testing.T) {
	ctx := context.Background()
	// The allowlist takes bare names looked up in the PATH.
	t.Setenv("PATH", filepath.Dir(serverBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	policy := manager.Policy{StdioCommands: []string{filepath.Base(serverBin)}}
	reg := manager.NewRegistry(manager.NewMemoryServerStore(), policy)
	if _, err := reg.Save(ctx, manager.ServerConfig{
		ID:            "crm",
		Transport:     manager.Transport{Kind: manager.TransportStdio, Command: filepath.Base(serverBin)},
		AllowedAgents: []string{"sales-assistant"},
	}); err != nil {
		t.Fatal(err)
	}
	m := manager.NewManager(reg, mcpgo.NewConnector(policy))
	defer m.CloseAll()

	src := []manager.ToolSource{{Server: "crm", Bind: crmapi.Invokers, Tools: []string{"get_deal", "search_deals"}}}
	ts, err := m.Toolset(ctx, "sales-assistant", src)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ts.Names(), ","); got != "get_deal,search_deals" {
		t.Errorf("toolset = %s", got)
	}
	res, err := ts.Invoke(ctx, "get_deal", json.RawMessage(`{"deal_id": "D-2001"}`))
	if err != nil || res.IsError || !strings.Contains(res.Text, `"title":"Difference engine retrofit"`) {
		t.Errorf("get_deal: %v %+v", err, res)
	}
	// The generated input type checks the model's arguments.
	res, err = ts.Invoke(ctx, "get_deal", json.RawMessage(`{"deal_id": 7}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text, "/deal_id") {
		t.Errorf("get_deal with a number: %v %+v", err, res)
	}
	res, err = ts.Invoke(ctx, "update_deal", json.RawMessage(`{"deal_id": "D-2001"}`))
	if err != nil || !res.IsError {
		t.Errorf("update_deal is not in the toolset, yet: %v %+v", err, res)
	}

	_, err = m.Toolset(ctx, "intruder", src)
	var pe *manager.PreflightError
	if !errors.As(err, &pe) {
		t.Errorf("another agent: want a preflight error, got %v", err)
	}
}

// TestManagerCallerReads: a connection from the manager reads resources
// and gets prompts, through the generated Client and package accessors.
func TestManagerCallerReads(t *testing.T) {
	ctx := context.Background()
	t.Setenv("PATH", filepath.Dir(serverBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	policy := manager.Policy{StdioCommands: []string{filepath.Base(serverBin)}}
	reg := manager.NewRegistry(manager.NewMemoryServerStore(), policy)
	if _, err := reg.Save(ctx, manager.ServerConfig{
		ID:            "crm",
		Transport:     manager.Transport{Kind: manager.TransportStdio, Command: filepath.Base(serverBin)},
		AllowedAgents: []string{"sales-assistant"},
	}); err != nil {
		t.Fatal(err)
	}
	m := manager.NewManager(reg, mcpgo.NewConnector(policy))
	defer m.CloseAll()
	c, err := m.Caller(ctx, "sales-assistant", "crm")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(mcpruntime.ResourceReader); !ok {
		t.Error("Manager.Caller is not a ResourceReader")
	}
	if _, ok := c.(mcpruntime.PromptGetter); !ok {
		t.Error("Manager.Caller is not a PromptGetter")
	}
	crm := crmapi.NewClient(c)
	p, err := crm.ReadPipeline(ctx)
	if text, _ := p.Text(); err != nil || !strings.Contains(text, "lead") {
		t.Errorf("ReadPipeline over the manager: %v %q", err, text)
	}
	k, err := crmapi.ReadDealContract(ctx, c, "D-2001")
	if text, _ := k.Text(); err != nil || !strings.HasPrefix(text, "# Contract D-2001") {
		t.Errorf("ReadDealContract over the manager: %v %q", err, text)
	}
	f, err := crm.GetFollowUpPrompt(ctx, "D-2001", nil)
	if err != nil || len(f.Messages) == 0 {
		t.Errorf("GetFollowUpPrompt over the manager: %v %+v", err, f)
	}
	// An answer from the server (no such deal) is its error, not retried
	// as a lost connection.
	if _, err := crmapi.ReadDealContract(ctx, c, "D-0000"); err == nil || strings.Contains(err.Error(), "attempts") {
		t.Errorf("a missing deal's contract: %v", err)
	}
}
