package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestHTTPReadHeaderTimeout runs the binary with a short read-header
// timeout and checks that a client that starts a request but never
// finishes its headers (slowloris) is disconnected.
func TestHTTPReadHeaderTimeout(t *testing.T) {
	t.Setenv("KNOWLEDGE_READ_HEADER_TIMEOUT", "200ms")
	addr := mcptest.StartHTTP(t, binPath, "-db", testDB(t))

	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	// The blank line that ends the headers never comes.
	_, err = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\n")
	require.NoError(t, err)

	// The server hangs up without a response, well before this deadline.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	n, err := conn.Read(make([]byte, 1))
	require.Zero(t, n, "the server answered a request it never fully received")
	var netErr net.Error
	require.False(t, errors.As(err, &netErr) && netErr.Timeout(), "connection still open after 5s")
	require.Error(t, err) // io.EOF, or a reset
}

// TestHTTPCancelledRead serves the knowledge base in process, with the
// binary's handler and server limits and one more resource whose read
// function waits for its context, and checks that a client of each
// protocol version that cancels the read cancels the read function's
// context: a 2026-07-28 client by ending its HTTP request
// (StreamableHTTPOptions.PropagateRequestCancellation), an older one by
// sending notifications/cancelled in its session.
func TestHTTPCancelledRead(t *testing.T) {
	server, reg := newTestServer(t, config{pageSize: pageSize}, slog.New(slog.DiscardHandler))

	const slowURI = "resource://test/slow"
	started := make(chan struct{}, 1)
	ended := make(chan error, 1) // the read's context's cause, or nil if it gave up
	require.NoError(t, reg.Add(&mcp.Resource{URI: slowURI, Name: "slow"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				ended <- context.Cause(ctx)
				return nil, ctx.Err()
			case <-time.After(10 * time.Second):
				ended <- nil
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: slowURI, Text: "late"}}}, nil
			}
		}))

	srv, err := newHTTPServer(httpHandler(server, nil))
	require.NoError(t, err)
	ts := httptest.NewUnstartedServer(srv.Handler)
	ts.Config = srv
	ts.Start()
	defer ts.Close()

	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs := connectAs(t, ts.URL+mcpPath, "", version, nil)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			go func() {
				select {
				case <-started:
					cancel()
				case <-ctx.Done():
				}
			}()
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: slowURI})
			require.ErrorIs(t, err, context.Canceled)

			select {
			case cause := <-ended:
				require.Error(t, cause, "the read function ran to its end: its context was not cancelled")
			case <-time.After(5 * time.Second):
				t.Fatal("the read function did not return within 5s of the cancellation")
			}
		})
	}
}
