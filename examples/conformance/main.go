// Conformance is the MCP server that the official MCP conformance suite
// (npm package @modelcontextprotocol/conformance) tests mcpres against.
//
// Every resource it serves is built with mcpres alone: a
// [resource.Registry], served by the go-sdk server that
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
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The URIs the conformance scenarios read.
const (
	staticTextURI = "test://static-text"
	staticBinURI  = "test://static-binary"
	templateURI   = "test://template/{id}/data"
	watchedURI    = "test://watched-resource"
)

// pngBase64 is the 1x1 red PNG that the reference servers serve as
// test://static-binary.
const pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

// ids are the values offered when completing {id} in the template.
var ids = []string{"1", "2", "3", "42", "123", "1000"}

// promptArgValues are the values offered when completing the arguments of
// test_prompt_with_arguments.
var promptArgValues = map[string][]string{
	"arg1": {"test", "testing", "tested", "value1"},
	"arg2": {"alpha", "beta", "gamma", "value2"},
}

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

	w := &watched{}
	server, reg, err := newServer(w, logger)
	if err != nil {
		return err
	}
	defer reg.Close() // after the server has stopped
	// The resource changes until run returns, before the registry closes.
	changeCtx, stopChanges := context.WithCancel(ctx)
	var changing sync.WaitGroup
	changing.Go(func() { w.run(changeCtx, reg, update, logger) })
	defer changing.Wait()
	defer stopChanges()

	if httpAddr != "" {
		return serve.ListenAndServe(ctx, httpAddr, server, &serve.Options{Logger: logger})
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
func newServer(w *watched, logger *slog.Logger) (*mcp.Server, *resource.Registry, error) {
	reg, err := newRegistry(w, logger)
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
	server.AddPrompt(&mcp.Prompt{
		Name:        "test_prompt_with_arguments",
		Title:       "Prompt With Arguments",
		Description: "A prompt with two required arguments, which completion/complete completes",
		Arguments: []*mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
	}, getPrompt)
	return server, reg, nil
}

// newRegistry returns a registry holding the conformance resources.
func newRegistry(w *watched, logger *slog.Logger) (*resource.Registry, error) {
	png, err := base64.StdEncoding.DecodeString(pngBase64)
	if err != nil {
		return nil, err
	}
	reg, err := resource.NewRegistry(&resource.Options{Logger: logger})
	if err != nil {
		return nil, err
	}

	// Fixed content may be cached for a while; the watched resource keeps
	// the default hint (stale at once), since it changes.
	fixed := resource.WithCache(resource.Cache{TTL: time.Hour, Scope: resource.Public})
	statics := []struct {
		res  *mcp.Resource
		read resource.ReadFunc
		opts []resource.ResourceOption
	}{
		{&mcp.Resource{
			URI: staticTextURI, Name: "static-text",
			Description: "A static text resource for testing", MIMEType: "text/plain",
		}, resource.Text("This is the content of the static text resource."), []resource.ResourceOption{fixed}},
		{&mcp.Resource{
			URI: staticBinURI, Name: "static-binary",
			Description: "A static binary resource (image) for testing", MIMEType: "image/png", Size: int64(len(png)),
		}, resource.Bytes(png), []resource.ResourceOption{fixed}},
		{&mcp.Resource{
			URI: watchedURI, Name: "watched-resource",
			Description: "A resource that is reported updated every few seconds; subscribe to it", MIMEType: "text/plain",
		}, w.read, nil},
	}
	for _, s := range statics {
		if err := reg.Add(s.res, s.read, s.opts...); err != nil {
			reg.Close()
			return nil, err
		}
	}

	err = reg.AddTemplate(&mcp.ResourceTemplate{
		URITemplate: templateURI,
		Name:        "template",
		Description: "A resource template with parameter substitution",
		MIMEType:    "application/json",
	}, readTemplate, resource.WithCompleter("id", completeID), resource.WithExists(templateExists), fixed)
	if err != nil {
		reg.Close()
		return nil, err
	}
	return reg, nil
}

// readTemplate reads test://template/{id}/data: a JSON object that holds
// the id.
func readTemplate(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
	id := vars.Get("id")
	if id == "" {
		return nil, resource.ErrNotFound
	}
	data, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: string(data)}}}, nil
}

// templateExists reports whether the instance of test://template/{id}/data
// that vars names exists, as readTemplate finds it: every id but the empty
// one.
func templateExists(ctx context.Context, vars resource.Vars) (bool, error) {
	return vars.Get("id") != "", nil
}

// completeID proposes the ids that start with what the user has typed.
func completeID(ctx context.Context, partial string, bound map[string]string) ([]string, error) {
	return withPrefix(ids, partial), nil
}

// completePrompt is the server's completion handler, for the references
// the registry does not answer: it completes the arguments of
// test_prompt_with_arguments.
func completePrompt(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	if p.Ref == nil { // go-sdk rejects this before it gets here, by default
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs a ref"}
	}
	if p.Ref.Type != "ref/prompt" || p.Ref.Name != "test_prompt_with_arguments" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("no completions for %s %q", p.Ref.Type, p.Ref.Name+p.Ref.URI)}
	}
	values, ok := promptArgValues[p.Argument.Name]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("prompt %q has no argument %q", p.Ref.Name, p.Argument.Name)}
	}
	matches := withPrefix(values, p.Argument.Value)
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: matches, Total: len(matches)}}, nil
}

// withPrefix returns the values that start with prefix, never nil (values
// must be an array on the wire).
func withPrefix(values []string, prefix string) []string {
	out := []string{}
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

// getPrompt answers prompts/get for test_prompt_with_arguments.
func getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args := req.Params.Arguments
	return &mcp.GetPromptResult{
		Description: "A prompt with arguments",
		Messages: []*mcp.PromptMessage{{
			Role: "user",
			Content: &mcp.TextContent{
				Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"]),
			},
		}},
	}, nil
}

// watched is test://watched-resource: its content carries a version that
// run bumps, reporting each change to the resource's subscribers.
type watched struct {
	version atomic.Int64
}

func (w *watched) read(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	text := fmt.Sprintf("Watched resource content, version %d", w.version.Load())
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
}

// run changes the resource every interval and tells reg, until ctx is
// done.
func (w *watched) run(ctx context.Context, reg *resource.Registry, interval time.Duration, logger *slog.Logger) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			w.version.Add(1)
			// Changed fails for a URI no client could subscribe to:
			// say so rather than notify no one in silence.
			if err := reg.Changed(watchedURI); err != nil {
				logger.Error("reporting a change", "uri", watchedURI, "error", err)
			}
		}
	}
}
