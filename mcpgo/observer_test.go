package mcpgo_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/resource"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// calls is an Observer that keeps the calls it is told of.
type calls struct {
	mu    sync.Mutex
	ended []resource.Call
	sent  int
}

func (o *calls) StartCall(ctx context.Context, _ *resource.Call) context.Context { return ctx }
func (o *calls) EndCall(_ context.Context, c *resource.Call) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = append(o.ended, *c)
}
func (o *calls) Event(e resource.Event) {
	if e.Kind == resource.EventNotified {
		o.mu.Lock()
		o.sent++
		o.mu.Unlock()
	}
}

func (o *calls) find(method string) (resource.Call, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	i := slices.IndexFunc(o.ended, func(c resource.Call) bool { return c.Method == method })
	if i < 0 {
		return resource.Call{}, false
	}
	return o.ended[i], true
}

// The Observer is told of the calls the registry answers on mcp-go, with
// the session and protocol version of each, and of the notifications it
// sends.
func TestObserver(t *testing.T) {
	t.Parallel()
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			obs := new(calls)
			reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler), Observer: obs})
			require.NoError(t, err)
			t.Cleanup(func() { reg.Close() })
			require.NoError(t, reg.Add(&sdk.Resource{URI: "test://a", Name: "a", MIMEType: "text/plain"}, resource.Text("a")))
			ts := httptest.NewServer(server.NewStreamableHTTPServer(server.NewMCPServer("observed", "v0", mcpgo.WithRegistry(reg))))
			t.Cleanup(ts.Close)
			var opts []transport.StreamableHTTPCOption
			if !mcp.IsModernProtocol(version) {
				opts = append(opts, transport.WithContinuousListening()) // where a legacy session is notified
			}
			c, err := client.NewStreamableHttpClient(ts.URL+"/mcp", opts...)
			require.NoError(t, err)
			cn := connect(t, c, version, reg)

			req := mcp.ReadResourceRequest{}
			req.Params.URI = "test://a"
			_, err = cn.c.ReadResource(t.Context(), req)
			require.NoError(t, err)
			read, ok := obs.find("resources/read")
			require.True(t, ok, "no resources/read call")
			assert.Equal(t, "test://a", read.URI)
			assert.Equal(t, resource.DecisionAllowed, read.Decision)
			assert.Equal(t, version, read.ProtocolVersion)
			if !mcp.IsModernProtocol(version) {
				assert.Equal(t, cn.c.GetSessionId(), read.SessionID, "the mcp-go session's ID")
			}

			require.NoError(t, cn.subscribe(t, "test://a")[0])
			sub, ok := obs.find("resources/subscribe")
			require.True(t, ok, "no resources/subscribe call")
			assert.Equal(t, resource.DecisionAllowed, sub.Decision)
			require.NoError(t, reg.Changed("test://a"))
			cn.awaitUpdate(t, "test://a")
			require.Eventually(t, func() bool { obs.mu.Lock(); defer obs.mu.Unlock(); return obs.sent > 0 }, 5*time.Second, time.Millisecond,
				"the notification sent is an event")
			if mcp.IsModernProtocol(version) {
				cn.c.Close()
				require.Eventually(t, func() bool { _, ok := obs.find("subscriptions/listen"); return ok }, 5*time.Second, time.Millisecond,
					"the listen is a call, ended with its stream")
			}
		})
	}
}
