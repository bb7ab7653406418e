// Mcpgo is the quickstart's resources served on a mark3labs/mcp-go
// server: the same registry, wired into server.NewMCPServer with one
// option, mcpgo.WithRegistry, and served over mcp-go's own stdio and
// streamable HTTP transports.
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
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logo is a 16x16 PNG served as quickstart://static/logo.png.
//
//go:embed logo.png
var logo []byte

const (
	greetingTemplate = "quickstart://greetings/{name}"
	clockURI         = "quickstart://clock"
	defaultTick      = 10 * time.Second
)

const (
	helloText = "Hello from the mcpres quickstart server, on mcp-go!\n"
	guideText = `# mcpres on mcp-go

This server shows the resources an MCP host can read:

- **hello.txt**: plain text
- **guide.md**: this guide
- **settings.json**: JSON
- **logo.png**: a PNG image
- **clock**: the time of the server's last tick; subscribe to it to be told of each tick
- **greetings/{name}**: a template; try ` + "`quickstart://greetings/Ada%20Lovelace`" + `
`
	settingsJSON = `{
  "theme": "light",
  "language": "en",
  "features": {"greetings": true, "maxNames": 5}
}
`
)

// names are the values offered when completing {name}.
var names = []string{"Ada Lovelace", "Alan Turing", "Grace Hopper", "Katherine Johnson", "Ken Thompson"}

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

	clk := &clock{last: time.Now()}
	reg, err := newRegistry(&resource.Options{Logger: logger, PageSize: pageSize}, clk)
	if err != nil {
		return err
	}
	defer reg.Close() // after the server and the clock have stopped

	s := server.NewMCPServer("mcpgo-quickstart", "v0.1.0", mcpgo.WithRegistry(reg))

	tickCtx, stopTicks := context.WithCancel(ctx)
	var ticking sync.WaitGroup
	ticking.Go(func() { clk.run(tickCtx, reg, tick, logger) })
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

// newRegistry returns a registry configured by opts, holding the
// resources; clk is quickstart://clock.
func newRegistry(opts *resource.Options, clk *clock) (*resource.Registry, error) {
	reg, err := resource.NewRegistry(opts)
	if err != nil {
		return nil, err
	}
	err = reg.AddTemplate(&mcp.ResourceTemplate{
		URITemplate: greetingTemplate,
		Name:        "greeting",
		Title:       "Greeting",
		Description: "A greeting for {name}; percent-encode spaces as %20.",
		MIMEType:    "text/plain",
	}, readGreeting, resource.WithCompleter("name", completeName), resource.WithExists(greetingExists))
	if err != nil {
		reg.Close()
		return nil, err
	}
	statics := []struct {
		res  *mcp.Resource
		read resource.ReadFunc
	}{
		{&mcp.Resource{URI: "quickstart://static/hello.txt", Name: "hello.txt", Title: "Hello",
			Description: "A plain-text greeting.", MIMEType: "text/plain", Size: int64(len(helloText))}, resource.Text(helloText)},
		{&mcp.Resource{URI: "quickstart://static/guide.md", Name: "guide.md", Title: "Guide",
			Description: "What this server offers, in markdown.", MIMEType: "text/markdown", Size: int64(len(guideText))}, resource.Text(guideText)},
		{&mcp.Resource{URI: "quickstart://static/settings.json", Name: "settings.json", Title: "Settings",
			Description: "Example settings, as JSON.", MIMEType: "application/json", Size: int64(len(settingsJSON))}, resource.Text(settingsJSON)},
		{&mcp.Resource{URI: "quickstart://static/logo.png", Name: "logo.png", Title: "Logo",
			Description: "A 16x16 PNG logo.", MIMEType: "image/png", Size: int64(len(logo))}, resource.Bytes(logo)},
		{&mcp.Resource{URI: clockURI, Name: "clock", Title: "Clock",
			Description: "The time of the server's last tick, which changes at every tick; subscribe to be told.", MIMEType: "text/plain"}, clk.read},
	}
	for _, s := range statics {
		if err := reg.Add(s.res, s.read); err != nil {
			reg.Close()
			return nil, err
		}
	}
	return reg, nil
}

// readGreeting reads quickstart://greetings/{name}, name percent-decoded.
func readGreeting(_ context.Context, _ *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
	name := vars.Get("name")
	if name == "" {
		return nil, resource.ErrNotFound
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: fmt.Sprintf("Hello, %s!\n", name)}}}, nil
}

// greetingExists reports whether the greeting vars names exists: every
// name but the empty one has one.
func greetingExists(_ context.Context, vars resource.Vars) (bool, error) {
	return vars.Get("name") != "", nil
}

// completeName proposes the names that start with what the user has
// typed, ignoring case.
func completeName(_ context.Context, partial string, _ map[string]string) ([]string, error) {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(strings.ToLower(n), strings.ToLower(partial)) {
			out = append(out, n)
		}
	}
	return out, nil
}

// A clock is what quickstart://clock reads: how many times it has ticked,
// and when it last did.
type clock struct {
	mu    sync.Mutex
	ticks int
	last  time.Time
}

func (c *clock) read(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	c.mu.Lock()
	text := fmt.Sprintf("tick %d at %s\n", c.ticks, c.last.UTC().Format(time.RFC3339Nano))
	c.mu.Unlock()
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
}

// run ticks every interval until ctx is done, reporting each tick to
// reg, which notifies quickstart://clock's subscribers.
func (c *clock) run(ctx context.Context, reg *resource.Registry, interval time.Duration, logger *slog.Logger) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticker.C:
			c.mu.Lock()
			c.ticks++
			c.last = now
			c.mu.Unlock()
			if err := reg.Changed(clockURI); err != nil {
				logger.Error("reporting a change", "uri", clockURI, "error", err)
			}
		}
	}
}
