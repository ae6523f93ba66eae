package sequentialthinking_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mcpgen/mcpgen/bindings/sequentialthinking"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// A model's steps through a least-privilege toolset. The one tool is
// read-only, so the gate, which holds tools that are not, lets it through.
func Example() {
	ctx := context.Background()
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), sequentialthinking.GateOptions()...)
	// server.Conn is a session with the pinned release, which the tests
	// start as mcpgo.Stdio("node", []string{".../server-sequential-thinking/dist/index.js"}).
	c := sequentialthinking.NewClient(server.Conn, mcpruntime.WithGate(gate))
	tools, err := c.Toolset(sequentialthinking.ToolSequentialthinking)
	if err != nil {
		log.Fatal(err)
	}

	// What a model sends: JSON arguments, checked against the schema.
	m, err := tools.Invoke(ctx, "sequentialthinking", json.RawMessage(`{"thought": "Split the task in two.", "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": true}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("model result is an error:", m.IsError)

	// The same tool, typed.
	in, err := sequentialthinking.DecodeSequentialthinkingInput([]byte(`{"thought": "Both halves done.", "thoughtNumber": 2, "totalThoughts": 2, "nextThoughtNeeded": false}`))
	if err != nil {
		log.Fatal(err)
	}
	r, err := c.Sequentialthinking(ctx, in)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("thought %v of %v, another needed: %v\n", r.Output.ThoughtNumber, r.Output.TotalThoughts, r.Output.NextThoughtNeeded)
	// Output:
	// model result is an error: false
	// thought 2 of 2, another needed: false
}
