// Package mcpotel traces and measures what a program does through the
// mcpgen runtime with OpenTelemetry, as the semantic conventions for the
// Model Context Protocol and for GenAI tool execution say. It is a module
// of its own, so that programs that do not use OpenTelemetry do not depend
// on it.
//
//	obs, err := mcpotel.New() // the global tracer and meter providers
//	conn := mcpgo.StreamableHTTP(url, obs.ConnOption())
//	crm := crmapi.NewClient(conn, mcpruntime.WithObserver(obs))
//
// Every tool call, resource read and prompt get is a CLIENT span named
// "{mcp.method.name} {target}" ("tools/call get_deal", "prompts/get
// follow_up", "resources/read"), with mcp.method.name, gen_ai.tool.name,
// gen_ai.operation.name execute_tool and gen_ai.tool.call.id (the model's
// call id, which runtime/agent passes on) for tools, gen_ai.prompt.name,
// mcp.resource.uri, the transport (network.transport, network.protocol.name,
// server.address, server.port, mcp.protocol.version), and error.type and
// rpc.response.status_code when it fails. A gate holding the call, a
// resume making or replaying it and the outcome it records, each ledger
// record and the manager's retries and breaker transitions are span
// events; a resume links to the span of the call that was held, in
// whatever process that ran; a person's decision is a span of its own.
// ConnOption writes the span's W3C trace context into each request's
// params._meta (traceparent, tracestate), so that the server's spans join
// the trace. The duration of each operation is the conventions' histogram
// mcp.client.operation.duration, whose counts are the calls by tool, server
// (mcpgen.server) and outcome (mcpgen.outcome).
//
// Nothing records the caller's token, and argument values and results only
// with RecordArguments and RecordResults. docs/observability.md shows a
// trace of the example CRM.
package mcpotel
