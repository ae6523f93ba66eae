package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/mcpgen/mcpgen/manifest"
	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// taskSupport is the tool's execution.taskSupport in m ("" when m lacks
// the tool or the member).
func taskSupport(m *manifest.Manifest, tool string) string {
	if m == nil {
		return ""
	}
	i := slices.IndexFunc(m.Tools, func(e manifest.Entry) bool { return e.Key == tool })
	if i < 0 {
		return ""
	}
	var t struct {
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
	_ = json.Unmarshal(m.Tools[i].Raw, &t)
	return t.Execution.TaskSupport
}

// taskPoll is how often call --task polls a task whose server suggests no
// interval.
const taskPoll = 500 * time.Millisecond

// runTask starts tool as a task on conn, prints a status line to w
// whenever the task's status or message changes, and returns the task's
// result. When ctx ends first, the task is cancelled.
func runTask(ctx context.Context, conn *mcpgo.Conn, w io.Writer, server, tool string, args json.RawMessage, red replacer) (*mcpruntime.Result, error) {
	res, err := conn.StartTool(ctx, tool, args, 0)
	if err != nil {
		return nil, err
	}
	st, ok, err := mcpruntime.ParseCreatedTask(res.Raw)
	if err != nil {
		return nil, fmt.Errorf("server %q: tool %q: the answer to the task start: %w", server, tool, err)
	}
	if !ok {
		fmt.Fprintf(w, "mcpgen: server %q ran tool %q at once, not as a task\n", server, tool)
		return res, nil
	}
	ref := mcpruntime.TaskRef{ID: st.ID, Tool: tool, Server: server, Session: conn.TaskSession()}
	line := func(st mcpruntime.TaskStatus) {
		s := fmt.Sprintf("mcpgen: task %s of tool %q: %s", st.ID, tool, st.State)
		if st.Message != "" {
			s += ": " + oneLine(red.Replace(st.Message))
		}
		fmt.Fprintln(w, s)
	}
	line(st)
	// expired cancels the task once ctx has ended, whether the deadline
	// passed between polls or during one: a task left running would go on
	// doing what the user gave up on.
	expired := func(st mcpruntime.TaskStatus) error {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_, cerr := conn.CancelTask(cctx, ref)
		cancel()
		what := "it was cancelled"
		if cerr != nil {
			what = "cancelling it failed: " + red.Replace(cerr.Error())
		}
		return fmt.Errorf("task %s of tool %q did not end in time (%w); %s", st.ID, tool, context.Cause(ctx), what)
	}
	last := st
	for !st.State.Terminal() {
		d := st.PollInterval
		if d <= 0 {
			d = taskPoll
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, expired(st)
		case <-t.C:
		}
		next, err := conn.TaskStatus(ctx, ref)
		if err != nil {
			if ctx.Err() != nil {
				return nil, expired(st)
			}
			return nil, err
		}
		st = next
		if st.State != last.State || st.Message != last.Message {
			line(st)
		}
		last = st
	}
	switch {
	case st.State == mcpruntime.TaskCancelled:
		return nil, fmt.Errorf("task %s of tool %q was cancelled", st.ID, tool)
	case st.Err != nil:
		return nil, fmt.Errorf("task %s of tool %q failed: %w", st.ID, tool, st.Err)
	case st.Result != nil:
		return st.Result, nil
	}
	res, err = conn.TaskResult(ctx, ref)
	var pe *mcpruntime.ProtocolError
	if errors.As(err, &pe) && st.State == mcpruntime.TaskFailed {
		return nil, fmt.Errorf("task %s of tool %q failed: %w", st.ID, tool, err)
	}
	return res, err
}
