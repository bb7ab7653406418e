package mcptest_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// HTTPClient's client keeps a 2026-07-28 notifications/cancelled to
// itself, answering 202, and sends an older version's, and every other
// message.
func TestHTTPClientCancel(t *testing.T) {
	t.Parallel()
	reached := make(chan string, 8)
	url := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- r.Header.Get("Mcp-Protocol-Version") + " " + r.Header.Get("Mcp-Method")
		w.WriteHeader(http.StatusAccepted)
	}))
	hc := mcptest.HTTPClient(t, "")
	for _, c := range []struct {
		version, method string
		sent            bool
	}{
		{"2026-07-28", "notifications/cancelled", false},
		{"2026-07-28", "notifications/progress", true},
		{"2025-11-25", "notifications/cancelled", true},
	} {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","method":"`+c.method+`","params":{"requestId":1}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mcp-Protocol-Version", c.version)
		req.Header.Set("Mcp-Method", c.method)
		resp, err := hc.Do(req)
		require.NoError(t, err, "%s %s", c.version, c.method)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusAccepted, resp.StatusCode, "%s %s", c.version, c.method)
		require.Empty(t, body, "%s %s", c.version, c.method)
		if c.sent {
			require.Equal(t, c.version+" "+c.method, <-reached, "sent")
		}
	}
	require.Empty(t, reached, "a 2026-07-28 notifications/cancelled reached the server")
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

// On go-sdk's handler too, a session of ConnectHandler's ends a listen
// by closing its stream, which ends its subscriptions, and goes on: the
// server's handler of the listen returns when the stream closes, without
// a notifications/cancelled. (mcpgo's TestListenEnd does the same on
// mcp-go, which refuses go-sdk's.)
func TestListenEnd(t *testing.T) {
	t.Parallel()
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			counts := make(subscriptionCounts, 64)
			reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler), Observer: counts})
			require.NoError(t, err)
			t.Cleanup(func() { reg.Close() })
			require.NoError(t, reg.Add(&mcp.Resource{URI: "file:///a.txt", Name: "a"}, resource.Text("a")))
			server, err := reg.NewServer(&mcp.Implementation{Name: "listen", Version: "v0"}, nil)
			require.NoError(t, err)
			cs := mcptest.ConnectHandler(t, newHandler(server, version), version, nil)
			for range 2 { // the session listens again after the first end
				require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "file:///a.txt"}))
				counts.await(t, 1)
				require.NoError(t, cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: "file:///a.txt"}))
				counts.await(t, 0)
				res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///a.txt"})
				require.NoError(t, err, "the call after the listen ended")
				require.Equal(t, "a", res.Contents[0].Text)
			}
		})
	}
}
