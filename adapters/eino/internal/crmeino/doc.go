// Package crmeino holds the tests of adapters/eino that run the example CRM
// server: a module of its own, so that a program requiring adapters/eino
// requires neither the example nor the helpers its tests run it with.
package crmeino
