package mcpgo_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/resource"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// tenantContext is the HTTP context function of the tests' servers: it
// names the caller of each request by its X-Tenant header.
func tenantContext(ctx context.Context, r *http.Request) context.Context {
	return mcpgo.WithIdentity(ctx, r.Header.Get("X-Tenant"))
}

// tenantServer serves, over streamable HTTP, a registry whose callers
// are named by the X-Tenant header (through mcp-go's HTTP context
// function, mcpgo.WithIdentity and mcpgo.Identity) and see only their
// tenant's resources; reads are limited to 3 at once, then 1 a minute.
func tenantServer(t *testing.T) string {
	t.Helper()
	reg, err := resource.NewRegistry(&resource.Options{
		Logger:   slog.New(slog.DiscardHandler),
		PageSize: 2,
		Identity: mcpgo.Identity,
		Authorize: func(_ context.Context, a resource.Access) error {
			if a.Identity == "" || !strings.HasPrefix(a.URI, "tenant://"+a.Identity+"/") && a.URI != "" {
				return resource.ErrDenied
			}
			return nil
		},
		RateLimits: resource.RateLimits{Read: &resource.RateLimit{Rate: rate.Every(time.Minute), Burst: 3}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	for _, uri := range []string{"tenant://red/1", "tenant://red/2", "tenant://red/3", "tenant://blue/1"} {
		require.NoError(t, reg.Add(&sdk.Resource{URI: uri, Name: uri, MIMEType: "text/plain"}, resource.Text(uri)))
	}
	s := server.NewMCPServer("tenants", "v0.0.1", mcpgo.WithRegistry(reg))
	h := server.NewStreamableHTTPServer(s, server.WithHTTPContextFunc(tenantContext))
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func tenantClient(t *testing.T, url, tenant, version string) *conn {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"X-Tenant": tenant}))
	require.NoError(t, err)
	return connect(t, c, version, nil)
}

func TestTenants(t *testing.T) {
	t.Parallel()
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			url := tenantServer(t)
			red, blue := tenantClient(t, url, "red", version), tenantClient(t, url, "blue", version)
			ctx := t.Context()

			res, err := red.c.ListResources(ctx, mcp.ListResourcesRequest{})
			require.NoError(t, err)
			var uris []string
			for _, r := range res.Resources {
				uris = append(uris, r.URI)
			}
			assert.Equal(t, []string{"tenant://red/1", "tenant://red/2", "tenant://red/3"}, uris)
			if mcp.IsModernProtocol(version) {
				assert.Equal(t, mcp.CacheScope("private"), res.CacheScope, "a filtered list is private")
			}

			// A cursor issued to red is refused to blue.
			page, err := red.c.ListResourcesByPage(ctx, mcp.ListResourcesRequest{})
			require.NoError(t, err)
			require.NotEmpty(t, page.NextCursor)
			req := mcp.ListResourcesRequest{}
			req.Params.Cursor = page.NextCursor
			_, err = blue.c.ListResourcesByPage(ctx, req)
			assert.ErrorIs(t, err, mcp.ErrInvalidParams, "another caller's cursor")

			notFound := mcp.ErrResourceNotFound
			if mcp.IsModernProtocol(version) {
				notFound = mcp.ErrInvalidParams
			}
			read := func(cn *conn, uri string) error {
				req := mcp.ReadResourceRequest{}
				req.Params.URI = uri
				_, err := cn.c.ReadResource(ctx, req)
				return err
			}
			assert.ErrorIs(t, read(blue, "tenant://red/1"), notFound, "another tenant's resource is not found")
			require.NoError(t, read(blue, "tenant://blue/1"))
			require.NoError(t, read(blue, "tenant://blue/1"))
			err = read(blue, "tenant://blue/1") // the 4th: over the limit
			require.ErrorIs(t, err, mcp.ErrInternalError)
			assert.Contains(t, err.Error(), "Rate limit exceeded")
			require.NoError(t, read(red, "tenant://red/1"), "red's budget is red's own")
		})
	}
}

// mcp-go's stateless streamable HTTP registers no session for a client
// before 2026-07-28, which can then be sent nothing: its subscriptions are
// refused, rather than accepted and never notified.
func TestStatelessRefusesSubscriptions(t *testing.T) {
	t.Parallel()
	reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, reg.Add(&sdk.Resource{URI: "test://a", Name: "a"}, resource.Text("a")))
	s := server.NewMCPServer("stateless", "v0.0.1", mcpgo.WithRegistry(reg))
	ts := httptest.NewServer(server.NewStreamableHTTPServer(s, server.WithStateLess(true)))
	t.Cleanup(ts.Close)
	c, err := client.NewStreamableHttpClient(ts.URL + "/mcp")
	require.NoError(t, err)
	cn := connect(t, c, "2025-11-25", reg)
	require.ErrorIs(t, cn.subscribe(t, "test://a")[0], mcp.ErrInvalidParams)
	n, _, _ := reg.SubscriptionStats()
	assert.Zero(t, n, "subscriptions held")
}
