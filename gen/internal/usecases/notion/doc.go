// Package notion holds bindings generated from notion.json, tools shaped
// like those of Notion's API server (unions of unions, array items that are
// unions, names that differ by a symbol), for tests written as user code.
package notion

//go:generate go run ../../../../cmd/mcpgen generate --manifest notion.json --package notion --out .
