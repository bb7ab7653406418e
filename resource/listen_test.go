package resource_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The registry serves a 2026-07-28 listen's resources itself (listen.go):
// on the wire the client sees what go-sdk would send, the acknowledgment
// naming its resources in its order and each change with the listen's
// subscription ID, and nothing before the acknowledgment.
func TestListenOnTheWire(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	for _, u := range []string{"test://a", "test://b"} {
		require.NoError(t, reg.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)))
	}
	server, err := reg.NewServer(&mcp.Implementation{Name: "wire", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)

	msgs := rawListen(t, hs.URL, "test://b", "test://a")
	msg, ok := mcptest.Await(msgs)
	require.True(t, ok, "no acknowledgment")
	var ack mcp.SubscriptionsAcknowledgedParams
	notification(t, msg, "notifications/subscriptions/acknowledged", &ack)
	assert.Equal(t, []string{"test://b", "test://a"}, ack.Notifications.ResourceSubscriptions)
	assert.EqualValues(t, 7, ack.Meta[mcp.MetaKeySubscriptionID])

	require.NoError(t, reg.Changed("test://a"))
	msg, ok = mcptest.Await(msgs)
	require.True(t, ok, "no notification")
	var p mcp.ResourceUpdatedNotificationParams
	notification(t, msg, "notifications/resources/updated", &p)
	assert.Equal(t, "test://a", p.URI)
	assert.EqualValues(t, 7, p.Meta[mcp.MetaKeySubscriptionID])
	n, _, _ := reg.SubscriptionStats()
	assert.Equal(t, 2, n)
}
