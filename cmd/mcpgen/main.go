// Command mcpgen turns MCP servers into typed Go bindings. Its first step,
// `mcpgen snapshot`, captures what live servers offer into committed,
// deterministic manifests. Run `mcpgen help` for the commands.
package main

import (
	"io"
	"log/slog"
	"os"
)

func main() {
	// mcp-go logs a few conditions through the default logger; mcpgen
	// reports every failure itself, so those lines would only be noise.
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
