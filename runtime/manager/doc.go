// Package manager holds a registry of MCP servers and the connections to
// them, for programs that serve many agents: validated server entries,
// access control per agent, an SSRF guard, one shared session per server,
// cached and drift-checked tool lists, retries only where a call cannot
// run twice, concurrency caps and per-tool circuit breakers. It builds on
// package mcpruntime (github.com/mcpgen/mcpgen/runtime); the mcpgo package
// provides its Connector over mark3labs/mcp-go.
//
// Generated code names servers by id only. A Registry holds the entries
// (ServerConfig: transport, secrets, allowed agents, timeouts, concurrency
// cap, retries) in a ServerStore and validates every entry it saves and
// every entry it loads against a Policy: a stdio command allowlist of bare
// program names, and an SSRF guard refusing non-public addresses
// (CheckAddr). PolicyFromEnv reads MCPGEN_DISABLE_STDIO,
// MCPGEN_ALLOW_PRIVATE_NETWORKS and MCPGEN_STDIO_COMMANDS.
//
// A Manager turns ids into live connections through a Connector (the
// mcpgo adapter's checks the SSRF guard on the addresses it dials) and an
// agent's ToolSources into one Toolset, failing before any call with a
// *PreflightError that lists unregistered servers, denied agents and
// missing tools. It keeps one session per server, caches tool lists (TTL,
// shortened by the server's ttlMs, kept per principal when the server's
// cacheScope is private, dropped on list_changed), runs task-backed tools
// (the managed caller is a TaskCaller), applies a drift policy when a live tool's
// SchemaHash differs from the bindings', retries connections with backoff
// and calls only where they cannot run twice (ErrNotSent, or tools
// annotated idempotent), and bounds calls with the per-tool timeout, the
// per-server concurrency cap and a per-tool circuit breaker. NewGoTool
// gives Go functions the same guarantees. docs/runtime-manager.md has the
// details and the limits.
package manager
