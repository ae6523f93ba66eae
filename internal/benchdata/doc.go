// Package benchdata holds bindings generated from bench.json, a tool with a
// typical structured result of about 1 KiB, for mcpgen's benchmarks of
// rehydration, validation and call overhead.
package benchdata

//go:generate go run ../../cmd/mcpgen generate --manifest bench.json --package benchdata --out .
