// Package github holds bindings generated from github.json, tools shaped
// like those of the GitHub MCP server (reaction content "+1" and "-1",
// closed outputs), for tests written as user code.
package github

//go:generate go run ../../../../cmd/mcpgen generate --manifest github.json --package github --out .
