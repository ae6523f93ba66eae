// Command conformance is mcpgen's client for the official MCP conformance
// suite (@modelcontextprotocol/conformance, client mode). The harness runs
// it with the scenario's server URL as the last argument and the scenario's
// name in MCP_CONFORMANCE_SCENARIO; it does what the scenario asks, with
// mcpgen's own session layer only, and exits non-zero on failure.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance [flags...] SERVER_URL (scenario in $MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, scenario, url); err != nil {
		fmt.Fprintf(os.Stderr, "conformance client: scenario %q: %v\n", scenario, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, scenario, url string) error {
	opts := []mcpgo.Option{mcpgo.WithName("conformance"), mcpgo.WithClientInfo("mcpgen-conformance", "1.0.0")}
	switch scenario {
	case "elicitation-sep1034-client-defaults":
		// Accept with the defaults the form's schema gives (SEP-1034).
		opts = append(opts, mcpgo.WithElicitation(mcpgo.ElicitDefaults, false))
	}
	c := mcpgo.StreamableHTTP(url, opts...)
	defer c.Close()
	switch scenario {
	case "initialize":
		_, err := c.ToolNames(ctx)
		return err
	case "tools_call":
		return call(ctx, c, "add_numbers", `{"a":5,"b":3}`)
	case "elicitation-sep1034-client-defaults":
		return call(ctx, c, "test_client_elicitation_defaults", `{}`)
	case "sse-retry":
		return call(ctx, c, "test_reconnection", `{}`)
	}
	// Any other scenario: list the tools and call each with no arguments.
	names, err := c.ToolNames(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := call(ctx, c, n, `{}`); err != nil {
			return err
		}
	}
	return nil
}

func call(ctx context.Context, c *mcpgo.Conn, tool, args string) error {
	res, err := c.CallTool(ctx, tool, json.RawMessage(args))
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool %q failed: %s", tool, res.Text())
	}
	fmt.Println(res.Text())
	return nil
}
