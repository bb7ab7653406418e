// Package catalog holds the resources the quickstart serves, so that the
// mcp-go example serves the same ones: static text, markdown, JSON and a
// PNG image, a clock that changes at every tick, and a greetings template
// with completion. [NewRegistry] returns a registry that holds them.
//
// It is part of the quickstart: copy it with it, and make its resources
// your own.
package catalog

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logo is a 16x16 PNG served as quickstart://static/logo.png.
//
//go:embed logo.png
var logo []byte

const (
	// GreetingTemplate is the URI template of the greetings.
	GreetingTemplate = "quickstart://greetings/{name}"
	// ClockURI is the resource that changes at every tick.
	ClockURI = "quickstart://clock"
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

// names are the values offered when completing {name} in the greetings
// template.
var names = []string{"Ada Lovelace", "Alan Turing", "Grace Hopper", "Katherine Johnson", "Ken Thompson"}

// NewRegistry returns a registry configured by opts, holding the
// quickstart's resources; clk is quickstart://clock. It returns the error
// of resource.NewRegistry if opts is not valid.
func NewRegistry(opts *resource.Options, clk *Clock) (*resource.Registry, error) {
	reg, err := resource.NewRegistry(opts)
	if err != nil {
		return nil, err
	}

	// A template: one read function for every URI it matches. Every
	// greeting with a name exists; WithExists tells subscriptions so,
	// cheaply, without reading.
	err = reg.AddTemplate(&mcp.ResourceTemplate{
		URITemplate: GreetingTemplate,
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
	example, err := reg.Expand(GreetingTemplate, "name", names[0])
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
			URI: ClockURI, Name: "clock", Title: "Clock",
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

// A Clock is what quickstart://clock reads: how many times it has ticked,
// and when it last did (when it was made, before its first tick). Make
// one with NewClock.
type Clock struct {
	mu    sync.Mutex
	ticks int
	last  time.Time
}

// NewClock returns a Clock that has not ticked yet.
func NewClock() *Clock { return &Clock{last: time.Now()} }

// read reads quickstart://clock.
func (c *Clock) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	c.mu.Lock()
	text := fmt.Sprintf("tick %d at %s\n", c.ticks, c.last.UTC().Format(time.RFC3339Nano))
	c.mu.Unlock()
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
}

// Run ticks every interval until ctx is done, and reports each tick to
// reg, which notifies quickstart://clock's subscribers. A data source of
// your own calls reg.Changed the same way when a resource changes.
func (c *Clock) Run(ctx context.Context, reg *resource.Registry, interval time.Duration, logger *slog.Logger) {
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
			if err := reg.Changed(ClockURI); err != nil {
				logger.Error("reporting a change", "uri", ClockURI, "error", err)
			}
		}
	}
}
