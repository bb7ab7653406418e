package resource_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echoVars is a template read function that answers with the variables
// it was given, name=value, one per line.
func echoVars(_ context.Context, _ *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
	var b strings.Builder
	for _, name := range vars.Template().Varnames() {
		if vars.Has(name) {
			b.WriteString(name + "=" + vars.Get(name) + "\n")
		}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: b.String()}}}, nil
}

func TestExpand(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{collection}/{name}", Name: "note", MIMEType: "text/plain"}, echoVars))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "file:///{+path}{?v}", Name: "file", MIMEType: "text/plain"}, echoVars))

	for _, tc := range []struct {
		tmpl string
		args []string
		want string
		vars string
	}{
		{"notes://{collection}/{name}", []string{"collection", "team", "name", "gamma ray"}, "notes://team/gamma%20ray", "collection=team\nname=gamma ray\n"},
		{"notes://{collection}/{name}", []string{"name", "a/b?c#d", "collection", "café"}, "notes://caf%C3%A9/a%2Fb%3Fc%23d", "collection=café\nname=a/b?c#d\n"},
		{"file:///{+path}{?v}", []string{"path", "notes/2026/meeting notes.md"}, "file:///notes/2026/meeting%20notes.md", "path=notes/2026/meeting notes.md\n"},
		{"file:///{+path}{?v}", []string{"path", "a.md", "v", "3"}, "file:///a.md?v=3", "path=a.md\nv=3\n"},
	} {
		got, err := reg.Expand(tc.tmpl, tc.args...)
		require.NoError(t, err, tc.args)
		assert.Equal(t, tc.want, got)
		// The URI reads back, through the protocol, to the values given.
		cs := mcptest.Connect(t, serverFor(t, reg), "2026-07-28", nil)
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: got})
		require.NoError(t, err, got)
		assert.Equal(t, tc.vars, res.Contents[0].Text, got)
	}

	for name, tc := range map[string]struct {
		tmpl string
		args []string
		is   error
	}{
		"unknown template": {"nope://{x}", []string{"x", "1"}, resource.ErrNotFound},
		"odd arguments":    {"notes://{collection}/{name}", []string{"collection"}, nil},
		"unknown variable": {"notes://{collection}/{name}", []string{"colection", "a"}, nil},
		"repeated":         {"notes://{collection}/{name}", []string{"name", "a", "name", "b"}, nil},
		"invalid UTF-8":    {"notes://{collection}/{name}", []string{"name", "\xff"}, nil},
	} {
		u, err := reg.Expand(tc.tmpl, tc.args...)
		require.Error(t, err, name)
		assert.Empty(t, u, name)
		if tc.is != nil {
			assert.ErrorIs(t, err, tc.is, name)
		}
	}
}

// serverFor returns a server made with NewServer for reg.
func serverFor(t *testing.T, reg *resource.Registry) *mcp.Server {
	t.Helper()
	server, err := reg.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	return server
}

// items lists resources under their URIs as keys, in order.
func items(uris ...string) []cursor.Item[*mcp.Resource] {
	out := make([]cursor.Item[*mcp.Resource], len(uris))
	for i, u := range uris {
		out[i] = cursor.Item[*mcp.Resource]{Key: u, Value: &mcp.Resource{URI: u, Name: u}}
	}
	return out
}

// sliceList lists all as a ListFunc, from after on.
func sliceList(all []cursor.Item[*mcp.Resource]) resource.ListFunc {
	return func(_ context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
		var out []cursor.Item[*mcp.Resource]
		for _, it := range all {
			if it.Key > after && len(out) < limit {
				out = append(out, it)
			}
		}
		return out, nil
	}
}

// A URI a provider or an instance list lists that no client could send
// back is left out of every page, without shortening the walk, and
// reported to the logger once for the source, naming it and the first
// such URI.
func TestListedURIsChecked(t *testing.T) {
	t.Parallel()
	listed := items("notes://a", "notes://b c", "notes://d", "notes://e%zz", "notes://f", "notes://g", "notes://h")
	instances := items("tasks://1", "tasks://2 3", "tasks://4")
	for _, version := range allVersions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			logs := &syncBuffer{}
			reg := newRegistry(t, &resource.Options{PageSize: 2, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			require.NoError(t, reg.AddProvider("notes", sliceList(listed)))
			require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{name}", Name: "note"}, echoVars))
			require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "tasks://{id}", Name: "task"}, echoVars,
				resource.WithInstances(sliceList(instances))))
			cs := mcptest.Connect(t, serverFor(t, reg), version, nil)
			for range 2 { // a second walk reports nothing new
				pages := mcptest.ListPages(t, cs)
				var got []string
				for _, page := range pages {
					for _, res := range page {
						got = append(got, res.URI)
					}
				}
				assert.Equal(t, []string{"notes://a", "notes://d", "notes://f", "notes://g", "notes://h", "tasks://1", "tasks://4"}, got)
				assert.Len(t, pages, 4, "pages of two, the bad URIs passed over")
			}
			out := logs.String()
			assert.Equal(t, 2, strings.Count(out, `"level":"ERROR"`), "one line for each source and reason: %s", out)
			assert.Equal(t, 1, strings.Count(out, `"uri":"notes://b c"`), "the first bad URI names them: %s", out)
			assert.Equal(t, 1, strings.Count(out, `"uri":"tasks://2 3"`), out)
			assert.Contains(t, out, `"source":"notes"`)
			assert.Contains(t, out, `"source":"tasks://{id}"`)
			assert.Contains(t, out, `notes://b%20c`, "the log says what a client would send")
		})
	}
}

// A provider's slice is not changed when a bad URI is left out: it may be
// shared between calls.
func TestListedURIsLeaveProviderSlice(t *testing.T) {
	t.Parallel()
	shared := items("notes://a", "notes://b c")
	reg := newRegistry(t, &resource.Options{Logger: quietLogger()})
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{name}", Name: "note"}, echoVars))
	require.NoError(t, reg.AddProvider("notes", func(context.Context, string, int) ([]cursor.Item[*mcp.Resource], error) {
		return shared[:len(shared):len(shared)], nil
	}))
	res, err := reg.ListResources(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, res.Resources, 1)
	assert.Equal(t, "notes://b c", shared[1].Value.URI)
}

func TestChangedRefusesWhatNoClientSubscribes(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	require.NoError(t, reg.Add(&mcp.Resource{URI: "log://prod/api", Name: "api"}, resource.Text("x")))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{name}", Name: "note"}, echoVars))

	for _, u := range []string{"log://prod/api", "notes://gamma%20ray", "notes://x"} {
		assert.NoError(t, reg.Changed(u), u)
	}
	err := reg.Changed("notes://gamma ray")
	require.ErrorIs(t, err, resource.ErrInvalidURI)
	assert.Contains(t, err.Error(), `"notes://gamma%20ray"`, "the error names the URI a client would send")
	assert.ErrorIs(t, reg.Changed("relative/path"), resource.ErrInvalidURI)
	assert.ErrorIs(t, reg.Changed("other://x"), resource.ErrNotFound)
	assert.ErrorIs(t, reg.Changed("log://prod/web"), resource.ErrNotFound)

	for _, p := range []string{"", "log", "log://prod/", "notes://gamma%2"} {
		assert.NoError(t, reg.ChangedPrefix(p), p)
	}
	for _, p := range []string{"log://prod/ api", "notes://%zz", "1log://"} {
		assert.ErrorIs(t, reg.ChangedPrefix(p), resource.ErrInvalidURI, p)
	}

	assert.NoError(t, reg.ChangedTemplate("notes://{name}"))
	assert.ErrorIs(t, reg.ChangedTemplate("notes://{id}"), resource.ErrNotFound)
}

// A subscribed URI is reported without a check, and a bad one notifies
// no one.
func TestChangedNotifiesOnlyGoodURIs(t *testing.T) {
	t.Parallel()
	forEachEra(t, func(t *testing.T, version string) {
		s := newSubscriptions(t, nil)
		w := s.watch(t, version)
		w.subscribe(t, "db://users/a%20b")
		require.NoError(t, s.reg.Changed("db://users/a%20b"))
		require.ErrorIs(t, s.reg.Changed("db://users/a b"), resource.ErrInvalidURI)
		settle()
		assert.Equal(t, []string{"db://users/a%20b"}, w.taken())
	})
}

// With WithExists, a subscription to an instance that does not exist is
// refused as one to a URI no template matches; a failing check is an
// internal error; a template without one accepts every match.
func TestSubscribeOnlyWhatExists(t *testing.T) {
	t.Parallel()
	forEachEra(t, func(t *testing.T, version string) {
		s := newSubscriptions(t, &resource.Options{Logger: quietLogger()})
		var asked []string
		require.NoError(t, s.reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "rows://{table}/{id}", Name: "row"}, echoVars,
			resource.WithExists(func(_ context.Context, vars resource.Vars) (bool, error) {
				asked = append(asked, vars.Get("table")+"/"+vars.Get("id"))
				switch vars.Get("id") {
				case "boom":
					return false, errors.New("db down")
				case "panic":
					panic("bug")
				case "gone":
					return false, resource.ErrNotFound
				}
				return vars.Get("table") == "users" && vars.Get("id") == "1", nil
			})))
		w := s.watch(t, version)
		w.subscribe(t, "rows://users/1")
		for uri, code := range map[string]int64{
			"rows://users/2":     jsonrpc.CodeInvalidParams,
			"rows://nope/1":      jsonrpc.CodeInvalidParams,
			"rows://users/gone":  jsonrpc.CodeInvalidParams,
			"rows://users/boom":  jsonrpc.CodeInternalError,
			"rows://users/panic": jsonrpc.CodeInternalError,
		} {
			jerr := rpcError(t, s.subscribeError(t, w, version, uri))
			assert.Equal(t, code, jerr.Code, uri)
			if code == jsonrpc.CodeInvalidParams {
				assert.Equal(t, `cannot subscribe to "`+uri+`": no such resource`, jerr.Message)
			}
		}
		assert.Equal(t, 1, s.stats(), "only the existing row is watched")
		assert.Contains(t, asked, "users/1")
		// Without WithExists, every match is accepted.
		w.subscribe(t, "db://users/12345")
		assert.Equal(t, 2, s.stats())
	})
}

// The existence check runs after the Authorizer: a caller it denies
// learns nothing from it, and it is never asked.
func TestExistsAfterAuthorizer(t *testing.T) {
	t.Parallel()
	asked := 0
	reg := newRegistry(t, &resource.Options{Logger: quietLogger(), Authorize: func(_ context.Context, a resource.Access) error {
		if a.Var("id") == "secret" {
			return resource.ErrDenied
		}
		return nil
	}})
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "rows://{id}", Name: "row"}, echoVars,
		resource.WithExists(func(context.Context, resource.Vars) (bool, error) { asked++; return true, nil })))
	server, err := reg.NewServer(&mcp.Implementation{Name: "t", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	cs := mcptest.Connect(t, server, "2025-11-25", nil)
	jerr := rpcError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "rows://secret"}))
	assert.Equal(t, `cannot subscribe to "rows://secret": no such resource`, jerr.Message)
	assert.Zero(t, asked)
	require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "rows://open"}))
	assert.Equal(t, 1, asked)
}

// AddTemplate refuses a nil existence check.
func TestWithExistsNil(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	err := reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "rows://{id}", Name: "row"}, echoVars, resource.WithExists(nil))
	require.Error(t, err)
	assert.Zero(t, reg.RemoveTemplates("rows://{id}"), "nothing was added")
}

// A template instance is subscribed to, and reported, under the
// registry's own spelling of it only: another spelling would never hear
// of a change.
func TestSubscribeCanonicalForm(t *testing.T) {
	t.Parallel()
	forEachEra(t, func(t *testing.T, version string) {
		s := newSubscriptions(t, nil)
		w := s.watch(t, version)
		for uri, canon := range map[string]string{
			"db://users/%34%32": "db://users/42",
			"db://users/a%2fb":  "db://users/a%2Fb",
			"db://users/%7Ex":   "db://users/~x",
		} {
			jerr := rpcError(t, s.subscribeError(t, w, version, uri))
			assert.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code, uri)
			assert.Equal(t, `cannot subscribe to "`+uri+`": the server names this resource "`+canon+`"; subscribe to that`, jerr.Message)
			err := s.reg.Changed(uri)
			assert.ErrorIs(t, err, resource.ErrInvalidURI, uri)
			assert.Contains(t, err.Error(), `"`+canon+`"`)
		}
		assert.Zero(t, s.stats())
		w.subscribe(t, "db://users/42", "db://users/a%2Fb")
		require.NoError(t, s.reg.Changed("db://users/42"))
		settle()
		assert.Equal(t, []string{"db://users/42"}, w.taken())
	})
}

// A file template's instances keep their shape: a name with '#', '?', '['
// or ']' is listed, read, subscribed to and reported percent-encoded, and
// the unencoded spelling (a fragment, a query, or no URI at all) is not
// insisted on.
func TestExpandKeepsShape(t *testing.T) {
	t.Parallel()
	forEachEra(t, func(t *testing.T, version string) {
		s := newSubscriptions(t, nil)
		require.NoError(t, s.reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "file:///{+path}", Name: "file"}, echoVars))
		w := s.watch(t, version)
		for name, want := range map[string]string{
			"pages/[id].tsx": "file:///pages/%5Bid%5D.tsx",
			"C#.md":          "file:///C%23.md",
			"a?b":            "file:///a%3Fb",
		} {
			u, err := s.reg.Expand("file:///{+path}", "path", name)
			require.NoError(t, err, name)
			require.Equal(t, want, u)
			res, err := s.reg.ReadResource(t.Context(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: u}})
			require.NoError(t, err, u)
			assert.Equal(t, "path="+name+"\n", res.Contents[0].Text)
			w.subscribe(t, u)
			require.NoError(t, s.reg.Changed(u))
		}
		settle()
		assert.ElementsMatch(t, []string{"file:///pages/%5Bid%5D.tsx", "file:///C%23.md", "file:///a%3Fb"}, w.taken())
		// The unencoded spellings are another resource's, or no URI.
		jerr := rpcError(t, s.subscribeError(t, w, version, "file:///C#.md"))
		assert.Contains(t, jerr.Message, `"file:///C%23.md"`)
	})
}

// A missing instance is missing whatever its spelling: the registry names
// its own spelling only for one that exists.
func TestSubscribeMissingAlias(t *testing.T) {
	t.Parallel()
	forEachEra(t, func(t *testing.T, version string) {
		s := newSubscriptions(t, nil)
		require.NoError(t, s.reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "rows://{id}", Name: "row"}, echoVars,
			resource.WithExists(func(_ context.Context, vars resource.Vars) (bool, error) { return vars.Get("id") == "42", nil })))
		w := s.watch(t, version)
		jerr := rpcError(t, s.subscribeError(t, w, version, "rows://1%20OR%201=1"))
		assert.Equal(t, `cannot subscribe to "rows://1%20OR%201=1": no such resource`, jerr.Message)
		jerr = rpcError(t, s.subscribeError(t, w, version, "rows://%34%32"))
		assert.Equal(t, `cannot subscribe to "rows://%34%32": the server names this resource "rows://42"; subscribe to that`, jerr.Message)
	})
}
