// Package everything is the typed Go binding of the MCP reference server
// (@modelcontextprotocol/server-everything), generated offline by mcpgen
// from the committed manifest ../mcp/everything.json (see ../mcpgen.yaml).
// Refresh the manifest with mcpgen snapshot --server everything, which
// needs node.
package everything

//go:generate go run github.com/mcpgen/mcpgen/cmd/mcpgen generate --config ../mcpgen.yaml --server everything
