// Conformance is the MCP server that the official MCP conformance suite
// (npm package @modelcontextprotocol/conformance) tests mcpres against.
//
// Every resource it serves is built with mcpres alone: the registry of
// package internal/conformance (which examples/mcpgo/conformance serves on
// mark3labs/mcp-go), served by the go-sdk server that
// [resource.Registry.NewServer] makes. It offers what the suite's resource
// scenarios expect, as go-sdk's reference "everything-server" does:
//
//   - test://static-text, text/plain;
//   - test://static-binary, image/png: a 1x1 PNG, served as a blob;
//   - the template test://template/{id}/data, application/json, whose text
//     contains the id, with completions for {id}; every id but the empty
//     one exists (resource.WithExists);
//   - test://watched-resource, text/plain, which accepts subscriptions and
//     is reported updated every few seconds (-update), to clients of every
//     protocol version.
//
// Around them it has only what the other scenarios it is run with need:
// one tool (test_simple_text), so that tools/list has an entry, and one
// prompt (test_prompt_with_arguments, with arguments arg1 and arg2) whose
// arguments the server's own completion handler completes. The registry
// answers completion/complete for "ref/resource" references itself and
// leaves "ref/prompt" ones to that handler.
//
// Run it over stdio, or over streamable HTTP at http://ADDR/mcp:
//
//	go run ./examples/conformance
//	go run ./examples/conformance -http 127.0.0.1:8080
//
// Over HTTP, [serve.ListenAndServe] serves clients of every protocol
// version on /mcp (other paths are 404): a 2025-06-18 or 2025-11-25 client
// gets a session, and its notifications on the session's GET stream; a
// 2026-07-28 client, which the suite speaks as one POST per request, needs
// no session, and gets its notifications on its subscriptions/listen
// stream. The server has the limits package serve sets for every mcpres
// server (see [serve.Options]). With port 0 the system picks a free port;
// the log line "serving MCP over streamable HTTP" gives the URL (package
// serve writes it). Logs go to stderr.
//
// Its lists fit in one page (three resources, one template), so it issues
// no list cursors, and needs no cursor keys.
//
// scripts/conformance.sh builds this server, starts it with
// -http 127.0.0.1:0, reads its URL from that log line, runs the pinned
// suite versions against it, and fails unless every check passes.
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

	"github.com/mcpres/mcpres/internal/conformance"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on `addr` (such as 127.0.0.1:8080, or 127.0.0.1:0 for any free port) instead of stdio")
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
	server, reg, err := newServer(w, logger)
	if err != nil {
		return err
	}
	defer reg.Close() // after the server has stopped
	// The resource changes until run returns, before the registry closes.
	changeCtx, stopChanges := context.WithCancel(ctx)
	var changing sync.WaitGroup
	changing.Go(func() { w.Run(changeCtx, reg, update, logger) })
	defer changing.Wait()
	defer stopChanges()

	if httpAddr != "" {
		return serve.ListenAndServe(ctx, httpAddr, server, &serve.Options{Logger: logger, Registry: reg})
	}
	err = server.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil // interrupted
	}
	return err
}

// newServer returns the conformance server: the registry's resources,
// with subscriptions (reg.Changed notifies the subscribers), plus the one
// tool and one prompt the suite needs. The caller closes the registry.
func newServer(w *conformance.Watched, logger *slog.Logger) (*mcp.Server, *resource.Registry, error) {
	reg, err := conformance.NewRegistry(w, &resource.Options{Logger: logger})
	if err != nil {
		return nil, nil, err
	}
	server, err := reg.NewServer(&mcp.Implementation{Name: "mcpres-conformance", Version: "v0.1.0"}, &mcp.ServerOptions{
		Logger: logger,
		// The registry answers "ref/resource" completions; the rest come
		// here.
		CompletionHandler: completePrompt,
	})
	if err != nil {
		reg.Close()
		return nil, nil, err
	}

	mcp.AddTool(server, &mcp.Tool{
		Name:        "test_simple_text",
		Description: "Returns a fixed text",
	}, func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "This is a simple text response for testing."},
		}}, nil, nil
	})
	prompt := &mcp.Prompt{
		Name:        conformance.PromptName,
		Title:       conformance.PromptTitle,
		Description: conformance.PromptDescription,
	}
	for _, arg := range conformance.PromptArguments {
		prompt.Arguments = append(prompt.Arguments, &mcp.PromptArgument{Name: arg[0], Description: arg[1], Required: true})
	}
	server.AddPrompt(prompt, getPrompt)
	return server, reg, nil
}

// completePrompt is the server's completion handler, for the references
// the registry does not answer: it completes the arguments of
// test_prompt_with_arguments.
func completePrompt(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	if p.Ref == nil { // go-sdk rejects this before it gets here, by default
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs a ref"}
	}
	if p.Ref.Type != "ref/prompt" || p.Ref.Name != conformance.PromptName {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("no completions for %s %q", p.Ref.Type, p.Ref.Name+p.Ref.URI)}
	}
	matches, ok := conformance.CompletePromptArgument(p.Argument.Name, p.Argument.Value)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("prompt %q has no argument %q", p.Ref.Name, p.Argument.Name)}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: matches, Total: len(matches)}}, nil
}

// getPrompt answers prompts/get for test_prompt_with_arguments.
func getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args := req.Params.Arguments
	return &mcp.GetPromptResult{
		Description: "A prompt with arguments",
		Messages: []*mcp.PromptMessage{{
			Role: "user",
			Content: &mcp.TextContent{
				Text: conformance.PromptText(args["arg1"], args["arg2"]),
			},
		}},
	}, nil
}
