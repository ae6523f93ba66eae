// Package synth builds deterministic synthetic tools/list results of any
// size for benchmarks: realistic schemas with nested objects, enums,
// arrays, nullable members, unions and output schemas, varied by index so
// no two tools are identical.
package synth

import (
	"encoding/json"
	"fmt"
)

// ToolsList returns a tools/list result with n tools.
func ToolsList(n int) []byte {
	tools := make([]any, n)
	for i := range n {
		tools[i] = tool(i)
	}
	b, err := json.Marshal(map[string]any{"tools": tools})
	if err != nil {
		panic(err) // only maps, slices and scalars: cannot fail
	}
	return b
}

var verbs = []string{"get", "list", "create", "update", "delete", "search", "sync", "archive"}
var nouns = []string{"deal", "contact", "invoice", "ticket", "project", "repo", "issue", "order", "shipment", "account"}

func tool(i int) map[string]any {
	name := fmt.Sprintf("%s_%s_%d", verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)], i)
	readOnly := i%len(verbs) < 2 || i%len(verbs) == 5
	enum := []any{"asc", "desc"}
	for k := range i % 4 {
		enum = append(enum, fmt.Sprintf("mode_%d", k))
	}
	props := map[string]any{
		"id":    map[string]any{"type": "string", "description": "Object id.", "minLength": 1, "maxLength": 64, "pattern": "^[A-Z]+-[0-9]+$"},
		"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 100 + i%50, "default": 20},
		"order": map[string]any{"type": "string", "enum": enum},
		"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "uniqueItems": true, "maxItems": 10},
		"note":  map[string]any{"type": []any{"string", "null"}},
		"filter": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"field": map[string]any{"type": "string"},
				"op":    map[string]any{"type": "string", "enum": []any{"eq", "ne", "lt", "gt"}},
				"value": map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}},
			},
			"required":             []any{"field", "op"},
			"additionalProperties": false,
		},
		"lines": map[string]any{
			"type": "array",
			"items": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"sku":   map[string]any{"type": "string"},
					"qty":   map[string]any{"type": "integer", "minimum": 1},
					"price": map[string]any{"type": "number", "exclusiveMinimum": 0},
				},
				"required": []any{"sku", "qty"},
			},
		},
		"target": map[string]any{"oneOf": []any{
			map[string]any{"type": "object", "properties": map[string]any{"kind": map[string]any{"const": "user"}, "login": map[string]any{"type": "string"}}, "required": []any{"kind", "login"}},
			map[string]any{"type": "object", "properties": map[string]any{"kind": map[string]any{"const": "team"}, "slug": map[string]any{"type": "string"}}, "required": []any{"kind", "slug"}},
		}},
	}
	out := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"total": map[string]any{"type": "integer"},
			"next":  map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "null"}}},
			"items": map[string]any{"type": "array", "items": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"id":      map[string]any{"type": "string"},
					"title":   map[string]any{"type": "string"},
					"amount":  map[string]any{"type": "number"},
					"stage":   map[string]any{"type": "string", "enum": []any{"lead", "won", "lost"}},
					"owner":   map[string]any{"type": "object", "properties": map[string]any{"login": map[string]any{"type": "string"}, "id": map[string]any{"type": "integer"}}},
					"labels":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
					"created": map[string]any{"type": "string", "format": "date-time"},
				},
				"required": []any{"id", "title"},
			}},
		},
		"required": []any{"total", "items"},
	}
	return map[string]any{
		"name":         name,
		"description":  fmt.Sprintf("Synthetic tool %d: %s.", i, name),
		"inputSchema":  map[string]any{"type": "object", "properties": props, "required": []any{"id"}, "additionalProperties": false},
		"outputSchema": out,
		"annotations":  map[string]any{"readOnlyHint": readOnly},
	}
}
