// Package filestore is the durable approval store on the local file
// system: one JSON file per approval, atomic writes, flock across
// processes. It implements mcpruntime.ApprovalStore and
// mcpruntime.ApprovalWaiter, so resumers in other Gates and processes wait
// for a running call's outcome, and mcpruntime.DecisionWaiter (by polling).
// For several machines, use the PostgreSQL
// store of the adapters/postgres module.
package filestore
