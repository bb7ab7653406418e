package mcpgo_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/internal/edgetest"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// The edge holds in front of mcp-go's StreamableHTTPServer as it does in
// front of go-sdk's handler (package serve runs the same suite there):
// Origin and CORS, the request-metadata headers mcp-go does not compare
// itself, body limits, slow bodies, keep-alive, and the caps on sessions
// and listen streams of callers told apart by address.
func TestEdgeOnMCPGo(t *testing.T) {
	edgetest.Run(t, func(t *testing.T, reg *resource.Registry, opts *serve.Options) http.Handler {
		s := server.NewMCPServer("edge", "v0", mcpgo.WithRegistry(reg))
		// WithStateful: mcp-go then answers 404 for a session the edge
		// ended to make room, as go-sdk does. With mcp-go's default, a
		// DELETE frees the session's state but its ID is served again,
		// as a new session.
		sh := server.NewStreamableHTTPServer(s, server.WithStateful(true), server.WithSessionIdleTTL(serve.DefaultSessionTimeout))
		t.Cleanup(func() { sh.Shutdown(context.Background()) })
		h, err := serve.Guard(sh, opts)
		require.NoError(t, err)
		mux := http.NewServeMux()
		mux.Handle("/mcp", h)
		return mux
	}, nil)
}

// Behind the edge, the registry's rate limits on mcp-go tell anonymous
// callers apart by their address, as on go-sdk: the address the edge
// records reaches the registry through the context mcp-go serves with.
func TestRateLimitsByAddressOnMCPGo(t *testing.T) {
	t.Parallel()
	reg, err := resource.NewRegistry(&resource.Options{
		Logger:     slog.New(slog.DiscardHandler),
		RateLimits: resource.RateLimits{Read: &resource.RateLimit{Rate: rate.Every(time.Hour), Burst: 1}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, reg.Add(&sdk.Resource{URI: "test://a", Name: "a"}, resource.Text("a")))
	s := server.NewMCPServer("rates", "v0", mcpgo.WithRegistry(reg))
	h, err := serve.Guard(server.NewStreamableHTTPServer(s), &serve.Options{ClientAddressHeader: "X-Client"})
	require.NoError(t, err)
	url := mcptest.ServeHandler(t, h)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		read := func(caller string) error {
			transport := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: mcptest.WithHeader(mcptest.HTTPClient(t, ""), "X-Client", caller+version)}
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "rates", Version: "v0"}, nil).Connect(t.Context(), transport, &sdk.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err)
			t.Cleanup(func() { cs.Close() })
			_, err = cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "test://a"})
			return err
		}
		require.NoError(t, read("mallory"), version)
		err := read("mallory")
		require.Error(t, err, "%s: mallory's second read, from another session", version)
		require.Contains(t, err.Error(), "Rate limit exceeded", version)
		require.NoError(t, read("alice"), "%s: another address has its own budget", version)
	}
}
