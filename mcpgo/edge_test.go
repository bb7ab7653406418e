package mcpgo_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/internal/edgetest"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/stretchr/testify/require"
)

// The edge holds in front of mcp-go's StreamableHTTPServer as it does in
// front of go-sdk's handler (package serve runs the same suite there):
// Origin and CORS, the request-metadata headers mcp-go does not compare
// itself, body limits, slow bodies, keep-alive, and the caps on sessions
// and listen streams of callers told apart by address.
func TestEdgeOnMCPGo(t *testing.T) {
	edgetest.Run(t, func(t *testing.T, reg *resource.Registry, opts *serve.Options) http.Handler {
		s := server.NewMCPServer("edge", "v0", mcpgo.WithRegistry(reg))
		sh := server.NewStreamableHTTPServer(s, server.WithSessionIdleTTL(serve.DefaultSessionTimeout))
		t.Cleanup(func() { sh.Shutdown(context.Background()) })
		h, err := serve.Guard(sh, opts)
		require.NoError(t, err)
		mux := http.NewServeMux()
		mux.Handle("/mcp", h)
		return mux
	}, nil)
}
