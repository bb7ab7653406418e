// Package edgetest is the suite that holds the HTTP edge (package serve)
// in front of a handler of the streamable HTTP transport, over real HTTP.
// The tests of package serve run it on go-sdk's handler; those of module
// mcpgo run it on mark3labs/mcp-go's. One suite, so that a rule holds
// the same on every SDK, or the difference is written down where the
// suite is run.
package edgetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// NewHandler returns the handler under test: the SDK's handler of a
// server that serves reg, behind serve.Guard with opts. It fails t if it
// cannot.
type NewHandler func(t *testing.T, reg *resource.Registry, opts *serve.Options) http.Handler

// Eras are the protocol versions the suite speaks, one of each era.
var Eras = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

// Run runs the suite on the handlers newHandler makes. skip names the
// subtests the handler cannot pass, each with why; Run skips them saying
// so.
func Run(t *testing.T, newHandler NewHandler, skip map[string]string) {
	for _, c := range []struct {
		name string
		test func(*testing.T, *fixture)
	}{
		{"Origin", testOrigin},
		{"CORS", testCORS},
		{"Metadata", testMetadata},
		{"BodyLimit", testBodyLimit},
		{"SlowBody", testSlowBody},
		{"KeepAlive", testKeepAlive},
		{"KeepAliveThroughProxy", testKeepAliveThroughProxy},
		{"NoKeepAliveThroughProxyIsCut", testNoKeepAliveThroughProxyIsCut},
		{"SessionCaps", testSessionCaps},
		{"SessionsReclaimed", testSessionsReclaimed},
		{"SessionBytes", testSessionBytes},
		{"StreamTotal", testStreamTotal},
		{"ListenCaps", testListenCaps},
		{"CallersByAddress", testCallersByAddress},
		{"CallersByNetwork", testCallersByNetwork},
		{"UnknownSession", testUnknownSession},
		{"Batch", testBatch},
		{"DuplicateMeta", testDuplicateMeta},
		{"BoundedEcho", testBoundedEcho},
		{"RebindingHost", testRebindingHost},
	} {
		t.Run(c.name, func(t *testing.T) {
			if why, ok := skip[c.name]; ok {
				t.Skip(why)
			}
			t.Parallel()
			c.test(t, &fixture{newHandler: newHandler})
		})
	}
}

// A fixture serves one registry behind the edge, over loopback.
type fixture struct {
	newHandler NewHandler
	reg        *resource.Registry
	base, url  string // the server's, and its endpoint's
	logs       *buffer
}

// serve starts the handler with opts; callers are named by the X-Client
// header when opts names it.
func (f *fixture) serve(t *testing.T, opts serve.Options) {
	t.Helper()
	f.logs = &buffer{}
	opts.Logger = slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg, err := resource.NewRegistry(&resource.Options{Logger: opts.Logger})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "edge://r/{n}", Name: "r"},
		func(_ context.Context, _ *mcp.ReadResourceRequest, v resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: v.Get("n")}}}, nil
		}))
	opts.Registry = reg
	ts := httptest.NewServer(f.newHandler(t, reg, &opts))
	t.Cleanup(ts.Close)
	f.reg, f.base, f.url = reg, ts.URL, ts.URL+"/mcp"
}

// post sends a POST of body with headers (a name, then its value), as a
// client of version, and returns the answer's status and body.
func (f *fixture) post(t *testing.T, version, body string, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url, strings.NewReader(body))
	require.NoError(t, err)
	setHeaders(req, version, headers)
	return do(t, req)
}

func setHeaders(req *http.Request, version string, headers []string) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set(protocol.HeaderProtocolVersion, version)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
}

func do(t *testing.T, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body
}

// request is the body of a request of method at version, with params
// (nil for none), carrying the _meta a 2026-07-28 request needs.
func request(id int, method, version string, params map[string]any) string {
	if params == nil {
		params = map[string]any{}
	}
	if version >= protocol.SessionlessSince {
		params["_meta"] = map[string]any{
			mcp.MetaKeyProtocolVersion:    version,
			mcp.MetaKeyClientInfo:         map[string]string{"name": "edgetest", "version": "v1"},
			mcp.MetaKeyClientCapabilities: map[string]any{},
		}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b)
}

// initialize is the body of an initialize request at version.
func initialize(version string) string {
	return request(1, protocol.MethodInitialize, "", map[string]any{
		"protocolVersion": version, "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "edgetest", "version": "v1"},
	})
}

// rpcError returns the JSON-RPC error in body, or fails t.
func rpcError(t *testing.T, body []byte) *jsonrpc.Error {
	t.Helper()
	if i := bytes.Index(body, []byte("data: ")); i >= 0 { // an event stream
		body = body[i+len("data: "):]
		body = body[:bytes.IndexByte(body, '\n')]
	}
	var resp struct {
		ID    any            `json:"id"`
		Error *jsonrpc.Error `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &resp), "%s", body)
	require.NotNil(t, resp.Error, "%s", body)
	return resp.Error
}

// A foreign or malformed Origin is refused with 403 and -32600, for every
// method of every era, before the handler sees it; none passes.
func testOrigin(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{})
	for _, version := range Eras {
		for _, origin := range []string{"https://evil.example", "null"} {
			for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
				req, err := http.NewRequestWithContext(t.Context(), method, f.url, strings.NewReader(initialize(version)))
				require.NoError(t, err)
				setHeaders(req, version, []string{"Origin", origin, protocol.HeaderSessionID, "s1"})
				status, _, body := do(t, req)
				assert.Equal(t, http.StatusForbidden, status, "%s %s %s", version, origin, method)
				assert.EqualValues(t, jsonrpc.CodeInvalidRequest, rpcError(t, body).Code)
			}
		}
	}
	// No Origin (a client that is not a browser), or the server's own: served.
	status, _, _ := f.post(t, "2025-11-25", initialize("2025-11-25"))
	assert.Equal(t, http.StatusOK, status)
	status, _, _ = f.post(t, "2025-11-25", initialize("2025-11-25"), "Origin", strings.TrimSuffix(f.url, "/mcp"))
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, f.logs.String(), "refused a request for its Origin header")
}

// An allowed origin gets its CORS preflight answered, and the headers it
// needs to read the answer.
func testCORS(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{AllowedOrigins: []string{"https://app.example"}})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodOptions, f.url, nil)
	require.NoError(t, err)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type, mcp-protocol-version")
	status, h, _ := do(t, req)
	assert.Equal(t, http.StatusNoContent, status)
	assert.Equal(t, "https://app.example", h.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "GET, POST, DELETE", h.Get("Access-Control-Allow-Methods"))
	assert.Equal(t, "content-type, mcp-protocol-version", h.Get("Access-Control-Allow-Headers"))

	status, h, _ = f.post(t, "2025-11-25", initialize("2025-11-25"), "Origin", "https://app.example")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "https://app.example", h.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, h.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id")
}

// Request-metadata headers that do not match the body are refused with
// 400 and -32020 HeaderMismatch, with the request's id.
func testMetadata(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{})
	const modern = "2026-07-28"
	read := request(7, "resources/read", modern, map[string]any{"uri": "edge://r/1"})
	for name, headers := range map[string][]string{
		"two Mcp-Name that disagree": {protocol.HeaderMethod, "resources/read", protocol.HeaderName, "edge://r/1", protocol.HeaderName, "edge://r/2"},
		"Mcp-Name of another uri":    {protocol.HeaderMethod, "resources/read", protocol.HeaderName, "edge://r/2"},
		"Mcp-Method of another":      {protocol.HeaderMethod, "tools/list", protocol.HeaderName, "edge://r/1"},
		"no Mcp-Method":              {protocol.HeaderName, "edge://r/1"},
		"Mcp-Name not Base64":        {protocol.HeaderMethod, "resources/read", protocol.HeaderName, "=?base64?***?="},
	} {
		status, _, body := f.post(t, modern, read, headers...)
		assert.Equal(t, http.StatusBadRequest, status, name)
		e := rpcError(t, body)
		assert.EqualValues(t, protocol.CodeHeaderMismatch, e.Code, name)
	}
	// The same request, its headers right, and its name in Base64: served.
	for _, name := range []string{"edge://r/1", "=?base64?ZWRnZTovL3IvMQ==?="} {
		status, _, body := f.post(t, modern, read, protocol.HeaderMethod, "resources/read", protocol.HeaderName, name)
		assert.Equal(t, http.StatusOK, status, "%s: %s", name, body)
		assert.Contains(t, string(body), `"text":"1"`, name)
	}
	// An older header, and a body whose _meta names 2026-07-28.
	body := request(3, "resources/list", modern, nil)
	status, _, answer := f.post(t, "2025-11-25", body, protocol.HeaderSessionID, f.open(t, "2025-11-25"))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.EqualValues(t, protocol.CodeHeaderMismatch, rpcError(t, answer).Code)
	assert.Contains(t, f.logs.String(), "refused a request for its request-metadata headers")
}

// A body longer than MaxBodyBytes is refused with 413, whether its length
// is declared or not, and never read whole.
func testBodyLimit(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{MaxBodyBytes: 1 << 10})
	long := request(1, "resources/list", "2026-07-28", map[string]any{"pad": strings.Repeat("x", 2<<10)})
	status, _, _ := f.post(t, "2026-07-28", long, protocol.HeaderMethod, "resources/list")
	assert.Equal(t, http.StatusRequestEntityTooLarge, status, "declared length")

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url, io.MultiReader(strings.NewReader(long)))
	require.NoError(t, err)
	setHeaders(req, "2026-07-28", []string{protocol.HeaderMethod, "resources/list"})
	req.ContentLength = -1 // chunked
	status, _, _ = do(t, req)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status, "chunked")
}

// A client that trickles its body is cut off once ReadTimeout passes,
// while it still holds the rest: the server does not wait for it.
func testSlowBody(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{ReadTimeout: 200 * time.Millisecond})
	for name, headers := range map[string]string{
		"2026-07-28":                       protocol.HeaderProtocolVersion + ": 2026-07-28\r\n" + protocol.HeaderMethod + ": resources/list\r\n",
		"a session the edge does not hold": protocol.HeaderProtocolVersion + ": 2025-11-25\r\n" + protocol.HeaderSessionID + ": bogus\r\n",
	} {
		u, err := url.Parse(f.url)
		require.NoError(t, err)
		conn, err := net.Dial("tcp", u.Host)
		require.NoError(t, err)
		defer conn.Close()
		// The headers, and a part of the body; the rest never comes.
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\n%s"+
			"Content-Length: 1000\r\n\r\n{\"jsonrpc\":\"2.0\",", u.Path, u.Host, headers)
		done := make(chan error, 1)
		go func() {
			// An answer, if any, then the connection closed.
			r := bufio.NewReader(conn)
			if resp, err := http.ReadResponse(r, nil); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			_, err := r.ReadByte()
			done <- err
		}()
		assert.Error(t, mcptest.Receive(t, done, name+": the connection closed by the server"), "%s: the connection is closed", name)
	}
}

// An event stream gets X-Accel-Buffering: no, and a comment once quiet.
func testKeepAlive(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{KeepAlive: 20 * time.Millisecond})
	body := request(1, protocol.MethodListen, "2026-07-28", map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{"edge://r/1"}}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, strings.NewReader(body))
	require.NoError(t, err)
	setHeaders(req, "2026-07-28", []string{protocol.HeaderMethod, protocol.MethodListen})
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "no", resp.Header.Get("X-Accel-Buffering"))
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if lines.Text() == ": keepalive" {
			return
		}
	}
	t.Fatalf("the stream ended without a keep-alive comment: %v", lines.Err())
}

// Sessions are capped per caller (429) and in all. At the total, the
// caller that holds the most gives up its oldest session to a newcomer;
// when no caller holds more than one session more than the newcomer, the
// newcomer gets 503. A deleted session frees its place.
func testSessionCaps(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{MaxSessionsPerCaller: 2, MaxSessions: 3, ClientAddressHeader: "X-Client"})
	status, first := f.session(t, "mallory")
	require.Equal(t, http.StatusOK, status)
	require.NotEmpty(t, first)
	status, _ = f.session(t, "mallory")
	require.Equal(t, http.StatusOK, status)
	status, _ = f.session(t, "mallory")
	assert.Equal(t, http.StatusTooManyRequests, status, "mallory's third")
	status, alices := f.session(t, "alice")
	require.Equal(t, http.StatusOK, status)
	status, _ = f.session(t, "bob")
	assert.Equal(t, http.StatusOK, status, "bob, in the place of mallory's oldest session")
	assert.Equal(t, http.StatusNotFound, f.ping(t, first, "mallory"), "mallory's oldest session ended")
	status, _ = f.session(t, "carol")
	assert.Equal(t, http.StatusServiceUnavailable, status, "no caller holds two more than carol")

	req, err := http.NewRequestWithContext(t.Context(), http.MethodDelete, f.url, nil)
	require.NoError(t, err)
	setHeaders(req, "2025-11-25", []string{protocol.HeaderSessionID, alices, "X-Client", "alice"})
	status, _, _ = do(t, req)
	require.Equal(t, 2, status/100, "DELETE")
	status, _ = f.session(t, "carol")
	assert.Equal(t, http.StatusOK, status, "carol, once alice ended hers")
	assert.Contains(t, f.logs.String(), "refused over the cap of sessions per caller")
	assert.Contains(t, f.logs.String(), "refused over the cap of sessions in all")
	assert.Contains(t, f.logs.String(), "ended one of sessions to make room")
}

// Sessions are capped by what they hold too: the bytes of their
// initialize requests, per caller (429) and in all.
func testSessionBytes(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{MaxSessionBytesPerCaller: 2 << 10, ClientAddressHeader: "X-Client"})
	padded := func(n int) string {
		return request(1, protocol.MethodInitialize, "", map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
			"clientInfo": map[string]string{"name": strings.Repeat("x", n), "version": "v1"},
		})
	}
	status, _, _ := f.post(t, "2025-11-25", padded(1500), "X-Client", "mallory")
	require.Equal(t, http.StatusOK, status)
	status, _, body := f.post(t, "2025-11-25", padded(1500), "X-Client", "mallory")
	assert.Equal(t, http.StatusTooManyRequests, status, "%s", body)
	status, _, _ = f.post(t, "2025-11-25", initialize("2025-11-25"), "X-Client", "mallory")
	assert.Equal(t, http.StatusOK, status, "a small one still fits")
	status, _, _ = f.post(t, "2025-11-25", padded(1500), "X-Client", "alice")
	assert.Equal(t, http.StatusOK, status, "alice's budget is her own")
	assert.Contains(t, f.logs.String(), "refused over the cap of session bytes per caller")
}

// A session with no request and no open stream for ReclaimAfter is ended
// to make room for its own caller at its cap, and for anyone at the
// total; one with an open GET stream is not.
func testSessionsReclaimed(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{MaxSessionsPerCaller: 1, MaxSessions: 2, ReclaimAfter: time.Nanosecond, ClientAddressHeader: "X-Client"})
	status, crashed := f.session(t, "alice")
	require.Equal(t, http.StatusOK, status)
	status, _ = f.session(t, "alice")
	assert.Equal(t, http.StatusOK, status, "alice again, in the place of her idle session")
	assert.Equal(t, http.StatusNotFound, f.ping(t, crashed, "alice"), "her idle session ended")

	status, bobs := f.session(t, "bob")
	require.Equal(t, http.StatusOK, status)
	stream := f.getStream(t, bobs, "bob")
	defer stream.Close()
	status, _ = f.session(t, "bob")
	assert.Equal(t, http.StatusTooManyRequests, status, "bob's session has a stream open")
	status, _ = f.session(t, "carol")
	assert.Equal(t, http.StatusOK, status, "carol, in the place of alice's idle session")
}

// session opens a session for caller, named in X-Client, and returns the
// status and the session's ID; the session is initialized.
func (f *fixture) session(t *testing.T, caller string) (int, string) {
	status, h, _ := f.post(t, "2025-11-25", initialize("2025-11-25"), "X-Client", caller)
	id := h.Get(protocol.HeaderSessionID)
	if status == http.StatusOK && id != "" {
		f.post(t, "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			protocol.HeaderSessionID, id, "X-Client", caller)
	}
	return status, id
}

// ping sends a ping in session id of caller, and returns the status.
func (f *fixture) ping(t *testing.T, id, caller string) int {
	status, _, _ := f.post(t, "2025-11-25", `{"jsonrpc":"2.0","id":9,"method":"ping"}`, protocol.HeaderSessionID, id, "X-Client", caller)
	return status
}

// getStream opens the GET stream of session id of caller, and returns its
// body once the answer's header has come; close it to end the stream.
func (f *fixture) getStream(t *testing.T, id, caller string) io.ReadCloser {
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
	require.NoError(t, err)
	setHeaders(req, "2025-11-25", []string{protocol.HeaderSessionID, id, "X-Client", caller})
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "the GET stream")
	return closer{resp.Body, cancel}
}

// A closer closes a stream's body and cancels its request.
type closer struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c closer) Close() error { c.cancel(); return c.ReadCloser.Close() }

// Streams are capped in all: at the total, the caller that holds the most
// loses its oldest stream to a newcomer; when none holds more than one
// more than the newcomer, the newcomer gets 503.
func testStreamTotal(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{MaxStreams: 2, ClientAddressHeader: "X-Client"})
	listen := func(caller string) (*http.Response, error) {
		body := request(1, protocol.MethodListen, "2026-07-28", map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{watchedURI}}})
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url, strings.NewReader(body))
		require.NoError(t, err)
		setHeaders(req, "2026-07-28", []string{protocol.HeaderMethod, protocol.MethodListen, "X-Client", caller})
		return http.DefaultClient.Do(req)
	}
	first, err := listen("mallory")
	require.NoError(t, err)
	defer first.Body.Close()
	require.Equal(t, http.StatusOK, first.StatusCode)
	second, err := listen("mallory")
	require.NoError(t, err)
	defer second.Body.Close()
	require.Equal(t, http.StatusOK, second.StatusCode)

	alices, err := listen("alice")
	require.NoError(t, err)
	defer alices.Body.Close()
	assert.Equal(t, http.StatusOK, alices.StatusCode, "alice, in the place of mallory's oldest stream")
	ended := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, first.Body); ended <- err }()
	mcptest.Receive(t, ended, "the end of mallory's oldest stream")

	bobs, err := listen("bob")
	require.NoError(t, err)
	defer bobs.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, bobs.StatusCode, "no caller holds two more than bob")
	assert.Contains(t, f.logs.String(), "refused over the cap of streams in all")
}

// Listen streams are capped per caller: one more is refused with -32602.
func testListenCaps(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{MaxListensPerCaller: 1, ClientAddressHeader: "X-Client"})
	listen := func(caller string) (io.Closer, error) {
		client := mcptest.WithHeader(nil, "X-Client", caller)
		return audit.ListenHTTP(t.Context(), client, f.url, "2026-07-28", []string{"edge://r/1"})
	}
	first, err := listen("mallory")
	require.NoError(t, err)
	_, err = listen("mallory")
	var rpcErr *jsonrpc.Error
	require.ErrorAs(t, err, &rpcErr, "a listen over the caller's cap")
	assert.EqualValues(t, resource.CodeRateLimited, rpcErr.Code)
	other, err := listen("alice")
	require.NoError(t, err)
	other.Close()
	first.Close()
	require.Eventually(t, func() bool {
		s, err := listen("mallory")
		if err == nil {
			s.Close()
		}
		return err == nil
	}, time.Minute, time.Millisecond, "a place for mallory once her listen closed")
	assert.Contains(t, f.logs.String(), "refused over the cap of listen streams per caller")
}

// Anonymous callers are told apart by network: here, loopback's /24.
func testCallersByAddress(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{MaxSessionsPerCaller: 1})
	status, _, _ := f.post(t, "2025-11-25", initialize("2025-11-25"))
	require.Equal(t, http.StatusOK, status)
	status, _, body := f.post(t, "2025-11-25", initialize("2025-11-25"))
	assert.Equal(t, http.StatusTooManyRequests, status, "%s", body)
	assert.Contains(t, f.logs.String(), "caller=address:127.0.0.0/24")
}

// The addresses of one network are one caller: a /24 of IPv4, a /64 of
// IPv6 by default. With IPv4Prefix 32, each address is its own.
func testCallersByNetwork(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{MaxSessionsPerCaller: 1, ClientAddressHeader: "X-Forwarded-For"})
	for _, c := range []struct {
		addr string
		want int
	}{
		{"192.0.2.1", http.StatusOK},
		{"192.0.2.200", http.StatusTooManyRequests}, // the same /24
		{"198.51.100.1", http.StatusOK},
		{"2001:db8:1:2::1", http.StatusOK},
		{"2001:db8:1:2:ffff::9", http.StatusTooManyRequests}, // the same /64
		{"2001:db8:1:3::1", http.StatusOK},
		{"::ffff:198.51.100.7", http.StatusTooManyRequests}, // IPv4-mapped: 198.51.100.0/24
	} {
		assert.Equal(t, c.want, f.openFrom(t, c.addr), c.addr)
	}
	g := &fixture{newHandler: f.newHandler}
	g.serve(t, serve.Options{MaxSessionsPerCaller: 1, ClientAddressHeader: "X-Forwarded-For", IPv4Prefix: 32})
	assert.Equal(t, http.StatusOK, g.openFrom(t, "192.0.2.1"))
	assert.Equal(t, http.StatusOK, g.openFrom(t, "192.0.2.2"), "with IPv4Prefix 32, another address")
}

// openFrom posts an initialize from addr, named in X-Forwarded-For, and
// returns the status.
func (f *fixture) openFrom(t *testing.T, addr string) int {
	status, _, _ := f.post(t, "2025-11-25", initialize("2025-11-25"), "X-Forwarded-For", addr)
	return status
}

// streamEras are the versions whose clients hold a stream open to be told
// of changes: a session's GET stream, and a 2026-07-28 listen.
var streamEras = []string{"2025-11-25", "2026-07-28"}

// watchedURI is the resource the keep-alive tests subscribe to.
const watchedURI = "edge://r/1"

// Through a reverse proxy that closes an event stream quiet for
// proxyIdleTimeout (1 s here; 60 s, commonly, for a load balancer), the
// stream a client of each era holds open to be told of changes (a
// 2025-11-25 session's GET stream, a 2026-07-28 subscriptions/listen)
// stays open past that timeout with KeepAlive shorter: more comments
// pass than fit in it, the proxy cuts nothing, the client opens no other
// stream, and then the update of a change arrives.
func testKeepAliveThroughProxy(t *testing.T, f *fixture) {
	for _, version := range streamEras {
		t.Run(version, func(t *testing.T) {
			f := &fixture{newHandler: f.newHandler}
			f.serve(t, serve.Options{KeepAlive: keepAlivePeriod})
			p := startProxy(t, f.base)
			// Updates only: a 2026-07-28 client would listen for
			// list_changed on a stream of its own.
			updates := make(chan string, 10)
			cs := mcptest.ConnectHTTP(t, p.url+"/mcp", "", version, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
					updates <- req.Params.URI
				},
			})
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: watchedURI}))
			stream := mcptest.Receive(t, p.opened, "the long-lived event stream, through the proxy")
			require.Equal(t, "no", stream.header.Get("X-Accel-Buffering"))

			// Each comment comes after keepAlivePeriod with nothing passed,
			// so these span more than the proxy's idle timeout.
			for range proxyIdleTimeout/keepAlivePeriod + 1 {
				stream.await(t, stream.comments, "a keep-alive comment through the proxy")
			}
			require.NoError(t, f.reg.Changed(watchedURI))
			require.Equal(t, watchedURI, mcptest.Receive(t, updates, "the update"))

			select {
			case <-stream.cut:
				t.Fatal("the proxy cut the stream as idle")
			case again := <-p.opened:
				t.Fatalf("the client opened another long-lived stream: %s %s", again.method, again.mcpMethod)
			default:
			}
		})
	}
}

// The control: with the comments turned off, the proxy cuts the quiet
// stream, on which no comment passed.
func testNoKeepAliveThroughProxyIsCut(t *testing.T, f *fixture) {
	for _, version := range streamEras {
		t.Run(version, func(t *testing.T) {
			f := &fixture{newHandler: f.newHandler}
			f.serve(t, serve.Options{KeepAlive: -1})
			p := startProxy(t, f.base)
			cs := mcptest.ConnectHTTP(t, p.url+"/mcp", "", version, nil)
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: watchedURI}))
			stream := mcptest.Receive(t, p.opened, "the long-lived event stream, through the proxy")
			require.Equal(t, "no", stream.header.Get("X-Accel-Buffering"), "the header stays")
			stream.await(t, stream.cut, "the proxy's cut of the quiet stream")
			require.Empty(t, stream.comments, "keep-alive comments")
			if version < protocol.SessionlessSince {
				// The session's client, cut off, opens its GET stream
				// again; what was sent in between is lost. (go-sdk
				// v1.8's 2026-07-28 client does not listen again: its
				// Subscribe to the URI has ended for good.)
				mcptest.Receive(t, p.opened, "the GET stream, opened again after the cut")
			}
		})
	}
}

// A buffer is a bytes.Buffer safe for concurrent use.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
