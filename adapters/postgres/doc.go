// Package postgres keeps mcpgen's approvals and server registry in
// PostgreSQL, so that several replicas of an agent share them.
package postgres
