// Package memory is the typed Go binding of the MCP reference server
// @modelcontextprotocol/server-memory@2026.8.31 (it reports itself as
// memory-server 0.6.3): a knowledge graph of entities, the relations
// between them and observations about them, kept in one local file.
// mcpgen generated it from ../mcp/memory.json, a snapshot of that release.
//
// # Starting the server
//
// Install the pinned release and run it over stdio, naming the file that
// holds the graph (without MEMORY_FILE_PATH the server writes memory.jsonl
// beside its script, inside node_modules):
//
//	npm install --save-exact @modelcontextprotocol/server-memory@2026.8.31
//
//	conn := mcpgo.Stdio("node", []string{"node_modules/@modelcontextprotocol/server-memory/dist/index.js"},
//		mcpgo.WithEnv("MEMORY_FILE_PATH=/srv/agent/memory.jsonl"))
//	defer conn.Close()
//	mem := memory.NewClient(conn, mcpruntime.WithGate(gate))
//
// npx --yes @modelcontextprotocol/server-memory@2026.8.31 runs the same
// release. A program with a server registry registers it with
// bindings.Register (Options.MemoryFile) and binds memory.Invokers.
//
// # Gated tools
//
// The server annotates these tools as not read-only, so a gate built with
// GateOptions (mcpruntime.NewGate's default policy too) holds each call
// for a person's approval:
//
//   - create_entities, create_relations, add_observations (add to the graph)
//   - delete_entities, delete_observations, delete_relations (destructive)
//
// read_graph, search_nodes and open_nodes are read-only and run at once.
//
// # Tests
//
// The package's tests run the pinned release from tools/npm, snapshot it
// and fail when its listing differs from the committed manifest, then make
// typed calls against it.
package memory

//go:generate go run github.com/mcpgen/mcpgen/cmd/mcpgen generate --config ../mcpgen.yaml --server memory
