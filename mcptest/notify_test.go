package mcptest_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notifyingServer is a plain go-sdk server that accepts subscriptions and
// holds one resource.
func notifyingServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "n", Version: "v0"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.AddResource(&mcp.Resource{URI: "x:a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "x:a", Text: "a"}}}, nil
	})
	return s
}

func TestNotifications(t *testing.T) {
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := notifyingServer()
				var n mcptest.Notifications
				own := 0 // a handler of the test's own still runs
				cs := mcptest.Connect(t, s, version, n.ClientOptions(&mcp.ClientOptions{
					ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) { own++ },
				}))
				require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "x:a"}))

				// The change is made again each second until its update
				// arrives: here the server notifies only on the third try.
				calls := 0
				n.WaitUpdated(t, "x:a", func() {
					calls++
					if calls == 3 {
						s.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "x:a"})
					}
				})
				assert.Equal(t, 3, calls)
				assert.Equal(t, 1, own)
				assert.Empty(t, n.Updated(), "the update waited for is taken")

				n.WaitListChanged(t, func() {
					s.AddResource(&mcp.Resource{URI: "x:b", Name: "b"}, nil)
				})
				synctest.Wait()
				assert.Zero(t, n.ListChanged())
			})
		})
	}
}
