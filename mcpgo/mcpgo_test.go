package mcpgo_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcpres/mcpres/mcptest"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/resource"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests run mcp-go's own client against an mcp-go server that serves
// a registry through mcpgo.WithRegistry, over stdio (the test binary,
// run again as the server) and over streamable HTTP, speaking 2025-11-25
// and 2026-07-28.

// versions are the protocol versions the tests speak.
var versions = []string{"2025-11-25", "2026-07-28"}

// serverEnv, set in the environment, runs the test binary as the stdio
// server (TestMain).
const serverEnv = "MCPGO_TEST_STDIO_SERVER"

// clockURI is the resource the stdio server reports changed every
// clockTick.
const (
	clockURI  = "test://clock"
	clockTick = 50 * time.Millisecond
)

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		if err := serveStdio(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveStdio serves the test registry over stdio, reporting clockURI
// changed every clockTick, until stdin closes.
func serveStdio() error {
	reg, err := newRegistry(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		return err
	}
	defer reg.Close()
	go func() {
		for range time.Tick(clockTick) {
			reg.Changed(clockURI)
		}
	}()
	return server.ServeStdio(server.NewMCPServer("test", "v0.0.1", mcpgo.WithRegistry(reg)))
}

// secret is in the error of test://fails's read function, which no client
// may see.
const secret = "password=hunter2"

// newRegistry returns the registry every test serves: static resources
// (one of them a blob, one whose read fails, clockURI), overlapping
// templates, a provider, and a completer; list pages of 2.
func newRegistry(logger *slog.Logger) (*resource.Registry, error) {
	reg, err := resource.NewRegistry(&resource.Options{Logger: logger, PageSize: 2})
	if err != nil {
		return nil, err
	}
	text := func(s string) resource.ReadFunc { return resource.Text(s) }
	for _, e := range []struct {
		res  *sdk.Resource
		read resource.ReadFunc
	}{
		{&sdk.Resource{URI: "test://a", Name: "a", Title: "A", MIMEType: "text/plain", Size: 1,
			Annotations: &sdk.Annotations{Audience: []sdk.Role{"user"}, Priority: 0.5},
			Meta:        sdk.Meta{"example.com/owner": "team-a"}}, text("a")},
		{&sdk.Resource{URI: "test://b", Name: "b", MIMEType: "application/octet-stream"}, resource.Bytes([]byte{0, 1, 2, 0xff})},
		{&sdk.Resource{URI: clockURI, Name: "clock", MIMEType: "text/plain"}, text("tick")},
		{&sdk.Resource{URI: "test://fails", Name: "fails", MIMEType: "text/plain"},
			func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return nil, errors.New("database said: " + secret)
			}},
	} {
		if err := reg.Add(e.res, e.read); err != nil {
			return nil, err
		}
	}
	// Two templates match test://files/readme: the literal one is the more
	// specific, whatever the order they were added in.
	files := func(which string) resource.TemplateReadFunc {
		return func(_ context.Context, req *sdk.ReadResourceRequest, vars resource.Vars) (*sdk.ReadResourceResult, error) {
			name := vars.Get("name")
			if name == "missing" {
				return nil, resource.ErrNotFound
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{Text: which + ":" + name}}}, nil
		}
	}
	if err := reg.AddTemplate(&sdk.ResourceTemplate{URITemplate: "test://files/{name}", Name: "file", MIMEType: "text/plain"}, files("any"),
		resource.WithCompleter("name", func(_ context.Context, partial string, _ map[string]string) ([]string, error) {
			var out []string
			for _, n := range []string{"alpha", "alpine", "beta"} {
				if strings.HasPrefix(n, partial) {
					out = append(out, n)
				}
			}
			return out, nil
		})); err != nil {
		return nil, err
	}
	if err := reg.AddTemplate(&sdk.ResourceTemplate{URITemplate: "test://files/readme", Name: "readme", MIMEType: "text/plain"}, files("readme")); err != nil {
		return nil, err
	}
	rows := []*sdk.Resource{
		{URI: "test://files/row1", Name: "row1"},
		{URI: "test://files/row2", Name: "row2"},
		{URI: "test://files/row3", Name: "row3"},
	}
	listRows := func(_ context.Context, after string, limit int) ([]cursor.Item[*sdk.Resource], error) {
		var out []cursor.Item[*sdk.Resource]
		for _, r := range rows {
			if r.URI > after && len(out) < limit {
				out = append(out, cursor.Item[*sdk.Resource]{Key: r.URI, Value: r})
			}
		}
		return out, nil
	}
	if err := reg.AddProvider("rows", listRows); err != nil {
		return nil, err
	}
	return reg, nil
}

// wantURIs are the resources the registry lists, in its order: the
// static ones by URI, then the provider's.
var wantURIs = []string{"test://a", "test://b", clockURI, "test://fails", "test://files/row1", "test://files/row2", "test://files/row3"}

// A conn is a client connected to a server serving the test registry.
type conn struct {
	c       *client.Client
	version string
	reg     *resource.Registry // nil over stdio: the server is another process
	notes   chan mcp.JSONRPCNotification
}

// connect starts c, speaking version, and collects its notifications.
func connect(t *testing.T, c *client.Client, version string, reg *resource.Registry) *conn {
	t.Helper()
	cn := &conn{c: c, version: version, reg: reg, notes: make(chan mcp.JSONRPCNotification, 64)}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		select {
		case cn.notes <- n:
		default:
		}
	})
	ctx := t.Context()
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "mcpgo-test", Version: "v0"}
	res, err := c.Initialize(ctx, init)
	require.NoError(t, err)
	require.Equal(t, version, res.ProtocolVersion, "negotiated version")
	return cn
}

// stdioConn runs the test binary as the stdio server and connects to it.
func stdioConn(t *testing.T, version string) *conn {
	t.Helper()
	c, err := client.NewStdioMCPClient(os.Args[0], []string{serverEnv + "=1"}, "-test.run=^$")
	require.NoError(t, err)
	return connect(t, c, version, nil)
}

// httpConn serves a new registry over mcp-go's streamable HTTP and
// connects to it; a legacy client listens on the GET stream.
func httpConn(t *testing.T, version string) *conn {
	t.Helper()
	reg, err := newRegistry(slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	s := server.NewMCPServer("test", "v0.0.1", mcpgo.WithRegistry(reg))
	ts := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(ts.Close)
	var opts []transport.StreamableHTTPCOption
	if !mcp.IsModernProtocol(version) {
		opts = append(opts, transport.WithContinuousListening())
	}
	c, err := client.NewStreamableHttpClient(ts.URL+"/mcp", opts...)
	require.NoError(t, err)
	return connect(t, c, version, reg)
}

// forEach runs f over each transport and protocol version.
func forEach(t *testing.T, f func(t *testing.T, cn *conn)) {
	for _, version := range versions {
		t.Run("stdio/"+version, func(t *testing.T) {
			t.Parallel()
			f(t, stdioConn(t, version))
		})
		t.Run("http/"+version, func(t *testing.T) {
			t.Parallel()
			f(t, httpConn(t, version))
		})
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, cn *conn) {
		ctx := t.Context()
		var got []string
		var cursor mcp.Cursor
		pages := 0
		for {
			req := mcp.ListResourcesRequest{}
			req.Params.Cursor = cursor
			res, err := cn.c.ListResourcesByPage(ctx, req)
			require.NoError(t, err)
			require.LessOrEqual(t, len(res.Resources), 2, "page size")
			for _, r := range res.Resources {
				got = append(got, r.URI)
				if r.URI == "test://a" {
					assert.Equal(t, "A", r.Title)
					require.NotNil(t, r.Size)
					assert.Equal(t, int64(1), *r.Size)
					require.NotNil(t, r.Annotations)
					assert.Equal(t, []mcp.Role{"user"}, r.Annotations.Audience)
					require.NotNil(t, r.Meta)
					assert.Equal(t, "team-a", r.Meta.AdditionalFields["example.com/owner"])
				}
			}
			pages++
			if res.NextCursor == "" {
				break
			}
			cursor = res.NextCursor
		}
		assert.Equal(t, wantURIs, got, "resources, in the registry's order")
		assert.Equal(t, 4, pages)

		_, err := cn.c.ListResourcesByPage(ctx, mcp.ListResourcesRequest{PaginatedRequest: mcp.PaginatedRequest{Params: mcp.PaginatedParams{Cursor: "bm90IG91cnM"}}})
		assert.ErrorIs(t, err, mcp.ErrInvalidParams, "a cursor the registry did not issue")

		tres, err := cn.c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
		require.NoError(t, err)
		var templates []string
		for _, tm := range tres.ResourceTemplates {
			templates = append(templates, tm.URITemplate.Raw())
		}
		assert.Equal(t, []string{"test://files/readme", "test://files/{name}"}, templates)
	})
}

func TestRead(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, cn *conn) {
		ctx := t.Context()
		read := func(uri string) (*mcp.ReadResourceResult, error) {
			req := mcp.ReadResourceRequest{}
			req.Params.URI = uri
			return cn.c.ReadResource(ctx, req)
		}
		text := func(uri string) string {
			t.Helper()
			res, err := read(uri)
			require.NoError(t, err, uri)
			require.Len(t, res.Contents, 1, uri)
			c, ok := res.Contents[0].(mcp.TextResourceContents)
			require.True(t, ok, "%s: %T", uri, res.Contents[0])
			assert.Equal(t, uri, c.URI)
			return c.Text
		}
		assert.Equal(t, "a", text("test://a"))
		assert.Equal(t, "readme:", text("test://files/readme"), "the most specific template")
		assert.Equal(t, "any:notes for you", text("test://files/notes%20for%20you"), "variables decoded once")

		res, err := read("test://b")
		require.NoError(t, err)
		blob, ok := res.Contents[0].(mcp.BlobResourceContents)
		require.True(t, ok, "%T", res.Contents[0])
		assert.Equal(t, "AAEC/w==", blob.Blob)
		assert.Equal(t, "application/octet-stream", blob.MIMEType)
		if mcp.IsModernProtocol(cn.version) {
			require.NotNil(t, res.TTLMs, "ttlMs")
			assert.Equal(t, mcp.CacheScope("public"), res.CacheScope)
		}

		notFound := mcp.ErrResourceNotFound
		if mcp.IsModernProtocol(cn.version) {
			notFound = mcp.ErrInvalidParams
		}
		for _, uri := range []string{"test://nothing", "test://files/missing", "mcpres:registry", "not a uri"} {
			_, err := read(uri)
			assert.ErrorIs(t, err, notFound, "%s at %s", uri, cn.version)
		}

		_, err = read("test://fails")
		require.ErrorIs(t, err, mcp.ErrInternalError)
		assert.NotContains(t, err.Error(), "hunter2", "the read function's error reached the client")
	})
}

func TestComplete(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, cn *conn) {
		req := mcp.CompleteRequest{}
		req.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: "test://files/{name}"}
		req.Params.Argument = mcp.CompleteArgument{Name: "name", Value: "al"}
		res, err := cn.c.Complete(t.Context(), req)
		require.NoError(t, err)
		assert.Equal(t, []string{"alpha", "alpine"}, res.Completion.Values)
		assert.Equal(t, 2, res.Completion.Total)

		req.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: "test://nowhere/{x}"}
		_, err = cn.c.Complete(t.Context(), req)
		assert.ErrorIs(t, err, mcp.ErrInternalError, "an unknown template (-32603: mcp-go's only code for it)")
	})
}

// awaitUpdate waits for a resources/updated of uri, each notification
// within mcptest.WaitTimeout.
func (cn *conn) awaitUpdate(t *testing.T, uri string) mcp.JSONRPCNotification {
	t.Helper()
	for {
		n := mcptest.Receive(t, cn.notes, "resources/updated of "+uri)
		if n.Method == mcp.MethodNotificationResourceUpdated && n.Params.AdditionalFields["uri"] == uri {
			return n
		}
	}
}

// subscribe subscribes cn to uris: with resources/subscribe before
// 2026-07-28, else with a listen stream, stopped when t ends. It returns
// the error of each resources/subscribe, or, for a listen, an error for
// each URI the acknowledgment leaves out.
func (cn *conn) subscribe(t *testing.T, uris ...string) []error {
	t.Helper()
	ctx := t.Context()
	errs := make([]error, len(uris))
	if !mcp.IsModernProtocol(cn.version) {
		for i, uri := range uris {
			req := mcp.SubscribeRequest{}
			req.Params.URI = uri
			errs[i] = cn.c.Subscribe(ctx, req)
		}
		return errs
	}
	stop, err := cn.c.ListenAsync(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: uris}, nil)
	require.NoError(t, err)
	t.Cleanup(stop)
	for {
		n := mcptest.Receive(t, cn.notes, "notifications/subscriptions/acknowledged")
		if n.Method != mcp.MethodNotificationSubscriptionsAcknowledged {
			continue
		}
		acked := ackedURIs(n)
		for i, uri := range uris {
			if !slices.Contains(acked, uri) {
				errs[i] = fmt.Errorf("%s: not acknowledged", uri)
			}
		}
		return errs
	}
}

// ackedURIs are the resource subscriptions an acknowledgment names.
func ackedURIs(n mcp.JSONRPCNotification) []string {
	f, _ := n.Params.AdditionalFields["notifications"].(map[string]any)
	list, _ := f["resourceSubscriptions"].([]any)
	var out []string
	for _, u := range list {
		if s, ok := u.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func TestSubscribe(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, cn *conn) {
		errs := cn.subscribe(t, clockURI, "test://nothing")
		require.NoError(t, errs[0], clockURI)
		require.Error(t, errs[1], "a subscription to what does not exist")
		if !mcp.IsModernProtocol(cn.version) {
			assert.ErrorIs(t, errs[1], mcp.ErrInvalidParams)
		}
		if cn.reg != nil {
			var once sync.Once
			go func() {
				// Report the change until the test ends: the window may
				// hold the first.
				tick := time.NewTicker(clockTick)
				defer tick.Stop()
				for {
					select {
					case <-t.Context().Done():
						return
					case <-tick.C:
						once.Do(func() {})
						cn.reg.Changed(clockURI)
					}
				}
			}()
		}
		n := cn.awaitUpdate(t, clockURI)
		if mcp.IsModernProtocol(cn.version) {
			assert.NotNil(t, n.Params.Meta[mcp.MetaKeySubscriptionID], "a listen's notification names its subscription")
		}
	})
}

// Over HTTP, where the test holds the registry: adding a resource sends
// list_changed, and a session's end (or its listen's) ends its
// subscriptions.
func TestListChangedAndEnd(t *testing.T) {
	t.Parallel()
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			cn := httpConn(t, version)
			if mcp.IsModernProtocol(version) {
				stop, err := cn.c.ListenAsync(t.Context(), mcp.SubscriptionFilter{ResourcesListChanged: true, ResourceSubscriptions: []string{clockURI}}, nil)
				require.NoError(t, err)
				defer stop()
				require.Eventually(t, func() bool { n, _, _ := cn.reg.SubscriptionStats(); return n == 1 }, 5*time.Second, time.Millisecond)
			} else {
				require.NoError(t, cn.subscribe(t, clockURI)[0])
			}
			require.NoError(t, cn.reg.Add(&sdk.Resource{URI: "test://new", Name: "new"}, resource.Text("new")))
			for mcptest.Receive(t, cn.notes, "list_changed").Method != mcp.MethodNotificationResourcesListChanged {
			}
			n, _, _ := cn.reg.SubscriptionStats()
			require.Equal(t, 1, n, "subscriptions")
			require.NoError(t, cn.c.Close())
			require.Eventually(t, func() bool { n, _, _ := cn.reg.SubscriptionStats(); return n == 0 }, 10*time.Second, 5*time.Millisecond,
				"the subscription outlived its session")
		})
	}
}
