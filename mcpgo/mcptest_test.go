package mcpgo_test

// The tests of this file drive an mcp-go server with go-sdk's client,
// as package mcptest does for a user's CI: in process over streamable
// HTTP (mcptest.ConnectHandler), and through the end of a 2026-07-28
// subscriptions/listen, where a plain go-sdk client and mcp-go disagree.

import (
	"context"
	"log/slog"
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// mcptest.ConnectHandler serves mcp-go's streamable HTTP handler in
// process and connects go-sdk's client to it at each version: the
// client lists and reads the registry through it.
func TestConnectHandler(t *testing.T) {
	t.Parallel()
	reg, err := newRegistry(slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	h := server.NewStreamableHTTPServer(server.NewMCPServer("test", "v0", mcpgo.WithRegistry(reg)))
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs := mcptest.ConnectHandler(t, h, version, nil)
			resources, pages := mcptest.ListAll(t, cs)
			got := make([]string, len(resources))
			for i, r := range resources {
				got[i] = r.URI
			}
			require.Equal(t, wantURIs, got)
			require.Equal(t, 4, pages, "pages of 2")
			res, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "test://a"})
			require.NoError(t, err)
			require.Equal(t, "a", res.Contents[0].Text)
		})
	}
}

// subscriptionCounts is an Observer that passes on the number of open
// subscriptions each time it changes.
type subscriptionCounts chan int

func (subscriptionCounts) StartCall(ctx context.Context, _ *resource.Call) context.Context {
	return ctx
}
func (subscriptionCounts) EndCall(context.Context, *resource.Call) {}
func (c subscriptionCounts) Event(e resource.Event) {
	if e.Kind == resource.EventSubscriptions {
		c <- e.Count
	}
}

// await waits until the number of open subscriptions is n.
func (c subscriptionCounts) await(t *testing.T, n int) {
	t.Helper()
	for mcptest.Receive(t, c, "a change in the number of subscriptions") != n {
	}
}

// A cancels passes requests to next, and the status of its answer to
// each notifications/cancelled (which a 2026-07-28 client names in the
// Mcp-Method header) to answered.
type cancels struct {
	next     http.Handler
	answered chan int
}

func (c *cancels) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Method") != "notifications/cancelled" {
		c.next.ServeHTTP(w, r)
		return
	}
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	c.next.ServeHTTP(sw, r)
	c.answered <- sw.status
}

// A statusWriter keeps the status of a response without a stream.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// listenServer serves the test registry on mcp-go's streamable HTTP
// handler, wrapped to pass on its answers to notifications/cancelled, and
// returns the handler and the registry's subscription counts.
func listenServer(t *testing.T) (*cancels, subscriptionCounts) {
	t.Helper()
	counts := make(subscriptionCounts, 64)
	reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler), Observer: counts})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, reg.Add(&sdk.Resource{URI: clockURI, Name: "clock", MIMEType: "text/plain"}, resource.Text("tick")))
	s := server.NewMCPServer("listen", "v0", mcpgo.WithRegistry(reg))
	h := &cancels{next: server.NewStreamableHTTPServer(s), answered: make(chan int, 4)}
	return h, counts
}

// A plain go-sdk client ends a 2026-07-28 listen by closing its stream
// and also sending notifications/cancelled, without the _meta a
// 2026-07-28 message carries: mcp-go answers 400, and the client's
// session ends, so that its next call fails. This pins the break
// mcptest's HTTP client avoids (TestListenEnd).
func TestListenEndBreaksPlainClient(t *testing.T) {
	t.Parallel()
	h, counts := listenServer(t)
	url := mcptest.ServeHandler(t, h)
	client := sdk.NewClient(&sdk.Implementation{Name: "plain", Version: "v0"}, nil)
	cs, err := client.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	require.NoError(t, err)
	defer cs.Close()

	require.NoError(t, cs.Subscribe(t.Context(), &sdk.SubscribeParams{URI: clockURI}))
	counts.await(t, 1)
	require.NoError(t, cs.Unsubscribe(t.Context(), &sdk.UnsubscribeParams{URI: clockURI}))
	require.Equal(t, http.StatusBadRequest, mcptest.Receive(t, h.answered, "notifications/cancelled"),
		"mcp-go's answer to notifications/cancelled without _meta")
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	mcptest.Receive(t, ended, "the end of the client's session")
	_, err = cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: clockURI})
	require.ErrorContains(t, err, "client is closing")
}

// mcptest's client ends a listen by closing its stream alone, which ends
// the listen's subscriptions on mcp-go; the session's next call
// succeeds, and mcp-go is sent no notifications/cancelled. In every
// protocol era (before 2026-07-28, Unsubscribe is
// resources/unsubscribe).
func TestListenEnd(t *testing.T) {
	t.Parallel()
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			h, counts := listenServer(t)
			cs := mcptest.ConnectHandler(t, h, version, nil)
			for range 2 { // the session listens again after the first end
				require.NoError(t, cs.Subscribe(t.Context(), &sdk.SubscribeParams{URI: clockURI}))
				counts.await(t, 1)
				require.NoError(t, cs.Unsubscribe(t.Context(), &sdk.UnsubscribeParams{URI: clockURI}))
				counts.await(t, 0)
				res, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: clockURI})
				require.NoError(t, err, "the call after the listen ended")
				require.Equal(t, "tick", res.Contents[0].Text)
			}
			require.Empty(t, h.answered, "mcp-go was sent notifications/cancelled")
		})
	}
}
