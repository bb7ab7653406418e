package resource_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// teamNotes is a table of notes, each of one team, listed by a provider in
// key order and read through notes://{team}/{id}.
type teamNotes struct{ rows cursor.Sorted[*mcp.Resource] }

func (n *teamNotes) add(team, key string) {
	n.rows.Set(key, &mcp.Resource{URI: "notes://" + team + "/" + key, Name: team + " " + key})
}

// tenantServer serves notes behind teamPolicy over streamable HTTP, every
// era on one URL (serveHTTP), with bearer tokens, at page size
// pageSize.
func tenantServer(t *testing.T, notes *teamNotes, pageSize int) string {
	t.Helper()
	reg := newRegistry(t, &resource.Options{Authorize: teamPolicy, PageSize: pageSize, Logger: quietLogger()})
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note"}, nil2,
		resource.WithInstances(notes.rows.List)))
	server, err := reg.NewServer(&mcp.Implementation{Name: "tenants"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	return serveWithTokens(t, server)
}

// serveWithTokens serves server over streamable HTTP, every era on one
// URL, to callers with a token verifyToken accepts, until t ends; it
// returns the URL.
func serveWithTokens(t *testing.T, server *mcp.Server) string {
	t.Helper()
	return serveHTTP(t, server, &serve.Options{Wrap: auth.RequireBearerToken(verifyToken, nil)})
}

// pageShapes walks resources/list and returns each page's URIs.
func pageShapes(t *testing.T, cs *mcp.ClientSession) [][]string {
	t.Helper()
	var shapes [][]string
	for _, page := range mcptest.ListPages(t, cs) {
		uris := []string{}
		for _, r := range page {
			uris = append(uris, r.URI)
		}
		shapes = append(shapes, uris)
	}
	return shapes
}

// Alice's walk of a filtered list is the same, page for page, whether bob
// holds nothing or 1,000 entries interleaved with hers: she cannot count
// his entries, nor watch them change, through the pages she gets.
func TestTenantPagesIndependentOfOthers(t *testing.T) {
	t.Parallel()
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			alone, mixed := new(teamNotes), new(teamNotes)
			for i := range 7 {
				key := fmt.Sprintf("%06d", (i+1)*1000)
				alone.add("a", key)
				mixed.add("a", key)
			}
			rng := rand.New(rand.NewPCG(7, 7))
			for mixed.rows.Len() < 7+1_000 {
				if k := rng.IntN(8_000); k%1000 != 0 {
					mixed.add("b", fmt.Sprintf("%06d", k))
				}
			}
			for _, pageSize := range []int{1, 2, 3} {
				want := pageShapes(t, mcptest.ConnectHTTP(t, tenantServer(t, alone, pageSize), "alice-token", version, nil))
				got := pageShapes(t, mcptest.ConnectHTTP(t, tenantServer(t, mixed, pageSize), "alice-token", version, nil))
				assert.Equal(t, want, got, "page size %d", pageSize)
				assert.Len(t, want, (7+pageSize-1)/pageSize, "page size %d: full pages and no empty one", pageSize)
			}
			bob := pageShapes(t, mcptest.ConnectHTTP(t, tenantServer(t, mixed, 100), "bob-token", version, nil))
			n := 0
			for _, p := range bob {
				n += len(p)
			}
			assert.Equal(t, mixed.rows.Len()-7, n, "bob sees his own")
		})
	}
}

// Past the scan budget, pages come back short and a walk takes more of
// them, but still sees each allowed entry once, in order.
func TestTenantScanBudget(t *testing.T) {
	t.Parallel()
	notes := new(teamNotes)
	for i := range 2_000 {
		team := "b"
		if i%500 == 0 {
			team = "a"
		}
		notes.add(team, fmt.Sprintf("%06d", i))
	}
	reg := newRegistry(t, &resource.Options{Authorize: teamPolicy, PageSize: 2, ScanBudget: 100, Logger: quietLogger()})
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note"}, nil2,
		resource.WithInstances(notes.rows.List)))
	alice := &mcp.RequestExtra{TokenInfo: tokens["alice-token"]}
	var all []string
	pages := 0
	for next := ""; ; pages++ {
		res, err := reg.ListResources(context.Background(), &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{Cursor: next}, Extra: alice})
		require.NoError(t, err)
		for _, r := range res.Resources {
			all = append(all, r.URI)
		}
		if next = res.NextCursor; next == "" {
			break
		}
	}
	assert.Equal(t, []string{"notes://a/000000", "notes://a/000500", "notes://a/001000", "notes://a/001500"}, all)
	// 2,000 entries at 100 a page, and one more page, empty: the 20th
	// spent its budget exactly at the last entry, so could not tell the
	// list was over.
	assert.Equal(t, 21, pages+1)
}

// A subscriber whose access to a URI is withdrawn stops hearing of its
// changes, in both eras, without the server polling anything: the
// Authorizer is asked again before each notification. Access restored,
// notifications resume; other subscribers are not affected.
func TestSubscriptionAccessWithdrawn(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			revoked := map[string]bool{}
			policy := func(ctx context.Context, a resource.Access) error {
				mu.Lock()
				defer mu.Unlock()
				if revoked[a.Identity+" "+a.URI] {
					return fmt.Errorf("%w: revoked", resource.ErrDenied)
				}
				return teamPolicy(ctx, a)
			}
			logs := new(syncBuffer)
			reg := newRegistry(t, &resource.Options{Authorize: policy,
				Logger:        slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				Subscriptions: resource.SubscriptionOptions{Window: 5 * time.Millisecond}})
			notes := new(teamNotes)
			require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note"},
				func(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "note"}}}, nil
				}, resource.WithInstances(notes.rows.List)))
			server, err := reg.NewServer(&mcp.Implementation{Name: "withdrawn"}, &mcp.ServerOptions{Logger: quietLogger()})
			require.NoError(t, err)
			url := serveWithTokens(t, server)

			updates := map[string]chan string{"alice": make(chan string, 100), "bob": make(chan string, 100)}
			connect := func(user string, uris ...string) {
				ch := updates[user]
				cs := mcptest.ConnectHTTP(t, url, user+"-token", version, &mcp.ClientOptions{
					ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { ch <- req.Params.URI },
				})
				for _, u := range uris {
					require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: u}))
				}
			}
			connect("alice", "notes://a/1", "notes://a/2")
			connect("bob", "notes://b/1")
			require.Eventually(t, func() bool { n, _, _ := reg.SubscriptionStats(); return n == 3 }, 10*time.Second, time.Millisecond)
			// next returns the next update user hears of.
			next := func(user string) string {
				select {
				case u := <-updates[user]:
					return u
				case <-time.After(10 * time.Second):
					t.Fatalf("%s heard of no change", user)
					return ""
				}
			}
			// change reports the changes of uris, in one window, in order.
			change := func(uris ...string) {
				for _, u := range uris {
					reg.Changed(u)
				}
			}

			// heard collects what user hears until it has heard all of want,
			// and returns it sorted. (2026-07-28 clients listen to each URI on
			// a stream of its own, so updates of one window may arrive in any
			// order.)
			heard := func(user string, want ...string) []string {
				var got []string
				for !isSubset(want, got) {
					got = append(got, next(user))
				}
				slices.Sort(got)
				return got
			}

			change("notes://a/1", "notes://a/2", "notes://b/1")
			assert.Equal(t, []string{"notes://a/1", "notes://a/2"}, heard("alice", "notes://a/1", "notes://a/2"))
			assert.Equal(t, []string{"notes://b/1"}, heard("bob", "notes://b/1"))

			mu.Lock()
			revoked["alice notes://a/1"] = true
			mu.Unlock()
			change("notes://a/1", "notes://a/2", "notes://b/1")
			got := heard("alice", "notes://a/2")
			assert.Equal(t, []string{"notes://b/1"}, heard("bob", "notes://b/1"))
			// A window later: whatever the server sent before has arrived.
			change("notes://a/2")
			got = append(got, heard("alice", "notes://a/2")...)
			assert.Equal(t, []string{"notes://a/2", "notes://a/2"}, got, "alice no longer hears of notes://a/1")
			assert.Contains(t, logs.String(), `"op":"subscribe","uri":"notes://a/1","session_id"`)
			assert.Contains(t, logs.String(), `"identity":"alice","decision":"denied"`)

			mu.Lock()
			delete(revoked, "alice notes://a/1")
			mu.Unlock()
			change("notes://a/1")
			assert.Equal(t, []string{"notes://a/1"}, heard("alice", "notes://a/1"), "restored")
		})
	}
}

// isSubset reports whether every item of want is in got.
func isSubset(want, got []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// Reads are capped: a larger result is refused with -32603 naming the
// cap, before it is checked or sent; an entry may have a cap of its own.
func TestReadCap(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, &resource.Options{MaxReadBytes: 1000, MIME: resource.MIMEOff})
	big := func(n int, blob bool) resource.ReadFunc {
		return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			if blob {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Blob: make([]byte, n)}}}, nil
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: strings.Repeat("x", n/2)}, {Text: strings.Repeat("y", n-n/2)}}}, nil
		}
	}
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://at-cap", Name: "a"}, big(1000, false)))
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://over-cap", Name: "o"}, big(1001, false)))
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://blob-over", Name: "b"}, big(1001, true)))
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://own-cap", Name: "c"}, big(20, false), resource.WithMaxReadBytes(10)))
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://raised", Name: "r"}, big(5000, false), resource.WithMaxReadBytes(5000)))
	assert.Error(t, reg.Add(&mcp.Resource{URI: "test://x", Name: "x"}, big(1, false), resource.WithMaxReadBytes(0)))
	forEachVersion(t, func(t *testing.T, version string) {
		h := connect(t, reg, version, nil, nil)
		read := func(u string) error {
			_, err := h.session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: u})
			return err
		}
		require.NoError(t, read("test://at-cap"))
		require.NoError(t, read("test://raised"))
		for u, limit := range map[string]string{"test://over-cap": "1000", "test://blob-over": "1000", "test://own-cap": "10"} {
			jerr := rpcError(t, read(u))
			assert.EqualValues(t, jsonrpc.CodeInternalError, jerr.Code, u)
			assert.Equal(t, "Resource too large: over the read cap of "+limit+" bytes", jerr.Message, u)
		}
	})
}

// A 100 MB read does not go out under the default cap.
func TestReadCapDefault(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, &resource.Options{Logger: quietLogger()})
	huge := strings.Repeat("x", 100<<20)
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://huge", Name: "h"}, resource.Text(huge)))
	_, err := reg.ReadResource(t.Context(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "test://huge"}})
	assert.Equal(t, fmt.Sprintf("Resource too large: over the read cap of %d bytes", resource.DefaultMaxReadBytes), rpcError(t, err).Message)
}

// A read function's contents for another URI than the one read go out
// only if the caller could read that URI itself; a fragment of the URI
// read is the same resource.
func TestReadOtherURIs(t *testing.T) {
	t.Parallel()
	logs := new(syncBuffer)
	reg := newRegistry(t, &resource.Options{Authorize: teamPolicy, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	returning := func(uris ...string) resource.TemplateReadFunc {
		return func(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
			res := &mcp.ReadResourceResult{}
			for _, u := range uris {
				res.Contents = append(res.Contents, &mcp.ResourceContents{URI: u, MIMEType: "text/plain", Text: u})
			}
			return res, nil
		}
	}
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "dir://{team}/{name}", Name: "dir"},
		func(_ context.Context, req *mcp.ReadResourceRequest, v resource.Vars) (*mcp.ReadResourceResult, error) {
			switch v.Get("name") {
			case "own-part":
				return returning(req.Params.URI+"#part")(nil, nil, v)
			case "children":
				return returning("notes://a/1", "notes://a/2")(nil, nil, v)
			case "leaky":
				return returning("notes://a/1", "notes://b/1")(nil, nil, v)
			}
			return returning("h://someone-elses/secret")(nil, nil, v)
		}))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note"}, returning()))
	alice := &mcp.RequestExtra{TokenInfo: tokens["alice-token"]}
	read := func(u string) (*mcp.ReadResourceResult, error) {
		return reg.ReadResource(t.Context(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: u}, Extra: alice})
	}
	res, err := read("dir://a/own-part")
	require.NoError(t, err)
	assert.Equal(t, "dir://a/own-part#part", res.Contents[0].URI)
	res, err = read("dir://a/children")
	require.NoError(t, err, "URIs alice may read")
	assert.Len(t, res.Contents, 2)
	for _, u := range []string{"dir://a/leaky", "dir://a/unknown"} {
		_, err = read(u)
		jerr := rpcError(t, err)
		assert.EqualValues(t, jsonrpc.CodeInternalError, jerr.Code, u)
		assert.Equal(t, "Internal error", jerr.Message, u)
	}
	assert.Contains(t, logs.String(), `"content_uri":"notes://b/1"`)
	assert.Contains(t, logs.String(), `"content_uri":"h://someone-elses/secret"`)
}

// readmeAuthorizer is the README's Authorizer, word for word.
func readmeAuthorizer(ctx context.Context, a resource.Access) error {
	team := a.Var("team") // as matched in the URI, or chosen in a completion
	if ti := a.TokenInfo(); team == "" || ti != nil && slices.Contains(ti.Scopes, "team:"+team) {
		return nil
	}
	return resource.ErrDenied // logged with the reason; the client sees "not found"
}

// The README's Authorizer, checking one team, sees exactly what the read
// function gets: no form of URI hands the read function a list, an empty
// item, or any team the token does not grant.
func TestReadmeAuthorizerHoldsAgainstLists(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, &resource.Options{Authorize: readmeAuthorizer, Logger: quietLogger()})
	var mu sync.Mutex
	var seen [][]string
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "t://teams/{team}/notes", Name: "notes"},
		func(_ context.Context, _ *mcp.ReadResourceRequest, v resource.Vars) (*mcp.ReadResourceResult, error) {
			mu.Lock()
			seen = append(seen, v.List("team"))
			mu.Unlock()
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "notes of " + v.Get("team")}}}, nil
		}))
	red := &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: "r", Scopes: []string{"team:red"}}}
	for _, u := range []string{
		"t://teams/red,blue/notes", "t://teams/,blue/notes", "t://teams/red,/notes", "t://teams/,/notes",
		"t://teams/red%2Cblue/notes", "t://teams/red%2cblue/notes", "t://teams/blue,red/notes",
		"t://teams/blue/notes", "t://teams/BLUE/notes", "t://teams/%62lue/notes", "t://teams/red%00/notes",
		"t://teams/red%20/notes", "t://teams/red/../blue/notes", "t://teams/red%2F..%2Fblue/notes",
		"t://teams/red;blue/notes", "t://teams/red&blue/notes", "t://teams/red=blue/notes",
		"t://teams/red/notes?team=blue", "t://teams/red/notes#blue", "t://teams//notes",
		"t://teams/red/notes", "t://teams/%72ed/notes",
	} {
		_, err := reg.ReadResource(t.Context(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: u}, Extra: red})
		if err != nil {
			assert.Equal(t, "Resource not found", rpcError(t, err).Message, u)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, teams := range seen {
		require.Len(t, teams, 1, "the read function got a list: %q", teams)
		assert.Contains(t, []string{"red", ""}, teams[0], "the read function got a team the token does not grant")
	}
	assert.Len(t, seen, 3, "red, %%72ed and the empty team are read: %q", seen)
}

// A cursor shows nothing of where the page ended, even when that is an
// entry of another tenant's (the scan budget ran out on it).
func TestTenantCursorsRevealNothing(t *testing.T) {
	t.Parallel()
	notes := new(teamNotes)
	notes.add("a", "a-visible")
	for i := range 50 {
		notes.add("b", fmt.Sprintf("b-product-personas-%02d", i))
	}
	notes.add("a", "z-visible")
	reg := newRegistry(t, &resource.Options{Authorize: teamPolicy, PageSize: 1, ScanBudget: 10, Logger: quietLogger()})
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note"}, nil2,
		resource.WithInstances(notes.rows.List)))
	server, err := reg.NewServer(&mcp.Implementation{Name: "cursors"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(auth.RequireBearerToken(verifyToken, nil)(handler))
	t.Cleanup(hs.Close)
	cs := mcptest.ConnectHTTP(t, hs.URL, "alice-token", "2026-07-28", nil)
	var seen []string
	params := &mcp.ListResourcesParams{}
	for range 100 {
		res, err := cs.ListResources(t.Context(), params)
		require.NoError(t, err)
		for _, r := range res.Resources {
			seen = append(seen, r.URI)
		}
		if res.NextCursor == "" {
			break
		}
		raw, err := base64.RawURLEncoding.DecodeString(res.NextCursor)
		require.NoError(t, err)
		for _, secret := range []string{"prod", "pers", "b-pr", "visi", "note"} {
			assert.NotContains(t, string(raw), secret, "cursor %q", res.NextCursor)
		}
		params = &mcp.ListResourcesParams{Cursor: res.NextCursor}
	}
	assert.Equal(t, []string{"notes://a/a-visible", "notes://a/z-visible"}, seen)
}

// The read cap and the other-URI rule hold over streamable HTTP too,
// stateful for older clients and stateless for 2026-07-28 ones, behind
// bearer tokens.
func TestReadLimitsOverHTTP(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, &resource.Options{Authorize: teamPolicy, MaxReadBytes: 100, Logger: quietLogger()})
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest, v resource.Vars) (*mcp.ReadResourceResult, error) {
			switch v.Get("id") {
			case "big":
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: strings.Repeat("x", 101)}}}, nil
			case "leaky":
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "notes://b/1", Text: "bob's"}}}, nil
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "note"}}}, nil
		}))
	server, err := reg.NewServer(&mcp.Implementation{Name: "limits"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			url := serveWithTokens(t, server)
			cs := mcptest.ConnectHTTP(t, url, "alice-token", version, nil)
			read := func(u string) error {
				_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: u})
				return err
			}
			require.NoError(t, read("notes://a/1"))
			jerr := rpcError(t, read("notes://a/big"))
			assert.EqualValues(t, jsonrpc.CodeInternalError, jerr.Code)
			assert.Equal(t, "Resource too large: over the read cap of 100 bytes", jerr.Message)
			jerr = rpcError(t, read("notes://a/leaky"))
			assert.EqualValues(t, jsonrpc.CodeInternalError, jerr.Code)
			assert.Equal(t, "Internal error", jerr.Message, "bob's note does not go out")
		})
	}
}

// Replicas that share cursor keys continue each other's walks, in every
// era, and still refuse a cursor to any caller but the one it was issued
// to; a replica with other keys refuses it.
func TestReplicasShareCursors(t *testing.T) {
	t.Parallel()
	notes := new(teamNotes)
	for i := range 20 {
		notes.add("a", fmt.Sprintf("a-%02d", i))
		notes.add("b", fmt.Sprintf("b-%02d", i))
	}
	shared := [][]byte{[]byte("a key every replica holds, 32 b")}
	replica := func(keys [][]byte) string {
		codec, err := cursor.NewCodec(&cursor.Options{Keys: keys})
		require.NoError(t, err)
		reg := newRegistry(t, &resource.Options{Authorize: teamPolicy, PageSize: 3, Cursors: codec, Logger: quietLogger()})
		require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note"}, nil2,
			resource.WithInstances(notes.rows.List)))
		server, err := reg.NewServer(&mcp.Implementation{Name: "replica"}, &mcp.ServerOptions{Logger: quietLogger()})
		require.NoError(t, err)
		return serveWithTokens(t, server)
	}
	a, b, other := replica(shared), replica(shared), replica([][]byte{[]byte("another deployment's key, 32 by")})
	for _, version := range allVersions {
		t.Run(version, func(t *testing.T) {
			first, err := mcptest.ConnectHTTP(t, a, "alice-token", version, nil).ListResources(t.Context(), nil)
			require.NoError(t, err)
			require.Len(t, first.Resources, 3)
			require.NoError(t, mcptest.ContinueWalk(t, mcptest.ConnectHTTP(t, b, "alice-token", version, nil), first),
				"alice's walk goes on at the other replica")
			for name, cs := range map[string]*mcp.ClientSession{
				"bob at the other replica":    mcptest.ConnectHTTP(t, b, "bob-token", version, nil),
				"alice at another deployment": mcptest.ConnectHTTP(t, other, "alice-token", version, nil),
			} {
				_, err := cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: first.NextCursor})
				jerr := rpcError(t, err)
				assert.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code, name)
				assert.Equal(t, "invalid cursor", jerr.Message, name)
			}
		})
	}
}
