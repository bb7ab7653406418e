package resource_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rows is a provider backed by a sorted in-memory table, as a database
// would be.
type rows struct{ cursor.Sorted[*mcp.Resource] }

func (t *rows) put(key, uri string) { t.Set(key, &mcp.Resource{URI: uri, Name: key}) }

func (t *rows) list(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
	return t.List(ctx, after, limit)
}

// walkAll lists every page over the protocol and returns the URIs in order.
func walkAll(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var got []string
	for r, err := range cs.Resources(context.Background(), nil) {
		require.NoError(t, err)
		got = append(got, r.URI)
	}
	return got
}

func TestListMergesSources(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, &resource.Options{PageSize: 4})
	for _, u := range []string{"docs://b", "docs://a", "docs://c"} {
		require.NoError(t, reg.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)))
	}
	db := &rows{}
	for i := 5; i >= 1; i-- {
		db.put(fmt.Sprintf("%03d", i), fmt.Sprintf("db://users/%d", i))
	}
	require.NoError(t, reg.AddProvider("a-users", db.list))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"}, nil2)) // reads what a-users lists
	logs := &rows{}
	logs.put("api", "log://api/today")
	logs.put("web", "log://web/today")
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "log://{service}/today", Name: "log"}, nil2,
		resource.WithInstances(logs.list)))
	empty := &rows{}
	require.NoError(t, reg.AddProvider("b-empty", empty.list))

	want := []string{
		"docs://a", "docs://b", "docs://c", // static, by URI
		"db://users/1", "db://users/2", "db://users/3", "db://users/4", "db://users/5", // "a-users", by key
		"log://api/today", "log://web/today", // "log://{service}/today"
	}
	forEachVersion(t, func(t *testing.T, version string) {
		h := connect(t, reg, version, nil, nil)
		assert.Equal(t, want, walkAll(t, h.session))
	})

	// The last page is exactly full: no cursor after it.
	reg2 := newRegistry(t, &resource.Options{PageSize: 5})
	require.NoError(t, reg2.AddProvider("users", db.list))
	require.NoError(t, reg2.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"}, nil2))
	res, err := reg2.ListResources(context.Background(), nil)
	require.NoError(t, err)
	assert.Len(t, res.Resources, 5)
	assert.Empty(t, res.NextCursor)

	// Removing sources.
	assert.True(t, reg.RemoveProvider("a-users"))
	assert.False(t, reg.RemoveProvider("a-users"))
	assert.False(t, reg.RemoveProvider("log://{service}/today"), "an instance list goes with its template")
	assert.Equal(t, 1, reg.RemoveTemplates("log://{service}/today"))
	h := connect(t, reg, "2025-11-25", nil, nil)
	assert.Equal(t, want[:3], walkAll(t, h.session))
}

// TestListStableWhileChanging walks a list of static resources and a
// provider while entries are added and removed between pages: every entry
// that exists for the whole walk is listed exactly once, and nothing is
// listed twice.
func TestListStableWhileChanging(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		reg := newRegistry(t, &resource.Options{PageSize: 1 + rng.IntN(9)})
		db := &rows{}
		require.NoError(t, reg.AddProvider("db", db.list))
		require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://{id}", Name: "row"}, nil2))
		present := map[string]bool{} // URI -> present now
		add := func(i int) {
			if rng.IntN(2) == 0 {
				u := fmt.Sprintf("s://%04d", i)
				require.NoError(t, reg.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)))
				present[u] = true
			} else {
				u := fmt.Sprintf("db://%04d", i)
				db.put(fmt.Sprintf("%04d", i), u)
				present[u] = true
			}
		}
		remove := func(u string) {
			if reg.Remove(u) == 0 {
				db.Delete(u[len("db://"):])
			}
			delete(present, u)
		}
		for i := range 120 {
			add(i)
		}
		always := cloneSet(present) // entries that nothing will remove
		seen := map[string]int{}
		ctx := context.Background()
		cursorStr := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 1000, "round %d: the walk does not end", round)
			res, err := reg.ListResources(ctx, &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{Cursor: cursorStr}})
			require.NoError(t, err)
			for _, r := range res.Resources {
				seen[r.URI]++
			}
			if res.NextCursor == "" {
				break
			}
			cursorStr = res.NextCursor
			// Mutate: add new entries anywhere, remove some that were
			// there at the start (no longer "always") or were added.
			for range rng.IntN(6) {
				add(120 + rng.IntN(1000))
			}
			for range rng.IntN(4) {
				keys := sortedKeys(present)
				u := keys[rng.IntN(len(keys))]
				delete(always, u)
				remove(u)
			}
		}
		for u := range always {
			assert.Equal(t, 1, seen[u], "round %d: %s, present throughout, listed %d times", round, u, seen[u])
		}
		for u, n := range seen {
			assert.LessOrEqual(t, n, 1, "round %d: %s listed %d times", round, u, n)
		}
	}
}

func cloneSet(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestListProviderFailures(t *testing.T) {
	t.Parallel()
	for name, list := range map[string]resource.ListFunc{
		"error": func(context.Context, string, int) ([]cursor.Item[*mcp.Resource], error) {
			return nil, errors.New("db: connection reset by peer")
		},
		"out of order": func(context.Context, string, int) ([]cursor.Item[*mcp.Resource], error) {
			return []cursor.Item[*mcp.Resource]{{Key: "b", Value: &mcp.Resource{URI: "x://b", Name: "b"}}, {Key: "a", Value: &mcp.Resource{URI: "x://a", Name: "a"}}}, nil
		},
		"nil resource": func(context.Context, string, int) ([]cursor.Item[*mcp.Resource], error) {
			return []cursor.Item[*mcp.Resource]{{Key: "a"}}, nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			logs := &syncBuffer{}
			reg := newRegistry(t, &resource.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			require.NoError(t, reg.AddProvider("p", list))
			h := connect(t, reg, "2026-07-28", nil, nil)
			_, err := h.session.ListResources(context.Background(), nil)
			jerr := rpcError(t, err)
			assert.EqualValues(t, jsonrpc.CodeInternalError, jerr.Code)
			assert.Equal(t, "Internal error", jerr.Message)
			assert.Contains(t, logs.String(), "resource list failed")
		})
	}
}

// TestListWithoutRequest calls the list handlers as plain functions with a
// nil request, with a cursor scope set and a failing provider: an answer,
// never a panic.
func TestListWithoutRequest(t *testing.T) {
	t.Parallel()
	scoped := 0
	reg := newRegistry(t, &resource.Options{Logger: quietLogger(), CursorScope: func(context.Context, mcp.Request) string {
		scoped++
		return "s"
	}})
	require.NoError(t, reg.AddProvider("p", func(context.Context, string, int) ([]cursor.Item[*mcp.Resource], error) {
		return nil, errors.New("down")
	}))
	_, err := reg.ListResources(context.Background(), nil)
	assert.EqualValues(t, jsonrpc.CodeInternalError, rpcError(t, err).Code)
	_, err = reg.ListResourceTemplates(context.Background(), nil)
	require.NoError(t, err)
	assert.Zero(t, scoped, "no request, no scope to ask for")
}

type scopeKey struct{}

func TestCursorBinding(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	codec, err := cursor.NewCodec(&cursor.Options{
		Keys: [][]byte{[]byte("0123456789abcdef-replica-key")},
		TTL:  time.Minute,
		Now:  func() time.Time { return clock },
	})
	require.NoError(t, err)
	logs := new(syncBuffer)
	opts := &resource.Options{
		PageSize: 1,
		Cursors:  codec,
		Logger:   slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		CursorScope: func(ctx context.Context, _ mcp.Request) string {
			s, _ := ctx.Value(scopeKey{}).(string)
			return s
		},
	}
	reg := newRegistry(t, opts)
	replica := newRegistry(t, opts) // another process with the same keys
	for _, r := range []*resource.Registry{reg, replica} {
		for _, u := range []string{"x://a", "x://b", "x://c"} {
			require.NoError(t, r.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)))
		}
	}
	list := func(r *resource.Registry, scope, c string) (*mcp.ListResourcesResult, error) {
		ctx := context.WithValue(context.Background(), scopeKey{}, scope)
		return r.ListResources(ctx, &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{Cursor: c}})
	}
	first, err := list(reg, "alice", "")
	require.NoError(t, err)
	require.NotEmpty(t, first.NextCursor)

	second, err := list(replica, "alice", first.NextCursor)
	require.NoError(t, err, "a replica sharing the keys accepts the cursor")
	assert.Equal(t, "x://b", second.Resources[0].URI)

	_, err = list(reg, "bob", first.NextCursor)
	assert.Equal(t, "invalid cursor", rpcError(t, err).Message, "a cursor issued to alice is refused for bob")

	clock = clock.Add(2 * time.Minute)
	_, err = list(reg, "alice", first.NextCursor)
	assert.Equal(t, "invalid cursor", rpcError(t, err).Message, "expired")

	// The reason is the server's to know: logged at Debug, never sent.
	assert.Contains(t, logs.String(), `level=DEBUG msg="resource request refused: invalid cursor" method=resources/list`)
	assert.Contains(t, logs.String(), "expired")
	assert.Contains(t, logs.String(), "not issued by this server")
}

func TestProviderNamesAndNotify(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, &resource.Options{ListChangedDelay: 10 * time.Millisecond})
	db := &rows{}
	assert.Error(t, reg.AddProvider("", db.list))
	assert.Error(t, reg.AddProvider("p", nil))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "x://{id}", Name: "x"}, nil2, resource.WithInstances(db.list)))
	assert.Error(t, reg.AddProvider("x://{id}", db.list), "the name of a template's instance list")
	require.NoError(t, reg.AddProvider("p", db.list))
	assert.Error(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "p", Name: "p"}, nil2, resource.WithInstances(db.list)))

	changed := make(chan struct{}, 10)
	h := connect(t, reg, "2025-06-18", nil, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	})
	db.put("1", "x://1")
	reg.NotifyListChanged()
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("NotifyListChanged sent no notifications/resources/list_changed")
	}
	assert.Equal(t, []string{"x://1", "x://1"}, walkAll(t, h.session), "listed by the provider and by the template's instance list")
}
