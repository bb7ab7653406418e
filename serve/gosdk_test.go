package serve_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One URL serves clients of every protocol era, and each receives the
// updates it subscribed to and list_changed: NewGoSDKHandler behind
// Guard, in a mux of one's own.
func TestGoSDKHandlerServesEveryEra(t *testing.T) {
	t.Parallel()
	reg, server := eraRegistry(t)
	mux := http.NewServeMux()
	mux.Handle("/mcp", guarded(t, server, nil, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour}))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	watchers := map[string]*httpWatcher{}
	for _, version := range allVersions {
		w := connectHTTPWatcher(t, hs.URL+"/mcp", version)
		caps := w.session.InitializeResult().Capabilities.Resources
		require.NotNil(t, caps, version)
		assert.True(t, caps.Subscribe, "%s: subscribe advertised", version)
		assert.True(t, caps.ListChanged, "%s: listChanged advertised", version)
		require.NoError(t, w.session.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "db://users/7"}), version)
		require.NoError(t, w.session.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://readme"}), version)
		watchers[version] = w
	}
	// A 2026-07-28 listen is opened in the background: wait until the
	// registry holds all six subscriptions.
	require.Eventually(t, func() bool { n, _, _ := reg.SubscriptionStats(); return n == 6 }, time.Minute, time.Millisecond)

	require.NoError(t, reg.Changed("db://users/7"))
	for version, w := range watchers {
		assert.Equal(t, "db://users/7", mcptest.Receive(t, w.updates, version+" update"), version)
	}
	require.NoError(t, reg.Changed("docs://readme"))
	for version, w := range watchers {
		assert.Equal(t, "docs://readme", mcptest.Receive(t, w.updates, version+" update"), version)
	}
	require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://new", Name: "new"}, resource.Text("new")))
	for version, w := range watchers {
		mcptest.Receive(t, w.listed, version+" list_changed")
	}
	for version, w := range watchers {
		res, err := w.session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://new"})
		require.NoError(t, err, version)
		assert.Equal(t, "new", res.Contents[0].Text, version)
	}
}

// NewGoSDKHandler panics on a nil server, and Guard refuses a nil handler.
func TestGoSDKHandlerNil(t *testing.T) {
	t.Parallel()
	assert.PanicsWithValue(t, "serve.NewGoSDKHandler: nil server", func() { serve.NewGoSDKHandler(nil, nil) })
	_, err := serve.Guard(nil, nil)
	assert.EqualError(t, err, "serve: nil handler")
}
