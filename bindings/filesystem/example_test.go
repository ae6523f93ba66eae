package filesystem_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mcpgen/mcpgen/bindings/filesystem"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// A gated call: write_file is not read-only, so it waits for a person's
// approval and then runs once; reading is not gated.
func Example() {
	ctx := context.Background()
	gate := mcpruntime.NewGate(mcpruntime.NewMemoryStore(), filesystem.GateOptions()...)
	// server.Conn is a session with the pinned release, which the tests
	// start as mcpgo.Stdio("node", []string{".../server-filesystem/dist/index.js", root}).
	fs := filesystem.NewClient(server.Conn, mcpruntime.WithGate(gate))
	todo := filepath.Join(root, "todo.txt")

	_, err := fs.WriteFile(ctx, filesystem.WriteFileInput{Path: todo, Content: "ship the bindings\n"})
	var pending *mcpruntime.ApprovalRequiredError
	if !errors.As(err, &pending) {
		log.Fatalf("want a pending approval, got %v", err)
	}
	_, statErr := os.Stat(todo)
	fmt.Println("held for approval:", pending.Approval.Tool, "- file exists:", statErr == nil)

	// A person approves these exact arguments; the call then runs.
	if err := gate.Approve(ctx, pending.Approval.ID, pending.Approval.Digest); err != nil {
		log.Fatal(err)
	}
	if _, err := fs.ResumeWriteFile(ctx, pending.Approval.ID); err != nil {
		log.Fatal(err)
	}
	r, err := fs.ReadTextFile(ctx, filesystem.ReadTextFileInput{Path: todo})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("read back: %q\n", r.Output.Content)
	// Output:
	// held for approval: write_file - file exists: false
	// read back: "ship the bindings\n"
}
