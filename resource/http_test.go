package resource_test

// Helpers for the tests that serve a registry over streamable HTTP, and
// the one test of how a registry's server behaves behind go-sdk's own
// handlers. The HTTP edge itself (serve.Guard) is tested in package
// serve.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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

// allVersions are the protocol versions a server made with the library
// serves.
var allVersions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

// httpHandler is the handler a server made with the library is served
// with: serve's edge (Guard, with opts; nil for the defaults) in front of
// go-sdk's handler for every era (with sdkOpts). Its refusals are not
// logged unless opts names a Logger.
func httpHandler(t *testing.T, server *mcp.Server, opts *serve.Options, sdkOpts *mcp.StreamableHTTPOptions) http.Handler {
	t.Helper()
	var o serve.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	h, err := serve.Guard(serve.NewGoSDKHandler(server, sdkOpts), &o)
	require.NoError(t, err)
	return h
}

// serveHTTP serves server with httpHandler(t, server, opts, nil) on a
// loopback port until t ends, and returns its URL.
func serveHTTP(t *testing.T, server *mcp.Server, opts *serve.Options) string {
	t.Helper()
	hs := httptest.NewServer(httpHandler(t, server, opts, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// httpWatcher is a client over streamable HTTP that records what it is
// notified of, for tests that run on the real clock (a network cannot
// join a synctest bubble).
type httpWatcher struct {
	session *mcp.ClientSession
	updates chan string
	listed  chan struct{}
}

// connectHTTPWatcher connects a watcher at version to the streamable HTTP
// endpoint url.
func connectHTTPWatcher(t *testing.T, url, version string) *httpWatcher {
	t.Helper()
	w := &httpWatcher{updates: make(chan string, 100), listed: make(chan struct{}, 100)}
	w.session = mcptest.ConnectHTTP(t, url, "", version, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			w.updates <- req.Params.URI
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			w.listed <- struct{}{}
		},
	})
	require.Equal(t, version, w.session.InitializeResult().ProtocolVersion)
	return w
}

// next waits for the next notification on c, failing t if none comes
// within a minute: the test is of delivery, not of its timing.
func next[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	return mcptest.Receive(t, c, what)
}

// eraRegistry is a registry with a static resource and a template whose
// instances exist for ids 1 to 9, served by a server made with NewServer.
func eraRegistry(t *testing.T) (*resource.Registry, *mcp.Server) {
	t.Helper()
	reg := newRegistry(t, &resource.Options{Logger: quietLogger(),
		Subscriptions: resource.SubscriptionOptions{Window: time.Millisecond}, ListChangedDelay: time.Millisecond})
	require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://readme", Name: "readme"}, resource.Text("hello")))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"}, nil2,
		resource.WithExists(func(_ context.Context, vars resource.Vars) (bool, error) {
			id := vars.Get("id")
			return len(id) == 1 && id >= "1" && id <= "9", nil
		})))
	server, err := reg.NewServer(&mcp.Implementation{Name: "eras", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	return reg, server
}

// A server served to legacy clients without sessions (go-sdk's stateless
// handler, or a stateful one whose session IDs are empty) cannot notify
// them: it neither advertises subscribe nor accepts a subscription, while
// 2026-07-28 clients on the same handler subscribe as usual.
func TestHTTPWithoutSessionsRefusesSubscribe(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]struct {
		sopts *mcp.ServerOptions
		hopts *mcp.StreamableHTTPOptions
	}{
		"stateless":      {&mcp.ServerOptions{Logger: quietLogger()}, &mcp.StreamableHTTPOptions{Stateless: true}},
		"no session IDs": {&mcp.ServerOptions{Logger: quietLogger(), GetSessionID: func() string { return "" }}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			reg, _ := eraRegistry(t)
			server, err := reg.NewServer(&mcp.Implementation{Name: "eras", Version: "v0"}, setup.sopts)
			require.NoError(t, err)
			hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, setup.hopts))
			t.Cleanup(hs.Close)
			listeners := 0
			for _, version := range allVersions {
				if name == "no session IDs" && version == "2026-07-28" {
					continue // a stateful handler serves no 2026-07-28 client
				}
				w := connectHTTPWatcher(t, hs.URL, version)
				caps := w.session.InitializeResult().Capabilities.Resources
				err := w.session.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://readme"})
				if version == "2026-07-28" {
					assert.True(t, caps.Subscribe && caps.ListChanged, "listeners are notified on their stream")
					require.NoError(t, err)
					listeners++
					continue
				}
				assert.False(t, caps.Subscribe, "%s: subscribe not advertised", version)
				assert.False(t, caps.ListChanged, "%s: listChanged not advertised", version)
				jerr := rpcError(t, err)
				assert.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code, version)
				assert.Contains(t, jerr.Message, "cannot receive notifications", version)
			}
			// The listen is opened in the background.
			require.Eventually(t, func() bool { n, _, _ := reg.SubscriptionStats(); return n == listeners }, time.Minute, time.Millisecond,
				"a refused subscription records nothing")
		})
	}
}

// The raw requests of the contract test of go-sdk's header checks
// (gosdk_test.go): POSTs written by hand, with the request-metadata
// headers of 2026-07-28 (transports, "Request Metadata").

// modern is the body of a 2026-07-28 request with id 7: method, params
// (JSON members, or ""), and a _meta naming version.
func modern(method, params, version string) string {
	if params != "" {
		params += ","
	}
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + params + `"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"` + version + `",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`
}

// headers are a request's header lines: a name, then its value, and so
// on; a name may come more than once.
type headers []string

// mirrored are the headers of a 2026-07-28 request of method, named name
// ("" for none).
func mirrored(method, name string) headers {
	h := headers{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", method}
	if name != "" {
		h = append(h, "Mcp-Name", name)
	}
	return h
}

// without returns h without the lines of name.
func (h headers) without(name string) headers {
	var out headers
	for i := 0; i+1 < len(h); i += 2 {
		if h[i] != name {
			out = append(out, h[i], h[i+1])
		}
	}
	return out
}

// b64 is s in the Base64 form of Mcp-Name.
func b64(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }

// An answer is what the server answered a POST.
type answer struct {
	status      int
	contentType string
	body        []byte
}

// post sends body to url with h, and the Content-Type and Accept every
// POST needs.
func post(t *testing.T, c *http.Client, url, body string, h headers) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Add(h[i], h[i+1])
	}
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return answer{res.StatusCode, res.Header.Get("Content-Type"), b}
}

// response decodes a's body as one JSON-RPC response: in a JSON object,
// or in the one event of an event stream.
func (a answer) response(t *testing.T, what string) (fields map[string]json.RawMessage) {
	t.Helper()
	body := a.body
	if strings.HasPrefix(a.contentType, "text/event-stream") {
		for line := range strings.Lines(string(a.body)) {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				body = []byte(data)
			}
		}
	}
	require.NoError(t, json.Unmarshal(body, &fields), "%s: %s", what, a.body)
	assert.JSONEq(t, `"2.0"`, string(fields["jsonrpc"]), "%s", what)
	return fields
}

// requireHeaderMismatch checks that a is the refusal the transport asks
// for: "servers MUST return HTTP status 400 Bad Request and MUST include
// a JSON-RPC error response using the following error code: -32020",
// answering the request with id 7 (none if id is false).
func requireHeaderMismatch(t *testing.T, a answer, id bool, what string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, a.status, "%s: %s", what, a.body)
	assert.Equal(t, "application/json", a.contentType, what)
	fields := a.response(t, what)
	if id {
		assert.JSONEq(t, `7`, string(fields["id"]), "%s: the request's id", what)
	} else {
		assert.NotContains(t, fields, "id", what)
	}
	assert.NotContains(t, fields, "result", what)
	var jerr jsonrpc.Error
	require.NoError(t, json.Unmarshal(fields["error"], &jerr), "%s: %s", what, a.body)
	assert.EqualValues(t, -32020, jerr.Code, "%s: %s", what, jerr.Message)
	assert.EqualValues(t, mcp.CodeHeaderMismatch, jerr.Code, what)
	assert.NotEmpty(t, jerr.Message, what)
}

// requireResult checks that a is a result, and returns it.
func requireResult(t *testing.T, a answer, what string) json.RawMessage {
	t.Helper()
	require.Equal(t, http.StatusOK, a.status, "%s: %s", what, a.body)
	fields := a.response(t, what)
	require.Contains(t, fields, "result", "%s: %s", what, a.body)
	return fields["result"]
}
