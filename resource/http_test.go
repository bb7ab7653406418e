package resource_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allVersions are the protocol versions a server made with the library
// serves.
var allVersions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

// httpWatcher is a client over streamable HTTP that records what it is
// notified of, for tests that run on the real clock (a network cannot
// join a synctest bubble).
type httpWatcher struct {
	session *mcp.ClientSession
	updates chan string
	listed  chan struct{}
}

// connectHTTPWatcher connects a watcher at version to the streamable HTTP
// endpoint url.
func connectHTTPWatcher(t *testing.T, url, version string) *httpWatcher {
	t.Helper()
	w := &httpWatcher{updates: make(chan string, 100), listed: make(chan struct{}, 100)}
	w.session = mcptest.ConnectHTTP(t, url, "", version, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			w.updates <- req.Params.URI
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			w.listed <- struct{}{}
		},
	})
	require.Equal(t, version, w.session.InitializeResult().ProtocolVersion)
	return w
}

// next waits for the next notification on c, failing t if none comes
// within a minute: the test is of delivery, not of its timing.
func next[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	return mcptest.Receive(t, c, what)
}

// eraRegistry is a registry with a static resource and a template whose
// instances exist for ids 1 to 9, served by a server made with NewServer.
func eraRegistry(t *testing.T) (*resource.Registry, *mcp.Server) {
	t.Helper()
	reg := newRegistry(t, &resource.Options{Logger: quietLogger(),
		Subscriptions: resource.SubscriptionOptions{Window: time.Millisecond}, ListChangedDelay: time.Millisecond})
	require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://readme", Name: "readme"}, resource.Text("hello")))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"}, nil2,
		resource.WithExists(func(_ context.Context, vars resource.Vars) (bool, error) {
			id := vars.Get("id")
			return len(id) == 1 && id >= "1" && id <= "9", nil
		})))
	server, err := reg.NewServer(&mcp.Implementation{Name: "eras", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	return reg, server
}

// One URL serves clients of every protocol era, and each receives the
// updates it subscribed to and list_changed.
func TestHTTPHandlerServesEveryEra(t *testing.T) {
	t.Parallel()
	reg, server := eraRegistry(t)
	mux := http.NewServeMux()
	mux.Handle("/mcp", resource.NewHTTPHandler(server, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour}))
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
		assert.Equal(t, "db://users/7", next(t, w.updates, version+" update"), version)
	}
	require.NoError(t, reg.Changed("docs://readme"))
	for version, w := range watchers {
		assert.Equal(t, "docs://readme", next(t, w.updates, version+" update"), version)
	}
	require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://new", Name: "new"}, resource.Text("new")))
	for version, w := range watchers {
		next(t, w.listed, version+" list_changed")
	}
	for version, w := range watchers {
		res, err := w.session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://new"})
		require.NoError(t, err, version)
		assert.Equal(t, "new", res.Contents[0].Text, version)
	}
}

// A server served to legacy clients without sessions (go-sdk's stateless
// handler, or a stateful one whose session IDs are empty) cannot notify
// them: it neither advertises subscribe nor accepts a subscription, while
// 2026-07-28 clients on the same handler subscribe as usual.
func TestHTTPWithoutSessionsRefusesSubscribe(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]struct {
		sopts *mcp.ServerOptions
		hopts *mcp.StreamableHTTPOptions
	}{
		"stateless":      {&mcp.ServerOptions{Logger: quietLogger()}, &mcp.StreamableHTTPOptions{Stateless: true}},
		"no session IDs": {&mcp.ServerOptions{Logger: quietLogger(), GetSessionID: func() string { return "" }}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			reg, _ := eraRegistry(t)
			server, err := reg.NewServer(&mcp.Implementation{Name: "eras", Version: "v0"}, setup.sopts)
			require.NoError(t, err)
			hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, setup.hopts))
			t.Cleanup(hs.Close)
			listeners := 0
			for _, version := range allVersions {
				if name == "no session IDs" && version == "2026-07-28" {
					continue // a stateful handler serves no 2026-07-28 client
				}
				w := connectHTTPWatcher(t, hs.URL, version)
				caps := w.session.InitializeResult().Capabilities.Resources
				err := w.session.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://readme"})
				if version == "2026-07-28" {
					assert.True(t, caps.Subscribe && caps.ListChanged, "listeners are notified on their stream")
					require.NoError(t, err)
					listeners++
					continue
				}
				assert.False(t, caps.Subscribe, "%s: subscribe not advertised", version)
				assert.False(t, caps.ListChanged, "%s: listChanged not advertised", version)
				jerr := rpcError(t, err)
				assert.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code, version)
				assert.Contains(t, jerr.Message, "cannot receive notifications", version)
			}
			// The listen is opened in the background.
			require.Eventually(t, func() bool { n, _, _ := reg.SubscriptionStats(); return n == listeners }, time.Minute, time.Millisecond,
				"a refused subscription records nothing")
		})
	}
}
