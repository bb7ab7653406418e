package serve_test

import (
	"net/http"
	"testing"

	"github.com/mcpres/mcpres/internal/edgetest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// The edge holds in front of go-sdk's handler, over real HTTP. Module
// mcpgo runs the same suite on mark3labs/mcp-go's.
func TestEdgeOnGoSDK(t *testing.T) {
	edgetest.Run(t, func(t *testing.T, reg *resource.Registry, opts *serve.Options) http.Handler {
		server, err := reg.NewServer(&mcp.Implementation{Name: "edge", Version: "v0"}, nil)
		require.NoError(t, err)
		h, err := serve.Handler(server, opts)
		require.NoError(t, err)
		return h
	}, nil)
}
