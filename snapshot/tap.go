package snapshot

import (
	"encoding/json"
	"sync"
)

// tap keeps the raw result of the latest response to each method, as the
// session layer's raw observer hands them over. mcp-go's client decodes
// results into structs that drop most JSON Schema keywords, so the
// snapshot reads the bytes from here instead.
type tap struct {
	mu   sync.Mutex
	last map[string]json.RawMessage // method → result of its latest successful response
}

func (t *tap) record(method string, result json.RawMessage) {
	t.mu.Lock()
	t.last[method] = append(json.RawMessage(nil), result...)
	t.mu.Unlock()
}

// take returns and forgets the raw result of the latest successful
// response to method, so a later page cannot be mistaken for it.
func (t *tap) take(method string) (json.RawMessage, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.last[method]
	delete(t.last, method)
	return r, ok
}
