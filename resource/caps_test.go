package resource_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This file checks the caps no caller gets round by opening more sessions
// or listen streams (caps.go), over streamable HTTP, as NewHTTPHandler
// serves it, for clients of each era.

// A capsFixture is a registry with the template caps://r/{n}, served by
// NewHTTPHandler behind WithClientAddress, which takes each request's
// caller from its X-Client header, so that one test plays several
// callers.
type capsFixture struct {
	reg    *resource.Registry
	server *mcp.Server
	url    string
	logs   *syncBuffer
}

func newCapsFixture(t *testing.T, opts resource.Options) *capsFixture {
	t.Helper()
	f := &capsFixture{logs: &syncBuffer{}}
	opts.Logger = slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	reg, err := resource.NewRegistry(&opts)
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "caps://r/{n}", Name: "r"},
		func(_ context.Context, _ *mcp.ReadResourceRequest, v resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: v.Get("n")}}}, nil
		}))
	f.reg = reg
	f.server, err = reg.NewServer(&mcp.Implementation{Name: "caps", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	ts := httptest.NewServer(resource.WithClientAddress(resource.NewHTTPHandler(f.server, nil), "X-Client"))
	t.Cleanup(ts.Close)
	f.url = ts.URL
	return f
}

// client returns an HTTP client whose requests name caller.
func (f *capsFixture) client(t *testing.T, caller string) *http.Client {
	base := mcptest.HTTPClient(t, "")
	return &http.Client{Transport: namedCaller{caller: caller, next: base.Transport}}
}

type namedCaller struct {
	caller string
	next   http.RoundTripper
}

func (c namedCaller) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("X-Client", c.caller)
	return c.next.RoundTrip(req)
}

// connect opens a session of a client before 2026-07-28 for caller.
func (f *capsFixture) connect(t *testing.T, caller string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "caps-test", Version: "v0"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: f.client(t, caller)}
	cs, err := client.Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// listen opens a 2026-07-28 listen stream of caller to uris; the stream
// is closed when t ends.
func (f *capsFixture) listen(t *testing.T, caller string, uris ...string) (io.Closer, error) {
	stream, err := audit.ListenHTTP(t.Context(), f.client(t, caller), f.url, "2026-07-28", uris)
	if err == nil {
		t.Cleanup(func() { stream.Close() })
	}
	return stream, err
}

// capsURIs returns caps://r/{from} to caps://r/{to-1}.
func capsURIs(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("caps://r/%d", i))
	}
	return out
}

// refusedWith asserts that err is a JSON-RPC error of code whose message
// holds want.
func refusedWith(t *testing.T, err error, code int64, want string) {
	t.Helper()
	var rpcErr *jsonrpc.Error
	if assert.ErrorAs(t, err, &rpcErr) {
		assert.Equal(t, code, rpcErr.Code)
		assert.Contains(t, rpcErr.Message, want)
	}
}

func TestSubscriptionsPerCallerAcrossSessions(t *testing.T) {
	f := newCapsFixture(t, resource.Options{Subscriptions: resource.SubscriptionOptions{MaxPerSession: 2, MaxPerCaller: 3}})
	a, err := f.connect(t, "mallory")
	require.NoError(t, err)
	b, err := f.connect(t, "mallory")
	require.NoError(t, err)
	for _, u := range capsURIs(0, 2) {
		require.NoError(t, a.Subscribe(t.Context(), &mcp.SubscribeParams{URI: u}))
	}
	require.NoError(t, b.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/2"}))
	// A third session does not get mallory round the cap.
	c, err := f.connect(t, "mallory")
	require.NoError(t, err)
	err = c.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/3"})
	refusedWith(t, err, jsonrpc.CodeInvalidParams, "this caller holds 3")
	// Nor a listen stream.
	_, err = f.listen(t, "mallory", "caps://r/3")
	refusedWith(t, err, jsonrpc.CodeInvalidParams, "this caller holds 3")
	// Another caller is not held by mallory's cap.
	alice, err := f.connect(t, "alice")
	require.NoError(t, err)
	require.NoError(t, alice.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/3"}))
	// Unsubscribing, or ending a session, gives the places back.
	require.NoError(t, b.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: "caps://r/2"}))
	require.NoError(t, c.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/3"}))
	require.NoError(t, a.Close())
	eventually(t, func() bool { n, _, _ := f.reg.SubscriptionStats(); return n == 2 }, "session a's subscriptions dropped")
	require.NoError(t, c.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/4"}))
	require.NoError(t, b.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/5"}))
	err = b.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/6"})
	refusedWith(t, err, jsonrpc.CodeInvalidParams, "this caller holds 3")
}

func TestSubscriptionsPerCallerAcrossListens(t *testing.T) {
	f := newCapsFixture(t, resource.Options{Subscriptions: resource.SubscriptionOptions{MaxPerCaller: 3}})
	first, err := f.listen(t, "mallory", capsURIs(0, 2)...)
	require.NoError(t, err)
	// A second stream of two would make four: refused as a whole.
	_, err = f.listen(t, "mallory", capsURIs(2, 4)...)
	refusedWith(t, err, jsonrpc.CodeInvalidParams, "this caller holds 3")
	eventually(t, func() bool { n, _, _ := f.reg.SubscriptionStats(); return n == 2 }, "the refused listen's subscription dropped")
	_, err = f.listen(t, "alice", capsURIs(0, 3)...)
	require.NoError(t, err)
	// Hanging up gives the places back.
	first.Close()
	eventually(t, func() bool { n, _, _ := f.reg.SubscriptionStats(); return n == 3 }, "the closed listen's subscriptions dropped")
	_, err = f.listen(t, "mallory", capsURIs(0, 3)...)
	require.NoError(t, err)
}

func TestListensPerCaller(t *testing.T) {
	f := newCapsFixture(t, resource.Options{Subscriptions: resource.SubscriptionOptions{MaxListensPerCaller: 2}})
	first, err := f.listen(t, "mallory", "caps://r/0")
	require.NoError(t, err)
	_, err = f.listen(t, "mallory", "caps://r/1")
	require.NoError(t, err)
	_, err = f.listen(t, "mallory", "caps://r/2")
	refusedWith(t, err, jsonrpc.CodeInvalidParams, "holds 2 subscriptions/listen streams open")
	_, err = f.listen(t, "alice", "caps://r/2")
	require.NoError(t, err)
	first.Close()
	eventually(t, func() bool {
		stream, err := f.listen(t, "mallory", "caps://r/3")
		if err == nil {
			stream.Close()
		}
		return err == nil
	}, "a place for mallory's listen once one closed")
	assert.Equal(t, 1, strings.Count(f.logs.String(), "listen streams per caller"), f.logs.String())
}

func TestSubscriptionsInAll(t *testing.T) {
	f := newCapsFixture(t, resource.Options{Subscriptions: resource.SubscriptionOptions{Max: 2}})
	a, err := f.connect(t, "alice")
	require.NoError(t, err)
	require.NoError(t, a.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/0"}))
	_, err = f.listen(t, "bob", "caps://r/1")
	require.NoError(t, err)
	err = a.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/2"})
	refusedWith(t, err, jsonrpc.CodeInvalidParams, "the server holds 2")
	_, err = f.listen(t, "carol", "caps://r/2")
	refusedWith(t, err, jsonrpc.CodeInvalidParams, "the server holds 2")
	// Subscribing again to what one holds takes no place.
	require.NoError(t, a.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/0"}))
}

// initialize posts an initialize of protocol 2025-11-25 for caller, as a
// client opening a session does, and returns the answer.
func (f *capsFixture) initialize(t *testing.T, caller string) *http.Response {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]string{"name": "raw", "version": "v0"},
	}})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := f.client(t, caller).Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sessionRefusal asserts that resp refuses a session with status and a
// JSON-RPC error without id, of code CodeRateLimited, naming the cap.
func sessionRefusal(t *testing.T, resp *http.Response, status int, capName string) {
	t.Helper()
	assert.Equal(t, status, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Empty(t, resp.Header.Get("Mcp-Session-Id"))
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	rpcErr := errorWithoutID(t, data)
	assert.Equal(t, int64(resource.CodeRateLimited), rpcErr.Code)
	assert.Contains(t, rpcErr.Message, capName)
}

// errorWithoutID returns the error of body, a JSON-RPC error response
// without id, as the transport allows an HTTP refusal to carry; it fails
// t if body is not one. (go-sdk's jsonrpc.DecodeMessage refuses a
// response without id.)
func errorWithoutID(t *testing.T, body []byte) *jsonrpc.Error {
	t.Helper()
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &fields), "%s", body)
	assert.NotContains(t, fields, "id", "a JSON-RPC error response that has no id: %s", body)
	assert.JSONEq(t, `"2.0"`, string(fields["jsonrpc"]), "%s", body)
	var jerr jsonrpc.Error
	require.NoError(t, json.Unmarshal(fields["error"], &jerr), "%s", body)
	return &jerr
}

func TestSessionsPerCaller(t *testing.T) {
	f := newCapsFixture(t, resource.Options{Sessions: resource.SessionOptions{MaxPerCaller: 2}})
	a, err := f.connect(t, "mallory")
	require.NoError(t, err)
	_, err = f.connect(t, "mallory")
	require.NoError(t, err)
	before := sessions(f.server)
	for range 5 {
		sessionRefusal(t, f.initialize(t, "mallory"), http.StatusTooManyRequests, "sessions per caller (2)")
	}
	_, err = f.connect(t, "mallory")
	assert.Error(t, err, "a go-sdk client is refused too")
	assert.Equal(t, before, sessions(f.server), "a refused request opens no session")
	assert.Equal(t, 1, strings.Count(f.logs.String(), "sessions per caller"), "one line for the burst: %s", f.logs.String())
	_, err = f.connect(t, "alice")
	require.NoError(t, err)
	// A session the client deletes frees its place at once.
	require.NoError(t, a.Close())
	c, err := f.connect(t, "mallory")
	require.NoError(t, err)
	// A session the server closes (as SessionTimeout does) frees its
	// place once a request needs it.
	sessionRefusal(t, f.initialize(t, "mallory"), http.StatusTooManyRequests, "sessions per caller")
	for s := range f.server.Sessions() {
		if s.ID() == c.ID() {
			s.Close()
		}
	}
	eventually(t, func() bool {
		resp := f.initialize(t, "mallory")
		return resp.StatusCode == http.StatusOK
	}, "a place for mallory once the server closed one of its sessions")
}

func TestSessionsInAll(t *testing.T) {
	f := newCapsFixture(t, resource.Options{Sessions: resource.SessionOptions{Max: 2}})
	_, err := f.connect(t, "alice")
	require.NoError(t, err)
	_, err = f.connect(t, "bob")
	require.NoError(t, err)
	sessionRefusal(t, f.initialize(t, "carol"), http.StatusServiceUnavailable, "sessions in all (2)")
	// 2026-07-28 clients need no session, and are served.
	_, err = f.listen(t, "carol", "caps://r/0")
	require.NoError(t, err)
}

// eventually waits for cond, polling, for as long as mcptest waits for
// an event.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	require.Eventually(t, cond, mcptest.WaitTimeout, time.Millisecond, what)
}

func TestCapsOptions(t *testing.T) {
	for _, opts := range []resource.Options{
		{Subscriptions: resource.SubscriptionOptions{MaxPerCaller: -1}},
		{Subscriptions: resource.SubscriptionOptions{Max: -1}},
		{Subscriptions: resource.SubscriptionOptions{MaxListensPerCaller: -1}},
		{Sessions: resource.SessionOptions{MaxPerCaller: -1}},
		{Sessions: resource.SessionOptions{Max: -1}},
	} {
		_, err := resource.NewRegistry(&opts)
		assert.ErrorContains(t, err, "negative cap")
	}
}
