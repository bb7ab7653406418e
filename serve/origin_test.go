package serve_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A browser is an http.RoundTripper that sends an Origin header, as a
// browser does for a web page, on the requests of some HTTP methods, and
// records the requests refused with 403.
type browser struct {
	next    *http.Transport
	mu      sync.Mutex
	origin  string   // "" for none
	methods []string // that carry it; nil for every method
	refused []refusal
}

// A refusal is a 403 answer a browser received.
type refusal struct {
	method      string
	contentType string
	body        []byte
}

// newBrowser returns a browser that sends origin on the requests of
// methods (every method if none).
func newBrowser(t *testing.T, origin string, methods ...string) *browser {
	b := &browser{next: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(b.next.CloseIdleConnections)
	b.set(origin, methods...)
	return b
}

// set makes b send origin on the requests of methods from now on.
func (b *browser) set(origin string, methods ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.origin, b.methods = origin, methods
}

func (b *browser) RoundTrip(req *http.Request) (*http.Response, error) {
	b.mu.Lock()
	origin, methods := b.origin, b.methods
	b.mu.Unlock()
	if origin != "" && (methods == nil || slices.Contains(methods, req.Method)) {
		req = req.Clone(req.Context())
		req.Header.Set("Origin", origin)
	}
	resp, err := b.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	b.mu.Lock()
	b.refused = append(b.refused, refusal{req.Method, resp.Header.Get("Content-Type"), body})
	b.mu.Unlock()
	return resp, nil
}

// refusals returns the 403s b has received.
func (b *browser) refusals() []refusal {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.refused)
}

// connect connects a client at version to url through b, with opts. The
// session, if any, is closed when t ends at the latest, so that the
// test server's Close does not wait for its GET stream.
func (b *browser) connect(t *testing.T, url, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "browser", Version: "v0"}, opts)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: b}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// requireRefusals checks that b received at least one 403 and that each
// is the refusal of an Origin: a JSON-RPC error -32600 without id, with
// Content-Type application/json; methods, if any, are those of the
// requests refused.
func requireRefusals(t *testing.T, b *browser, what string, methods ...string) {
	t.Helper()
	got := b.refusals()
	require.NotEmpty(t, got, "%s: no request refused", what)
	for _, r := range got {
		if len(methods) > 0 {
			assert.Contains(t, methods, r.method, "%s: the refused request", what)
		}
		assert.Equal(t, "application/json", r.contentType, "%s %s", what, r.method)
		jerr := errorWithoutID(t, r.body)
		assert.EqualValues(t, jsonrpc.CodeInvalidRequest, jerr.Code, "%s %s", what, r.method)
		assert.Contains(t, jerr.Message, "Origin", "%s %s", what, r.method)
	}
}

// originServer serves eraRegistry's server behind Guard with opts (nil
// for the defaults) on a loopback port until t ends. It returns the
// registry, the server and the endpoint's URL.
func originServer(t *testing.T, opts *serve.Options) (*resource.Registry, *mcp.Server, string) {
	t.Helper()
	reg, server := eraRegistry(t)
	url := startGuarded(t, server, opts, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour})
	return reg, server, url + "/mcp"
}

// The edge refuses a client of each era that sends an Origin other than
// the endpoint's own, or one that is not an origin, from its first
// request: no session is made.
func TestOriginRefusesForeign(t *testing.T) {
	t.Parallel()
	_, server, url := originServer(t, nil)
	own := url[:len(url)-len("/mcp")] // http://127.0.0.1:port
	for _, origin := range []string{
		"http://attacker.example",
		"null",
		"http://localhost" + own[len("http://127.0.0.1"):], // the same server, by another name
		own + "/", // not an origin
	} {
		for _, version := range versions {
			what := version + " from " + origin
			b := newBrowser(t, origin)
			_, err := b.connect(t, url, version, nil)
			require.Error(t, err, what)
			requireRefusals(t, b, what, http.MethodPost)
		}
	}
	assert.Zero(t, sessions(server), "no refused client has a session")
}

// A client whose requests take an Origin header in the course of a
// session (2025-11-25) or between stateless requests (2026-07-28) is
// refused from then on.
func TestOriginRefusesForeignInSession(t *testing.T) {
	t.Parallel()
	_, _, url := originServer(t, nil)
	for _, version := range versions {
		b := newBrowser(t, "")
		cs, err := b.connect(t, url, version, nil)
		require.NoError(t, err, version)
		_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://readme"})
		require.NoError(t, err, version)

		b.set("http://attacker.example", http.MethodPost)
		_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://readme"})
		require.Error(t, err, version)
		requireRefusals(t, b, version+" read", http.MethodPost)
	}
}

// A 2025-11-25 session's GET stream, and its DELETE, are refused as its
// POSTs are: the refused DELETE does not end the session.
func TestOriginRefusesForeignGETAndDELETE(t *testing.T) {
	t.Parallel()
	_, server, url := originServer(t, nil)

	b := newBrowser(t, "http://attacker.example", http.MethodGet)
	cs, err := b.connect(t, url, "2025-11-25", nil)
	require.NoError(t, err, "the POSTs carry no Origin")
	// The client opens its GET stream in the background, and goes on
	// without it once refused.
	require.Eventually(t, func() bool { return len(b.refusals()) > 0 }, time.Minute, time.Millisecond, "the GET stream is refused")
	requireRefusals(t, b, "GET stream", http.MethodGet)
	_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://readme"})
	require.NoError(t, err, "a POST without Origin is served")
	cs.Close()
	require.Eventually(t, func() bool { return sessions(server) == 0 }, time.Minute, time.Millisecond, "an accepted DELETE ends the session")

	b = newBrowser(t, "http://attacker.example", http.MethodDelete)
	cs, err = b.connect(t, url, "2025-11-25", nil)
	require.NoError(t, err)
	id := cs.ID()
	require.NoError(t, cs.Close())
	requireRefusals(t, b, "DELETE", http.MethodDelete)
	held := false
	for ss := range server.Sessions() {
		held = held || ss.ID() == id
	}
	assert.True(t, held, "the refused DELETE ended no session")
}

// A page that DNS rebinding brings to a loopback server sends its own
// name as Host and Origin alike, which the Origin check cannot tell from
// the server's own origin: go-sdk's check of the Host header on loopback
// addresses refuses it, as docs/security.md says, for every method.
func TestOriginRefusesRebinding(t *testing.T) {
	t.Parallel()
	_, server, url := originServer(t, nil)
	port := url[len("http://127.0.0.1:") : len(url)-len("/mcp")]
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		require.NoError(t, err)
		req.Host = "attacker.example:" + port
		req.Header.Set("Origin", "http://attacker.example:"+port)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := newBrowser(t, "").next.RoundTrip(req)
		require.NoError(t, err, method)
		resp.Body.Close()
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, method)
	}
	assert.Zero(t, sessions(server))
}

// Requests without an Origin header, from the endpoint's own origin, from
// an origin Options.AllowedOrigins allows, or from any origin behind "*",
// are served: a client of each era reads, and is notified on its stream
// (a session's GET stream, or a 2026-07-28 subscriptions/listen).
func TestOriginServes(t *testing.T) {
	t.Parallel()
	passThrough := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { h.ServeHTTP(w, req) })
	}
	for _, tc := range []struct {
		name   string
		opts   *serve.Options
		origin func(url string) string
	}{
		{"no Origin", nil, func(string) string { return "" }},
		{"own origin", nil, func(url string) string { return url[:len(url)-len("/mcp")] }},
		{"allowed origin", &serve.Options{AllowedOrigins: []string{"https://app.example", "http://localhost:5173"}},
			func(string) string { return "https://app.example" }},
		{"allowed origin, with a middleware in Wrap", &serve.Options{AllowedOrigins: []string{"https://app.example"}, Wrap: passThrough},
			func(string) string { return "https://app.example" }},
		{"any origin", &serve.Options{AllowedOrigins: []string{"*"}}, func(string) string { return "http://attacker.example" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg, _, url := originServer(t, tc.opts)
			for i, version := range versions {
				updates := make(chan string, 10)
				b := newBrowser(t, tc.origin(url))
				cs, err := b.connect(t, url, version, &mcp.ClientOptions{
					ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
						updates <- req.Params.URI
					},
				})
				require.NoError(t, err, version)
				res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://readme"})
				require.NoError(t, err, version)
				assert.Equal(t, "hello", res.Contents[0].Text, version)
				require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://readme"}), version)
				// A 2026-07-28 listen is opened in the background. The
				// sessions stay open until t ends, so that each version
				// counts one more subscription.
				require.Eventually(t, func() bool { n, _, _ := reg.SubscriptionStats(); return n == i+1 }, time.Minute, time.Millisecond, version)
				require.NoError(t, reg.Changed("docs://readme"))
				assert.Equal(t, "docs://readme", mcptest.Receive(t, updates, version+" update"), version)
				assert.Empty(t, b.refusals(), version)
			}
		})
	}
}

// A refusal is logged at Debug to Options.Logger, and not to
// slog.Default(). Not parallel: it sets slog.Default().
func TestOriginLogsRefusals(t *testing.T) {
	var global mcptest.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&global, &slog.HandlerOptions{Level: slog.LevelDebug})))

	var mine mcptest.Buffer
	_, _, url := originServer(t, &serve.Options{
		AllowedOrigins: []string{"https://app.example"},
		Logger:         slog.New(slog.NewTextHandler(&mine, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	_, err := newBrowser(t, "http://attacker.example").connect(t, url, "2026-07-28", nil)
	require.Error(t, err)
	_, err = newBrowser(t, "null").connect(t, url, "2025-11-25", nil)
	require.Error(t, err)
	assert.Regexp(t, `level=DEBUG msg="refused a request for its Origin header" origin=http://attacker.example host=127.0.0.1:\d+ reason=".+" method=POST`, mine.String())
	assert.Contains(t, mine.String(), `level=DEBUG msg="refused a request for its Origin header" origin=null`)
	assert.Empty(t, global.String(), "logged to slog.Default()")
}

// Guard names each allowed origin that is not one.
func TestOriginInvalid(t *testing.T) {
	t.Parallel()
	h, err := serve.Guard(http.NotFoundHandler(), nil)
	require.NoError(t, err)
	require.NotNil(t, h)

	_, err = serve.Guard(http.NotFoundHandler(), &serve.Options{
		AllowedOrigins: []string{"https://app.example", "https://app.example/", "null", "app.example"},
	})
	require.Error(t, err)
	for _, want := range []string{
		`serve: Options.AllowedOrigins[1]: "https://app.example/" is not an origin: it has a path`,
		`serve: Options.AllowedOrigins[2]: "null"`,
		`serve: Options.AllowedOrigins[3]: "app.example" is not an origin`,
	} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), "AllowedOrigins[0]")
}

// A browser page of an allowed origin gets the CORS answers it needs: its
// preflight is answered, and the answer to its request names it; a page
// of another origin is refused before either.
func TestOriginAnswersCORS(t *testing.T) {
	t.Parallel()
	_, _, url := originServer(t, &serve.Options{AllowedOrigins: []string{"https://app.example"}})
	preflight := func(origin string) *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodOptions, url, nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type, mcp-protocol-version, authorization")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res
	}
	res := preflight("https://app.example")
	assert.Equal(t, http.StatusNoContent, res.StatusCode)
	assert.Equal(t, "https://app.example", res.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "GET, POST, DELETE", res.Header.Get("Access-Control-Allow-Methods"))
	assert.Equal(t, "content-type, mcp-protocol-version, authorization", res.Header.Get("Access-Control-Allow-Headers"))
	assert.Equal(t, http.StatusForbidden, preflight("http://attacker.example").StatusCode)

	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"0"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "https://app.example", res.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "Mcp-Session-Id", res.Header.Get("Access-Control-Expose-Headers"))
	assert.NotEmpty(t, res.Header.Get("Mcp-Session-Id"))
}
