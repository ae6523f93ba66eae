// Command crm-server serves the example CRM over MCP: on stdio by default,
// or over streamable HTTP with -http.
//
//	crm-server                      # stdio
//	crm-server -http 127.0.0.1:8080 # streamable HTTP at http://127.0.0.1:8080/mcp
//	crm-server -fault hang          # misbehave, for testing clients
//
// A call that a fault makes hang is announced on stderr as it starts
// hanging ("crm-server: get_contact contact_id=C-1001: hanging until
// cancelled"), so tests
// can wait for the server to hold it.
//
// With -http, the endpoint URL is printed on stdout once the server is
// listening (use port 0 to pick a free port). For tests, CRM_SERVER_META_LOG
// names a file to which each request's method, target and params._meta are
// appended, one JSON line each (-http only): where clients propagate
// trace context.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgen/mcpgen/example/crm"
)

func main() {
	log.SetPrefix("crm-server: ")
	log.SetFlags(0)
	addr := flag.String("http", "", "serve streamable HTTP on `addr` instead of stdio")
	var faults crm.Faults
	flag.Func("fault", "misbehave, for testing clients (repeatable): malformed-output, hang, hang-after=TOOL, newer-release, or without=TOOL", func(v string) error {
		switch name, tool, _ := strings.Cut(v, "="); {
		case v == "malformed-output":
			faults.MalformedOutput = true
		case v == "hang":
			faults.Hang = true
		case name == "hang-after" && tool != "":
			faults.HangAfter = append(faults.HangAfter, tool)
		case v == "newer-release":
			faults.NewerRelease = true
		case name == "without" && tool != "":
			faults.Without = append(faults.Without, tool)
		default:
			return fmt.Errorf("unknown fault %q", v)
		}
		return nil
	})
	faults.OnHang = func(tool string, req mcp.CallToolRequest) {
		// The ids say which call it is; other arguments (a caller's token)
		// stay out of the log.
		var ids []string
		for k, v := range req.GetArguments() {
			if strings.HasSuffix(k, "_id") {
				ids = append(ids, fmt.Sprintf(" %s=%v", k, v))
			}
		}
		slices.Sort(ids)
		log.Printf("%s%s: hanging until cancelled", tool, strings.Join(ids, ""))
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	s := crm.New().ServerWith(faults)
	if *addr == "" {
		if err := server.ServeStdio(s); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := serveHTTP(s, *addr); err != nil {
		log.Fatal(err)
	}
}

func serveHTTP(s *server.MCPServer, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	var h http.Handler = server.NewStreamableHTTPServer(s)
	if p := os.Getenv(metaLogEnv); p != "" {
		h = metaLog(h, p)
	}
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux}
	fmt.Printf("http://%s/mcp\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
