package serve_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// The quiet stream a client of each era holds open to be told of changes
// (a 2025-11-25 session's GET stream, a 2026-07-28 subscriptions/listen)
// gets one SSE comment per quiet period of Options.KeepAlive, and carries
// X-Accel-Buffering: no; an update on it starts the period again. On
// synctest's fake clock, with go-sdk's client and the edge talking
// through an in-process transport.
func TestKeepAliveEveryEra(t *testing.T) {
	const period = 10 * time.Second
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { keepAliveEveryEra(t, version, period) })
		})
	}
}

// keepAliveEveryEra is TestKeepAliveEveryEra for a client of
// version, in a bubble.
func keepAliveEveryEra(t *testing.T, version string, period time.Duration) {
	s := newTestServer(t)
	listenErrors := make(chan error, 10)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == protocol.MethodListen && err != nil {
				listenErrors <- err
			}
			return res, err
		}
	})
	mem := &inMemory{h: guarded(t, s.Server, &serve.Options{KeepAlive: period}, nil)}
	updates := make(chan string, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "watcher"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updates <- req.Params.URI
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: "http://mcp.test/mcp", HTTPClient: &http.Client{Transport: mem}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	defer cs.Close()
	require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: helloURI}))
	synctest.Wait()
	stream := mem.stream(t)
	require.Equal(t, "text/event-stream", stream.header.Get("Content-Type"))
	require.Equal(t, "no", stream.header.Get("X-Accel-Buffering"))

	// Every wait below is on synctest's clock (the bubble of
	// TestKeepAliveEveryEra): exact counts, no real time passes.
	time.Sleep(period / 2)
	for n := 1; n <= 3; n++ {
		time.Sleep(period)
		synctest.Wait()
		require.Equal(t, n, stream.comments(), "comments after %d quiet periods", n)
	}
	// 3.5 periods: an update, which starts the quiet period again.
	require.NoError(t, s.reg.Changed(helloURI))
	synctest.Wait()
	require.Equal(t, []string{helloURI}, drain(updates))
	time.Sleep(period * 3 / 4)
	synctest.Wait()
	require.Equal(t, 3, stream.comments(), "no comment a period after the last comment, with an update since")
	time.Sleep(period / 2)
	synctest.Wait()
	require.Equal(t, 4, stream.comments(), "a comment a period after the update")
	select {
	case err := <-listenErrors:
		t.Fatalf("listen refused: %v", err)
	default:
	}
}

// drain returns what c holds now.
func drain[T any](c chan T) []T {
	var out []T
	for {
		select {
		case v := <-c:
			out = append(out, v)
		default:
			return out
		}
	}
}
