// Package agent is the provider-neutral part of handing mcpgen tools to a
// language-model agent: what the adapters in adapters/* share, with no SDK
// imported.
//
//   - A Set merges one or more Toolsets under names every provider accepts
//     (^[a-zA-Z0-9_-]{1,64}$), deterministic, reversible and never
//     colliding, with a prefix per server when there are several.
//   - Set.Tools is the model-facing view of the tools for a Dialect: plain
//     JSON Schema ($schema dropped, local $refs inlined), or OpenAI's strict
//     mode (objects closed, every property required, optional ones made
//     nullable; the way back turns null into absent before the typed decode).
//   - Set.Dispatch runs a model's tool call and returns its result as
//     content parts (text, images, resource links, embedded resources'
//     text within MaxResourceText, PDFs as files) for an adapter to map. A
//     tool the bindings have and the live server does not offer is a
//     failure the model reads, as an unknown name is.
//   - Set.Defer hands a large set to a model a few tools at a time: the
//     tools Loading.Always accepts from the start, the others found by
//     searching, through the provider's own deferred loading where it has
//     one (the adapters use Deferred.Always) or the fallback search tool
//     (Deferred.SearchTool, Search, Tools, DispatchAll, Found).
//   - A gated call is not a failure but a state: Dispatch reports it as
//     Pending, and a loop that meets one stops with a Pause, a JSON value
//     that can be stored and resumed later, in another process too.
//     Set.Resume makes each approved call exactly once (the gate's
//     guarantee) and a denied one gives the model the denial text.
//
// A resource reader given a gate (mcpimpl.NewResourceReader with
// mcpruntime.WithToolOptions(mcpruntime.WithGate(g))) is a tool with a
// gate here: its held reads pause the loop and resume as a tool's calls.
//
// A pause is held by the application, possibly somewhere it does not
// control, so nothing in it is believed. Pause.Approvals and Set.Resume
// read every approval a pending result names from the store, through the
// tool the result names, which must have a gate (a tool built with
// mcpruntime.NewTool, or a resource reader). The approval must have been
// made for that tool (same wire name, server label, server identity and
// schema hash: an approval for one server's tool cannot be resumed through
// another's, nor through another server's bindings under the same label),
// and the pause's copy must agree with the store on its tool, server,
// server identity, schema hash, arguments, digest, principal, reason,
// creation and expiry, or the pause is refused with ErrPauseAltered and
// nothing runs. Show a person what Pause.Approvals returns, which is the
// store's copy, never the pause's. An approval may appear once, and a
// pause must wait for at least one.
//
// A pause is bound to its run's principal: Pause.Approvals and Set.Resume
// take each tool's principal from their context (as its WithIdentity or
// ReadIdentity reads it; none without identity), and an approval requested
// by another principal, even copied exactly, makes the pause altered; the
// gate checks the principal again when the call runs.
//
// A pause continues the conversation once: when its approvals are all
// decided, Set.Resume records in the store that each was continued (a
// compare-and-swap), and a later resume of it, or of any pause holding one
// of its approvals, in any process sharing the store, fails with
// ErrPauseUsed before the model is asked. The results of calls that were
// not gated and the conversation are what the model is told; they are not
// checked, and are the application's to protect. New refuses two tools
// with a gate that it cannot tell apart (the same server label, server
// identity and wire name under two prefixes).
package agent
