// Quickstart is a small MCP resource server built with mcpres, meant to be
// copied as the starting point of your own.
//
// It shows how to:
//
//   - register static resources in a [resource.Registry]: plain text,
//     markdown, JSON, and a PNG image embedded with go:embed, each with a
//     name, title, description, MIME type and size;
//   - register a resource template, quickstart://greetings/{name}, whose
//     read function receives the variable already percent-decoded (reading
//     quickstart://greetings/Ada%20Lovelace greets "Ada Lovelace"), and
//     which offers completions for {name};
//   - make a go-sdk server that serves the registry with
//     [resource.Registry.NewServer], and serve it over stdio (the default)
//     or streamable HTTP.
//
// Run it over stdio, the way MCP hosts launch servers:
//
//	go run ./examples/quickstart
//
// or over streamable HTTP, as http://127.0.0.1:8080:
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
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logo is a 16x16 PNG served as quickstart://static/logo.png.
//
//go:embed logo.png
var logo []byte

const (
	helloText = "Hello from the mcpres quickstart server!\n"

	guideMarkdown = `# mcpres quickstart

This server shows the resources an MCP host can read:

- **hello.txt**: plain text
- **guide.md**: this guide
- **settings.json**: JSON
- **logo.png**: a PNG image
- **greetings/{name}**: a template; try ` + "`quickstart://greetings/Ada%20Lovelace`" + `
`

	settingsJSON = `{
  "theme": "light",
  "language": "en",
  "features": {"greetings": true, "maxNames": 5}
}
`
)

// terminalHint is the line the server prints on stderr when it serves
// stdio and its stdin is a terminal.
const terminalHint = "quickstart: serving MCP on stdin/stdout for an MCP host. Try: npx @modelcontextprotocol/inspector go run ./examples/quickstart" +
	" (or -http 127.0.0.1:8080 and http://127.0.0.1:8080/mcp). Ctrl-C quits."

// names are the values offered when completing {name} in the greetings
// template.
var names = []string{"Ada Lovelace", "Alan Turing", "Grace Hopper", "Katherine Johnson", "Ken Thompson"}

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on `addr` (such as 127.0.0.1:8080) instead of stdio")
	flag.Parse()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*httpAddr, logger); err != nil {
		logger.Error("server failed", "error", err)
		os.Exit(1)
	}
}

// run serves the quickstart's resources over stdio, or over streamable HTTP
// on httpAddr if it is set, until the client hangs up (on stdio) or the
// process is interrupted.
func run(httpAddr string, logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	reg, err := newRegistry(logger)
	if err != nil {
		return err
	}
	defer reg.Close() // after the server has stopped
	server, err := reg.NewServer(&mcp.Implementation{Name: "quickstart", Title: "mcpres quickstart", Version: "v0.1.0"}, nil)
	if err != nil {
		return err
	}

	if httpAddr != "" {
		return serveHTTP(ctx, server, httpAddr, logger)
	}
	if isTerminal(os.Stdin) {
		// A person started the server in a shell, not a host through
		// pipes: say what to do rather than wait in silence.
		fmt.Fprintln(os.Stderr, terminalHint)
	}
	err = server.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil // interrupted
	}
	return err
}

// newRegistry returns a registry holding the quickstart's resources.
func newRegistry(logger *slog.Logger) (*resource.Registry, error) {
	reg, err := resource.NewRegistry(&resource.Options{Logger: logger})
	if err != nil {
		return nil, err
	}

	// Static resources: metadata, and a read function. resource.Text and
	// resource.Bytes serve fixed content; the registry fills in each
	// content's URI and MIME type from the metadata.
	statics := []struct {
		res  *mcp.Resource
		read resource.ReadFunc
	}{
		{&mcp.Resource{
			URI: "quickstart://static/hello.txt", Name: "hello.txt", Title: "Hello",
			Description: "A plain-text greeting.", MIMEType: "text/plain", Size: int64(len(helloText)),
		}, resource.Text(helloText)},
		{&mcp.Resource{
			URI: "quickstart://static/guide.md", Name: "guide.md", Title: "Guide",
			Description: "What this server offers, in markdown.", MIMEType: "text/markdown", Size: int64(len(guideMarkdown)),
		}, resource.Text(guideMarkdown)},
		{&mcp.Resource{
			URI: "quickstart://static/settings.json", Name: "settings.json", Title: "Settings",
			Description: "Example settings, as JSON.", MIMEType: "application/json", Size: int64(len(settingsJSON)),
		}, resource.Text(settingsJSON)},
		{&mcp.Resource{
			URI: "quickstart://static/logo.png", Name: "logo.png", Title: "Logo",
			Description: "A 16x16 PNG logo.", MIMEType: "image/png", Size: int64(len(logo)),
		}, resource.Bytes(logo)},
	}
	for _, s := range statics {
		if err := reg.Add(s.res, s.read); err != nil {
			reg.Close()
			return nil, err
		}
	}

	// A template: one read function for every URI it matches.
	err = reg.AddTemplate(&mcp.ResourceTemplate{
		URITemplate: "quickstart://greetings/{name}",
		Name:        "greeting",
		Title:       "Greeting",
		Description: "A greeting for {name}; percent-encode spaces as %20.",
		MIMEType:    "text/plain",
	}, readGreeting, resource.WithCompleter("name", completeName))
	if err != nil {
		reg.Close()
		return nil, err
	}
	return reg, nil
}

// readGreeting reads quickstart://greetings/{name}. vars holds name
// percent-decoded: "Ada%20Lovelace" arrives as "Ada Lovelace".
func readGreeting(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
	name := vars.Get("name")
	if name == "" {
		// quickstart://greetings/ matches with an empty name. ErrNotFound
		// is answered exactly like an unknown URI.
		return nil, resource.ErrNotFound
	}
	text := fmt.Sprintf("Hello, %s!\n", name)
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
}

// completeName proposes the names that start with what the user has typed,
// ignoring case.
func completeName(ctx context.Context, partial string, bound map[string]string) ([]string, error) {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(strings.ToLower(n), strings.ToLower(partial)) {
			out = append(out, n)
		}
	}
	return out, nil
}

// Limits of the HTTP server, for a server reachable by clients it does not
// trust. WriteTimeout stays 0 (none): streamable HTTP answers with event
// streams that stay open as long as the client listens (a
// subscriptions/listen request), and a write deadline would cut them off.
const (
	// readHeaderTimeout bounds how long a client may take to send a
	// request's headers, so that one that trickles them (slowloris) cannot
	// hold a connection.
	readHeaderTimeout = 10 * time.Second
	// readTimeout bounds reading a whole request, headers and body. net/http
	// lifts the read deadline once the body has been read, so it does not
	// end a response that streams for longer.
	readTimeout = 30 * time.Second
	// idleTimeout closes a keep-alive connection that waits this long for
	// its next request.
	idleTimeout = 2 * time.Minute
	// maxHeaderBytes caps the size of a request's headers (net/http's
	// default is 1 MiB).
	maxHeaderBytes = 64 << 10
)

// httpHandler returns the handler that serves server over stateless
// streamable HTTP.
func httpHandler(server *mcp.Server) http.Handler {
	// Stateless serves each request on its own, and is how go-sdk serves
	// protocol 2026-07-28 over HTTP; older clients are served too. It rules
	// out server-initiated messages outside a request (list_changed,
	// resource updates): drop it if you need those for older clients.
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{
			Stateless: true,
			// A 2026-07-28 request ends with its HTTP request: when the
			// client cancels it or hangs up, the read function's context is
			// cancelled. (Requests of older protocols run to completion.)
			PropagateRequestCancellation: true,
		})
}

// serveHTTP serves server over streamable HTTP on addr until ctx is done.
func serveHTTP(ctx context.Context, server *mcp.Server, addr string, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           httpHandler(server),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
	logger.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Let requests in flight finish, then close whatever connections are
	// left (an HTTP client may hold one open that never sends a request).
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return srv.Close()
	}
	return nil
}
