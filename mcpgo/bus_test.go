package mcpgo_test

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/subscribe"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// A change reported on one replica reaches the subscribers of another,
// an mcp-go server, through the bus.
func TestBus(t *testing.T) {
	t.Parallel()
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			var hub subscribe.Hub
			replica := func() *resource.Registry {
				reg, err := resource.NewRegistry(&resource.Options{
					Logger:        slog.New(slog.DiscardHandler),
					Subscriptions: resource.SubscriptionOptions{Bus: hub.Bus()},
				})
				require.NoError(t, err)
				t.Cleanup(func() { reg.Close() })
				require.NoError(t, reg.Add(&sdk.Resource{URI: "test://shared", Name: "shared"}, resource.Text("x")))
				return reg
			}
			here, there := replica(), replica()
			ts := httptest.NewServer(server.NewStreamableHTTPServer(server.NewMCPServer("replica", "v0", mcpgo.WithRegistry(here))))
			t.Cleanup(ts.Close)
			var opts []transport.StreamableHTTPCOption
			if !mcp.IsModernProtocol(version) {
				opts = append(opts, transport.WithContinuousListening())
			}
			c, err := client.NewStreamableHttpClient(ts.URL+"/mcp", opts...)
			require.NoError(t, err)
			cn := connect(t, c, version, here)
			require.NoError(t, cn.subscribe(t, "test://shared")[0])
			require.NoError(t, there.Changed("test://shared"))
			cn.awaitUpdate(t, "test://shared")
		})
	}
}
