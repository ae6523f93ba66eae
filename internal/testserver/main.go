package testserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/mark3labs/mcp-go/server"
)

// ModeEnv names the environment variable that selects how Main behaves.
const ModeEnv = "MCPGEN_TESTSERVER_MODE"

// CanaryEnv is read by the "canary" mode and echoed by the "exit" mode.
const CanaryEnv = "MCPGEN_CANARY"

// PIDFileEnv, when set, names a file Main writes its process id to, so
// tests can check that the process is gone after a capture.
const PIDFileEnv = "MCPGEN_TESTSERVER_PIDFILE"

// Modes Main understands.
const (
	ModeRich     = "rich"          // the full server, paginated two items per page (default)
	ModeReversed = "reversed"      // tools listed in reverse order
	ModeEmpty    = "empty"         // no tools
	ModeCanary   = "canary"        // $MCPGEN_CANARY echoed into a tool description
	ModeDrifted  = "drifted"       // the next release: tools changed for drift checks
	ModeExit     = "exit"          // complains on stderr and exits with status 3
	ModeGarbage  = "garbage"       // answers every line with text that is not JSON-RPC
	ModeHang     = "hang"          // reads requests, never answers, ignores end of input
	ModeRaw      = "raw"           // hand-written JSON-RPC on the 2025-11-25 handshake
	ModeRepeat   = "repeat-cursor" // like raw, but tools/list returns the same cursor forever
	ModeTasks    = "tasks"         // NewTasks: tools that run as tasks
	ModeOld      = "old"           // NewTasks speaking 2024-11-05 only
)

// Main runs the stdio server for the mode in $MCPGEN_TESTSERVER_MODE and
// returns the process exit code.
func Main(stdin io.Reader, stdout, stderr io.Writer) int {
	if f := os.Getenv(PIDFileEnv); f != "" {
		if err := os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			fmt.Fprintln(stderr, "testserver:", err)
			return 1
		}
	}
	mode := os.Getenv(ModeEnv)
	if mode == "" {
		mode = ModeRich
	}
	switch mode {
	case ModeRich, ModeReversed, ModeEmpty, ModeCanary, ModeDrifted:
		o := Options{PageSize: 2}
		switch mode {
		case ModeReversed:
			o = Options{Reversed: true}
		case ModeEmpty:
			o.NoTools = true
		case ModeCanary:
			o.Canary = os.Getenv(CanaryEnv)
		case ModeDrifted:
			o.Drifted = true
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		s := server.NewStdioServer(New(o))
		if err := s.Listen(ctx, stdin, stdout); err != nil && ctx.Err() == nil && err != io.EOF {
			fmt.Fprintln(stderr, "testserver:", err)
			return 1
		}
		return 0
	case ModeExit:
		fmt.Fprintf(stderr, "testserver: starting with token=%s\n", os.Getenv(CanaryEnv))
		fmt.Fprintln(stderr, "testserver: fatal: cannot open database /nonexistent/crm.db")
		return 3
	case ModeGarbage:
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			fmt.Fprintln(stdout, "Welcome to the CRM shell! Type 'help' for commands.")
		}
		return 0
	case ModeHang:
		_, _ = io.Copy(io.Discard, stdin)
		select {}
	case ModeRaw, ModeRepeat:
		return fake(stdin, stdout, mode == ModeRepeat)
	case ModeTasks, ModeOld:
		version := ""
		if mode == ModeOld {
			version = "2024-11-05"
		}
		if err := ServeStdioInlining(NewTasks(version), stdin, stdout); err != nil {
			fmt.Fprintln(stderr, "testserver:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "testserver: unknown mode %q\n", mode)
	return 2
}

// RawTools is the tools/list result the raw mode sends, in one page. The
// second tool's input schema has a type array at the top, which mcp-go's
// client cannot decode; the capture must keep it all the same.
const RawTools = `{"tools":[` +
	`{"name":"echo","description":"Echo text back.","inputSchema":{"type":"object","title":"Echo","properties":{"text":{"type":"string"}},"required":["text"],"if":{"properties":{"text":{"const":""}}},"then":{"description":"empty"}},"x-vendor":{"kept":true}},` +
	`{"name":"maybe","inputSchema":{"type":["object","null"],"properties":{}},"annotations":{"readOnlyHint":true}}` +
	`]}`

// fake speaks JSON-RPC by hand, for protocol behaviour mcp-go's server
// cannot produce: a legacy-only handshake, schemas the client cannot decode,
// and a repeated pagination cursor.
func fake(stdin io.Reader, stdout io.Writer, repeat bool) int {
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	enc := json.NewEncoder(stdout)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue // notifications need no answer
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch req.Method {
		case "initialize":
			reply["result"] = json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false},"experimental":{"x":{}}},"serverInfo":{"name":"raw-fake","version":"0.1.0","title":"Raw fake"},"instructions":"Hand-written."}`)
		case "tools/list":
			if repeat {
				reply["result"] = json.RawMessage(`{"tools":[{"name":"loop","inputSchema":{"type":"object"}}],"nextCursor":"again"}`)
			} else {
				reply["result"] = json.RawMessage(RawTools)
			}
		default:
			reply["error"] = map[string]any{"code": -32601, "message": "method not found: " + req.Method}
		}
		if err := enc.Encode(reply); err != nil {
			return 1
		}
	}
	return 0
}
