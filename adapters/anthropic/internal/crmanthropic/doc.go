// Package crmanthropic holds the tests of adapters/anthropic that run the example CRM
// server: a module of its own, so that a program requiring adapters/anthropic
// requires neither the example nor the helpers its tests run it with.
package crmanthropic
