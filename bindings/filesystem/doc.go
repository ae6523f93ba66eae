// Package filesystem is the typed Go binding of the MCP reference server
// @modelcontextprotocol/server-filesystem@2026.8.31 (it reports itself as
// secure-filesystem-server 0.2.0): reading, writing, editing, moving and
// searching files under the directories it is started with, and nowhere
// else. mcpgen generated it from ../mcp/filesystem.json, a snapshot of that
// release.
//
// # Starting the server
//
// Install the pinned release and run it over stdio with the directories it
// may use as its arguments:
//
//	npm install --save-exact @modelcontextprotocol/server-filesystem@2026.8.31
//
//	conn := mcpgo.Stdio("node", []string{"node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", "/srv/agent/workspace"})
//	defer conn.Close()
//	fs := filesystem.NewClient(conn, mcpruntime.WithGate(gate))
//
// npx --yes @modelcontextprotocol/server-filesystem@2026.8.31 DIR runs the
// same release. The server refuses paths outside its directories, also
// through symbolic links and "..". It replaces its directories with the
// client's roots when the client declares the roots capability and lists
// any (mcpgo.WithRoots), so give it roots only to choose the directories. A
// program with a server registry registers it with bindings.Register
// (Options.FilesystemDir, one directory) and binds filesystem.Invokers.
//
// # Gated tools
//
// The server annotates these tools as not read-only, so a gate built with
// GateOptions (mcpruntime.NewGate's default policy too) holds each call
// for a person's approval:
//
//   - write_file, edit_file, move_file (destructive: they overwrite or move)
//   - create_directory
//
// Every other tool only reads.
//
// # Tests
//
// The package's tests run the pinned release from tools/npm on a temporary
// directory, snapshot it and fail when its listing differs from the
// committed manifest, then make typed calls against it, paths outside the
// directory included.
package filesystem

//go:generate go run github.com/mcpgen/mcpgen/cmd/mcpgen generate --config ../mcpgen.yaml --server filesystem
