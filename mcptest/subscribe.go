package mcptest

import (
	"errors"
	"testing"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SubscribeHTTP subscribes to uri on the streamable HTTP endpoint url, as
// a client of protocol version presenting token (see HTTPClient), and
// returns the server's answer: nil if the server accepted the
// subscription, else its error, a *jsonrpc.Error. It is for tests that a
// server refuses what it should, in every protocol era: go-sdk's client
// subscribes a 2026-07-28 session in the background, through
// subscriptions/listen, and never reports a refusal to Subscribe's
// caller, so for 2026-07-28 and later SubscribeHTTP sends the listen
// itself, reads the first message, and hangs up, which ends the listen.
// For earlier versions it connects a session (closed when t ends) and
// calls Subscribe.
//
// It fails t if it cannot reach the server, or if the server answers with
// something other than a JSON-RPC error or, for a listen, its
// acknowledgment.
func SubscribeHTTP(t testing.TB, url, token, version, uri string) error {
	t.Helper()
	if version < protocol.SessionlessSince {
		cs := ConnectHTTP(t, url, token, version, nil)
		return cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri})
	}
	err := audit.SubscribeHTTP(t.Context(), HTTPClient(t, token), url, version, uri)
	var rpcErr *jsonrpc.Error
	if err != nil && !errors.As(err, &rpcErr) {
		t.Fatalf("subscriptions/listen to %s: %v", url, err)
	}
	return err
}
