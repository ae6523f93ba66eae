// Package crmtrace holds the tests of adapters/otel that run the example
// CRM server: a module of its own, so that a program requiring
// adapters/otel requires neither the example, its test helpers nor the
// OpenTelemetry SDK they read spans and metrics with.
package crmtrace
