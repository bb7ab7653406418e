package resource_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A provider's resources are checked as Add checks a static resource:
// what the registry would not read (a URI no client could send, a URI no
// template reads) and what has no name is left out of every page, without
// skipping or repeating a good one, logged once for each provider and
// reason however many resources it covers, and counted for the Observer;
// a resource without a MIME type is listed with its template's. Every
// URI listed reads.
func TestProvidersCheckedLikeAdd(t *testing.T) {
	t.Parallel()
	row := func(key, uri, name, mime string) cursor.Item[*mcp.Resource] {
		return cursor.Item[*mcp.Resource]{Key: key, Value: &mcp.Resource{URI: uri, Name: name, MIMEType: mime}}
	}
	// Keys in order; each kind of bad resource three times, between
	// good ones, so that they straddle pages.
	mixed := []cursor.Item[*mcp.Resource]{
		row("00", "notes://a", "a", "text/plain"),
		row("01", "notes://bad 1", "bad", "text/plain"),       // not a URI
		row("02", "other://1", "other", "text/plain"),         // no template reads it
		row("03", "notes://anon1", "", "text/plain"),          // no name
		row("04", "notes://b", "b", ""),                       // the template's MIME type
		row("05", "notes://bad%zz", "bad", "text/plain"),      // not a URI
		row("06", "other://2", "other", "text/plain"),         // no template reads it
		row("07", "notes://anon2", "", "text/plain"),          // no name
		row("08", "notes://c", "c", "text/plain"),             //
		row("09", "notes://bad 3", "bad", "text/plain"),       // not a URI
		row("10", "other://3", "other", "text/plain"),         // no template reads it
		row("11", "notes://anon3", "", "text/plain"),          // no name
		row("12", "notes://d", "d", "text/plain"),             //
		row("13", "notes://"+strings.Repeat("x", 99), "", ""), // too long for MaxURILength
	}
	instances := items("tasks://1", "tasks://2", "tasks://3")
	instances = append(instances[:2:2], row("tasks://2+", "zzz://unread", "unread", ""), instances[2])
	want := []string{
		"notes://a text/plain", "notes://b text/markdown", "notes://c text/plain", "notes://d text/plain",
		"tasks://1 text/plain", "tasks://2 text/plain", "tasks://3 text/plain",
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			logs := &syncBuffer{}
			obs := &recorder{}
			reg := newRegistry(t, &resource.Options{PageSize: 2, MaxURILength: 64, Observer: obs,
				Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{name}", Name: "note", MIMEType: "text/markdown"}, echoVars))
			require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "tasks://{id}", Name: "task", MIMEType: "text/plain"}, echoVars,
				resource.WithInstances(sliceList(instances))))
			require.NoError(t, reg.AddProvider("mixed", sliceList(mixed)))
			cs := mcptest.Connect(t, serverFor(t, reg), version, nil)

			for walk := range 3 { // later walks log nothing new
				pages := mcptest.ListPages(t, cs)
				var got []string
				for i, page := range pages {
					assert.LessOrEqual(t, len(page), 2, "walk %d, page %d: larger than PageSize", walk, i)
					for _, res := range page {
						got = append(got, res.URI+" "+res.MIMEType)
						_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: res.URI})
						assert.NoError(t, err, "walk %d: %s is listed, and reads", walk, res.URI)
					}
				}
				assert.Equal(t, want, got, "walk %d: the good resources, each once, in key order", walk)
			}
			assert.Empty(t, mixed[4].Value.MIMEType, "the provider's resource is not changed")

			out := logs.String()
			for _, line := range []string{
				`provider \"mixed\" listed URIs no client could send back`,
				`provider \"mixed\" listed URIs no resource or template reads`,
				`provider \"mixed\" listed resources without a name`,
				`the instance list of template \"tasks://{id}\" listed URIs no resource or template reads`,
			} {
				assert.Equal(t, 1, strings.Count(out, line), "one line for %s: %s", line, out)
			}
			assert.Equal(t, 4, strings.Count(out, `"level":"ERROR"`), "one line for each provider and reason: %s", out)

			// One page holding the whole list counts each left out once.
			obs.mu.Lock()
			obs.calls = nil
			obs.mu.Unlock()
			res, err := reg.ListResources(t.Context(), &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{}})
			require.NoError(t, err)
			require.Len(t, res.Resources, 2)
			whole, err := resource.NewRegistry(&resource.Options{PageSize: 100, Observer: obs, Logger: quietLogger()})
			require.NoError(t, err)
			t.Cleanup(func() { whole.Close() })
			require.NoError(t, whole.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{name}", Name: "note"}, echoVars))
			require.NoError(t, whole.AddTemplate(&mcp.ResourceTemplate{URITemplate: "tasks://{id}", Name: "task"}, echoVars,
				resource.WithInstances(sliceList(instances))))
			require.NoError(t, whole.AddProvider("mixed", sliceList(mixed)))
			res, err = whole.ListResources(t.Context(), &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{}})
			require.NoError(t, err)
			assert.Len(t, res.Resources, 7)
			obs.mu.Lock()
			defer obs.mu.Unlock()
			require.Len(t, obs.calls, 2)
			assert.Equal(t, 11, obs.calls[1].Unlistable, "10 of mixed (the long URI too) and 1 instance left out")
			assert.Positive(t, obs.calls[0].Unlistable, "the first page of two passed over resources")
		})
	}
}

// A provider's resource is listed exactly when a read of its URI
// resolves, and with the MIME type the read declares, also where a
// template checks its paths (WithSafePaths) or a more specific template
// takes the URI from one that does.
func TestProvidersListWhatReads(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, &resource.Options{Logger: quietLogger()})
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "files:///{+path}", Name: "file", MIMEType: "text/plain"},
		echoVars, resource.WithSafePaths()))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "files:///~/{name}.md", Name: "home note", MIMEType: "text/markdown"}, echoVars))
	uris := []string{
		"files:///docs/a.md",
		"files:///docs/a%20b.md", // an escape: read, as decoded
		"files:///%2Fetc/passwd", // a leading '/' once decoded: not a safe path
		"files:///docs/%2E%2E/x", // a ".." segment once decoded
		"files:///C:%5Cx",        // a backslash
		"files:///~/todo.md",     // the home note
		"files:///~/a%00b.md",    // a NUL, but the home note does not check paths
		"other://x",              // nothing reads it
	}
	slices.Sort(uris)
	require.NoError(t, reg.AddProvider("files", sliceList(items(uris...))))

	res, err := reg.ListResources(t.Context(), &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{}})
	require.NoError(t, err)
	listed := map[string]string{} // URI -> MIME type
	for _, r := range res.Resources {
		listed[r.URI] = r.MIMEType
	}
	for _, u := range uris {
		read, err := reg.ReadResource(t.Context(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: u}})
		mime, ok := listed[u]
		require.Equal(t, err == nil, ok, "%s: listed exactly if it reads (read: %v)", u, err)
		if ok {
			assert.Equal(t, read.Contents[0].MIMEType, mime, "%s: listed with the MIME type a read declares", u)
		}
	}
	assert.Len(t, listed, 4, "the two under docs and the two home notes")
}

// Checking what a provider lists allocates nothing per resource when each
// has a MIME type: a page of 100 allocates as much as a page of 10.
func TestProviderPageAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	allocs := func(n int) float64 {
		reg := newRegistry(t, &resource.Options{PageSize: n, Logger: quietLogger()})
		require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "rows://{id}", Name: "row", MIMEType: "text/plain"}, echoVars))
		all := make([]cursor.Item[*mcp.Resource], 2*n)
		for i := range all {
			u := fmt.Sprintf("rows://%06d", i)
			all[i] = cursor.Item[*mcp.Resource]{Key: u, Value: &mcp.Resource{URI: u, Name: "row", MIMEType: "text/plain"}}
		}
		require.NoError(t, reg.AddProvider("rows", func(_ context.Context, _ string, limit int) ([]cursor.Item[*mcp.Resource], error) {
			return all[:min(limit, len(all))], nil // the first page only, without allocating
		}))
		req := &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{}}
		return testing.AllocsPerRun(50, func() {
			if res, err := reg.ListResources(t.Context(), req); err != nil || len(res.Resources) != n {
				t.Fatalf("page of %d: %v, %d resources", n, err, len(res.Resources))
			}
		})
	}
	few, many := allocs(10), allocs(100)
	assert.Equal(t, few, many, "allocations of a page of 10 and of 100")
	t.Logf("a page allocates %v times", many)
}
