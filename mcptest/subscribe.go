package mcptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
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
	if version < "2026-07-28" {
		cs := ConnectHTTP(t, url, token, version, nil)
		return cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri})
	}
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
		"params": map[string]any{
			"_meta": map[string]any{
				mcp.MetaKeyProtocolVersion:    version,
				mcp.MetaKeyClientInfo:         map[string]string{"name": "mcptest", "version": "v0"},
				mcp.MetaKeyClientCapabilities: map[string]any{},
			},
			"notifications": map[string]any{"resourceSubscriptions": []string{uri}},
		},
	})
	require.NoError(t, err)
	ctx, hangUp := context.WithCancel(t.Context())
	defer hangUp()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", version)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := HTTPClient(t, token).Do(req)
	require.NoError(t, err, "subscriptions/listen to %s", url)
	defer resp.Body.Close()

	msg, err := firstMessage(resp)
	require.NoError(t, err, "subscriptions/listen to %s: HTTP %s", url, resp.Status)
	switch msg := msg.(type) {
	case *jsonrpc.Response:
		require.Error(t, msg.Error, "a listen is answered only when it fails or ends")
		return msg.Error
	case *jsonrpc.Request:
		require.Equal(t, "notifications/subscriptions/acknowledged", msg.Method, "the first message of a listen")
		return nil
	}
	t.Fatalf("subscriptions/listen to %s: unexpected message %T", url, msg)
	return nil
}

// firstMessage returns the first JSON-RPC message of resp: its body, or
// the first event of an event stream.
func firstMessage(resp *http.Response) (jsonrpc.Message, error) {
	var data []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				data = []byte(strings.TrimSpace(d))
				break
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	} else {
		var err error
		if data, err = io.ReadAll(resp.Body); err != nil {
			return nil, err
		}
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("no message")
	}
	return jsonrpc.DecodeMessage(data)
}
