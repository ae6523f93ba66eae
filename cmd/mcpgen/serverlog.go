package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
	"github.com/mcpgen/mcpgen/runtime/mcpgo"
)

// serverLog prints the server's log messages (notifications/message, from
// info up) on stderr during mcpgen call, one line each:
//
//	mcpgen: server "crm" log warning (logger "db"): slow query
//
// What the server sent is kept on one line with its controls shown
// (oneLine), and ${VAR} secrets are redacted; the session layer has
// scrubbed them already, and red catches what it would not know.
type serverLog struct {
	mu     sync.Mutex
	w      io.Writer
	server string
	red    replacer
}

func (h *serverLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (h *serverLog) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *serverLog) WithGroup(string) slog.Handler                { return h }

func (h *serverLog) Handle(_ context.Context, r slog.Record) error {
	level := map[slog.Level]string{slog.LevelInfo: "info", slog.LevelWarn: "warning", slog.LevelError: "error"}[r.Level]
	var logger string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "mcpLevel":
			level = a.Value.String()
		case "logger":
			logger = a.Value.String()
		}
		return true
	})
	line := fmt.Sprintf("mcpgen: server %q log %s", h.server, oneLine(h.red.Replace(level)))
	if logger != "" {
		line += ` (logger "` + oneLine(h.red.Replace(logger)) + `")`
	}
	line += ": " + oneLine(h.red.Replace(r.Message)) + "\n"
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line)
	return err
}

// progressLine prints the server's progress notifications for the call on
// stderr, one line each:
//
//	mcpgen: server "crm" progress 3/10: indexing
func progressLine(w io.Writer, server string, red replacer) func(mcpruntime.Progress) {
	var mu sync.Mutex
	return func(p mcpruntime.Progress) {
		line := fmt.Sprintf("mcpgen: server %q progress %s", server, strconv.FormatFloat(p.Progress, 'f', -1, 64))
		if p.Total > 0 {
			line += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
		}
		if p.Message != "" {
			line += ": " + oneLine(red.Replace(p.Message))
		}
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(w, line+"\n")
	}
}

// defaultsElicitation is mcpgo.ElicitDefaults for --elicit-defaults, saying
// on stderr why it declines a form.
func defaultsElicitation(w io.Writer, server string) mcpgo.ElicitationHandler {
	return func(ctx context.Context, req mcpgo.ElicitationRequest) (mcpgo.ElicitationResponse, error) {
		res, err := mcpgo.ElicitDefaults(ctx, req)
		if err == nil && res.Action == mcpgo.ElicitDecline {
			why := "it is a url-mode request"
			if _, derr := mcpgo.FormDefaults(req.Schema); derr != nil {
				why = derr.Error()
			}
			fmt.Fprintf(w, "mcpgen: declined server %q's question (--elicit-defaults): %s\n", server, oneLine(why))
		}
		return res, err
	}
}
