package resource_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
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
	edge := &serve.Options{ClientAddressHeader: "X-Client"}
	if strings.Contains(t.Name(), "/edge/") { // TestCapsWithListensAtTheEdge
		edge.Registry = reg
	}
	f.url = serveHTTP(t, f.server, edge)
	return f
}

// TestCapsWithListensAtTheEdge runs the caps tests again with the HTTP
// edge serving 2026-07-28 listens itself (serve.Options.Registry, so
// Registry.OpenListen), rather than go-sdk: the caps, the byte budgets
// and the shedding at the totals hold the same.
func TestCapsWithListensAtTheEdge(t *testing.T) {
	for name, test := range map[string]func(*testing.T){
		"SubscriptionsPerCallerAcrossSessions": TestSubscriptionsPerCallerAcrossSessions,
		"SubscriptionsPerListenStream":         TestSubscriptionsPerListenStream,
		"SubscriptionsPerCallerAcrossListens":  TestSubscriptionsPerCallerAcrossListens,
		"SubscriptionsInAll":                   TestSubscriptionsInAll,
		"SubscriptionBytesPerCaller":           TestSubscriptionBytesPerCaller,
		"SubscriptionBytesInAll":               TestSubscriptionBytesInAll,
		"SubscriptionsInAllShedTheHeaviest":    TestSubscriptionsInAllShedTheHeaviest,
	} {
		t.Run("edge/"+name, test)
	}
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

// At 2026-07-28 MaxPerSession caps each listen stream: a listen of more
// is refused as a whole, and another stream has a cap of its own.
func TestSubscriptionsPerListenStream(t *testing.T) {
	f := newCapsFixture(t, resource.Options{Subscriptions: resource.SubscriptionOptions{MaxPerSession: 2}})
	_, err := f.listen(t, "mallory", capsURIs(0, 3)...)
	refusedWith(t, err, jsonrpc.CodeInvalidParams, "too many subscriptions")
	eventually(t, func() bool { n, _, _ := f.reg.SubscriptionStats(); return n == 0 }, "the refused listen's subscriptions dropped")
	_, err = f.listen(t, "mallory", capsURIs(0, 2)...)
	require.NoError(t, err)
	_, err = f.listen(t, "mallory", capsURIs(2, 4)...)
	require.NoError(t, err)
	n, _, _ := f.reg.SubscriptionStats()
	assert.Equal(t, 4, n)
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
	for _, c := range []struct {
		field string
		opts  resource.SubscriptionOptions
	}{
		{"Subscriptions.MaxPerCaller", resource.SubscriptionOptions{MaxPerCaller: -1}},
		{"Subscriptions.Max", resource.SubscriptionOptions{Max: -1}},
		{"Subscriptions.MaxBytesPerCaller", resource.SubscriptionOptions{MaxBytesPerCaller: -1}},
		{"Subscriptions.MaxBytes", resource.SubscriptionOptions{MaxBytes: -1}},
	} {
		_, err := resource.NewRegistry(&resource.Options{Subscriptions: c.opts})
		assert.ErrorContains(t, err, "negative cap", c.field)
		assert.ErrorContains(t, err, c.field+":", c.field)
	}
}

// longURI returns a URI of caps://r/{n} padded to size bytes with
// leading zeros, which the template matches as its own spelling.
func longURI(n, size int) string {
	s := fmt.Sprint(n)
	return "caps://r/" + strings.Repeat("0", size-len("caps://r/")-len(s)) + s
}

// Each subscription costs its URI's bytes against the caller's budget,
// whichever session or stream holds it, and gives them back when it
// ends: by unsubscribing, by its session's end, by its listen's end.
func TestSubscriptionBytesPerCaller(t *testing.T) {
	const size = 100
	f := newCapsFixture(t, resource.Options{Subscriptions: resource.SubscriptionOptions{MaxBytesPerCaller: 3 * size}})
	a, err := f.connect(t, "mallory")
	require.NoError(t, err)
	b, err := f.connect(t, "mallory")
	require.NoError(t, err)
	require.NoError(t, a.Subscribe(t.Context(), &mcp.SubscribeParams{URI: longURI(0, size)}))
	stream, err := f.listen(t, "mallory", longURI(1, size))
	require.NoError(t, err)
	require.NoError(t, b.Subscribe(t.Context(), &mcp.SubscribeParams{URI: longURI(2, size)}))
	// A fourth of mallory's is refused, on any session or stream; a
	// short one still fits no better than the budget allows.
	const refusal = "this caller's would exceed 300 bytes"
	err = b.Subscribe(t.Context(), &mcp.SubscribeParams{URI: longURI(3, size)})
	refusedWith(t, err, jsonrpc.CodeInvalidParams, refusal)
	_, err = f.listen(t, "mallory", longURI(3, size))
	refusedWith(t, err, jsonrpc.CodeInvalidParams, refusal)
	err = b.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/3"})
	refusedWith(t, err, jsonrpc.CodeInvalidParams, refusal)
	// Subscribing again to what one holds costs nothing more.
	require.NoError(t, a.Subscribe(t.Context(), &mcp.SubscribeParams{URI: longURI(0, size)}))
	// Another caller, even to the same URIs, is not held by mallory's.
	alice, err := f.connect(t, "alice")
	require.NoError(t, err)
	for n := range 3 {
		require.NoError(t, alice.Subscribe(t.Context(), &mcp.SubscribeParams{URI: longURI(n, size)}))
	}
	// Unsubscribing gives the bytes back.
	require.NoError(t, b.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: longURI(2, size)}))
	require.NoError(t, b.Subscribe(t.Context(), &mcp.SubscribeParams{URI: longURI(3, size)}))
	err = b.Subscribe(t.Context(), &mcp.SubscribeParams{URI: longURI(4, size)})
	refusedWith(t, err, jsonrpc.CodeInvalidParams, refusal)
	// So does the end of a listen stream.
	stream.Close()
	eventually(t, func() bool { n, _, _ := f.reg.SubscriptionStats(); return n == 5 }, "the closed listen's subscription dropped")
	require.NoError(t, b.Subscribe(t.Context(), &mcp.SubscribeParams{URI: longURI(4, size)}))
	// And the end of a session.
	require.NoError(t, a.Close())
	eventually(t, func() bool { n, _, _ := f.reg.SubscriptionStats(); return n == 5 }, "session a's subscriptions dropped")
	_, err = f.listen(t, "mallory", longURI(5, size))
	require.NoError(t, err)
	// The refusals were logged once, as one burst.
	assert.Equal(t, 1, strings.Count(f.logs.String(), "refused over the cap of subscribed URI bytes per caller"), f.logs.String())
}

func TestSubscriptionBytesInAll(t *testing.T) {
	const size = 1000
	f := newCapsFixture(t, resource.Options{Subscriptions: resource.SubscriptionOptions{MaxBytes: 2 * size}})
	a, err := f.connect(t, "alice")
	require.NoError(t, err)
	require.NoError(t, a.Subscribe(t.Context(), &mcp.SubscribeParams{URI: longURI(0, size)}))
	stream, err := f.listen(t, "bob", longURI(1, size))
	require.NoError(t, err)
	const refusal = "the server's would exceed 2000 bytes"
	err = a.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/2"})
	refusedWith(t, err, jsonrpc.CodeInvalidParams, refusal)
	// carol, who holds nothing, takes the place of the heaviest holder:
	// alice and bob hold as much, and alice comes first by name.
	_, err = f.listen(t, "carol", "caps://r/2")
	require.NoError(t, err)
	eventually(t, func() bool { n, _, _ := f.reg.SubscriptionStats(); return n == 2 }, "alice's session dropped")
	// bob hangs up: his bytes are everyone's again.
	stream.Close()
	eventually(t, func() bool { n, _, _ := f.reg.SubscriptionStats(); return n == 1 }, "bob's listen dropped")
	_, err = f.listen(t, "dave", longURI(3, size))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(f.logs.String(), "refused over the cap of subscribed URI bytes in all"), f.logs.String())
}

// At the total, the caller that holds the most gives up the session or
// listen stream that holds the most, when it would still hold more than
// the newcomer: one caller cannot keep every other from subscribing. Its
// client sees the session end, or its listen stream end.
func TestSubscriptionsInAllShedTheHeaviest(t *testing.T) {
	for _, era := range []string{"session", "listen"} {
		t.Run(era, func(t *testing.T) {
			f := newCapsFixture(t, resource.Options{Subscriptions: resource.SubscriptionOptions{Max: 3}})
			var mallory *mcp.ClientSession
			var stream io.ReadCloser
			if era == "session" {
				var err error
				mallory, err = f.connect(t, "mallory")
				require.NoError(t, err)
				require.NoError(t, mallory.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/0"}))
				require.NoError(t, mallory.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "caps://r/1"}))
			} else {
				stream = f.rawListen(t, "mallory", "caps://r/0", "caps://r/1")
			}
			_, err := f.listen(t, "alice", "caps://r/2")
			require.NoError(t, err)
			eventually(t, func() bool { n, _, _ := f.reg.SubscriptionStats(); return n == 3 }, "three subscriptions")

			_, err = f.listen(t, "carol", "caps://r/3")
			require.NoError(t, err, "carol, in the place of mallory's")
			eventually(t, func() bool { n, _, _ := f.reg.SubscriptionStats(); return n == 2 }, "mallory's two dropped")
			if era == "session" {
				eventually(t, func() bool {
					_, err := mallory.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "caps://r/0"})
					return err != nil
				}, "mallory's session ended")
			} else {
				ended := make(chan error, 1)
				go func() { _, err := io.Copy(io.Discard, stream); ended <- err }()
				mcptest.Receive(t, ended, "the end of mallory's listen stream")
			}
			assert.Contains(t, f.logs.String(), "ended a session's subscriptions to make room at a total")
			// With no caller two ahead, a newcomer is refused.
			_, err = f.listen(t, "dave", "caps://r/4")
			require.NoError(t, err, "dave takes the third place")
			_, err = f.listen(t, "erin", "caps://r/5")
			refusedWith(t, err, jsonrpc.CodeInvalidParams, "the server holds 3")
		})
	}
}

// rawListen opens a 2026-07-28 listen of caller to uris, and returns its
// event stream once the acknowledgment has come; it is closed when t
// ends.
func (f *capsFixture) rawListen(t *testing.T, caller string, uris ...string) io.ReadCloser {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
		"params": map[string]any{
			"_meta": map[string]any{mcp.MetaKeyProtocolVersion: "2026-07-28", mcp.MetaKeyClientInfo: map[string]string{"name": "t", "version": "v0"},
				mcp.MetaKeyClientCapabilities: map[string]any{}},
			"notifications": map[string]any{"resourceSubscriptions": uris}}})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := f.client(t, caller).Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	line := bufio.NewReader(resp.Body)
	for {
		l, err := line.ReadString('\n')
		require.NoError(t, err, "before the acknowledgment")
		if strings.Contains(l, "notifications/subscriptions/acknowledged") {
			break
		}
	}
	return io.NopCloser(line)
}
