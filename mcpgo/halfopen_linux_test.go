package mcpgo_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/internal/netnstest"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// A client of mcp-go's server that vanishes without a word, its link cut
// in a network namespace of the test's own, has its GET stream ended by
// the user timeout of the server package serve makes (Options.UserTimeout),
// within 2×KeepAlive plus the timeout's slack, as on go-sdk (package
// serve's TestHalfOpenStreamEnds). The clock is the real one: the
// kernel's timers end the connection.
func TestHalfOpenStreamEndsOnMCPGo(t *testing.T) {
	link := netnstest.Link(t)
	const keepAlive = 200 * time.Millisecond
	const slack = time.Second
	opts := &serve.Options{KeepAlive: keepAlive, UserTimeout: keepAlive + slack, Logger: slog.New(slog.DiscardHandler)}

	reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	sh := server.NewStreamableHTTPServer(server.NewMCPServer("halfopen", "v0", mcpgo.WithRegistry(reg)), server.WithStateful(true))
	t.Cleanup(func() { sh.Shutdown(context.Background()) })
	guarded, err := serve.Guard(sh, opts)
	require.NoError(t, err)
	opened, done := make(chan struct{}, 10), make(chan struct{}, 10)
	srv, err := serve.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet {
			opened <- struct{}{}
			defer func() { done <- struct{}{} }()
		}
		guarded.ServeHTTP(w, req)
	}), opts)
	require.NoError(t, err)
	ln := link.Listen(t)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	client, closeConns := link.HTTPClient()
	transport := &sdk.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp",
		HTTPClient: client, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "far", Version: "v0"}, nil).
		Connect(t.Context(), transport, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() {
		// The link is down: close the client's connections first, so that
		// Close does not wait on them.
		closeConns()
		cs.Close()
	})
	mcptest.Receive(t, opened, "GET stream")

	// A few comments pass, and are acknowledged, before the cut: the user
	// timeout must not end a healthy stream.
	time.Sleep(3 * keepAlive) // real clock: the kernel's TCP timers and a network namespace cannot join a synctest bubble
	select {
	case <-done:
		t.Fatal("the GET stream ended before the cut")
	default:
	}
	link.Cut(t)
	cut := time.Now()
	mcptest.Receive(t, done, "end of the GET stream of the client cut off")
	elapsed := time.Since(cut)
	bound := 2*keepAlive + slack
	t.Logf("ended %v after the cut (bound %v)", elapsed.Round(time.Millisecond), bound)
	// Retransmission timers back off: see serve's TestHalfOpenStreamEnds.
	require.Less(t, elapsed, bound+3*time.Second, "the stream ended too late")
}
