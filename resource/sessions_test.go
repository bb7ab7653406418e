package resource_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connectClients connects n clients of protocol version to server, each
// subscribed to uri unless it is "".
func connectClients(t *testing.T, server *mcp.Server, n int, version, uri string) []*mcp.ClientSession {
	t.Helper()
	var out []*mcp.ClientSession
	for range n {
		st, ct := mcp.NewInMemoryTransports()
		_, err := server.Connect(t.Context(), st, nil)
		require.NoError(t, err)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
		require.NoError(t, err)
		if uri != "" {
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}))
		}
		out = append(out, cs)
	}
	return out
}

// subscribeGoroutines returns how many more goroutines n sessions of each
// era hold once subscribed to docs://a on the server newServer makes than
// before, in a bubble of their own.
func subscribeGoroutines(t *testing.T, n int, newServer func(t *testing.T) *mcp.Server) (extra int) {
	synctest.Test(t, func(t *testing.T) {
		server := newServer(t)
		var clients []*mcp.ClientSession
		for _, version := range eras {
			clients = append(clients, connectClients(t, server, n, version, "")...)
		}
		synctest.Wait()
		before := mcptest.BubbleGoroutines(t)
		for _, cs := range clients {
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://a"}))
		}
		synctest.Wait()
		extra = mcptest.BubbleGoroutines(t) - before
		for _, cs := range clients {
			require.NoError(t, cs.Close())
		}
	})
	return extra
}

// A subscribed session costs no goroutine of the registry's, whatever the
// number: one goroutine watches them all. go-sdk's own subscriptions are
// the baseline (a 2026-07-28 subscription holds a listen stream open).
func TestSubscribedSessionsShareOneGoroutine(t *testing.T) {
	t.Parallel()
	text := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "docs://a", Text: "a"}}}, nil
	}
	for _, n := range []int{1, 25} {
		sdk := subscribeGoroutines(t, n, func(t *testing.T) *mcp.Server {
			s := mcp.NewServer(&mcp.Implementation{Name: "plain"}, &mcp.ServerOptions{
				Logger:             quietLogger(),
				SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
				UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
			})
			s.AddResource(&mcp.Resource{URI: "docs://a", Name: "a"}, text)
			return s
		})
		ours := subscribeGoroutines(t, n, func(t *testing.T) *mcp.Server {
			reg, err := resource.NewRegistry(&resource.Options{Logger: quietLogger()})
			require.NoError(t, err)
			t.Cleanup(func() { reg.Close() })
			require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://a", Name: "a"}, resource.Text("a")))
			s, err := reg.NewServer(&mcp.Implementation{Name: "sessions"}, &mcp.ServerOptions{Logger: quietLogger()})
			require.NoError(t, err)
			return s
		})
		assert.Equal(t, sdk+1, ours, "goroutines for %d sessions of each era: go-sdk's own, and one sweep", n)
	}
}

// The subscriptions of a session that ends are forgotten at the next
// sweep, a second later at most; the sweep stops with the last session.
// (A 2026-07-28 session's are forgotten at once, when its listen stream
// ends; legacy sessions show the sweep.)
func TestSessionEndIsSwept(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		baseline := mcptest.BubbleGoroutines(t)
		reg, err := resource.NewRegistry(&resource.Options{Logger: quietLogger()})
		require.NoError(t, err)
		defer reg.Close()
		require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://a", Name: "a"}, resource.Text("a")))
		server, err := reg.NewServer(&mcp.Implementation{Name: "sessions"}, &mcp.ServerOptions{Logger: quietLogger()})
		require.NoError(t, err)

		const n = 10
		clients := connectClients(t, server, n, "2025-11-25", "docs://a")
		stats := func() int { synctest.Wait(); subs, _, _ := reg.SubscriptionStats(); return subs }
		require.Equal(t, n, stats())

		// Half end after the first sweep (at 1s) has seen them listed.
		time.Sleep(1500 * time.Millisecond)
		for _, cs := range clients[:n/2] {
			require.NoError(t, cs.Close())
		}
		assert.Equal(t, n, stats(), "at 1.5s, before the next sweep")
		time.Sleep(499 * time.Millisecond)
		assert.Equal(t, n, stats(), "at 1.999s")
		time.Sleep(time.Millisecond)
		assert.Equal(t, n/2, stats(), "at 2s, the sweep")

		for _, cs := range clients[n/2:] {
			require.NoError(t, cs.Close())
		}
		time.Sleep(time.Second)
		synctest.Wait() // the sweep that woke with this goroutine has dropped them
		subs, sessions, uris := reg.SubscriptionStats()
		assert.Zero(t, subs+sessions+uris)
		require.NoError(t, reg.Close())
		synctest.Wait()
		assert.Equal(t, baseline, mcptest.BubbleGoroutines(t), "goroutines left")
	})
}

// A session of a server the registry is not mounted on (its
// SubscribeHandler set by hand) is forgotten when it ends too: the sweep
// never sees it listed, and leaves it to a goroutine that waits for it.
func TestUnmountedSessionEnds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		reg, err := resource.NewRegistry(&resource.Options{Logger: quietLogger()})
		require.NoError(t, err)
		defer reg.Close()
		require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://a", Name: "a"}, resource.Text("a")))
		server := mcp.NewServer(&mcp.Implementation{Name: "plain"}, &mcp.ServerOptions{
			Logger:             quietLogger(),
			SubscribeHandler:   reg.Subscribe,
			UnsubscribeHandler: reg.Unsubscribe,
		})
		server.AddResource(&mcp.Resource{URI: "docs://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "docs://a", Text: "a"}}}, nil
		})
		clients := append(connectClients(t, server, 1, eras[0], "docs://a"), connectClients(t, server, 1, eras[1], "docs://a")...)
		time.Sleep(2 * time.Second) // two sweeps: still there, now waited for
		synctest.Wait()
		subs, _, _ := reg.SubscriptionStats()
		require.Equal(t, 2, subs)
		for _, cs := range clients {
			require.NoError(t, cs.Close())
		}
		synctest.Wait()
		subs, _, _ = reg.SubscriptionStats()
		assert.Zero(t, subs)
	})
}

// A session that subscribes and unsubscribes again and again, across
// sweeps, costs one sweep goroutine for all, or one waiting goroutine of
// its own if no mounted server lists it: never one more per cycle.
func TestResubscribingCostsNoGoroutines(t *testing.T) {
	t.Parallel()
	for _, mounted := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			reg, err := resource.NewRegistry(&resource.Options{Logger: quietLogger()})
			require.NoError(t, err)
			defer reg.Close()
			require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://a", Name: "a"}, resource.Text("a")))
			var server *mcp.Server
			if mounted {
				server, err = reg.NewServer(&mcp.Implementation{Name: "mounted"}, &mcp.ServerOptions{Logger: quietLogger()})
				require.NoError(t, err)
			} else {
				server = mcp.NewServer(&mcp.Implementation{Name: "plain"}, &mcp.ServerOptions{
					Logger: quietLogger(), SubscribeHandler: reg.Subscribe, UnsubscribeHandler: reg.Unsubscribe,
				})
				server.AddResource(&mcp.Resource{URI: "docs://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "docs://a", Text: "a"}}}, nil
				})
			}
			cs := connectClients(t, server, 1, "2025-11-25", "")[0]
			cycle := func() int {
				require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://a"}))
				time.Sleep(1100 * time.Millisecond) // a sweep sees it
				require.NoError(t, cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: "docs://a"}))
				synctest.Wait()
				return mcptest.BubbleGoroutines(t)
			}
			first := cycle()
			for i := range 5 {
				assert.Equal(t, first, cycle(), "goroutines after cycle %d, mounted=%v", i+2, mounted)
			}
			require.NoError(t, cs.Close())
			synctest.Wait()
			subs, sessions, uris := reg.SubscriptionStats()
			assert.Zero(t, subs+sessions+uris)
		})
	}
}
