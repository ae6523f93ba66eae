// Package example is the bundled mcpgen example: a small CRM MCP server, its
// committed config, manifest and generated bindings, and a program using them.
package example
