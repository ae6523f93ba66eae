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
//     content parts (text, images, resource links) for an adapter to map.
//   - A gated call is not a failure but a state: Dispatch reports it as
//     Pending, and a loop that meets one stops with a Pause, a JSON value
//     that can be stored, shown to a person and resumed later, in another
//     process too. Set.Resume makes each approved call exactly once (the
//     gate's guarantee) and a denied one gives the model the denial text.
package agent
