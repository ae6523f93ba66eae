// Command demo uses the generated CRM bindings (package crmapi) against
// the example CRM server, started as a subprocess over stdio: no network,
// no account. It makes a typed call, a composed sequence of calls on one
// session, and a scripted "model" turn that sends JSON arguments, valid
// and invalid, through a least-privilege toolset, printing what a language
// model would see. Last, the runtime guards: a destructive call paused for
// approval and run exactly once, a denied call, and the run's taint ledger.
//
//	go run ./cmd/demo                          # runs the server with go run ./crm-server
//	go run ./cmd/demo -server ../bin/crm-server
//
// Approvals are kept in a file store in a temporary directory, or in
// PostgreSQL when MCPGEN_PG_DSN names a database (adapters/postgres).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

func main() {
	log.SetPrefix("demo: ")
	log.SetFlags(0)
	serverCmd := flag.String("server", "", "the CRM server's executable (default: go run ./crm-server)")
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	command, args := "go", []string{"run", "./crm-server"}
	if *serverCmd != "" {
		command, args = *serverCmd, nil
	}
	if err := run(context.Background(), os.Stdout, command, args); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, command string, args []string) error {
	// Nothing connects yet: the server starts on the first call.
	conn := mcpgo.Stdio(command, args, mcpgo.WithName("crm"))
	defer conn.Close()
	// Every tool acts for the principal in the call's context; update_deal
	// and send_email get its token in their caller_token argument, which
	// is not in their Go inputs and is never shown to a model.
	crm := crmapi.NewClient(conn, mcpruntime.WithIdentity(mcpruntime.ContextPrincipal))
	ctx = mcpruntime.WithPrincipal(ctx, "alice", "tok-alice")

	if err := crm.CheckTools(ctx); err != nil {
		return err
	}
	if err := typedCall(ctx, w, crm); err != nil {
		return err
	}
	if err := sequence(ctx, w, crm); err != nil {
		return err
	}
	if err := modelTurn(ctx, w, crm); err != nil {
		return err
	}
	return guarded(ctx, w, conn)
}

// typedCall is one compile-time-checked call: the input and output are Go
// types, and the content blocks the server sent besides come along.
func typedCall(ctx context.Context, w io.Writer, crm *crmapi.Client) error {
	fmt.Fprintln(w, "== A typed call")
	r, err := crm.GetDeal(ctx, crmapi.GetDealInput{DealID: "D-2001"})
	if err != nil {
		return err
	}
	d := r.Output
	fmt.Fprintf(w, "get_deal D-2001: %q, stage %s, %.0f %s, owner %s (output from %s)\n", d.Title, d.Stage, d.Amount, d.Currency, d.Owner, r.Source)
	for _, c := range r.Content {
		if c.Type == mcpruntime.ContentResourceLink {
			fmt.Fprintf(w, "  and a resource link: %s (%s)\n", c.URI, c.MIMEType)
		}
	}
	// Invalid input never reaches the server.
	_, err = crm.GetDeal(ctx, crmapi.GetDealInput{DealID: "deal 7"})
	var ve *mcpruntime.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("get_deal with a bad id: want a validation error, got %v", err)
	}
	fmt.Fprintf(w, "get_deal \"deal 7\": not sent: %v\n", err)
	// A tool error from the server is a typed error carrying its text.
	_, err = crm.GetDeal(ctx, crmapi.GetDealInput{DealID: "D-9999"})
	var te *mcpruntime.ToolError
	if !errors.As(err, &te) {
		return fmt.Errorf("get_deal D-9999: want a tool error, got %v", err)
	}
	fmt.Fprintf(w, "get_deal D-9999: the tool says: %s\n", te.Message)
	return nil
}

// sequence composes typed calls on one session: search, look the top
// result up, then change it.
func sequence(ctx context.Context, w io.Writer, crm *crmapi.Client) error {
	fmt.Fprintln(w, "\n== A sequence on one session: search, get, update")
	stage := crmapi.SearchDealsInputStageProposal
	found, err := crm.SearchDeals(ctx, crmapi.SearchDealsInput{Stage: &stage, Limit: ptr[int64](5)})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "search_deals stage=proposal: %d of %d\n", len(found.Output.Deals), found.Output.Total)
	if len(found.Output.Deals) == 0 {
		return errors.New("search_deals found no deal in proposal")
	}
	top := found.Output.Deals[0]
	deal, err := crm.GetDeal(ctx, crmapi.GetDealInput{DealID: top.ID})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "get_deal %s: %q for contact %s, notes %q\n", deal.Output.ID, deal.Output.Title, deal.Output.ContactID, deal.Output.Notes)
	next := crmapi.UpdateDealInputStageNegotiation
	updated, err := crm.UpdateDeal(ctx, crmapi.UpdateDealInput{DealID: deal.Output.ID, Stage: &next, Note: ptr("Pilot agreed; moving to terms.")})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "update_deal %s: stage %s, notes %q\n", updated.Output.ID, updated.Output.Stage, updated.Output.Notes)
	// bob does not own D-2001: the server refuses, and says why.
	_, err = crm.UpdateDeal(mcpruntime.WithPrincipal(ctx, "bob", "tok-bob"), crmapi.UpdateDealInput{DealID: deal.Output.ID, Note: ptr("Mine now.")})
	var te *mcpruntime.ToolError
	if !errors.As(err, &te) {
		return fmt.Errorf("update_deal as bob: want a tool error, got %v", err)
	}
	fmt.Fprintf(w, "update_deal %s as bob: the tool says: %s\n", deal.Output.ID, te.Message)
	return nil
}

// modelTurn plays a language model's tool calls, as JSON, through a
// toolset that offers only the read-only lookups: the model cannot update
// a deal however it asks.
func modelTurn(ctx context.Context, w io.Writer, crm *crmapi.Client) error {
	fmt.Fprintln(w, "\n== A model's turn, through a toolset of search_deals and get_deal")
	tools, err := crm.Toolset(crmapi.ToolSearchDeals, crmapi.ToolGetDeal)
	if err != nil {
		return err
	}
	var offered []string
	for _, d := range tools.Descriptors() {
		offered = append(offered, fmt.Sprintf("%s (%s)", d.Name, d.Title))
	}
	fmt.Fprintf(w, "tools offered to the model: %s\n", strings.Join(offered, ", "))
	calls := []struct {
		tool string
		args string
	}{
		{"search_deals", `{"query": "compiler", "limit": 2}`},
		{"get_deal", `{"deal_id": "2002"}`},
		{"search_deals", `{"stage": "closed", "limit": 500, "colour": "red"}`},
		{"get_deal", `{"deal_id": "D-2001"}`},
		{"update_deal", `{"deal_id": "D-2001", "stage": "won"}`},
	}
	for _, c := range calls {
		fmt.Fprintf(w, "\nmodel → %s %s\n", c.tool, c.args)
		res, err := tools.Invoke(ctx, c.tool, json.RawMessage(c.args))
		if err != nil {
			return err // transport failures and cancellation only
		}
		label := "ok"
		if res.IsError {
			label = "error"
		}
		fmt.Fprintf(w, "tool → model (%s):\n%s\n", label, indent(res.Text))
	}
	return nil
}

// guarded shows the three runtime guards together. The gate's policy is
// the one example/mcpgen.yaml configures (crmapi.GateOptions): tools not
// annotated read-only wait for a person.
func guarded(ctx context.Context, w io.Writer, conn *mcpgo.Conn) error {
	fmt.Fprintln(w, "\n== Guards: a gated mutation approved and run once, a denied one, the taint ledger")
	store, closeStore, err := approvalStore(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	gate := mcpruntime.NewGate(store, crmapi.GateOptions()...)
	opts := []mcpruntime.Option{mcpruntime.WithIdentity(mcpruntime.ContextPrincipal), mcpruntime.WithGate(gate)}
	run := mcpruntime.NewRun("demo")
	ctx = mcpruntime.WithRun(ctx, run)

	// A read-only lookup is not gated; its result enters the ledger.
	get := crmapi.NewGetDeal(conn, opts...)
	before, err := get.Call(ctx, crmapi.GetDealInput{DealID: "D-2001"})
	if err != nil {
		return err
	}

	// update_deal is destructive: the call does not execute, it waits.
	upd := crmapi.NewUpdateDeal(conn, opts...)
	_, err = upd.Call(ctx, crmapi.UpdateDealInput{DealID: "D-2001", Note: ptr("Discount approved by finance.")})
	var pending *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &pending) {
		return fmt.Errorf("update_deal: want a pending approval, got %v", err)
	}
	a := pending.Approval
	fmt.Fprintf(w, "update_deal D-2001 as %s: paused for approval (%s)\n", a.Principal, a.Why)
	if err := gate.Approve(ctx, a.ID, a.Digest); err != nil {
		return err
	}
	// Resuming twice (a retry, a second worker) executes once: the second
	// resume returns the recorded outcome.
	for i := 1; i <= 2; i++ {
		r, err := upd.Resume(ctx, a.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "resume %d after approval: %d notes (had %d)\n", i, len(r.Output.Notes), len(before.Output.Notes))
	}

	// A denied call never executes; the model gets the denial as the
	// tool's result.
	lost := crmapi.UpdateDealInputStageLost
	_, err = upd.Call(ctx, crmapi.UpdateDealInput{DealID: "D-2001", Stage: &lost})
	if !errors.As(err, &pending) {
		return fmt.Errorf("update_deal: want a pending approval, got %v", err)
	}
	if err := gate.Deny(ctx, pending.Approval.ID, "not before the quarterly review"); err != nil {
		return err
	}
	mr, err := upd.ResumeInvoke(ctx, pending.Approval.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "denied update_deal → model: %s\n", mr.Text)
	after, err := get.Call(ctx, crmapi.GetDealInput{DealID: "D-2001"})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "get_deal D-2001: stage %s, %d notes\n", after.Output.Stage, len(after.Output.Notes))

	// The ledger holds where every result came from, never its content.
	fmt.Fprintf(w, "taint ledger of run %q:\n", run.ID())
	for _, p := range run.Ledger() {
		fmt.Fprintf(w, "  %s/%s external=%t %s…\n", p.Server, p.Tool, p.External, p.Digest[:15])
	}
	return nil
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

func ptr[T any](v T) *T { return &v }
