package mcpgo_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// Two callers whose bearer tokens the HTTP context function maps to
// identities (mcpgo.WithIdentity) are told apart by the registry
// (mcpgo.Identity): the Authorizer sees each one's, and each spends a
// rate budget of its own; a caller without a known token is anonymous.
// Over mcp-go's streamable HTTP, in every protocol era.
func TestIdentity(t *testing.T) {
	t.Parallel()
	users := map[string]string{"token-ada": "ada", "token-bob": "bob"}
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			seen := make(map[string]bool) // the identities the Authorizer saw
			reg, err := resource.NewRegistry(&resource.Options{
				Logger:   slog.New(slog.DiscardHandler),
				Identity: mcpgo.Identity,
				Authorize: func(_ context.Context, a resource.Access) error {
					mu.Lock()
					seen[a.Identity] = true
					mu.Unlock()
					return nil
				},
				// One read an hour per caller: a second read of the same
				// caller is refused, whoever else read.
				RateLimits: resource.RateLimits{Read: &resource.RateLimit{Rate: rate.Every(time.Hour), Burst: 1}},
			})
			require.NoError(t, err)
			t.Cleanup(func() { reg.Close() })
			require.NoError(t, reg.Add(&sdk.Resource{URI: "notes://todo", Name: "todo", MIMEType: "text/plain"}, resource.Text("todo")))
			s := server.NewMCPServer("identity", "v0", mcpgo.WithRegistry(reg))
			h := server.NewStreamableHTTPServer(s, server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
				if id, ok := users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]; ok {
					return mcpgo.WithIdentity(ctx, id)
				}
				return ctx
			}))
			url := mcptest.ServeHandler(t, h)

			read := func(token string) error {
				cs := mcptest.ConnectHTTP(t, url, token, version, nil)
				_, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "notes://todo"})
				return err
			}
			require.NoError(t, read("token-ada"), "ada's first read")
			require.NoError(t, read("token-bob"), "bob's first read, from ada's address")
			require.ErrorContains(t, read("token-ada"), "Rate limit exceeded", "ada's second read")
			require.NoError(t, read("unknown"), "an anonymous caller's first read")
			require.ErrorContains(t, read(""), "Rate limit exceeded", "a second anonymous read")
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, map[string]bool{"ada": true, "bob": true, "": true}, seen, "identities the Authorizer saw")
		})
	}
}
