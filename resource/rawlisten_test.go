package resource_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// rawListen opens a 2026-07-28 subscriptions/listen (request ID 7) to
// uris on the streamable HTTP server at url, and returns the messages of
// its stream, as the server wrote them, in order; the channel is closed
// when the stream ends. The stream is closed when t ends.
func rawListen(t *testing.T, url string, uris ...string) <-chan jsonrpc.Message {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 7, "method": protocol.MethodListen,
		"params": map[string]any{
			"_meta": map[string]any{
				mcp.MetaKeyProtocolVersion:    "2026-07-28",
				mcp.MetaKeyClientInfo:         map[string]string{"name": "raw", "version": "v0"},
				mcp.MetaKeyClientCapabilities: map[string]any{},
			},
			"notifications": map[string]any{"resourceSubscriptions": uris},
		},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(protocol.HeaderProtocolVersion, "2026-07-28")
	req.Header.Set(protocol.HeaderMethod, protocol.MethodListen)
	resp, err := mcptest.HTTPClient(t, "").Do(req)
	require.NoError(t, err)
	msgs := make(chan jsonrpc.Message, 16)
	go func() {
		defer close(msgs)
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if data, ok := strings.CutPrefix(line, "data:"); ok {
				if msg, err := jsonrpc.DecodeMessage([]byte(strings.TrimSpace(data))); err == nil {
					msgs <- msg
				}
			}
		}
	}()
	return msgs
}

// notification returns msg as a notification of method, and its params
// decoded into p; it fails t if msg is not one.
func notification(t *testing.T, msg jsonrpc.Message, method string, p any) {
	t.Helper()
	req, ok := msg.(*jsonrpc.Request)
	require.True(t, ok && !req.IsCall(), "not a notification: %#v", msg)
	require.Equal(t, method, req.Method)
	require.NoError(t, json.Unmarshal(req.Params, p))
}
