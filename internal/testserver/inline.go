package testserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// mcp-go v1.2.1 removed tasks/result on protocol 2026-07-28 but sends no
// outcome with a finished task's status, so its tasks cannot be finished
// on that protocol. The tasks extension of 2026-07-28 sends the outcome
// with the status (result for a completed task, error for a failed one);
// ServeStdioInlining and InliningHandler add it to an mcp-go server's
// tasks/get answers, from what tasks/result on the older path gives.

// Both also suggest a poll interval (PollIntervalMs) in every tasks/get
// answer that has none, as a server may: mcp-go suggests none, and a
// client's default interval would make tests wait.

// PollIntervalMs is the poll interval the shims suggest.
const PollIntervalMs = 50

// ServeStdioInlining serves s over stdio (as server.ServeStdio does, until
// stdin ends) with the outcome added to 2026-07-28 tasks/get answers.
func ServeStdioInlining(s *server.MCPServer, stdin io.Reader, stdout io.Writer) error {
	ids := &taskGets{}
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if get, modern := ids.answer(line); get {
				line = taskAnswer(s, line, modern)
			}
			if _, err := stdout.Write(append(bytes.Clone(line), '\n')); err != nil {
				return
			}
		}
	}()
	err := server.NewStdioServer(s).Listen(context.Background(), ids.tee(stdin), pw)
	pw.Close()
	<-done
	if err == io.EOF {
		return nil
	}
	return err
}

// InliningHandler is h (s's streamable HTTP handler) with the outcome
// added to 2026-07-28 tasks/get answers sent as JSON.
func InliningHandler(s *server.MCPServer, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(b, &m) != nil || m.Method != "tasks/get" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			body = taskAnswer(s, body, mcp.IsModernProtocol(r.Header.Get("Mcp-Protocol-Version")))
		}
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// taskGets remembers the ids of the tasks/get requests that went by, and
// whether each was on 2026-07-28.
type taskGets struct {
	mu  sync.Mutex
	ids map[string]bool
}

// taskAnswer is a tasks/get answer with a poll interval suggested and, on
// 2026-07-28, a finished task's outcome.
func taskAnswer(s *server.MCPServer, answer []byte, modern bool) []byte {
	if modern {
		answer = inlineOutcome(s, answer)
	}
	var a map[string]json.RawMessage
	var res map[string]json.RawMessage
	if json.Unmarshal(answer, &a) != nil || json.Unmarshal(a["result"], &res) != nil || res == nil {
		return answer
	}
	if _, ok := res["pollInterval"]; ok {
		return answer
	}
	res["pollInterval"] = json.RawMessage(strconv.Itoa(PollIntervalMs))
	a["result"], _ = json.Marshal(res)
	b, err := json.Marshal(a)
	if err != nil {
		return answer
	}
	return b
}

func (g *taskGets) tee(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &m) == nil && m.Method == "tasks/get" {
				g.mu.Lock()
				if g.ids == nil {
					g.ids = map[string]bool{}
				}
				g.ids[string(m.ID)] = strings.Contains(string(line), mcp.MetaKeyProtocolVersion)
				g.mu.Unlock()
			}
			if _, err := pw.Write(append(bytes.Clone(line), '\n')); err != nil {
				return
			}
		}
		pw.Close()
	}()
	return pr
}

// answer reports whether line answers a tasks/get, and whether that was
// on 2026-07-28.
func (g *taskGets) answer(line []byte) (get, modern bool) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || m.ID == nil {
		return false, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	modern, get = g.ids[string(m.ID)]
	delete(g.ids, string(m.ID))
	return get, modern
}

// inlineOutcome adds a finished task's outcome to a tasks/get answer, as
// the tasks extension of 2026-07-28 has it (result for a completed task,
// error for a failed one): mcp-go v1.2.1 removed tasks/result on that
// protocol but sends no outcome with the status, so its tasks could not
// be finished there. The outcome is what tasks/result on the older path
// gives.
func inlineOutcome(s *server.MCPServer, answer []byte) []byte {
	var a struct {
		JSONRPC string                     `json:"jsonrpc"`
		ID      json.RawMessage            `json:"id"`
		Result  map[string]json.RawMessage `json:"result"`
	}
	if json.Unmarshal(answer, &a) != nil || a.Result == nil {
		return answer
	}
	var status, id string
	_ = json.Unmarshal(a.Result["status"], &status)
	_ = json.Unmarshal(a.Result["taskId"], &id)
	if status != "completed" && status != "failed" {
		return answer
	}
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "inline", "method": "tasks/result", "params": map[string]any{"taskId": id}})
	b, _ := json.Marshal(s.HandleMessage(context.Background(), req))
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &out) != nil {
		return answer
	}
	if out.Result != nil {
		a.Result["result"] = out.Result
	}
	if out.Error != nil {
		a.Result["error"] = out.Error
	}
	b, err := json.Marshal(a)
	if err != nil {
		return answer
	}
	return b
}
