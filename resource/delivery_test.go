package resource_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A stallingTransport is a client transport whose connection stops
// reading once stall is called, until release: a client that is connected
// but takes nothing, as a hung process on the other end of a pipe. The
// server's writes to it then block, as go-sdk's in-memory and stdio
// transports do when their reader stops.
type stallingTransport struct {
	mcp.Transport
	stalled atomic.Bool
	gate    chan struct{}
}

func newStallingTransport(t mcp.Transport) *stallingTransport {
	return &stallingTransport{Transport: t, gate: make(chan struct{})}
}

func (st *stallingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := st.Transport.Connect(ctx)
	return &stallingConn{Connection: c, st: st}, err
}

func (st *stallingTransport) stall()   { st.stalled.Store(true) }
func (st *stallingTransport) release() { close(st.gate) }

type stallingConn struct {
	mcp.Connection
	st *stallingTransport
}

func (c *stallingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if c.st.stalled.Load() {
		select {
		case <-c.st.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return c.Connection.Read(ctx)
}

// stallingClients connects n clients of version to server, each subscribed
// to uri and counting its notifications/resources/updated; the first
// connects through a stallingTransport.
func stallingClients(t *testing.T, server *mcp.Server, n int, version, uri string) (*stallingTransport, []*atomic.Int64, []*mcp.ClientSession) {
	t.Helper()
	var stalling *stallingTransport
	counts := make([]*atomic.Int64, n)
	var sessions []*mcp.ClientSession
	for i := range n {
		counts[i] = new(atomic.Int64)
		st, ct := mcp.NewInMemoryTransports()
		_, err := server.Connect(t.Context(), st, nil)
		require.NoError(t, err)
		var transport mcp.Transport = ct
		if i == 0 {
			stalling = newStallingTransport(ct)
			transport = stalling
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) { counts[i].Add(1) },
		})
		cs, err := client.Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
		require.NoError(t, err)
		if version < "2026-07-28" {
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}))
		} else {
			go cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}) // a listen: until the session ends
		}
		sessions = append(sessions, cs)
	}
	synctest.Wait()
	return stalling, counts, sessions
}

func loads(counts []*atomic.Int64) []int64 {
	out := make([]int64, len(counts))
	for i, c := range counts {
		out[i] = c.Load()
	}
	return out
}

// A client that stops reading holds up no other session's notifications,
// nor later ones, in either era; what waits for it is one notification a
// URI, sent when it reads again. go-sdk's own Server.ResourceUpdated, for
// comparison, blocks on it until it reads again, and then drops the
// notification for the sessions after it if that took over 10 s.
func TestStalledSessionHoldsUpNoOther(t *testing.T) {
	t.Parallel()
	const uri = "docs://a"
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				obs := &recorder{}
				reg, err := resource.NewRegistry(&resource.Options{Logger: quietLogger(), Observer: obs})
				require.NoError(t, err)
				defer reg.Close()
				require.NoError(t, reg.Add(&mcp.Resource{URI: uri, Name: "a"}, resource.Text("a")))
				server, err := reg.NewServer(&mcp.Implementation{Name: "s"}, &mcp.ServerOptions{Logger: quietLogger()})
				require.NoError(t, err)
				stalling, counts, sessions := stallingClients(t, server, 4, version, uri)
				require.Equal(t, 4, func() int { n, _, _ := reg.SubscriptionStats(); return n }())

				stalling.stall()
				// The first change reaches every client: the stalled one's
				// reader was already waiting for it.
				require.NoError(t, reg.Changed(uri))
				synctest.Wait()
				assert.Equal(t, []int64{1, 1, 1, 1}, loads(counts), "the first change")
				// Now go-sdk's in-memory transport takes one more message
				// ahead of the client's reader, and then a send to it
				// blocks. Four more changes, a second apart, reach the
				// others at once; of the stalled one's, one is taken
				// ahead, one blocks, one waits, and the last is the one
				// waiting.
				for range 4 {
					time.Sleep(time.Second)
					require.NoError(t, reg.Changed(uri))
					synctest.Wait()
				}
				assert.Equal(t, []int64{1, 5, 5, 5}, loads(counts), "while one client takes nothing")

				stalling.release()
				synctest.Wait()
				assert.Equal(t, []int64{4, 5, 5, 5}, loads(counts), "once it reads again: the one taken ahead, the one blocked and the one waiting")
				// The Observer was told of each notification sent, and of
				// the one that waited for the stalled client when the last
				// change came.
				sent, coalesced := 0, 0
				obs.mu.Lock()
				for _, e := range obs.events {
					switch e.Kind {
					case resource.EventNotified:
						sent++
					case resource.EventCoalesced:
						coalesced++
						assert.Equal(t, uri, e.URI)
					}
				}
				obs.mu.Unlock()
				assert.Equal(t, 4+5+5+5, sent)
				assert.Equal(t, 1, coalesced)
				for _, cs := range sessions {
					require.NoError(t, cs.Close())
				}
			})
		})
	}
	t.Run("go-sdk", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			server := mcp.NewServer(&mcp.Implementation{Name: "plain"}, &mcp.ServerOptions{
				Logger:             quietLogger(),
				SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
				UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
			})
			server.AddResource(&mcp.Resource{URI: uri, Name: "a"}, notifyRead)
			stalling, counts, sessions := stallingClients(t, server, 4, "2025-11-25", uri)
			stalling.stall()
			params := &mcp.ResourceUpdatedNotificationParams{URI: uri}
			require.NoError(t, server.ResourceUpdated(t.Context(), params))
			synctest.Wait()
			require.Equal(t, []int64{1, 1, 1, 1}, loads(counts))
			var returned atomic.Bool
			go func() {
				for range 3 { // the transport takes one ahead; the second blocks
					server.ResourceUpdated(context.Background(), params)
				}
				returned.Store(true)
			}()
			time.Sleep(time.Minute) // past go-sdk's own 10 s deadline
			synctest.Wait()
			assert.False(t, returned.Load(), "go-sdk's ResourceUpdated returned while a client takes nothing")
			stalling.release()
			synctest.Wait()
			assert.True(t, returned.Load())
			// The sessions go-sdk had not reached in the blocked round
			// when its 10 s deadline passed miss that notification for
			// good: which they are depends on go-sdk's map order.
			got := loads(counts)
			assert.Equal(t, int64(4), got[0])
			t.Logf("notifications per session, the stalled one first: %v", got)
			for _, cs := range sessions {
				require.NoError(t, cs.Close())
			}
		})
	})
}

// After Close the registry sends nothing of its own, and what the server
// sends itself goes out as go-sdk sends it: a list change of a resource
// added to the server directly still reaches a client, in both eras.
func TestClosedRegistrySendsServerNotificationsThrough(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reg, err := resource.NewRegistry(&resource.Options{Logger: quietLogger()})
				require.NoError(t, err)
				server, err := reg.NewServer(&mcp.Implementation{Name: "s"}, &mcp.ServerOptions{Logger: quietLogger()})
				require.NoError(t, err)
				var listChanged atomic.Int64
				cs := mcptest.Connect(t, server, version, &mcp.ClientOptions{
					ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { listChanged.Add(1) },
				})
				synctest.Wait()
				require.NoError(t, reg.Close())
				server.AddResource(&mcp.Resource{URI: "docs://added", Name: "added"}, notifyRead)
				time.Sleep(time.Second) // go-sdk gathers list changes for a moment
				synctest.Wait()
				assert.EqualValues(t, 1, listChanged.Load(), "go-sdk's own list_changed after Close")
				require.NoError(t, cs.Close())
			})
		})
	}
}
