package resource_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// versions are the protocol versions every protocol test runs under.
var versions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

// forEachVersion runs f as a subtest per protocol version.
func forEachVersion(t *testing.T, f func(t *testing.T, version string)) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) { f(t, v) })
	}
}

type harness struct {
	server  *mcp.Server
	session *mcp.ClientSession
}

// connect mounts reg on a new server made with sopts, as a server made
// elsewhere would be, and connects a go-sdk client with copts to it over
// the in-memory transport, negotiating version.
func connect(t *testing.T, reg *resource.Registry, version string, sopts *mcp.ServerOptions, copts *mcp.ClientOptions) harness {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "v0"}, sopts)
	resource.Mount(server, reg)
	return harness{server: server, session: mcptest.Connect(t, server, version, copts)}
}

// rpcError returns the JSON-RPC error inside err, failing the test if there
// is none.
func rpcError(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	require.Error(t, err)
	var jerr *jsonrpc.Error
	require.True(t, errors.As(err, &jerr), "error %v (%T) is not a JSON-RPC error", err, err)
	return jerr
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newRegistry returns a registry with opts, closed when t ends.
func newRegistry(t testing.TB, opts *resource.Options) *resource.Registry {
	t.Helper()
	reg, err := resource.NewRegistry(opts)
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	return reg
}

func TestCapabilities(t *testing.T) {
	t.Parallel()
	forEachVersion(t, func(t *testing.T, version string) {
		h := connect(t, newRegistry(t, nil), version, nil, nil)
		caps := h.session.InitializeResult().Capabilities
		require.NotNil(t, caps.Resources, "resources capability")
		assert.True(t, caps.Resources.ListChanged, "resources.listChanged")
		assert.NotNil(t, caps.Completions, "completions capability")
	})
}

func TestListAllMetadata(t *testing.T) {
	t.Parallel()
	full := &mcp.Resource{
		URI:         "test://full",
		Name:        "full",
		Title:       "Full metadata",
		Description: "every field set",
		MIMEType:    "text/plain",
		Size:        11,
		Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.5, LastModified: "2026-11-20T10:00:00Z"},
		Icons:       []mcp.Icon{{Source: "https://example.com/i.png", MIMEType: "image/png", Sizes: []string{"48x48"}}},
		Meta:        mcp.Meta{"example.com/owner": "team-a"},
	}
	tmpl := &mcp.ResourceTemplate{
		URITemplate: "test://items/{id}",
		Name:        "item",
		Title:       "Item",
		Description: "one item",
		MIMEType:    "application/json",
		Annotations: &mcp.Annotations{Priority: 1},
		Icons:       []mcp.Icon{{Source: "https://example.com/t.png"}},
		Meta:        mcp.Meta{"k": "v"},
	}
	reg := newRegistry(t, nil)
	require.NoError(t, reg.Add(full, resource.Text("hello world")))
	require.NoError(t, reg.AddTemplate(tmpl, func(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
		return nil, resource.ErrNotFound
	}))
	forEachVersion(t, func(t *testing.T, version string) {
		h := connect(t, reg, version, nil, nil)
		ctx := context.Background()
		lr, err := h.session.ListResources(ctx, nil)
		require.NoError(t, err)
		require.Len(t, lr.Resources, 1)
		assert.Equal(t, full, lr.Resources[0])
		assert.Empty(t, lr.NextCursor)

		tr, err := h.session.ListResourceTemplates(ctx, nil)
		require.NoError(t, err)
		require.Len(t, tr.ResourceTemplates, 1)
		assert.Equal(t, tmpl, tr.ResourceTemplates[0])
	})
}

func TestListPaginates(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, &resource.Options{PageSize: 7})
	var want []string
	for i := range 50 {
		u := fmt.Sprintf("test://r/%03d", i)
		want = append(want, u)
		require.NoError(t, reg.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)))
	}
	forEachVersion(t, func(t *testing.T, version string) {
		h := connect(t, reg, version, nil, nil)
		var got []string
		pages := 0
		for r, err := range h.session.Resources(context.Background(), nil) {
			require.NoError(t, err)
			got = append(got, r.URI)
		}
		// Count pages by hand, checking the last one has no cursor.
		cursor := ""
		for {
			res, err := h.session.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: cursor})
			require.NoError(t, err)
			pages++
			assert.LessOrEqual(t, len(res.Resources), 7)
			if res.NextCursor == "" {
				break
			}
			cursor = res.NextCursor
		}
		assert.Equal(t, want, got)
		assert.Equal(t, 8, pages) // ceil(50/7)
	})
}

func TestListCursorErrors(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, &resource.Options{PageSize: 1})
	for _, u := range []string{"test://a", "test://b"} {
		require.NoError(t, reg.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)))
	}
	for _, p := range []string{"test://t/{a}", "test://u/{b}"} {
		require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: p, Name: p}, nil2))
	}
	forEachVersion(t, func(t *testing.T, version string) {
		h := connect(t, reg, version, nil, nil)
		ctx := context.Background()
		first, err := h.session.ListResources(ctx, nil)
		require.NoError(t, err)
		require.NotEmpty(t, first.NextCursor)

		for _, bad := range []string{"garbage!", "AAAA", first.NextCursor + "x"} {
			_, err := h.session.ListResources(ctx, &mcp.ListResourcesParams{Cursor: bad})
			jerr := rpcError(t, err)
			assert.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code, "cursor %q", bad)
			assert.Equal(t, "invalid cursor", jerr.Message)
		}
		// A resources/list cursor means nothing to resources/templates/list.
		_, err = h.session.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: first.NextCursor})
		assert.EqualValues(t, jsonrpc.CodeInvalidParams, rpcError(t, err).Code)
	})
}

func nil2(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
	return nil, resource.ErrNotFound
}

func TestReadStatic(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n fake")
	reg := newRegistry(t, nil)
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://readme", Name: "readme", MIMEType: "text/markdown"}, resource.Text("# Hello")))
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://logo", Name: "logo", MIMEType: "image/png"}, resource.Bytes(png)))
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://own", Name: "own", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: "test://own#part", MIMEType: "text/csv", Text: "a,b"},
			}}, nil
		}))
	forEachVersion(t, func(t *testing.T, version string) {
		h := connect(t, reg, version, nil, nil)
		ctx := context.Background()
		res, err := h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://readme"})
		require.NoError(t, err)
		assert.Equal(t, []*mcp.ResourceContents{{URI: "test://readme", MIMEType: "text/markdown", Text: "# Hello"}}, res.Contents)

		res, err = h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://logo"})
		require.NoError(t, err)
		assert.Equal(t, []*mcp.ResourceContents{{URI: "test://logo", MIMEType: "image/png", Blob: png}}, res.Contents)

		// Fields the read function set are kept.
		res, err = h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://own"})
		require.NoError(t, err)
		assert.Equal(t, []*mcp.ResourceContents{{URI: "test://own#part", MIMEType: "text/csv", Text: "a,b"}}, res.Contents)
	})
}

func TestReadTemplateDecodesVariables(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	var got sync.Map
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://notes/{folder}/{name}", Name: "note", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			got.Store(req.Params.URI, vars)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: vars.Get("folder") + "|" + vars.Get("name")}}}, nil
		}))
	forEachVersion(t, func(t *testing.T, version string) {
		h := connect(t, reg, version, nil, nil)
		u := "test://notes/team%20a/my%20note%C3%A9"
		res, err := h.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: u})
		require.NoError(t, err)
		assert.Equal(t, []*mcp.ResourceContents{{URI: u, MIMEType: "text/plain", Text: "team a|my noteé"}}, res.Contents)
		vars, _ := got.Load(u)
		assert.Equal(t, map[string]uritemplate.Value{
			"folder": uritemplate.StringValue("team a"),
			"name":   uritemplate.StringValue("my noteé"),
		}, vars.(resource.Vars).Map())
	})
}

func TestReadErrors(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	reg := newRegistry(t, &resource.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil)), MaxURILength: 64})
	readFails := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, errors.New("dial tcp 10.0.0.7:5432: connection refused")
	}
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://fails", Name: "fails"}, readFails))
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://panics", Name: "panics"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) { panic("boom") }))
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://empty", Name: "empty"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}, nil
		}))
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://ok", Name: "ok"}, resource.Text("ok")))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://rows/{id}", Name: "row"},
		func(_ context.Context, _ *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			return nil, fmt.Errorf("row %s: %w", vars.Get("id"), resource.ErrNotFound)
		}))

	forEachVersion(t, func(t *testing.T, version string) {
		h := connect(t, reg, version, nil, nil)
		ctx := context.Background()
		read := func(u string) error {
			_, err := h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
			return err
		}
		notFound := int64(resource.CodeLegacyResourceNotFound)
		if version >= "2026-07-28" {
			notFound = jsonrpc.CodeInvalidParams
		}

		// Unknown URI, and ErrNotFound wrapped by a template's read function.
		for _, u := range []string{"test://nope", "test://rows/42"} {
			jerr := rpcError(t, read(u))
			assert.Equal(t, notFound, jerr.Code, u)
			assert.Equal(t, "Resource not found", jerr.Message)
			assert.JSONEq(t, fmt.Sprintf(`{"uri":%q}`, u), string(jerr.Data))
		}

		// Malformed URIs: -32602 saying why.
		for u, why := range map[string]string{
			"relative/path":                     "no scheme",
			"test://" + strings.Repeat("x", 64): "too long",
			"postgres://user:pass@db/app":       "userinfo",
			"test://a b":                        "character",
			"test://%zz":                        "percent-escape",
			"":                                  "empty",
		} {
			jerr := rpcError(t, read(u))
			assert.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code, u)
			assert.Contains(t, jerr.Message, why, u)
		}

		// A failing read function: -32603 with nothing internal; the detail is logged.
		jerr := rpcError(t, read("test://fails"))
		assert.EqualValues(t, jsonrpc.CodeInternalError, jerr.Code)
		assert.Equal(t, "Internal error", jerr.Message)
		assert.NotContains(t, string(jerr.Data), "10.0.0.7")
		assert.Contains(t, logs.String(), "connection refused")
		assert.Contains(t, logs.String(), `"uri":"test://fails"`)
		assert.Contains(t, logs.String(), `"session_id"`)

		// A panicking read function: -32603, and the server keeps serving.
		jerr = rpcError(t, read("test://panics"))
		assert.EqualValues(t, jsonrpc.CodeInternalError, jerr.Code)
		assert.Equal(t, "Internal error", jerr.Message)
		assert.Contains(t, logs.String(), "boom")
		require.NoError(t, read("test://ok"))

		// Empty contents are never sent.
		assert.EqualValues(t, jsonrpc.CodeInternalError, rpcError(t, read("test://empty")).Code)
	})
}

// Options.NotFound chooses the code of clients before 2026-07-28; a
// 2026-07-28 client gets -32602 whatever it says, since its version
// forbids -32002.
func TestNotFoundCodeOption(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opt                resource.NotFoundCode
		before, from202607 int64
	}{
		{resource.NotFoundByVersion, resource.CodeLegacyResourceNotFound, jsonrpc.CodeInvalidParams},
		{resource.NotFoundInvalidParams, jsonrpc.CodeInvalidParams, jsonrpc.CodeInvalidParams},
	} {
		reg := newRegistry(t, &resource.Options{NotFound: tc.opt})
		forEachVersion(t, func(t *testing.T, version string) {
			h := connect(t, reg, version, nil, nil)
			_, err := h.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "test://missing"})
			jerr := rpcError(t, err)
			want := tc.before
			if version >= "2026-07-28" {
				want = tc.from202607
			}
			assert.Equal(t, want, jerr.Code, "NotFound %d", tc.opt)
			assert.JSONEq(t, `{"uri":"test://missing"}`, string(jerr.Data))
		})
	}
}

func TestCacheHints(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, &resource.Options{Cache: resource.Cache{TTL: 30 * time.Second}})
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://default", Name: "d"}, resource.Text("d")))
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://private", Name: "p"}, resource.Text("p"),
		resource.WithCache(resource.Cache{TTL: 1500 * time.Millisecond, Scope: resource.Private})))
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://own", Name: "o"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "o"}}}
			res.TTLMs = 7
			return res, nil
		}, resource.WithCache(resource.Cache{TTL: time.Hour})))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://t/{x}", Name: "t"},
		func(_ context.Context, _ *mcp.ReadResourceRequest, v resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: v.Get("x")}}}, nil
		}, resource.WithCache(resource.Cache{Scope: resource.Private})))

	forEachVersion(t, func(t *testing.T, version string) {
		h := connect(t, reg, version, nil, nil)
		ctx := context.Background()
		for u, want := range map[string]mcp.Cacheable{
			"test://default": {TTLMs: 30000, CacheScope: "public"},
			"test://private": {TTLMs: 1500, CacheScope: "private"},
			"test://own":     {TTLMs: 7, CacheScope: "public"},
			"test://t/1":     {TTLMs: 0, CacheScope: "private"},
		} {
			res, err := h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
			require.NoError(t, err)
			assert.Equal(t, want, res.Cacheable, u)
		}
		lr, err := h.session.ListResources(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, mcp.Cacheable{TTLMs: 30000, CacheScope: "public"}, lr.Cacheable)
	})
}

// TestReadFinishedByServer checks that reads pass through go-sdk's own
// resources/read: 2026-07-28 clients get resultType "complete", and
// ServerOptions.SetCacheable has the last word on caching hints.
func TestReadFinishedByServer(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, &resource.Options{Cache: resource.Cache{TTL: time.Second}})
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://a", Name: "a"}, resource.Text("a")))
	setCacheable := func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
		if _, ok := req.(*mcp.ReadResourceRequest); ok {
			c.TTLMs *= 2
		}
	}
	forEachVersion(t, func(t *testing.T, version string) {
		h := connect(t, reg, version, &mcp.ServerOptions{SetCacheable: setCacheable}, nil)
		res, err := h.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "test://a"})
		require.NoError(t, err)
		assert.Equal(t, 2000, res.TTLMs, "SetCacheable applied after the registry's hint")
		raw, err := json.Marshal(res)
		require.NoError(t, err)
		if version >= "2026-07-28" {
			assert.Contains(t, string(raw), `"resultType":"complete"`)
		} else {
			assert.NotContains(t, string(raw), `"resultType"`)
		}
	})
}

// A burst of changes within Options.ListChangedDelay is exactly one
// notifications/resources/list_changed, in every protocol version;
// removing nothing sends none.
func TestListChangedDebounced(t *testing.T) {
	t.Parallel()
	forEachVersion(t, func(t *testing.T, version string) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			const delay = 20 * time.Millisecond
			reg := newRegistry(t, &resource.Options{ListChangedDelay: delay})
			var notes atomic.Int32
			h := connect(t, reg, version, nil, &mcp.ClientOptions{
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { notes.Add(1) },
			})
			// settled waits long enough for any notification to arrive (the
			// registry's delay, then go-sdk's own), and returns how many did.
			settled := func() int32 {
				time.Sleep(time.Second)
				synctest.Wait()
				return notes.Swap(0)
			}
			require.Zero(t, settled(), "connecting")
			for i := range 1000 {
				require.NoError(t, reg.Add(&mcp.Resource{URI: fmt.Sprintf("test://burst/%d", i), Name: "b"}, resource.Text("b")))
			}
			assert.Equal(t, int32(1), settled(), "a burst of 1,000 adds")

			// Two bursts a delay apart are two notifications.
			reg.NotifyListChanged()
			time.Sleep(delay + 10*time.Millisecond) // go-sdk adds its own 10 ms
			synctest.Wait()
			assert.Equal(t, int32(1), notes.Load(), "the first burst, once its delay is over")
			reg.NotifyListChanged()
			assert.Equal(t, int32(2), settled(), "two bursts")

			assert.Equal(t, 1000, reg.Remove(uris("test://burst/%d", 1000)...))
			assert.Equal(t, int32(1), settled(), "removing 1,000")
			assert.Equal(t, 0, reg.Remove("test://never-added"))
			assert.Zero(t, settled(), "removing nothing must not notify")

			lr, err := h.session.ListResources(t.Context(), nil)
			require.NoError(t, err)
			assert.Empty(t, lr.Resources)
		})
	})
}

// uris returns format formatted with 0 to n-1.
func uris(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

func TestConcurrentChangesAndRequests(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, &resource.Options{PageSize: 40, Logger: quietLogger()})
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://tmpl/{n}", Name: "t"},
		func(_ context.Context, _ *mcp.ReadResourceRequest, v resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: v.Get("n")}}}, nil
		}))
	forEachVersion(t, func(t *testing.T, version string) {
		h := connect(t, reg, version, nil, nil)
		ctx := context.Background()
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() { // writers
				for i := range 100 {
					u := fmt.Sprintf("test://c/%d/%d", w, i)
					if err := reg.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)); err != nil {
						t.Error(err)
					}
					if i%3 == 0 {
						reg.Remove(u)
					}
				}
			})
			wg.Go(func() { // readers
				for i := range 20 {
					for _, err := range h.session.Resources(ctx, nil) {
						if err != nil {
							t.Error(err)
							break
						}
					}
					u := fmt.Sprintf("test://tmpl/%d", i)
					res, err := h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
					if err != nil {
						t.Error(err)
						continue
					}
					assert.Equal(t, fmt.Sprint(i), res.Contents[0].Text)
					_, err = h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: fmt.Sprintf("test://c/%d/%d", w, i)})
					if err != nil && rpcError(t, err).Message != "Resource not found" {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		for w := range 4 {
			reg.Remove(uris(fmt.Sprintf("test://c/%d/%%d", w), 100)...)
		}
	})
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, &resource.Options{Logger: quietLogger()})
	langs := []string{"go", "gleam", "groovy", "haskell", "python"}
	var many []string
	for i := range 250 {
		many = append(many, fmt.Sprintf("item-%03d", i))
	}
	var bound atomic.Value
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://repos/{lang}/{name}", Name: "repo"}, nil2,
		resource.WithCompleter("lang", func(_ context.Context, partial string, args map[string]string) ([]string, error) {
			var out []string
			for _, l := range langs {
				if strings.HasPrefix(l, partial) {
					out = append(out, l)
				}
			}
			return out, nil
		}),
		resource.WithCompleter("name", func(_ context.Context, partial string, args map[string]string) ([]string, error) {
			bound.Store(args)
			return many, nil
		})))
	forEachVersion(t, func(t *testing.T, version string) {
		h := connect(t, reg, version, nil, nil)
		ctx := context.Background()
		complete := func(uri, arg, value string, ctxArgs map[string]string) (*mcp.CompleteResult, error) {
			p := &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: uri},
				Argument: mcp.CompleteParamsArgument{Name: arg, Value: value},
			}
			if ctxArgs != nil {
				p.Context = &mcp.CompleteContext{Arguments: ctxArgs}
			}
			return h.session.Complete(ctx, p)
		}
		res, err := complete("test://repos/{lang}/{name}", "lang", "g", nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"go", "gleam", "groovy"}, res.Completion.Values)
		assert.Equal(t, 3, res.Completion.Total)
		assert.False(t, res.Completion.HasMore)

		res, err = complete("test://repos/{lang}/{name}", "name", "", map[string]string{"lang": "go"})
		require.NoError(t, err)
		assert.Len(t, res.Completion.Values, 100)
		assert.Equal(t, 250, res.Completion.Total)
		assert.True(t, res.Completion.HasMore)
		assert.Equal(t, map[string]string{"lang": "go"}, bound.Load())

		for _, bad := range [][2]string{{"test://nope/{x}", "x"}, {"test://repos/{lang}/{name}", "owner"}} {
			_, err := complete(bad[0], bad[1], "", nil)
			assert.EqualValues(t, jsonrpc.CodeInvalidParams, rpcError(t, err).Code, bad)
		}
	})
}

func TestSubscribeValidation(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://watched", Name: "w"}, resource.Text("w")))
	forEachVersion(t, func(t *testing.T, version string) {
		updates := make(chan string, 10)
		h := connect(t, reg, version,
			&mcp.ServerOptions{SubscribeHandler: reg.Subscribe, UnsubscribeHandler: reg.Unsubscribe},
			&mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				updates <- req.Params.URI
			}})
		ctx := context.Background()
		assert.True(t, h.session.InitializeResult().Capabilities.Resources.Subscribe)

		require.NoError(t, h.session.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://watched"}))
		// The 2026-07-28 subscription is a listen stream opened in the
		// background: retry the update until it is delivered.
		deadline := time.After(10 * time.Second)
		for delivered := false; !delivered; {
			reg.Changed("test://watched")
			select {
			case u := <-updates:
				assert.Equal(t, "test://watched", u)
				delivered = true
			case <-time.After(50 * time.Millisecond):
			case <-deadline:
				t.Fatal("no notifications/resources/updated")
			}
		}
		if version < "2026-07-28" {
			err := h.session.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://unknown"})
			jerr := rpcError(t, err)
			assert.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code)
			assert.Contains(t, jerr.Message, "no such resource")
		}
	})
}

// TestHandlersWithoutMount calls the handlers as plain functions, the way a
// server that routes requests itself would.
func TestHandlersWithoutMount(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://a", Name: "a", MIMEType: "text/plain"}, resource.Text("A")))
	ctx := context.Background()

	lr, err := reg.ListResources(ctx, &mcp.ListResourcesRequest{})
	require.NoError(t, err)
	require.Len(t, lr.Resources, 1)

	rr, err := reg.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "test://a"}})
	require.NoError(t, err)
	assert.Equal(t, "A", rr.Contents[0].Text)
	assert.Equal(t, "text/plain", rr.Contents[0].MIMEType)

	_, err = reg.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "test://b"}})
	jerr := rpcError(t, err)
	assert.EqualValues(t, resource.CodeLegacyResourceNotFound, jerr.Code, "no session: no 2026-07-28 version known")

	for _, req := range []*mcp.ReadResourceRequest{nil, {}} {
		_, err = reg.ReadResource(ctx, req)
		assert.EqualValues(t, jsonrpc.CodeInvalidParams, rpcError(t, err).Code)
	}
	tr, err := reg.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	assert.NotNil(t, tr.ResourceTemplates)
	raw, err := json.Marshal(tr)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"resourceTemplates":[]`, "an empty list is [], not null")
}

func TestAddRejectsBadInput(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	read := resource.Text("x")
	for name, err := range map[string]error{
		"nil resource":      reg.Add(nil, read),
		"nil read":          reg.Add(&mcp.Resource{URI: "test://x", Name: "x"}, nil),
		"relative URI":      reg.Add(&mcp.Resource{URI: "x", Name: "x"}, read),
		"userinfo":          reg.Add(&mcp.Resource{URI: "db://u:p@h/x", Name: "x"}, read),
		"no name":           reg.Add(&mcp.Resource{URI: "test://x"}, read),
		"bad cache scope":   reg.Add(&mcp.Resource{URI: "test://x", Name: "x"}, read, resource.WithCache(resource.Cache{Scope: "shared"})),
		"bad template":      reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://{x", Name: "t"}, nil2),
		"no scheme":         reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "{scheme}://x", Name: "t"}, nil2),
		"nil template read": reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://{x}", Name: "t"}, nil),
		"unknown completer variable": reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://{x}", Name: "t"}, nil2,
			resource.WithCompleter("y", func(context.Context, string, map[string]string) ([]string, error) { return nil, nil })),
	} {
		assert.Error(t, err, name)
	}
	lr, err := reg.ListResources(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, lr.Resources, "a refused Add changes nothing")
	tr, err := reg.ListResourceTemplates(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, tr.ResourceTemplates)
}

func TestReplaceAndRemoveTemplates(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	mk := func(text string) resource.TemplateReadFunc {
		return func(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
		}
	}
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://a/{x}", Name: "a"}, mk("first")))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://a/{x}", Name: "a2"}, mk("second")))
	ctx := context.Background()
	read := func() (string, error) {
		res, err := reg.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "test://a/1"}})
		if err != nil {
			return "", err
		}
		return res.Contents[0].Text, nil
	}
	got, err := read()
	require.NoError(t, err)
	assert.Equal(t, "second", got)
	tr, _ := reg.ListResourceTemplates(ctx, nil)
	require.Len(t, tr.ResourceTemplates, 1)
	assert.Equal(t, "a2", tr.ResourceTemplates[0].Name)

	assert.Equal(t, 1, reg.RemoveTemplates("test://a/{x}", "test://other/{y}"))
	_, err = read()
	assert.Equal(t, "Resource not found", rpcError(t, err).Message)
}
