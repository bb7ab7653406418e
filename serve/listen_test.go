package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rawStream is the answer to a raw POST: its status, its headers, and
// a reader of its body's events.
type rawStream struct {
	status int
	header http.Header
	body   *bufio.Reader
	close  func()
}

// postListen posts a 2026-07-28 subscriptions/listen with id (raw JSON)
// and notifications to url.
func postListen(t *testing.T, url, id string, notifications map[string]any) *rawStream {
	t.Helper()
	return postListenWith(t, url, id, notifications)
}

// postListenWith is postListen with headers, a name then its value.
func postListenWith(t *testing.T, url, id string, notifications map[string]any, headers ...string) *rawStream {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": json.RawMessage(id), "method": protocol.MethodListen,
		"params": map[string]any{
			"_meta": map[string]any{
				mcp.MetaKeyProtocolVersion:    "2026-07-28",
				mcp.MetaKeyClientInfo:         map[string]string{"name": "raw", "version": "v0"},
				mcp.MetaKeyClientCapabilities: map[string]any{},
			},
			"notifications": notifications,
		},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(protocol.HeaderProtocolVersion, "2026-07-28")
	req.Header.Set(protocol.HeaderMethod, protocol.MethodListen)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := mcptest.HTTPClient(t, "").Do(req)
	require.NoError(t, err)
	s := &rawStream{status: resp.StatusCode, header: resp.Header, body: bufio.NewReader(resp.Body),
		close: func() { cancel(); resp.Body.Close() }}
	t.Cleanup(s.close)
	return s
}

// event reads the stream's next event, as it was written, keep-alive
// comments left out.
func (s *rawStream) event(t *testing.T) string {
	t.Helper()
	var ev strings.Builder
	for {
		line, err := s.body.ReadString('\n')
		require.NoError(t, err, "event so far: %q", ev.String())
		if strings.HasPrefix(line, ":") {
			_, err := s.body.ReadString('\n') // the comment's blank line
			require.NoError(t, err)
			continue
		}
		ev.WriteString(line)
		if line == "\n" {
			return ev.String()
		}
	}
}

// TestListenAtEdgeAsGoSDK: a listen the edge serves (Options.Registry
// set, the server NewServer's) is answered on the wire, byte for byte, as
// go-sdk answers it behind the edge without a registry: the status, the
// headers, the acknowledgment, each notification (a URI with '&', which
// json.Marshal would escape and go-sdk does not, included), a refusal, and
// list_changed; a listen that asks for the list_changed of tools too is
// go-sdk's, and is answered as before.
func TestListenAtEdgeAsGoSDK(t *testing.T) {
	t.Parallel()
	reg, server := eraRegistry(t)
	odd := []string{"docs://a?x=b&c=d", "docs://plain"}
	for _, u := range odd {
		require.NoError(t, reg.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)))
	}
	edge := startGuarded(t, server, &serve.Options{Registry: reg}, nil)
	other, err := reg.NewServer(&mcp.Implementation{Name: "eras", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	sdk := startGuarded(t, other, nil, nil)

	for _, id := range []string{`7`, `"s-1"`} {
		t.Run(id, func(t *testing.T) {
			subs := map[string]any{"resourceSubscriptions": append([]string{"docs://readme"}, odd...)}
			a, b := postListen(t, edge, id, subs), postListen(t, sdk, id, subs)
			require.Equal(t, http.StatusOK, a.status)
			assert.Equal(t, b.status, a.status)
			for _, h := range []string{"Content-Type", "Cache-Control", "Connection", "X-Accel-Buffering"} {
				assert.Equal(t, b.header.Values(h), a.header.Values(h), h)
			}
			ack := a.event(t)
			assert.Equal(t, b.event(t), ack)
			assert.Contains(t, ack, "notifications/subscriptions/acknowledged")
			for _, u := range append(odd, "docs://readme") {
				require.NoError(t, reg.Changed(u))
				ev := a.event(t)
				assert.Equal(t, b.event(t), ev, u)
				assert.Contains(t, ev, "notifications/resources/updated")
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		subs := map[string]any{"resourceSubscriptions": []string{"docs://readme", "docs://missing"}}
		a, b := postListen(t, edge, `3`, subs), postListen(t, sdk, `3`, subs)
		assert.Equal(t, http.StatusBadRequest, a.status)
		assert.Equal(t, b.status, a.status)
		assert.Equal(t, b.header.Get("Content-Type"), a.header.Get("Content-Type"))
		ab, _ := io.ReadAll(a.body)
		bb, _ := io.ReadAll(b.body)
		assert.Equal(t, string(bb), string(ab))
		assert.Eventually(t, func() bool { n, _, _ := reg.SubscriptionStats(); return n == 0 }, 5*time.Second, time.Millisecond,
			"the subscription made before the refusal is dropped")
	})

	t.Run("list_changed", func(t *testing.T) {
		for i, subs := range []map[string]any{
			{"resourceSubscriptions": []string{"docs://readme"}, "resourcesListChanged": true},
			{"resourcesListChanged": true},
			{"resourcesListChanged": true, "toolsListChanged": true}, // go-sdk's: the server has no tools
		} {
			id := strconv.Itoa(10 + i)
			a, b := postListen(t, edge, id, subs), postListen(t, sdk, id, subs)
			assert.Equal(t, b.event(t), a.event(t), "acknowledgment %v", subs)
			require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://new" + id, Name: "new"}, resource.Text("new")))
			assert.Equal(t, b.event(t), a.event(t), "list_changed %v", subs)
			a.close()
			b.close()
		}
	})
}

// TestListenAtEdgeHoldsNoSession: a listen served at the edge opens no
// go-sdk session, and its subscriptions end with it.
func TestListenAtEdgeHoldsNoSession(t *testing.T) {
	t.Parallel()
	reg, server := eraRegistry(t)
	h, err := serve.Handler(server, &serve.Options{Registry: reg, Logger: quietLogger(), Path: "/"})
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	s := postListen(t, hs.URL, `1`, map[string]any{"resourceSubscriptions": []string{"docs://readme", "db://users/3"}})
	require.Contains(t, s.event(t), "acknowledged")
	n, _, _ := reg.SubscriptionStats()
	assert.Equal(t, 2, n)
	assert.Zero(t, sessions(server), "go-sdk holds no session for the listen")
	s.close()
	assert.Eventually(t, func() bool { n, _, _ := reg.SubscriptionStats(); return n == 0 }, 5*time.Second, time.Millisecond)
}

// smallBuffers accepts connections whose send buffer is small, so that a
// client that stops reading stalls the server's writes soon.
type smallBuffers struct{ net.Listener }

// smallBufferServer serves a registry of the resources big://r/{n}, whose
// windows and list_changed delay are a millisecond, behind serve.Handler
// with opts (at the path "/", Registry set to it), over connections whose
// write buffers are small (smallBuffers).
func smallBufferServer(t *testing.T, opts serve.Options) (*resource.Registry, *httptest.Server) {
	t.Helper()
	return smallServer{opts: opts, registry: true}.start(t)
}

// A smallServer is smallBufferServer's, with more choices.
type smallServer struct {
	opts     serve.Options
	registry bool                       // opts.Registry is the registry
	sdk      *mcp.StreamableHTTPOptions // if not nil, go-sdk's handler is serve.NewGoSDKHandler's with sdk, behind serve.Guard
	server   func(*mcp.Server)          // if not nil, is given the server the registry made
}

func (c smallServer) start(t *testing.T) (*resource.Registry, *httptest.Server) {
	t.Helper()
	reg, err := resource.NewRegistry(&resource.Options{Logger: quietLogger(),
		Subscriptions: resource.SubscriptionOptions{Window: time.Millisecond}, ListChangedDelay: time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "big://r/{n}", Name: "r"},
		func(_ context.Context, _ *mcp.ReadResourceRequest, v resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: v.Get("n")}}}, nil
		}))
	server, err := reg.NewServer(&mcp.Implementation{Name: "small", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	if c.server != nil {
		c.server(server)
	}
	opts := c.opts
	if c.registry {
		opts.Registry = reg
	}
	opts.Logger, opts.Path = quietLogger(), "/"
	var h http.Handler
	if c.sdk != nil {
		h, err = serve.Guard(serve.NewGoSDKHandler(server, c.sdk), &opts)
	} else {
		h, err = serve.Handler(server, &opts)
	}
	require.NoError(t, err)
	hs := httptest.NewUnstartedServer(h)
	hs.Listener = smallBuffers{hs.Listener}
	hs.Start()
	t.Cleanup(hs.Close)
	return reg, hs
}

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestStalledListenAtEdge: a client that stops reading its listen stream
// holds up no other listen, and when the stream gate closes its stream to
// make room, the write blocked on it is given up, and the list_changed
// waiting behind it: the stream ends and its subscriptions are dropped.
func TestStalledListenAtEdge(t *testing.T) {
	t.Parallel()
	reg, hs := smallBufferServer(t, serve.Options{ClientAddressHeader: "X-Client", MaxStreams: 3})

	var uris []string
	for i := range 10 {
		uris = append(uris, "big://r/"+strings.Repeat("x", 1000)+strconv.Itoa(i))
	}
	// mallory's first listen, over a connection whose reader never reads.
	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(4096))
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": protocol.MethodListen,
		"params": map[string]any{"_meta": map[string]any{mcp.MetaKeyProtocolVersion: "2026-07-28", mcp.MetaKeyClientCapabilities: map[string]any{}},
			"notifications": map[string]any{"resourceSubscriptions": uris, "resourcesListChanged": true}}})
	require.NoError(t, err)
	_, err = fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nX-Client: 10.0.0.1\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\n"+
		"Content-Length: %d\r\n\r\n%s", hs.Listener.Addr(), len(body), body)
	require.NoError(t, err)
	require.Eventually(t, func() bool { n, _, _ := reg.SubscriptionStats(); return n == 10 }, 10*time.Second, time.Millisecond)

	alice := postListenWith(t, hs.URL, `1`, map[string]any{"resourceSubscriptions": uris, "resourcesListChanged": true}, "X-Client", "10.0.1.1")
	require.Contains(t, alice.event(t), "acknowledged")
	for round := range 20 {
		for _, u := range uris {
			require.NoError(t, reg.Changed(u))
		}
		for range uris {
			require.Contains(t, alice.event(t), "resources/updated", "round %d", round)
		}
	}

	// The list changes: the stalled stream's handler, which writes its
	// list_changed, waits behind the write blocked on its client.
	require.NoError(t, reg.Add(&mcp.Resource{URI: "big://other", Name: "other"}, resource.Text("other")))
	require.Contains(t, alice.event(t), "notifications/resources/list_changed", "the registry told every stream that takes it, the stalled one too")

	// mallory's second listen; then bob's, at the total of three: the
	// gate closes mallory's oldest, the stalled one.
	idle := postListenFrom(t, hs.URL, "10.0.0.1", uris[:1])
	require.Contains(t, idle.event(t), "acknowledged")
	bob := postListenFrom(t, hs.URL, "10.0.2.1", uris[:1])
	require.Equal(t, http.StatusOK, bob.status)
	require.Contains(t, bob.event(t), "acknowledged")
	assert.Eventually(t, func() bool { n, _, _ := reg.SubscriptionStats(); return n == 10+1+1 }, 10*time.Second, time.Millisecond,
		"the stalled stream's subscriptions are dropped")
}

// postListenFrom posts a listen to uris as the client at addr (the
// X-Client header).
func postListenFrom(t *testing.T, url, addr string, uris []string) *rawStream {
	t.Helper()
	return postListenWith(t, url, `1`, map[string]any{"resourceSubscriptions": uris}, "X-Client", addr)
}
