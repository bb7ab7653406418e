// The tests of a module outside this repository that fetches every
// published module of mcpres at one version, through a module proxy, as a
// user's module does (scripts/installcheck.sh writes it). Its main.go is
// the README's server, copied from README.md; each test uses one module
// the way the README and docs/ show.
package main

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/mcpotel"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/natsbus"
	"github.com/mcpres/mcpres/pgbus"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// registry returns a registry with one resource, made with opts.
func registry(t *testing.T, opts *resource.Options) *resource.Registry {
	t.Helper()
	reg, err := resource.NewRegistry(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	if err := reg.Add(&mcp.Resource{URI: "notes://readme", Name: "readme", MIMEType: "text/plain"}, resource.Text("hello")); err != nil {
		t.Fatal(err)
	}
	return reg
}

// The README's server, built from the fetched core, serves a client at
// every protocol version and passes the audit.
func TestReadmeServer(t *testing.T) {
	bin := mcptest.Build(t, ".")
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs := mcptest.Stdio(t, bin, nil, version, nil)
			if resources, _ := mcptest.ListAll(t, cs); len(resources) == 0 {
				t.Error("the README's server lists no resource")
			}
			mcptest.Audit(t, cs, nil)
		})
	}
}

// mcpgo: one option for server.NewMCPServer, served over mcp-go's
// streamable HTTP to a go-sdk client.
func TestMCPGo(t *testing.T) {
	s := server.NewMCPServer("consumer", "v0.0.1", mcpgo.WithRegistry(registry(t, nil)))
	ts := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(ts.Close)
	cs := mcptest.ConnectHTTP(t, ts.URL, "", "", nil)
	if resources, _ := mcptest.ListAll(t, cs); len(resources) != 1 {
		t.Errorf("mcp-go lists %d resources, want 1", len(resources))
	}
}

// mcpotel: an Observer on the global providers (docs/telemetry.md).
func TestMCPOtel(t *testing.T) {
	obs, err := mcpotel.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	server, err := registry(t, &resource.Options{Observer: obs}).NewServer(&mcp.Implementation{Name: "observed", Version: "v1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, server, "", nil)
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "notes://readme"}); err != nil {
		t.Fatal(err)
	}
}

// natsbus and pgbus: a bus in the registry's options
// (docs/deployment.md). An unreachable broker is not an error for
// natsbus; pgbus opens its first connection at once, so an address
// nothing listens on is one.
func TestBuses(t *testing.T) {
	bus, err := natsbus.Connect("nats://127.0.0.1:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	registry(t, &resource.Options{Subscriptions: resource.SubscriptionOptions{Bus: bus}})

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if pg, err := pgbus.Open(ctx, "postgres://mcpres@127.0.0.1:1/none?connect_timeout=1", nil); err == nil {
		pg.Close()
		t.Error("pgbus.Open of an address nothing listens on: no error")
	}
}
