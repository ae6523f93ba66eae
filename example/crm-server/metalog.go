package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
)

// metaLogEnv names a file to which the server appends, for tests, one JSON
// line per request it receives over HTTP: the method, the tool, prompt or
// resource it names, and its params._meta (where clients propagate trace
// context). The requests are served as without it.
const metaLogEnv = "CRM_SERVER_META_LOG"

// metaLog wraps h to log the requests' _meta to the file path.
func metaLog(h http.Handler, path string) http.Handler {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		log.Fatalf("%s: %v", metaLogEnv, err)
	}
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(r.Body)
			_ = r.Body.Close()
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				Method string `json:"method"`
				Params struct {
					Name string          `json:"name"`
					URI  string          `json:"uri"`
					Meta json.RawMessage `json:"_meta"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &m) == nil && m.Method != "" {
				line, _ := json.Marshal(map[string]any{"method": m.Method, "name": m.Params.Name, "uri": m.Params.URI, "meta": m.Params.Meta})
				mu.Lock()
				_, _ = f.Write(append(line, '\n'))
				mu.Unlock()
			}
		}
		h.ServeHTTP(w, r)
	})
}
