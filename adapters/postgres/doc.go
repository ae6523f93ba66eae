// Package postgres keeps mcpgen's approvals, server registry and runs'
// taint ledgers in PostgreSQL, so that several replicas of an agent share
// them. Open checks the schema's version and migrates it; operations ride
// out lost connections and restarts for WithRetryFor where that is safe,
// and a DB holds at most its pool plus two connections. docs/guards.md
// ("Choosing a store") states the guarantees and their limits.
package postgres
