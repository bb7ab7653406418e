package mcpgo_test

import (
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/resource"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A client of an mcp-go server that stops reading holds up no other
// session's notifications for more than 10 ms, nor later ones: the
// registry's sends wait for room in mcp-go's notification channel, on
// the registry's sending goroutines, and the one that waits gives up
// the rest of its batch. What waits for it is sent when it reads again.
//
// The clients are mcp-go's in-process ones, whose transport hands each
// notification to the client's handler in turn: a handler that blocks
// stops the reading, and mcp-go's channel (room for 100) fills. Every
// time.Sleep here is on testing/synctest's clock: it moves the bubble's
// time, and waits for nothing real.
func TestStalledSessionHoldsUpNoOther(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const uri = "test://watched"
		ctx := t.Context()
		reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		defer reg.Close()
		require.NoError(t, reg.Add(&sdk.Resource{URI: uri, Name: "watched"}, resource.Text("x")))
		s := server.NewMCPServer("test", "v0", mcpgo.WithRegistry(reg))

		gate := make(chan struct{}) // closed to let the stalled client read again
		var stalled atomic.Int64
		const others = 8
		var counts [others]atomic.Int64
		connect := func(handle func()) {
			// mcp-go names an in-process session after the time, which
			// stands still in the bubble until every goroutine waits.
			time.Sleep(time.Nanosecond)
			c, err := client.NewInProcessClient(s)
			require.NoError(t, err)
			c.OnNotification(func(n mcp.JSONRPCNotification) {
				if n.Method == mcp.MethodNotificationResourceUpdated {
					handle()
				}
			})
			require.NoError(t, c.Start(ctx))
			t.Cleanup(func() { c.Close() })
			init := mcp.InitializeRequest{}
			init.Params.ProtocolVersion = "2025-11-25"
			_, err = c.Initialize(ctx, init)
			require.NoError(t, err)
			sub := mcp.SubscribeRequest{}
			sub.Params.URI = uri
			require.NoError(t, c.Subscribe(ctx, sub))
		}
		connect(func() {
			stalled.Add(1)
			<-gate
		})
		for i := range others {
			connect(func() { counts[i].Add(1) })
		}
		loads := func() (got [others]int64) {
			for i := range counts {
				got[i] = counts[i].Load()
			}
			return got
		}
		every := func(n int64) (want [others]int64) {
			for i := range want {
				want[i] = n
			}
			return want
		}

		// Each change, a second after the last, goes out at once. The
		// stalled client's handler holds the first; mcp-go's channel
		// takes the next 100. Each reaches the others at once.
		const room = 1 + 100
		for n := int64(1); n <= room; n++ {
			time.Sleep(time.Second)
			require.NoError(t, reg.Changed(uri))
			synctest.Wait()
			require.Equal(t, every(n), loads(), "change %d", n)
		}
		require.EqualValues(t, 1, stalled.Load())

		// The next blocks on the full channel; the others, whatever their
		// place in its batch, have it 10 ms later.
		time.Sleep(time.Second)
		require.NoError(t, reg.Changed(uri))
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		assert.Equal(t, every(room+1), loads(), "10 ms after the change the stalled client blocks")

		// A later change reaches them at once, and waits for the stalled
		// client behind the one blocked.
		time.Sleep(time.Second)
		require.NoError(t, reg.Changed(uri))
		synctest.Wait()
		assert.Equal(t, every(room+2), loads(), "a later change")

		close(gate)
		synctest.Wait()
		assert.EqualValues(t, room+2, stalled.Load(), "once the stalled client reads again: every change, none lost")
	})
}
