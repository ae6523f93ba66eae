package memory_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/mcpgen/mcpgen/bindings/memory"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// A gated call: create_entities is not read-only, so it waits for a
// person's approval and then runs once; searching is not gated.
func Example() {
	ctx := context.Background()
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), memory.GateOptions()...)
	// server.Conn is a session with the pinned release, which the tests
	// start as mcpgo.Stdio("node", []string{".../server-memory/dist/index.js"}).
	mem := memory.NewClient(server.Conn, mcpruntime.WithGate(gate))

	in, err := memory.DecodeCreateEntitiesInput([]byte(`{"entities": [
		{"name": "Ada Lovelace", "entityType": "person", "observations": ["wrote the first published program"]}]}`))
	if err != nil {
		log.Fatal(err)
	}
	_, err = mem.CreateEntities(ctx, in)
	var pending *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &pending) {
		log.Fatalf("want a pending approval, got %v", err)
	}
	fmt.Println("held for approval:", pending.Approval.Tool)

	// A person approves these exact arguments; the call then runs.
	if err := gate.Approve(ctx, pending.Approval.ID, pending.Approval.Digest); err != nil {
		log.Fatal(err)
	}
	created, err := mem.ResumeCreateEntities(ctx, pending.Approval.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created:", created.Output.Entities[0].Name)

	found, err := mem.SearchNodes(ctx, memory.SearchNodesInput{Query: "published program"})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range found.Output.Entities {
		fmt.Println("found:", e.Name, "-", e.EntityType)
	}
	// Output:
	// held for approval: create_entities
	// created: Ada Lovelace
	// found: Ada Lovelace - person
}
