// Mcpgo is the quickstart's resources served on a mark3labs/mcp-go
// server: the same registry, from the quickstart's package catalog, wired
// into server.NewMCPServer with one option, mcpgo.WithRegistry, and
// served over mcp-go's own stdio and streamable HTTP transports.
//
// It serves:
//
//   - static resources: plain text, markdown, JSON, and a PNG image
//     embedded with go:embed;
//   - quickstart://clock, the time of the server's last tick, reported
//     with [resource.Registry.Changed] at every tick (-tick, 10 s by
//     default), so that clients subscribed to it (resources/subscribe,
//     or a 2026-07-28 subscriptions/listen) are told;
//   - a template, quickstart://greetings/{name}, whose read function
//     receives the variable percent-decoded, with completion for {name}.
//
// Run it over stdio, the way MCP hosts launch servers:
//
//	go run ./examples/mcpgo
//
// or over mcp-go's streamable HTTP, as http://127.0.0.1:8080/mcp:
//
//	go run ./examples/mcpgo -http 127.0.0.1:8080
//
// Logs go to stderr. The HTTP server has no authentication; keep it on a
// loopback address. What mcp-go lets the registry answer, and what it
// does not, is in the documentation of package mcpgo.
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/examples/quickstart/catalog"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
)

// defaultTick is how often quickstart://clock changes, by default.
const defaultTick = 10 * time.Second

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on `addr` (such as 127.0.0.1:8080), at /mcp, instead of stdio")
	pageSize := flag.Int("page-size", 0, "resources per resources/list page (0: the registry's default, 100)")
	tick := flag.Duration("tick", defaultTick, "how often quickstart://clock changes")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *tick <= 0 {
		logger.Error("-tick must be positive")
		os.Exit(2)
	}
	if err := run(*httpAddr, *pageSize, *tick, logger); err != nil {
		logger.Error("server failed", "error", err)
		os.Exit(1)
	}
}

// run serves the resources over stdio, or over streamable HTTP on
// httpAddr if it is set, until the client hangs up (on stdio) or the
// process is interrupted.
func run(httpAddr string, pageSize int, tick time.Duration, logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	clk := catalog.NewClock()
	reg, err := catalog.NewRegistry(&resource.Options{Logger: logger, PageSize: pageSize}, clk)
	if err != nil {
		return err
	}
	defer reg.Close() // after the server and the clock have stopped

	s := server.NewMCPServer("mcpgo-quickstart", "v0.1.0", mcpgo.WithRegistry(reg))

	tickCtx, stopTicks := context.WithCancel(ctx)
	var ticking sync.WaitGroup
	ticking.Go(func() { clk.Run(tickCtx, reg, tick, logger) })
	defer ticking.Wait()
	defer stopTicks()

	if httpAddr == "" {
		err := server.NewStdioServer(s).Listen(ctx, os.Stdin, os.Stdout)
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	// The edge (Origin, request-metadata headers, body limits, keep-alive,
	// caps per caller) stands in front of mcp-go's handler, as it does of
	// go-sdk's. mcp-go closes an idle session when the edge forgets it.
	h := server.NewStreamableHTTPServer(s, server.WithSessionIdleTTL(serve.DefaultSessionTimeout))
	defer h.Shutdown(context.Background())
	return serve.ListenAndServeHandler(ctx, httpAddr, h, &serve.Options{Logger: logger, Registry: reg})
}
