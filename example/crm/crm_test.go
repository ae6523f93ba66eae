package crm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgen/mcpgen/example/crm"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

func call(t *testing.T, c *mcpgo.Conn, name, args string) *mcpruntime.Result {
	t.Helper()
	r, err := c.CallTool(context.Background(), name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func TestSendEmailRecordsToOutbox(t *testing.T) {
	db := crm.New()
	c := mcpgo.InProcess(db.Server())
	defer c.Close()

	r := call(t, c, "send_email", `{"caller_token":"tok-alice","contact_id":"C-1002","subject":"Hi","body":"Checking in."}`)
	if r.IsError || string(r.StructuredContent) != `{"message_id":"msg-0001","to":"grace@compilers.example","status":"queued"}` {
		t.Fatalf("send_email = %+v (%s)", r, r.StructuredContent)
	}
	want := []crm.Email{{ID: "msg-0001", From: "alice", To: "grace@compilers.example", Subject: "Hi", Body: "Checking in."}}
	if got := db.Outbox(); len(got) != 1 || got[0] != want[0] {
		t.Errorf("outbox = %+v", got)
	}

	// A bad token is refused without being echoed.
	r = call(t, c, "send_email", `{"caller_token":"tok-mallory","contact_id":"C-1002","subject":"Hi","body":"x"}`)
	if !r.IsError || strings.Contains(r.Text(), "mallory") || len(db.Outbox()) != 1 {
		t.Errorf("bad token: %+v", r)
	}
	// Closed schemas: unknown arguments are refused by the server too.
	r = call(t, c, "get_contact", `{"contact_id":"C-1001","verbose":true}`)
	if !r.IsError || r.Text() != `unknown argument "verbose"` {
		t.Errorf("unknown argument: %q", r.Text())
	}
}

func TestListingIsDeterministic(t *testing.T) {
	list := func() string {
		c := mcpgo.InProcess(crm.NewServer())
		defer c.Close()
		cli, err := c.Client(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tools, err := cli.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(tools.Tools)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	a, b := list(), list()
	if a != b {
		t.Error("two listings differ")
	}
	for _, name := range []string{"get_contact", "get_deal", "search_deals", "update_deal", "send_email", "pipeline_chart", "export_contacts"} {
		if !strings.Contains(a, `"name":"`+name+`"`) {
			t.Errorf("tool %s not listed", name)
		}
	}
}

// HangAfter does the work, announces the call, and answers only with the
// request's end: the change is made although the caller never hears back.
func TestHangAfterAppliesThenHangs(t *testing.T) {
	held := make(chan string, 1)
	c := mcpgo.InProcess(crm.New().ServerWith(crm.Faults{
		HangAfter: []string{"update_deal"},
		OnHang:    func(tool string, req mcp.CallToolRequest) { held <- tool + " " + req.GetString("deal_id", "") },
	}))
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "update_deal", json.RawMessage(`{"caller_token":"tok-alice","deal_id":"D-2001","note":"held"}`))
		done <- err
	}()
	select {
	case h := <-held:
		if h != "update_deal D-2001" {
			t.Errorf("held %q", h)
		}
	case err := <-done:
		t.Fatalf("update_deal answered: %v", err)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("a cancelled hanging call returned no error")
	}
	r := call(t, c, "get_deal", `{"deal_id":"D-2001"}`)
	if !strings.Contains(string(r.StructuredContent), `"alice: held"`) {
		t.Errorf("the change was not made before the hang: %s", r.StructuredContent)
	}
}
