// Package everything is the typed Go binding of the MCP reference server
// @modelcontextprotocol/server-everything@2026.8.31 (it reports itself as
// mcp-servers/everything 2.0.0), the protocol's test server: tools with and
// without structured output, images, resource links, sampling, elicitation
// and roots requests, resources, resource templates and prompts. mcpgen
// generated it from ../mcp/everything.json, a snapshot of that release
// taken by a client declaring sampling, elicitation and roots, so the
// bindings have the tools offered only to such clients.
//
// # Starting the server
//
// Install the pinned release and run it over stdio:
//
//	npm install --save-exact @modelcontextprotocol/server-everything@2026.8.31
//
//	conn := mcpgo.Stdio("node", []string{"node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"},
//		mcpgo.WithSampling(sample), mcpgo.WithElicitation(mcpgo.ElicitDefaults, true), mcpgo.WithRoots(roots...))
//	defer conn.Close()
//	ev := everything.NewClient(conn, mcpruntime.WithGate(gate))
//
// npx --yes @modelcontextprotocol/server-everything@2026.8.31 stdio runs the
// same release. Its get-env tool is annotated read-only, so no gate holds
// it, and it returns the server's whole environment: keep it out of a
// model's toolset in a process whose environment holds secrets.
// bindings.Register registers this server only when asked
// (Options.Everything), for that reason.
//
// # Gated tools
//
// The server annotates these tools as not read-only, so a gate built with
// GateOptions (mcpruntime.NewGate's default policy too) holds each call
// for a person's approval:
//
//   - trigger-sampling-request, trigger-elicitation-request, trigger-url-elicitation (ask the client)
//   - toggle-simulated-logging, toggle-subscriber-updates (change the session)
//   - simulate-research-query, gzip-file-as-resource
//
// # Tests
//
// The package's tests run the pinned release from tools/npm, snapshot it
// and fail when its listing differs from the committed manifest, then make
// typed calls, resource reads and prompt gets against it.
package everything

//go:generate go run github.com/mcpgen/mcpgen/cmd/mcpgen generate --config ../mcpgen.yaml --server everything
