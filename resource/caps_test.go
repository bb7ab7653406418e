package resource_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This file checks the subscription caps (caps.go) no caller gets round
// by opening more sessions or listen streams, over streamable HTTP, for
// clients of each era. The caps on sessions and listen streams are the
// HTTP edge's, tested in package serve.

// A capsFixture is a registry with the template caps://r/{n}, served
// behind serve's edge, which takes each request's caller from its
// X-Client header (Options.ClientAddressHeader), so that one test plays
// several callers.
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
	f.url = serveHTTP(t, f.server, &serve.Options{ClientAddressHeader: "X-Client"})
	return f
}

// client returns an HTTP client whose requests name caller.
func (f *capsFixture) client(t *testing.T, caller string) *http.Client {
	return mcptest.WithHeader(mcptest.HTTPClient(t, ""), "X-Client", caller)
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
	} {
		_, err := resource.NewRegistry(&opts)
		assert.ErrorContains(t, err, "negative cap")
	}
}
