package resource_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkAccess measures what an Authorizer costs, side by side with the
// same registry without one: a read of a template resource, and a
// 100-entry page of template instances, each of whose URIs is resolved
// and decided. The Authorizer checks the caller's scopes, as a real one
// might; "half" denies every other team.
//
//	go test -run '^$' -bench Access -benchmem -count 5 ./resource/
func BenchmarkAccess(b *testing.B) {
	const teams, perTeam = 10, 1000
	byScope := func(_ context.Context, a resource.Access) error {
		if team := a.Var("team"); team != "" && !slices.Contains(a.TokenInfo().Scopes, "team:"+team) {
			return resource.ErrDenied
		}
		return nil
	}
	all, half := make([]string, teams), []string(nil)
	for i := range teams {
		all[i] = fmt.Sprintf("team:t%d", i)
		if i%2 == 0 {
			half = append(half, all[i])
		}
	}
	list := func(_ context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
		var out []cursor.Item[*mcp.Resource]
		for t := range teams {
			for n := range perTeam {
				key := fmt.Sprintf("t%d/%04d", t, n)
				if key > after {
					out = append(out, cursor.Item[*mcp.Resource]{Key: key, Value: &mcp.Resource{URI: "notes://" + key, Name: key}})
					if len(out) == limit {
						return out, nil
					}
				}
			}
		}
		return out, nil
	}
	for _, c := range []struct {
		name   string
		auth   resource.Authorizer
		scopes []string
	}{{"none", nil, nil}, {"allow", byScope, all}, {"half", byScope, half}} {
		reg := newRegistry(b, &resource.Options{Authorize: c.auth, PageSize: benchPageSize})
		err := reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note", MIMEType: "text/plain"},
			func(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "x"}}}, nil
			}, resource.WithInstances(list))
		if err != nil {
			b.Fatal(err)
		}
		extra := &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: "u", Scopes: c.scopes}}
		ctx := context.Background()
		b.Run("read/"+c.name, func(b *testing.B) {
			req := &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "notes://t0/0001"}, Extra: extra}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reg.ReadResource(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("page/"+c.name, func(b *testing.B) {
			first, err := reg.ListResources(ctx, &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{}, Extra: extra})
			if err != nil {
				b.Fatal(err)
			}
			req := &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{Cursor: first.NextCursor}, Extra: extra}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reg.ListResources(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
