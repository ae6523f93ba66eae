// Package crmopenai holds the tests of adapters/openai that run the example CRM
// server: a module of its own, so that a program requiring adapters/openai
// requires neither the example nor the helpers its tests run it with.
package crmopenai
