package everything_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/mcpgen/mcpgen/bindings/everything"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// A gated call: trigger-sampling-request is not read-only, so it waits for
// a person's approval and then runs once; get-sum is not gated.
func Example() {
	ctx := context.Background()
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), everything.GateOptions()...)
	// server.Conn is a session with the pinned release, which the tests
	// start as mcpgo.Stdio("node", []string{".../server-everything/dist/index.js", "stdio"})
	// with a sampling handler answering "sampled".
	ev := everything.NewClient(server.Conn, mcpruntime.WithGate(gate))

	sum, err := ev.GetSum(ctx, everything.GetSumInput{A: 1, B: 2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum.Content[0].Text)

	_, err = ev.TriggerSamplingRequest(ctx, everything.TriggerSamplingRequestInput{Prompt: "Name a colour."})
	var pending *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &pending) {
		log.Fatalf("want a pending approval, got %v", err)
	}
	fmt.Println("held for approval:", pending.Approval.Tool)

	if err := gate.Approve(ctx, pending.Approval.ID, pending.Approval.Digest); err != nil {
		log.Fatal(err)
	}
	r, err := ev.ResumeTriggerSamplingRequest(ctx, pending.Approval.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ran after approval, blocks:", len(r.Content))
	// Output:
	// The sum of 1 and 2 is 3.
	// held for approval: trigger-sampling-request
	// ran after approval, blocks: 1
}
