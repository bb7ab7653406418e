// Quickstart is a small MCP resource server built with mcpres, meant to be
// copied as the starting point of your own.
//
// It shows how to:
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

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logo is a 16x16 PNG served as quickstart://static/logo.png.
//
//go:embed logo.png
var logo []byte

const (
	// greetingTemplate is the URI template of the greetings.
	greetingTemplate = "quickstart://greetings/{name}"
	// clockURI is the resource that changes at every tick.
	clockURI = "quickstart://clock"
	// defaultTick is how often the clock ticks, by default.
	defaultTick = 10 * time.Second
)

const (
	helloText = "Hello from the mcpres quickstart server!\n"

	// guideFormat is the guide, in markdown; %s is the URI of a greeting.
	guideFormat = `# mcpres quickstart

This server shows the resources an MCP host can read:

- **hello.txt**: plain text
- **guide.md**: this guide
- **settings.json**: JSON
- **logo.png**: a PNG image
- **clock**: the time of the server's last tick; subscribe to it to be told of each tick
- **greetings/{name}**: a template; try ` + "`%s`" + `
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
	clk := newClock()
	reg, err := newRegistry(&resource.Options{Logger: logger, Cursors: codec, PageSize: cfg.pageSize}, clk)
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
	ticking.Go(func() { clk.run(tickCtx, reg, cfg.tick, logger) })
	defer ticking.Wait()
	defer stopTicks()

	if cfg.httpAddr != "" {
		return serve.ListenAndServe(ctx, cfg.httpAddr, server, &serve.Options{Logger: logger})
	}
	err = server.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil // interrupted
	}
	return err
}

// newRegistry returns a registry configured by opts, holding the
// quickstart's resources; clk is quickstart://clock.
func newRegistry(opts *resource.Options, clk *clock) (*resource.Registry, error) {
	reg, err := resource.NewRegistry(opts)
	if err != nil {
		return nil, err
	}

	// A template: one read function for every URI it matches. Every
	// greeting with a name exists; WithExists tells subscriptions so,
	// cheaply, without reading.
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

	// The URI of one greeting, for the guide. Expand percent-encodes it
	// as a client sends it: quickstart://greetings/Ada%20Lovelace.
	example, err := reg.Expand(greetingTemplate, "name", names[0])
	if err != nil {
		reg.Close()
		return nil, err
	}
	guide := fmt.Sprintf(guideFormat, example)

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
			Description: "What this server offers, in markdown.", MIMEType: "text/markdown", Size: int64(len(guide)),
		}, resource.Text(guide)},
		{&mcp.Resource{
			URI: "quickstart://static/settings.json", Name: "settings.json", Title: "Settings",
			Description: "Example settings, as JSON.", MIMEType: "application/json", Size: int64(len(settingsJSON)),
		}, resource.Text(settingsJSON)},
		{&mcp.Resource{
			URI: "quickstart://static/logo.png", Name: "logo.png", Title: "Logo",
			Description: "A 16x16 PNG logo.", MIMEType: "image/png", Size: int64(len(logo)),
		}, resource.Bytes(logo)},
		{&mcp.Resource{
			URI: clockURI, Name: "clock", Title: "Clock",
			Description: "The time of the server's last tick, which changes at every tick; subscribe to be told.", MIMEType: "text/plain",
		}, clk.read},
	}
	for _, s := range statics {
		if err := reg.Add(s.res, s.read); err != nil {
			reg.Close()
			return nil, err
		}
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

// greetingExists reports whether the greeting vars names exists, as
// readGreeting would find it: every name but the empty one has one.
func greetingExists(ctx context.Context, vars resource.Vars) (bool, error) {
	return vars.Get("name") != "", nil
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

// A clock is what quickstart://clock reads: how many times it has ticked,
// and when it last did (when it was made, before its first tick).
type clock struct {
	mu    sync.Mutex
	ticks int
	last  time.Time
}

func newClock() *clock { return &clock{last: time.Now()} }

// read reads quickstart://clock.
func (c *clock) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	c.mu.Lock()
	text := fmt.Sprintf("tick %d at %s\n", c.ticks, c.last.UTC().Format(time.RFC3339Nano))
	c.mu.Unlock()
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
}

// run ticks every interval until ctx is done, and reports each tick to
// reg, which notifies quickstart://clock's subscribers. A data source of
// your own calls reg.Changed the same way when a resource changes.
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
			// Changed fails for a URI no client could subscribe to
			// (a typo, a URI not built with reg.Expand): say so
			// rather than notify no one in silence.
			if err := reg.Changed(clockURI); err != nil {
				logger.Error("reporting a change", "uri", clockURI, "error", err)
			}
		}
	}
}
