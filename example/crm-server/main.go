// Command crm-server serves the example CRM over MCP: on stdio by default,
// or over streamable HTTP with -http.
//
//	crm-server                      # stdio
//	crm-server -http 127.0.0.1:8080 # streamable HTTP at http://127.0.0.1:8080/mcp
//
// With -http, the endpoint URL is printed on stdout once the server is
// listening (use port 0 to pick a free port).
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
	"syscall"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgen/mcpgen/example/crm"
)

func main() {
	log.SetPrefix("crm-server: ")
	log.SetFlags(0)
	addr := flag.String("http", "", "serve streamable HTTP on `addr` instead of stdio")
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	s := crm.NewServer()
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
	mux.Handle("/mcp", server.NewStreamableHTTPServer(s))
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
