package resource_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
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

// The access tests serve a registry over streamable HTTP behind go-sdk's
// bearer-token middleware, the way a multi-user server runs, and connect
// go-sdk clients with different tokens.

// tokens are the bearer tokens the test server accepts: the user each
// names and the scopes it grants. "team:X" lets its holder see team X's
// notes; "secret" the secret plan.
var tokens = map[string]*auth.TokenInfo{
	"alice-token": {UserID: "alice", Scopes: []string{"team:a"}},
	"bob-token":   {UserID: "bob", Scopes: []string{"team:b"}},
	"admin-token": {UserID: "admin", Scopes: []string{"team:*", "secret"}},
}

func verifyToken(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	ti, ok := tokens[token]
	if !ok {
		return nil, fmt.Errorf("unknown token: %w", auth.ErrInvalidToken)
	}
	copied := *ti
	copied.Expiration = time.Now().Add(time.Hour)
	return &copied, nil
}

// teamPolicy lets a caller see the notes of the teams its token names, the
// secret plan only with the "secret" scope, and everything else.
func teamPolicy(_ context.Context, a resource.Access) error {
	ti := a.TokenInfo()
	if ti == nil {
		return fmt.Errorf("%w: no token", resource.ErrDenied)
	}
	if a.URI == "docs://secret/plan" && !slices.Contains(ti.Scopes, "secret") {
		return fmt.Errorf("%w: the plan needs scope secret", resource.ErrDenied)
	}
	team := a.Var("team")
	if team == "" || slices.Contains(ti.Scopes, "team:"+team) || slices.Contains(ti.Scopes, "team:*") {
		return nil
	}
	return fmt.Errorf("%w: %s may not see team %q", resource.ErrDenied, a.Identity, team)
}

// The test server's teams, each with notesPerTeam notes notes://T/1...
var teams = []string{"a", "b", "c"}

const notesPerTeam = 4

// accessServer is a registry of notes served over HTTP with bearer tokens.
type accessServer struct {
	reg   *resource.Registry
	url   string
	reads atomic.Int64 // read function calls
	logs  *syncBuffer  // the registry's log, Debug and up, as JSON
	// listenErrors receives the server's answers to failed
	// subscriptions/listen requests.
	listenErrors chan error
}

// newAccessServer serves a registry with opts (nil: teamPolicy, page size
// 3) over streamable HTTP: behind serve's edge and go-sdk's handler for
// every era if sessions is set (legacy clients in sessions, 2026-07-28
// statelessly), else behind go-sdk's stateless handler for every version.
func newAccessServer(t *testing.T, opts *resource.Options, sessions bool) *accessServer {
	t.Helper()
	s := &accessServer{logs: new(syncBuffer), listenErrors: make(chan error, 10)}
	if opts == nil {
		opts = &resource.Options{Authorize: teamPolicy, PageSize: 3}
	}
	opts.Logger = slog.New(slog.NewJSONHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.Subscriptions.Window = 10 * time.Millisecond
	s.reg = newRegistry(t, opts)
	count := func(read resource.ReadFunc) resource.ReadFunc {
		return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			s.reads.Add(1)
			return read(ctx, req)
		}
	}
	require.NoError(t, s.reg.Add(&mcp.Resource{URI: "docs://public/readme", Name: "readme", MIMEType: "text/plain"},
		count(resource.Text("hello")), resource.WithCache(resource.Cache{Scope: resource.Public, TTL: time.Minute})))
	require.NoError(t, s.reg.Add(&mcp.Resource{URI: "docs://secret/plan", Name: "plan", MIMEType: "text/plain"}, count(resource.Text("the plan"))))
	require.NoError(t, s.reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			s.reads.Add(1)
			if !slices.Contains(teams, vars.Get("team")) || !slices.Contains([]string{"1", "2", "3", "4"}, vars.Get("id")) {
				return nil, resource.ErrNotFound
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "note " + req.Params.URI}}}, nil
		},
		resource.WithInstances(listNotes),
		resource.WithCompleter("team", func(context.Context, string, map[string]string) ([]string, error) { return teams, nil }),
		resource.WithCompleter("id", func(context.Context, string, map[string]string) ([]string, error) {
			return []string{"1", "2", "3", "4"}, nil
		}),
	))
	require.NoError(t, s.reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "docs://drafts/{name}", Name: "draft"}, nil2))

	server := mcp.NewServer(&mcp.Implementation{Name: "access-test", Version: "v0"}, &mcp.ServerOptions{
		SubscribeHandler: s.reg.Subscribe, UnsubscribeHandler: s.reg.Unsubscribe,
	})
	resource.Mount(server, s.reg)
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "subscriptions/listen" && err != nil {
				s.listenErrors <- err
			}
			return res, err
		}
	})
	bearer := auth.RequireBearerToken(verifyToken, nil)
	handler := bearer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	if sessions {
		s.url = serveHTTP(t, server, &serve.Options{Wrap: bearer})
		return s
	}
	hs := httptest.NewServer(handler)
	t.Cleanup(hs.Close)
	s.url = hs.URL
	return s
}

// listNotes lists every team's notes, keyed "team/id".
func listNotes(_ context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
	var out []cursor.Item[*mcp.Resource]
	for _, team := range teams {
		for i := 1; i <= notesPerTeam; i++ {
			key := fmt.Sprintf("%s/%d", team, i)
			if key <= after || len(out) == limit {
				continue
			}
			out = append(out, cursor.Item[*mcp.Resource]{Key: key, Value: &mcp.Resource{URI: "notes://" + key, Name: key}})
		}
	}
	return out, nil
}

// connect connects a client holding token, on protocol version.
func (s *accessServer) connect(t *testing.T, token, version string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs := mcptest.ConnectHTTP(t, s.url, token, version, copts)
	require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
	return cs
}

// dial tries to connect a client holding token, on protocol version.
func (s *accessServer) dial(t *testing.T, token, version string) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "access-client", Version: "v0"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: mcptest.HTTPClient(t, token)},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		cs.Close()
	}
	return err
}

// records returns the access records logged so far for op.
func (s *accessServer) records(t *testing.T, op string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(s.logs.String()) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["msg"] == "resource access" && rec["op"] == op {
			out = append(out, rec)
		}
	}
	return out
}

// visible returns the URIs a caller holding scopes may see.
func visible(scopes ...string) []string {
	out := []string{"docs://public/readme"}
	if slices.Contains(scopes, "secret") {
		out = append(out, "docs://secret/plan")
	}
	for _, team := range teams {
		if slices.Contains(scopes, "team:"+team) || slices.Contains(scopes, "team:*") {
			for i := 1; i <= notesPerTeam; i++ {
				out = append(out, fmt.Sprintf("notes://%s/%d", team, i))
			}
		}
	}
	return out
}

func TestAuthorizeList(t *testing.T) {
	t.Parallel()
	s := newAccessServer(t, nil, false)
	forEachVersion(t, func(t *testing.T, version string) {
		for token, ti := range tokens {
			cs := s.connect(t, token, version, nil)
			pages := listPages(t, cs)
			var got []string
			for _, page := range pages {
				require.LessOrEqual(t, len(page.Resources), 3, "a page holds at most PageSize")
				assert.Equal(t, "private", page.CacheScope, "a filtered list is private")
				for _, r := range page.Resources {
					got = append(got, r.URI)
				}
			}
			assert.ElementsMatch(t, visible(ti.Scopes...), got, token)

			// Templates are visible to all; the list is private all the same.
			tmpls, err := cs.ListResourceTemplates(t.Context(), nil)
			require.NoError(t, err)
			assert.Len(t, tmpls.ResourceTemplates, 2)
			assert.Equal(t, "private", tmpls.CacheScope)
		}
	})
	// Pages that withheld entries were logged.
	recs := s.records(t, "list")
	require.NotEmpty(t, recs)
	for _, rec := range recs {
		assert.Equal(t, "filtered", rec["decision"])
		assert.Positive(t, rec["withheld"])
		assert.Contains(t, []any{"alice", "bob"}, rec["identity"], "admin sees everything")
	}
}

// listPages lists every page of resources/list.
func listPages(t *testing.T, cs *mcp.ClientSession) []*mcp.ListResourcesResult {
	t.Helper()
	var pages []*mcp.ListResourcesResult
	params := &mcp.ListResourcesParams{}
	for range 100 {
		res, err := cs.ListResources(t.Context(), params)
		require.NoError(t, err)
		pages = append(pages, res)
		if res.NextCursor == "" {
			return pages
		}
		params.Cursor = res.NextCursor
	}
	t.Fatal("resources/list does not end")
	return nil
}

func TestAuthorizeCursorsDoNotCrossUsers(t *testing.T) {
	t.Parallel()
	s := newAccessServer(t, nil, false)
	forEachVersion(t, func(t *testing.T, version string) {
		alice := s.connect(t, "alice-token", version, nil)
		bob := s.connect(t, "bob-token", version, nil)
		first, err := alice.ListResources(t.Context(), nil)
		require.NoError(t, err)
		require.NotEmpty(t, first.NextCursor)

		_, err = bob.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: first.NextCursor})
		jerr := rpcError(t, err)
		assert.Equal(t, int64(jsonrpc.CodeInvalidParams), jerr.Code)
		assert.Equal(t, "invalid cursor", jerr.Message)

		// Alice's cursor still works for her, on another connection too.
		alice2 := s.connect(t, "alice-token", version, nil)
		_, err = alice2.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: first.NextCursor})
		require.NoError(t, err)
	})
}

// sameError asserts that err for uri is exactly the error want was for
// wantURI, with the URI substituted: same code, message and data.
func sameError(t *testing.T, want error, wantURI string, got error, gotURI string) {
	t.Helper()
	w, g := rpcError(t, want), rpcError(t, got)
	assert.Equal(t, w.Code, g.Code, gotURI)
	assert.Equal(t, strings.ReplaceAll(w.Message, wantURI, gotURI), g.Message, gotURI)
	assert.Equal(t, strings.ReplaceAll(string(w.Data), wantURI, gotURI), string(g.Data), gotURI)
}

func TestAuthorizeReadLooksMissing(t *testing.T) {
	t.Parallel()
	s := newAccessServer(t, nil, false)
	forEachVersion(t, func(t *testing.T, version string) {
		bob := s.connect(t, "bob-token", version, nil)
		ctx := t.Context()

		// Bob reads his own notes, and the public readme; results are private.
		res, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://b/1"})
		require.NoError(t, err)
		assert.Equal(t, "note notes://b/1", res.Contents[0].Text)
		res, err = bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://public/readme"})
		require.NoError(t, err)
		if version >= "2026-07-28" {
			assert.Equal(t, "private", res.CacheScope, "under an Authorizer even a public entry is private")
		}

		// What does not exist, two ways: no entry matches, or the read
		// function says so.
		const missingURI, missingNoteURI = "nosuch://x", "notes://b/99"
		_, missing := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: missingURI})
		_, missingNote := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: missingNoteURI})
		sameError(t, missing, missingURI, missingNote, missingNoteURI)

		// What bob may not see looks the same, and no read function runs.
		reads := s.reads.Load()
		for _, uri := range []string{"notes://a/1", "notes://c/4", "notes://zz/1", "docs://secret/plan"} {
			_, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			sameError(t, missing, missingURI, err, uri)
		}
		assert.Equal(t, reads, s.reads.Load(), "no read function ran for a denied read")
	})

	// Every read was logged; denials carry the Authorizer's reason.
	recs := s.records(t, "read")
	var denied int
	for _, rec := range recs {
		assert.Equal(t, "bob", rec["identity"])
		assert.Contains(t, rec, "duration")
		assert.Contains(t, rec, "session_id")
		if rec["decision"] == "denied" {
			denied++
			assert.Contains(t, rec["reason"], "access denied", rec)
		}
	}
	assert.Equal(t, 4*len(versions), denied)
	assert.Len(t, recs, 8*len(versions))
}

func TestAuthorizeSubscribe(t *testing.T) {
	t.Parallel()
	// One URL serves every era, each with its notifications.
	s := newAccessServer(t, nil, true)
	forEachVersion(t, func(t *testing.T, version string) {
		updated := make(chan string, 10)
		bob := s.connect(t, "bob-token", version, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				updated <- req.Params.URI
			},
		})
		ctx := t.Context()
		// refusal subscribes to uri and returns the server's refusal.
		refusal := func(uri string) error {
			err := bob.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
			if version < "2026-07-28" {
				return err
			}
			// A 2026-07-28 client listens in the background: the server's
			// answer is only seen there.
			require.NoError(t, err)
			select {
			case err := <-s.listenErrors:
				return err
			case <-time.After(10 * time.Second):
				t.Fatalf("subscriptions/listen for %s was not refused", uri)
				return nil
			}
		}

		// His own note: accepted, with the listen's token (2026-07-28),
		// and notified.
		require.NoError(t, bob.Subscribe(ctx, &mcp.SubscribeParams{URI: "notes://b/2"}))
		timeout := time.After(10 * time.Second)
		for got := false; !got; {
			s.reg.Changed("notes://b/2")
			select {
			case u := <-updated:
				got = u == "notes://b/2"
			case <-time.After(200 * time.Millisecond):
			case <-timeout:
				t.Fatal("no notifications/resources/updated for bob's own note")
			}
		}

		// Alice's note and the secret plan are refused exactly as a
		// resource that does not exist.
		missing := refusal("nosuch://x")
		require.Error(t, missing)
		for _, uri := range []string{"notes://a/1", "docs://secret/plan"} {
			sameError(t, missing, "nosuch://x", refusal(uri), uri)
		}
		assert.Empty(t, s.listenErrors, "bob's own subscription was not refused")
	})
	var allowed, denied int
	for _, rec := range s.records(t, "subscribe") {
		assert.Equal(t, "bob", rec["identity"], "the listen's token reaches its subscriptions")
		switch rec["decision"] {
		case "allowed":
			allowed++
		case "denied":
			denied++
		}
	}
	assert.GreaterOrEqual(t, allowed, len(versions))
	assert.Equal(t, 2*len(versions), denied)
}

func TestAuthorizeComplete(t *testing.T) {
	t.Parallel()
	s := newAccessServer(t, nil, false)
	forEachVersion(t, func(t *testing.T, version string) {
		alice := s.connect(t, "alice-token", version, nil)
		complete := func(tmpl, arg string, bound map[string]string) (*mcp.CompleteResult, error) {
			p := &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: tmpl},
				Argument: mcp.CompleteParamsArgument{Name: arg},
			}
			if bound != nil {
				p.Context = &mcp.CompleteContext{Arguments: bound}
			}
			return alice.Complete(t.Context(), p)
		}
		// Only the teams alice may see are proposed, and counted.
		res, err := complete("notes://{team}/{id}", "team", nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"a"}, res.Completion.Values)
		assert.Equal(t, 1, res.Completion.Total)
		assert.False(t, res.Completion.HasMore)

		res, err = complete("notes://{team}/{id}", "id", map[string]string{"team": "a"})
		require.NoError(t, err)
		assert.Equal(t, []string{"1", "2", "3", "4"}, res.Completion.Values)

		// Another team's ids: refused as an unknown template is.
		_, unknown := complete("notes://{nosuch}", "id", nil)
		_, err = complete("notes://{team}/{id}", "id", map[string]string{"team": "b"})
		sameError(t, unknown, "notes://{nosuch}", err, "notes://{team}/{id}")
	})
	for _, rec := range s.records(t, "complete") {
		assert.Equal(t, "alice", rec["identity"])
		assert.Contains(t, []any{"denied", "filtered"}, rec["decision"])
	}
}

func TestAuthorizeNoToken(t *testing.T) {
	t.Parallel()
	s := newAccessServer(t, nil, false)
	require.Error(t, s.dial(t, "", "2025-11-25"), "the bearer-token middleware refuses a request without a token")
	require.Error(t, s.dial(t, "forged", "2026-07-28"), "and an unknown token")
}

func TestAuthorizerFailsClosed(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	failing := func(_ context.Context, a resource.Access) error {
		calls.Add(1)
		if a.URI == "notes://a/2" {
			panic("policy bug")
		}
		return errors.New("policy store unreachable")
	}
	s := newAccessServer(t, &resource.Options{Authorize: failing}, false)
	cs := s.connect(t, "admin-token", "2026-07-28", nil)
	list, err := cs.ListResources(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, list.Resources, "a failing Authorizer shows nothing")
	for _, uri := range []string{"notes://a/1", "notes://a/2"} {
		_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		jerr := rpcError(t, err)
		assert.Equal(t, "Resource not found", jerr.Message)
	}
	assert.Zero(t, s.reads.Load())
	assert.Positive(t, calls.Load())
	logs := s.logs.String()
	assert.Contains(t, logs, "policy store unreachable")
	assert.Contains(t, logs, "authorizer panicked: policy bug")
	assert.Contains(t, logs, `"level":"ERROR","msg":"resource authorizer failed; access denied"`)
}

func TestAuthorizeDirectCall(t *testing.T) {
	t.Parallel()
	var seen []resource.Access
	reg := newRegistry(t, &resource.Options{Logger: quietLogger(), Authorize: func(_ context.Context, a resource.Access) error {
		seen = append(seen, a)
		if a.Var("team") == "b" {
			return resource.ErrDenied
		}
		return nil
	}})
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note"},
		func(_ context.Context, req *mcp.ReadResourceRequest, _ resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: req.Params.URI}}}, nil
		}))
	res, err := reg.ReadResource(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "notes://a/1"}})
	require.NoError(t, err)
	assert.Equal(t, "private", res.CacheScope)
	_, err = reg.ReadResource(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "notes://b/1"}})
	assert.Equal(t, "Resource not found", rpcError(t, err).Message)
	require.Len(t, seen, 2)
	a := seen[0]
	assert.Equal(t, resource.OpRead, a.Op)
	assert.Equal(t, "notes://a/1", a.URI)
	assert.Equal(t, "notes://{team}/{id}", a.Template)
	assert.Equal(t, "1", a.Vars.Get("id"))
	assert.Equal(t, "", a.Identity)
	assert.Nil(t, a.TokenInfo())
	assert.Nil(t, a.Session())
}

func TestRateLimits(t *testing.T) {
	t.Parallel()
	limits := resource.RateLimits{
		Read:      &resource.RateLimit{Rate: 0.01, Burst: 3},
		Subscribe: &resource.RateLimit{Rate: 0.01, Burst: 2},
	}
	// Stateful HTTP: the budget is alice's, whichever session she uses; a
	// new session does not reset it.
	s := newAccessServer(t, &resource.Options{RateLimits: limits}, true)
	ctx := t.Context()
	cs := s.connect(t, "alice-token", "2025-06-18", nil)
	reads := s.reads.Load()
	for range 3 {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://a/1"})
		require.NoError(t, err)
	}
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://a/1"})
	jerr := rpcError(t, err)
	assert.Equal(t, int64(resource.CodeRateLimited), jerr.Code)
	assert.Equal(t, "Rate limit exceeded", jerr.Message)
	var data struct {
		Method       string `json:"method"`
		RetryAfterMs int64  `json:"retryAfterMs"`
	}
	require.NoError(t, json.Unmarshal(jerr.Data, &data))
	assert.Equal(t, "resources/read", data.Method)
	assert.Positive(t, data.RetryAfterMs)
	assert.Equal(t, reads+3, s.reads.Load(), "a limited read reads nothing")

	// Subscriptions have their own budget; a refused one records nothing.
	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "notes://a/1"}))
	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "notes://a/2"}))
	err = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "notes://a/3"})
	assert.Equal(t, int64(resource.CodeRateLimited), rpcError(t, err).Code)
	subs, _, _ := s.reg.SubscriptionStats()
	assert.Equal(t, 2, subs)

	again := s.connect(t, "alice-token", "2025-11-25", nil)
	_, err = again.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://a/1"})
	assert.Equal(t, int64(resource.CodeRateLimited), rpcError(t, err).Code, "a new session keeps alice's spent budget")
	err = again.Subscribe(ctx, &mcp.SubscribeParams{URI: "notes://a/3"})
	assert.Equal(t, int64(resource.CodeRateLimited), rpcError(t, err).Code)

	bob := s.connect(t, "bob-token", "2025-11-25", nil)
	_, err = bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://b/1"})
	require.NoError(t, err, "bob's budget is his own")
	var limited int
	for _, rec := range s.records(t, "read") {
		if rec["decision"] == "limited" {
			limited++
		}
	}
	assert.Equal(t, 2, limited)
}

// forwardedFor is an HTTP transport that sends every request as if a
// proxy had seen it come from addr.
type forwardedFor struct {
	addr string
	next http.RoundTripper
}

func (f forwardedFor) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Add("X-Forwarded-For", "198.51.100.9, "+f.addr) // the client's own claim, then the proxy's
	return f.next.RoundTrip(req)
}

// Anonymous callers are told apart by the address serve's edge records
// (here from the header a proxy appends, Options.ClientAddressHeader), on stateless and stateful HTTP alike: one cannot spend
// another's budget, and neither resets its own with a new session.
// Without an address, they share one.
func TestRateLimitsAnonymous(t *testing.T) {
	t.Parallel()
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			reg := newRegistry(t, &resource.Options{Logger: quietLogger(),
				RateLimits: resource.RateLimits{Read: &resource.RateLimit{Rate: 0.01, Burst: 2}}})
			require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://a", Name: "a"}, resource.Text("a")))
			server, err := reg.NewServer(&mcp.Implementation{Name: "anon"}, &mcp.ServerOptions{Logger: quietLogger()})
			require.NoError(t, err)
			url := serveHTTP(t, server, &serve.Options{ClientAddressHeader: "X-Forwarded-For"})
			connect := func(addr string) *mcp.ClientSession {
				var rt http.RoundTripper = mcptest.HTTPClient(t, "").Transport
				if addr != "" {
					rt = forwardedFor{addr: addr, next: rt}
				}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "anon"}, nil).Connect(t.Context(),
					&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}},
					&mcp.ClientSessionOptions{ProtocolVersion: version})
				require.NoError(t, err)
				t.Cleanup(func() { cs.Close() })
				return cs
			}
			read := func(cs *mcp.ClientSession) error {
				_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://a"})
				return err
			}
			a, b := connect("203.0.113.1"), connect("198.51.100.2")
			require.NoError(t, read(a))
			require.NoError(t, read(a))
			assert.Equal(t, int64(resource.CodeRateLimited), rpcError(t, read(a)).Code, "a's budget is spent")
			assert.Equal(t, int64(resource.CodeRateLimited), rpcError(t, read(connect("203.0.113.1"))).Code, "a new session keeps it")
			assert.Equal(t, int64(resource.CodeRateLimited), rpcError(t, read(connect("203.0.113.200"))).Code, "a's /24 shares it")
			require.NoError(t, read(b), "b's budget is its own")

			// Without an address: one budget for all.
			c, d := connect(""), connect("")
			require.NoError(t, read(c))
			require.NoError(t, read(d))
			assert.Equal(t, int64(resource.CodeRateLimited), rpcError(t, read(c)).Code)
		})
	}
}

func TestRateLimitsSessionless(t *testing.T) {
	t.Parallel()
	// Stateless HTTP makes a session per request: the budget is the
	// caller's identity.
	s := newAccessServer(t, &resource.Options{RateLimits: resource.RateLimits{Read: &resource.RateLimit{Rate: 0.01, Burst: 2}}}, false)
	read := func(cs *mcp.ClientSession) error {
		// Not the readme, which a 2026-07-28 client caches for its TTL.
		_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://secret/plan"})
		return err
	}
	alice := s.connect(t, "alice-token", "2026-07-28", nil)
	alice2 := s.connect(t, "alice-token", "2025-11-25", nil)
	bob := s.connect(t, "bob-token", "2026-07-28", nil)
	require.NoError(t, read(alice))
	require.NoError(t, read(alice2))
	assert.Equal(t, int64(resource.CodeRateLimited), rpcError(t, read(alice)).Code, "alice's budget is spent")
	require.NoError(t, read(bob), "bob's is his own")
}

func TestAccessLogDefaults(t *testing.T) {
	t.Parallel()
	reg := func(level slog.Level, accessLog resource.AccessLogOptions) (*resource.Registry, *syncBuffer) {
		buf := new(syncBuffer)
		r := newRegistry(t, &resource.Options{
			Logger:    slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: level})),
			AccessLog: accessLog,
		})
		require.NoError(t, r.Add(&mcp.Resource{URI: "test://a", Name: "a"}, resource.Text("a")))
		return r, buf
	}
	read := func(r *resource.Registry) {
		_, err := r.ReadResource(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "test://a"}})
		require.NoError(t, err)
	}

	// On by default, at Debug.
	r, buf := reg(slog.LevelDebug, resource.AccessLogOptions{})
	read(r)
	assert.Contains(t, buf.String(), `level=DEBUG msg="resource access" op=read uri=test://a session_id="" identity="" decision=allowed duration=`)
	// So a logger at Info shows none,
	r, buf = reg(slog.LevelInfo, resource.AccessLogOptions{})
	read(r)
	assert.Empty(t, buf.String())
	// unless the records are raised to Info,
	r, buf = reg(slog.LevelInfo, resource.AccessLogOptions{Level: slog.LevelInfo})
	read(r)
	assert.Contains(t, buf.String(), `level=INFO msg="resource access" op=read`)
	// or sent to a logger of their own.
	own := new(syncBuffer)
	r, buf = reg(slog.LevelDebug, resource.AccessLogOptions{Logger: slog.New(slog.NewTextHandler(own, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	read(r)
	assert.Empty(t, buf.String())
	assert.Contains(t, own.String(), `msg="resource access"`)
}

func TestAccessLogDeniedLevel(t *testing.T) {
	t.Parallel()
	buf := new(syncBuffer)
	reg := newRegistry(t, &resource.Options{
		Logger:    slog.New(slog.NewTextHandler(buf, nil)), // Info and up
		AccessLog: resource.AccessLogOptions{DeniedLevel: slog.LevelWarn},
		Authorize: func(_ context.Context, a resource.Access) error {
			if a.URI == "test://secret" {
				return fmt.Errorf("%w: secret", resource.ErrDenied)
			}
			return nil
		},
	})
	for _, u := range []string{"test://open", "test://secret"} {
		require.NoError(t, reg.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)))
		reg.ReadResource(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: u}})
	}
	// The allowed read stays at Debug; the denial is raised to Warn.
	assert.NotContains(t, buf.String(), "uri=test://open")
	assert.Contains(t, buf.String(), `level=WARN msg="resource access" op=read uri=test://secret session_id="" identity="" decision=denied duration=`)
	assert.Contains(t, buf.String(), `reason="access denied: secret"`)
}

func TestAuthorizeCompleteAccess(t *testing.T) {
	t.Parallel()
	var seen []resource.Access
	reg := newRegistry(t, &resource.Options{Logger: quietLogger(), Authorize: func(_ context.Context, a resource.Access) error {
		seen = append(seen, a)
		if a.Var("id") == "2" {
			return resource.ErrDenied
		}
		return nil
	}})
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note"}, nil2,
		resource.WithCompleter("id", func(context.Context, string, map[string]string) ([]string, error) {
			return []string{"1", "2", "3"}, nil
		})))
	bound := map[string]string{"team": "a"}
	req := &mcp.CompleteRequest{Params: &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "notes://{team}/{id}"},
		Argument: mcp.CompleteParamsArgument{Name: "id"},
		Context:  &mcp.CompleteContext{Arguments: bound},
	}}
	res, err := reg.Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "3"}, res.Completion.Values)
	assert.Equal(t, 2, res.Completion.Total)

	// First the request, then each proposed value.
	require.Len(t, seen, 4)
	assert.Equal(t, resource.Access{Op: resource.OpComplete, Template: "notes://{team}/{id}", Argument: "id", Arguments: bound, Request: req}, seen[0])
	for i, id := range []string{"1", "2", "3"} {
		assert.Equal(t, resource.Access{Op: resource.OpComplete, Template: "notes://{team}/{id}", Argument: "id",
			Arguments: map[string]string{"team": "a", "id": id}, Proposed: true, Request: req}, seen[i+1])
	}
	assert.Equal(t, map[string]string{"team": "a"}, bound, "the request's arguments are left alone")
}
