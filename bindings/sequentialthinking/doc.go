// Package sequentialthinking is the typed Go binding of the MCP reference
// server @modelcontextprotocol/server-sequential-thinking@2026.8.31 (it
// reports itself as sequential-thinking-server 2026.8.31): one tool,
// sequentialthinking, with which a model thinks a problem through in
// numbered, revisable, branching steps that the server keeps in order.
// mcpgen generated it from ../mcp/sequentialthinking.json, a snapshot of
// that release.
//
// # Starting the server
//
// Install the pinned release and run it over stdio:
//
//	npm install --save-exact @modelcontextprotocol/server-sequential-thinking@2026.8.31
//
//	conn := mcpgo.Stdio("node", []string{"node_modules/@modelcontextprotocol/server-sequential-thinking/dist/index.js"},
//		mcpgo.WithEnv("DISABLE_THOUGHT_LOGGING=true")) // else each thought is also printed on its stderr
//	defer conn.Close()
//	tools, err := sequentialthinking.NewClient(conn).Toolset(sequentialthinking.ToolSequentialthinking)
//
// npx --yes @modelcontextprotocol/server-sequential-thinking@2026.8.31 runs
// the same release. A program with a server registry registers it with
// bindings.Register (Options.SequentialThinking) and binds
// sequentialthinking.Invokers.
//
// # Gated tools
//
// None: the server annotates its one tool read-only, so a gate built with
// GateOptions lets every call through. The thoughts live in the server
// process only, for as long as it runs.
//
// # Tests
//
// The package's tests run the pinned release from tools/npm, snapshot it
// and fail when its listing differs from the committed manifest, then make
// typed calls and a model's calls against it.
package sequentialthinking

//go:generate go run github.com/mcpgen/mcpgen/cmd/mcpgen generate --config ../mcpgen.yaml --server sequentialthinking
