package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// An inProcess is a server made by newServer, served in the test's
// process.
type inProcess struct {
	server *mcp.Server
	reg    *resource.Registry
	// listenErrors receives the errors the server answers
	// subscriptions/listen requests with: go-sdk's 2026-07-28 client
	// opens a listen in the background and never tells Subscribe's caller
	// that it was refused.
	listenErrors chan error
}

// serveInProcess returns a server for st, with a random cursor key, that
// is closed when t ends, after the sessions connected to it.
func serveInProcess(t *testing.T, st *store) *inProcess {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	server, reg, poller, err := newServer(st, nil, nil, config{poll: 100 * time.Millisecond}, logger)
	require.NoError(t, err)
	t.Cleanup(func() {
		reg.Close()
		poller.Close()
	})
	p := &inProcess{server: server, reg: reg, listenErrors: make(chan error, 100)}
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "subscriptions/listen" && err != nil {
				p.listenErrors <- err
			}
			return res, err
		}
	})
	return p
}

// subscribeError subscribes cs, of protocol version, to uri, and returns
// the error the server answered with: that of resources/subscribe, or of
// the 2026-07-28 subscriptions/listen opened in the background.
func (p *inProcess) subscribeError(t *testing.T, cs *mcp.ClientSession, version, uri string) error {
	t.Helper()
	err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri})
	if version < "2026-07-28" {
		return err
	}
	require.NoError(t, err, "the 2026-07-28 listen is opened in the background")
	select {
	case err := <-p.listenErrors:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("subscriptions/listen for %s was not refused", uri)
		return nil
	}
}

// checkSubscribeExists checks, in every protocol version, that a server
// for st, whose database is of size, refuses subscriptions to rows that
// do not exist as not found, and accepts those to rows that do, whose
// updates then arrive.
func checkSubscribeExists(t *testing.T, st *store, size dbSize) {
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			p := serveInProcess(t, st)
			n := new(mcptest.Notifications)
			cs := mcptest.Connect(t, p.server, version, n.ClientOptions(nil))
			for _, uri := range size.missingRows() {
				requireNoSuchResource(t, p.subscribeError(t, cs, version, uri), uri)
			}
			uri := "db://orders/" + strconv.Itoa(size.orders) // the last row
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}))
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "db://orders/schema"}))
			n.WaitUpdated(t, uri, func() {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "update_row", Arguments: map[string]any{
					"table": "orders", "id": size.orders, "column": "status", "value": "returned",
				}})
				require.NoError(t, err)
				require.False(t, res.IsError, "update_row: %v", res.Content)
			})
			select {
			case err := <-p.listenErrors:
				t.Fatalf("a subscription was refused: %v", err)
			default:
			}
		})
	}
}

// TestSubscribeExists checks the subscriptions the server refuses, against
// SQLite (TestPostgres does the same against Postgres).
func TestSubscribeExists(t *testing.T) {
	t.Parallel()
	checkSubscribeExists(t, seededSQLite(t), seededSize)
}

// seededSQLite returns a store of a new SQLite database, filled (a copy
// of seededDB's), that is closed when t ends.
func seededSQLite(t *testing.T) *store {
	t.Helper()
	st, err := openSQLite(seededDB(t))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	n, err := st.setUp(t.Context())
	require.NoError(t, err)
	require.Zero(t, n, "the copy is filled already")
	return st
}
