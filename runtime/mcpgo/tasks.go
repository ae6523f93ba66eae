package mcpgo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/manager"
)

// Tasks (2025-11-25 and later): a tool call started as a task answers at
// once with the task; tasks/get polls it, tasks/result fetches its result
// and tasks/cancel cancels it. The requests about a task carry the
// caller's bearer token like a call does, since the server binds a task to
// the requestor's authorization context.

var _ mcpruntime.TaskCaller = (*Conn)(nil)

// tasksExtension is the capability of the tasks extension (2026-07-28).
const tasksExtension = "io.modelcontextprotocol/tasks"

// ErrTasksUnsupported marks a task start the server cannot take: it
// declares no tasks.requests.tools.call capability. Nothing was sent.
var ErrTasksUnsupported = errors.New("the server does not run tool calls as tasks (it declares neither the tasks.requests.tools.call capability nor the tasks extension)")

// StartTool implements mcpruntime.TaskCaller: tools/call with task
// augmentation. A progress callback on ctx (mcpruntime.WithProgress) gets
// the task's notifications/progress until the Conn sees the task end.
func (c *Conn) StartTool(ctx context.Context, name string, args json.RawMessage, ttl time.Duration) (*mcpruntime.Result, error) {
	tp := &mcp.TaskParams{}
	if ttl > 0 {
		ms := ttl.Milliseconds()
		tp.TTL = &ms
	}
	return c.callTool(ctx, name, args, tp)
}

// TaskStatus implements mcpruntime.TaskCaller (tasks/get).
func (c *Conn) TaskStatus(ctx context.Context, ref mcpruntime.TaskRef) (mcpruntime.TaskStatus, error) {
	return c.taskStatus(ctx, ref, mcp.MethodTasksGet, func(ctx context.Context, cli *client.Client) error {
		_, err := cli.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: ref.ID}})
		return err
	})
}

// CancelTask implements mcpruntime.TaskCaller (tasks/cancel).
func (c *Conn) CancelTask(ctx context.Context, ref mcpruntime.TaskRef) (mcpruntime.TaskStatus, error) {
	return c.taskStatus(ctx, ref, mcp.MethodTasksCancel, func(ctx context.Context, cli *client.Client) error {
		_, err := cli.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: ref.ID}})
		return err
	})
}

// TaskResult implements mcpruntime.TaskCaller (tasks/result): the tool
// result as the server sent it.
func (c *Conn) TaskResult(ctx context.Context, ref mcpruntime.TaskRef) (*mcpruntime.Result, error) {
	raw, err := c.taskRequest(ctx, ref, mcp.MethodTasksResult, func(ctx context.Context, cli *client.Client) error {
		_, err := cli.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: ref.ID}})
		return err
	})
	if err != nil {
		return nil, err
	}
	c.taskProgress.end(ref.ID)
	r, err := parseOwned(raw)
	if err != nil {
		return nil, fmt.Errorf("server %q: tasks/result of task %s: %w", c.cfg.name, ref.ID, err)
	}
	return r, nil
}

// TaskSession names the session the current connection's tasks are bound
// to, for a TaskRef: a digest of it (the session id itself is a
// credential), or "" when the protocol binds tasks to no session.
func (c *Conn) TaskSession() string {
	c.mu.Lock()
	l := c.cur
	c.mu.Unlock()
	if l == nil || l.modern {
		return ""
	}
	return sessionDigest(l.cli.GetSessionId())
}

func sessionDigest(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:8])
}

func (c *Conn) taskStatus(ctx context.Context, ref mcpruntime.TaskRef, method mcp.MCPMethod, f func(context.Context, *client.Client) error) (mcpruntime.TaskStatus, error) {
	raw, err := c.taskRequest(ctx, ref, method, f)
	if err != nil {
		return mcpruntime.TaskStatus{}, err
	}
	if method == mcp.MethodTasksCancel && !bytes.Contains(raw, []byte(`"taskId"`)) {
		// A bare acknowledgement (the tasks extension of 2026-07-28).
		return mcpruntime.TaskStatus{ID: ref.ID}, nil
	}
	st, err := mcpruntime.ParseTaskStatus(raw)
	if err != nil {
		return st, fmt.Errorf("server %q: %s of task %s: %w", c.cfg.name, method, ref.ID, err)
	}
	if st.State.Terminal() {
		c.taskProgress.end(ref.ID)
	}
	return st, nil
}

// taskRequest sends one request about ref and returns its raw result.
func (c *Conn) taskRequest(ctx context.Context, ref mcpruntime.TaskRef, method mcp.MCPMethod, f func(context.Context, *client.Client) error) (json.RawMessage, error) {
	what := fmt.Sprintf("%s of task %s", method, ref.ID)
	s := &sink{method: string(method)}
	err := c.Do(ctx, what, func(ctx context.Context, cli *client.Client) error {
		if ref.Session != "" && ref.Session != sessionDigest(cli.GetSessionId()) {
			return fmt.Errorf("%w: the task was started on another session, and on protocol %s the server binds a task to the session that started it",
				mcpruntime.ErrNotSent, cli.ProtocolVersion())
		}
		return f(context.WithValue(ctx, sinkKey{}, s), cli)
	})
	raw, rpcErr := s.get()
	if rpcErr != nil && settle(ctx) == nil {
		return nil, &mcpruntime.ProtocolError{Code: rpcErr.Code, Message: rpcErr.Message, Data: dataOf(rpcErr.Data)}
	}
	if raw != nil && (err == nil || ctx.Err() == nil) {
		// mcp-go may fail to parse what the runtime reads (content it does
		// not know); the raw bytes decide.
		return raw, nil
	}
	if err == nil {
		err = fmt.Errorf("server %q: %s: no result", c.cfg.name, what)
	}
	return nil, err
}

// checkTasks refuses a task start the server has not declared it takes:
// tasks.requests.tools.call, or the tasks extension of 2026-07-28.
func (c *Conn) checkTasks(l *link, name string) error {
	caps := l.cli.GetServerCapabilities()
	if t := caps.Tasks; t != nil && t.Requests != nil && t.Requests.Tools != nil && t.Requests.Tools.Call != nil {
		return nil
	}
	if _, ok := caps.Extensions[tasksExtension]; ok {
		return nil
	}
	return fmt.Errorf("server %q: tool %q: %w (%w)", c.cfg.name, name, ErrTasksUnsupported, manager.ErrNotSent)
}

// taskProgressRoutes keeps the progress route of each task this Conn
// started until the task is seen to end, at most maxTaskRoutes of them
// (the oldest go first).
type taskProgressRoutes struct {
	mu    sync.Mutex
	order []string
	done  map[string]func()
}

const maxTaskRoutes = 256

func (r *taskProgressRoutes) keep(id string, done func()) {
	r.mu.Lock()
	if r.done == nil {
		r.done = map[string]func(){}
	}
	var drop func()
	if len(r.order) >= maxTaskRoutes {
		old := r.order[0]
		r.order = r.order[1:]
		drop = r.done[old]
		delete(r.done, old)
	}
	r.order = append(r.order, id)
	r.done[id] = done
	r.mu.Unlock()
	if drop != nil {
		drop()
	}
}

func (r *taskProgressRoutes) end(id string) {
	r.mu.Lock()
	done := r.done[id]
	delete(r.done, id)
	for i, o := range r.order {
		if o == id {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
	if done != nil {
		done()
	}
}

// taskID returns the id of a CreateTaskResult, or "" for any other result.
func taskID(raw json.RawMessage) string {
	st, ok, err := mcpruntime.ParseCreatedTask(raw)
	if !ok || err != nil {
		return ""
	}
	return st.ID
}

// methodNotFound404 turns a 404 answer to a POST on 2026-07-28 whose body
// is a JSON-RPC error into the 200 answer mcp-go reads: that protocol
// answers "method not found" (-32601) with 404, which mcp-go takes for a
// terminated session and reports as a lost connection. resp's body is
// read (capped); anything else is left as it was.
func methodNotFound404(req *http.Request, resp *http.Response) *http.Response {
	if req.Method != http.MethodPost || resp.StatusCode != http.StatusNotFound || !mcp.IsModernProtocol(req.Header.Get("Mcp-Protocol-Version")) {
		return resp
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return resp
	}
	const most = 64 << 10
	b, err := io.ReadAll(io.LimitReader(resp.Body, most+1))
	rest := resp.Body
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(b), rest), rest}
	if err != nil || len(b) > most {
		return resp
	}
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &m) != nil || m.Error == nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return resp
	}
	out := *resp
	out.StatusCode, out.Status = http.StatusOK, "200 OK"
	return &out
}
