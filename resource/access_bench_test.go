package resource_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
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

// BenchmarkFilteredPage measures a 100-entry page of a list the
// Authorizer filters, with 0, 10, 50 and 90 % of the entries denied,
// side by side with the same list without an Authorizer: the registry
// scans past denied entries to fill the page (see Options.ScanBudget), so
// a page costs about what scanning PageSize / (1 - denied) entries does.
// The entries of ten teams are interleaved in a sorted in-memory table.
//
//	go test -run '^$' -bench FilteredPage -benchmem -count 5 ./resource/
func BenchmarkFilteredPage(b *testing.B) {
	const teams, entries = 10, 20_000
	var table cursor.Sorted[*mcp.Resource]
	for n := range entries {
		key := fmt.Sprintf("%06d", n)
		table.Set(key, &mcp.Resource{URI: fmt.Sprintf("notes://t%d/%s", n%teams, key), Name: key})
	}
	var asked atomic.Int64 // Authorizer calls: entries scanned
	byScope := func(_ context.Context, a resource.Access) error {
		asked.Add(1)
		if team := a.Var("team"); team != "" && !slices.Contains(a.TokenInfo().Scopes, "team:"+team) {
			return resource.ErrDenied
		}
		return nil
	}
	for _, c := range []struct {
		name    string
		auth    resource.Authorizer
		allowed int // teams
	}{{"none", nil, teams}, {"denied=0%", byScope, 10}, {"denied=10%", byScope, 9}, {"denied=50%", byScope, 5}, {"denied=90%", byScope, 1}} {
		reg := newRegistry(b, &resource.Options{Authorize: c.auth, PageSize: benchPageSize})
		if err := reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note"}, nil2,
			resource.WithInstances(table.List)); err != nil {
			b.Fatal(err)
		}
		var scopes []string
		for i := range c.allowed {
			scopes = append(scopes, fmt.Sprintf("team:t%d", i))
		}
		extra := &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: "u", Scopes: scopes}}
		ctx := context.Background()
		b.Run(c.name, func(b *testing.B) {
			first, err := reg.ListResources(ctx, &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{}, Extra: extra})
			if err != nil {
				b.Fatal(err)
			}
			req := &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{Cursor: first.NextCursor}, Extra: extra}
			b.ReportAllocs()
			asked.Store(0)
			for b.Loop() {
				page, err := reg.ListResources(ctx, req)
				if err != nil || len(page.Resources) != benchPageSize {
					b.Fatalf("page of %d, %v", len(page.Resources), err)
				}
			}
			b.ReportMetric(float64(asked.Load())/float64(b.N), "scanned/op")
		})
	}
}
