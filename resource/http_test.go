package resource_test

// Helpers for the tests that serve a registry over streamable HTTP, and
// the one test of how a registry's server behaves behind go-sdk's own
// handlers. The HTTP edge itself (serve.Guard) is tested in package
// serve.

import (
	"cmp"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allVersions are the protocol versions a server made with the library
// serves.
var allVersions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

// serveHTTP serves server as a server made with the library is served,
// behind serve's edge with opts (nil for the defaults; refusals not
// logged unless opts names a Logger), on a loopback port until t ends. It
// returns the endpoint's URL.
func serveHTTP(t *testing.T, server *mcp.Server, opts *serve.Options) string {
	t.Helper()
	var o serve.Options
	if opts != nil {
		o = *opts
	}
	o.Logger = cmp.Or(o.Logger, quietLogger())
	h, err := serve.Handler(server, &o)
	require.NoError(t, err)
	return mcptest.ServeHandler(t, h) + serve.DefaultPath
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
				cs := mcptest.ConnectHTTP(t, hs.URL, "", version, nil)
				caps := cs.InitializeResult().Capabilities.Resources
				err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://readme"})
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
