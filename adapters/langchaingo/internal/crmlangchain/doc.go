// Package crmlangchain holds the tests of adapters/langchaingo that run the example CRM
// server: a module of its own, so that a program requiring adapters/langchaingo
// requires neither the example nor the helpers its tests run it with.
package crmlangchain
