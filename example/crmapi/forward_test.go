package crmapi_test

import (
	"cmp"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgen/mcpgen/example/crmapi"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// TestNewerServerRelease calls a compatible later release of the server
// (-fault newer-release: deal outputs gain a member, the stage enum a
// value, both closed in the schema) through the bindings generated from
// the committed manifest: every call succeeds, the new member is kept in
// AdditionalProperties, the new stage is carried with Valid false, and the
// hook hears of each unknown once however many calls bring it.
func TestNewerServerRelease(t *testing.T) {
	var mu sync.Mutex
	var heard []mcpruntime.Unknown
	mcpruntime.SetUnknownHook(func(u mcpruntime.Unknown) {
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, u)
	})
	t.Cleanup(func() { mcpruntime.SetUnknownHook(nil) })

	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			crm := crmapi.NewClient(tr.connect(t, "newer-release"), identity)
			ctx := as("bob")
			for range 2 {
				deal, err := crm.GetDeal(ctx, crmapi.GetDealInput{DealID: "D-2002"})
				if err != nil {
					t.Fatal(err)
				}
				if got := string(deal.Output.AdditionalProperties["probability"]); got != "0.4" {
					t.Errorf("probability kept as %q in %v", got, deal.Output.AdditionalProperties)
				}
				if deal.Output.Stage != "on_hold" || deal.Output.Stage.Valid() {
					t.Errorf("stage %q, Valid %v: want the unknown on_hold carried", deal.Output.Stage, deal.Output.Stage.Valid())
				}
				// Nothing is lost: re-encoded, the output is what the server sent.
				b, err := json.Marshal(deal.Output)
				var x, y any
				_ = json.Unmarshal(b, &x)
				_ = json.Unmarshal(deal.StructuredContent, &y)
				if err != nil || !reflect.DeepEqual(x, y) {
					t.Errorf("re-encoded %s (%v), server sent %s", b, err, deal.StructuredContent)
				}
			}
			found, err := crm.SearchDeals(ctx, crmapi.SearchDealsInput{Query: ptr("compiler")})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range found.Output.Deals {
				if _, ok := d.AdditionalProperties["probability"]; !ok {
					t.Errorf("search item %s lost probability: %+v", d.ID, d)
				}
			}
			updated, err := crm.UpdateDeal(ctx, crmapi.UpdateDealInput{DealID: "D-2004", Note: ptr("called")})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := updated.Output.AdditionalProperties["probability"]; !ok {
				t.Errorf("update_deal output lost probability: %+v", updated.Output)
			}
		})
	}

	mu.Lock()
	defer mu.Unlock()
	// SearchDealsOutputDealsItemStage is an alias of GetDealOutputStage
	// (one shape, one Go type): its unknown value is heard once, by the
	// type's name.
	want := []mcpruntime.Unknown{
		{Type: "GetDealOutput", Member: "probability"},
		{Type: "GetDealOutputStage", Value: `"on_hold"`},
		{Type: "SearchDealsOutputDealsItem", Member: "probability"},
		{Type: "UpdateDealOutput", Member: "probability"},
	}
	got := slices.Clone(heard)
	slices.SortFunc(got, func(a, b mcpruntime.Unknown) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Member+a.Value, b.Member+b.Value))
	})
	if !slices.Equal(got, want) {
		t.Errorf("hook heard %v, want each of %v once", heard, want)
	}
}

// TestNewerReleaseInputsStrict: inputs stay strict where the schema is
// closed; a model's unknown argument never reaches the newer server.
func TestNewerReleaseInputsStrict(t *testing.T) {
	conn, _ := stdio(t, "newer-release")
	tool := crmapi.NewGetDeal(conn, identity)
	m, err := tool.Invoke(as("bob"), json.RawMessage(`{"deal_id":"D-2002","probability":0.9}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Result != nil || !m.IsError || !strings.Contains(m.Text, `unknown member "probability"`) {
		t.Errorf("unknown argument not refused before the call: %+v", m)
	}
	if m, err = tool.Invoke(as("bob"), json.RawMessage(`{"deal_id":"D-2002"}`)); err != nil || m.IsError {
		t.Fatalf("valid call: %v %+v", err, m)
	}
}
