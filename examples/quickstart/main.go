// Quickstart is a small MCP resource server built with mcpres, meant to be
// copied as the starting point of your own.
//
// It shows how to (the resources are in package catalog, next to this
// file, which the mcp-go example serves too):
//
//   - register static resources in a [resource.Registry]: plain text,
//     markdown, JSON, and a PNG image embedded with go:embed, each with a
//     name, title, description, MIME type and size;
//   - report changes: quickstart://clock holds the time of the server's
//     last tick, and every tick (-tick, 10 s by default) is reported with
//     [resource.Registry.Changed], so that clients subscribed to it are
//     sent notifications/resources/updated;
//   - register a resource template, quickstart://greetings/{name}, whose
//     read function receives the variable already percent-decoded (reading
//     quickstart://greetings/Ada%20Lovelace greets "Ada Lovelace"), which
//     offers completions for {name}, and whose existence check
//     ([resource.WithExists]) refuses subscriptions to a greeting with no
//     name; the guide names one of its URIs, built with
//     [resource.Registry.Expand], which percent-encodes it as clients send
//     it;
//   - make a go-sdk server that serves the registry with
//     [resource.Registry.NewServer], and serve it over stdio (the default)
//     or over streamable HTTP with [serve.ListenAndServe], which serves
//     clients of every protocol version, with their notifications, on
//     /mcp;
//   - encrypt list cursors with keys given in a file (-cursor-keys) or in
//     $MCPRES_CURSOR_KEYS, so that a client's walk through a paged
//     resources/list (-page-size) survives a restart of the server.
//
// Run it over stdio, the way MCP hosts launch servers:
//
//	go run ./examples/quickstart
//
// or over streamable HTTP, as http://127.0.0.1:8080/mcp:
//
//	go run ./examples/quickstart -http 127.0.0.1:8080
//
// Logs go to stderr: on stdio, stdout carries the protocol. The HTTP server
// has no authentication; keep it on a loopback address.
//
// Started by hand in a terminal, where it would wait silently for a host's
// messages, it first prints a line on stderr saying how to try it.
//
// To use it from Claude Desktop, add it to claude_desktop_config.json (or
// give a built binary's path as "command" and no "args"):
//
//	{
//	  "mcpServers": {
//	    "quickstart": {
//	      "command": "go",
//	      "args": ["run", "github.com/mcpres/mcpres/examples/quickstart@latest"]
//	    }
//	  }
//	}
//
// To use it from VS Code, add it to .vscode/mcp.json:
//
//	{
//	  "servers": {
//	    "quickstart": {
//	      "type": "stdio",
//	      "command": "go",
//	      "args": ["run", "github.com/mcpres/mcpres/examples/quickstart@latest"]
//	    }
//	  }
//	}
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/examples/quickstart/catalog"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultTick is how often the clock ticks, by default.
const defaultTick = 10 * time.Second

// terminalHint is the line the server prints on stderr when it serves
// stdio and its stdin is a terminal.
const terminalHint = "quickstart: serving MCP on stdin/stdout for an MCP host. Try: npx @modelcontextprotocol/inspector go run ./examples/quickstart" +
	" (or -http 127.0.0.1:8080 and http://127.0.0.1:8080/mcp). Ctrl-C quits."

// config is what the command line chooses.
type config struct {
	httpAddr   string
	cursorKeys string
	pageSize   int
	tick       time.Duration
}

func main() {
	var cfg config
	flag.StringVar(&cfg.httpAddr, "http", "", "serve streamable HTTP on `addr` (such as 127.0.0.1:8080), at /mcp, instead of stdio")
	flag.StringVar(&cfg.cursorKeys, "cursor-keys", "", "read the keys of list cursors from `file` (one base64 key a line, the first in use); else $"+cursor.KeysEnv+"; else a random key")
	flag.IntVar(&cfg.pageSize, "page-size", 0, "resources per resources/list page (0: the registry's default, 100)")
	flag.DurationVar(&cfg.tick, "tick", defaultTick, "how often quickstart://clock changes")
	flag.Parse()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if cfg.tick <= 0 {
		logger.Error("-tick must be positive")
		os.Exit(2)
	}
	if err := run(cfg, logger); err != nil {
		logger.Error("server failed", "error", err)
		os.Exit(1)
	}
}

// run serves the quickstart's resources over stdio, or over streamable HTTP
// on cfg.httpAddr if it is set, until the client hangs up (on stdio) or the
// process is interrupted.
func run(cfg config, logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if cfg.httpAddr == "" && isTerminal(os.Stdin) {
		// A person started the server in a shell, not a host through
		// pipes: say what to do rather than wait in silence.
		fmt.Fprintln(os.Stderr, terminalHint)
	}

	// List cursors are encrypted with the keys of -cursor-keys, else of
	// $MCPRES_CURSOR_KEYS, else a random key: the log says which, with a
	// warning over HTTP, whose clients a restart or another replica would
	// hand a cursor it refuses (on stdio the session ends with the process).
	codec, keysFrom, err := cursor.LoadCodec(cfg.cursorKeys, cursor.KeysEnv, nil)
	if err != nil {
		return err
	}
	cursor.LogKeys(logger, keysFrom, cfg.httpAddr != "", "-cursor-keys FILE or $"+cursor.KeysEnv)
	// The resources, in package catalog next to this file.
	clk := catalog.NewClock()
	reg, err := catalog.NewRegistry(&resource.Options{Logger: logger, Cursors: codec, PageSize: cfg.pageSize}, clk)
	if err != nil {
		return err
	}
	defer reg.Close() // after the server and the clock have stopped
	server, err := reg.NewServer(&mcp.Implementation{Name: "quickstart", Title: "mcpres quickstart", Version: "v0.1.0"}, nil)
	if err != nil {
		return err
	}

	// The clock ticks until run returns.
	tickCtx, stopTicks := context.WithCancel(ctx)
	var ticking sync.WaitGroup
	ticking.Go(func() { clk.Run(tickCtx, reg, cfg.tick, logger) })
	defer ticking.Wait()
	defer stopTicks()

	if cfg.httpAddr != "" {
		return serve.ListenAndServe(ctx, cfg.httpAddr, server, &serve.Options{Logger: logger, Registry: reg})
	}
	err = server.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil // interrupted
	}
	return err
}
