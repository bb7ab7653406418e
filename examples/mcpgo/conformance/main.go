// Conformance is the MCP server that the official MCP conformance suite
// (npm package @modelcontextprotocol/conformance) tests mcpres on
// mark3labs/mcp-go against: the resources of examples/conformance, the
// very same registry (package internal/conformance), served on a server
// made with mcp-go's server.NewMCPServer and the one option
// mcpgo.WithRegistry, over mcp-go's own streamable HTTP or stdio.
//
// It serves:
//
//   - test://static-text, text/plain;
//   - test://static-binary, image/png: a 1x1 PNG, served as a blob;
//   - the template test://template/{id}/data, application/json, whose text
//     contains the id, with completions for {id};
//   - test://watched-resource, text/plain, which accepts subscriptions and
//     is reported updated every few seconds (-update);
//   - and, with mcp-go's own API, what the other scenarios it is run with
//     need: one tool (test_simple_text), so that the caching scenario's
//     tools/list has an entry, and the prompt test_prompt_with_arguments,
//     whose arguments arg1 and arg2 the completion scenario completes
//     (mcp-go's PromptCompletionProvider; the registry answers
//     "ref/resource" completions through mcpgo.WithRegistry).
//
// Run it over stdio, or over mcp-go's streamable HTTP at
// http://ADDR/mcp (other paths are 404):
//
//	go run ./examples/mcpgo/conformance
//	go run ./examples/mcpgo/conformance -http 127.0.0.1:8080
//
// With port 0 the system picks a free port; the log line "serving MCP
// over streamable HTTP" gives the URL. Logs go to stderr. The HTTP server
// has none of the limits of package serve, and no authentication: keep it
// on a loopback address.
//
// "bash scripts/conformance.sh mcp-go" builds this server, starts it
// with -http 127.0.0.1:0, reads its URL from that log line, and runs
// the pinned suite versions against it: the scenarios that mcp-go v1.2.1
// lets the registry pass (what it does not is in the documentation of
// package mcpgo).
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

	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/internal/conformance"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
)

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on `addr` (such as 127.0.0.1:8080, or 127.0.0.1:0 for any free port), at /mcp, instead of stdio")
	update := flag.Duration("update", 3*time.Second, "how often test://watched-resource is reported updated")
	flag.Parse()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *update <= 0 {
		logger.Error("-update must be positive")
		os.Exit(2)
	}
	if err := run(*httpAddr, *update, logger); err != nil {
		logger.Error("server failed", "error", err)
		os.Exit(1)
	}
}

// run serves the conformance server over stdio, or over streamable HTTP on
// httpAddr if it is set, until the client hangs up (on stdio) or the
// process is interrupted.
func run(httpAddr string, update time.Duration, logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	w := &conformance.Watched{}
	reg, err := conformance.NewRegistry(w, &resource.Options{Logger: logger})
	if err != nil {
		return err
	}
	defer reg.Close() // after the server has stopped
	s := newServer(reg)

	// The resource changes until run returns, before the registry closes.
	changeCtx, stopChanges := context.WithCancel(ctx)
	var changing sync.WaitGroup
	changing.Go(func() { w.Run(changeCtx, reg, update, logger) })
	defer changing.Wait()
	defer stopChanges()

	if httpAddr == "" {
		err := server.NewStdioServer(s).Listen(ctx, os.Stdin, os.Stdout)
		if errors.Is(err, context.Canceled) {
			return nil // interrupted
		}
		return err
	}

	h := server.NewStreamableHTTPServer(s, server.WithSessionIdleTTL(serve.DefaultSessionTimeout))
	defer h.Shutdown(context.Background())
	return serve.ListenAndServeHandler(ctx, httpAddr, h, &serve.Options{Logger: logger, Registry: reg})
}

// newServer returns the mcp-go server of the registry's resources, with
// the prompt the completion scenario completes and the tool the caching
// scenario lists.
func newServer(reg *resource.Registry) *server.MCPServer {
	s := server.NewMCPServer("mcpres-conformance-mcpgo", "v0.1.0",
		mcpgo.WithRegistry(reg),
		server.WithPromptCapabilities(false),
		server.WithToolCapabilities(false),
		server.WithPromptCompletionProvider(promptCompleter{}),
	)
	opts := []mcpgomcp.PromptOption{
		mcpgomcp.WithPromptTitle(conformance.PromptTitle),
		mcpgomcp.WithPromptDescription(conformance.PromptDescription),
	}
	for _, arg := range conformance.PromptArguments {
		opts = append(opts, mcpgomcp.WithArgument(arg[0], mcpgomcp.ArgumentDescription(arg[1]), mcpgomcp.RequiredArgument()))
	}
	s.AddPrompt(mcpgomcp.NewPrompt(conformance.PromptName, opts...), getPrompt)
	s.AddTool(mcpgomcp.NewTool("test_simple_text", mcpgomcp.WithDescription("Returns a fixed text")),
		func(context.Context, mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
			return mcpgomcp.NewToolResultText("This is a simple text response for testing."), nil
		})
	return s
}

// promptCompleter completes the arguments of test_prompt_with_arguments.
// mcp-go sends its error as -32603.
type promptCompleter struct{}

func (promptCompleter) CompletePromptArgument(_ context.Context, name string, arg mcpgomcp.CompleteArgument, _ mcpgomcp.CompleteContext) (*mcpgomcp.Completion, error) {
	if name != conformance.PromptName {
		return nil, fmt.Errorf("no prompt %q", name)
	}
	values, ok := conformance.CompletePromptArgument(arg.Name, arg.Value)
	if !ok {
		return nil, fmt.Errorf("prompt %q has no argument %q", name, arg.Name)
	}
	return &mcpgomcp.Completion{Values: values, Total: len(values)}, nil
}

// getPrompt answers prompts/get for test_prompt_with_arguments.
func getPrompt(_ context.Context, req mcpgomcp.GetPromptRequest) (*mcpgomcp.GetPromptResult, error) {
	args := req.Params.Arguments
	return mcpgomcp.NewGetPromptResult("A prompt with arguments", []mcpgomcp.PromptMessage{
		mcpgomcp.NewPromptMessage(mcpgomcp.RoleUser, mcpgomcp.NewTextContent(conformance.PromptText(args["arg1"], args["arg2"]))),
	}), nil
}
