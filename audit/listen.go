package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mcpres/mcpres/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SubscribeHTTP asks the streamable HTTP server at url, as a client of
// protocol version 2026-07-28 or later, to subscribe to uri with a
// subscriptions/listen of its own, and returns its answer: nil if the
// server acknowledged the subscription, its *jsonrpc.Error if it refused.
// It reads only the first message of the listen and hangs up, which ends
// it. It returns another error if it cannot reach the server or the answer
// is neither.
//
// go-sdk's client subscribes a 2026-07-28 session in the background and
// does not report a refusal; set Options.Subscribe to a call of
// SubscribeHTTP to check refusals of a server reached over HTTP.
func SubscribeHTTP(ctx context.Context, client *http.Client, url, version, uri string) error {
	stream, err := ListenHTTP(ctx, client, url, version, []string{uri})
	if err != nil {
		return err
	}
	return stream.Close()
}

// ListenHTTP opens a subscriptions/listen to the resources uris on the
// streamable HTTP server at url, as a client of protocol version
// 2026-07-28 or later, and returns the open stream once the server
// acknowledged it: closing it hangs up, which ends the listen. If the
// server refused the listen, ListenHTTP returns its *jsonrpc.Error; if it
// cannot reach the server, or the answer is neither, another error.
// client nil means http.DefaultClient. The stream ends with ctx too.
func ListenHTTP(ctx context.Context, client *http.Client, url, version string, uris []string) (io.Closer, error) {
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": protocol.MethodListen,
		"params": map[string]any{
			"_meta": map[string]any{
				mcp.MetaKeyProtocolVersion:    version,
				mcp.MetaKeyClientInfo:         map[string]string{"name": "mcpres-audit", "version": "v1"},
				mcp.MetaKeyClientCapabilities: map[string]any{},
			},
			"notifications": map[string]any{"resourceSubscriptions": uris},
		},
	})
	if err != nil {
		return nil, err
	}
	ctx, hangUp := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		hangUp()
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(protocol.HeaderProtocolVersion, version)
	req.Header.Set(protocol.HeaderMethod, protocol.MethodListen)
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		hangUp()
		return nil, fmt.Errorf("subscriptions/listen to %s: %w", url, err)
	}
	stream := &openStream{body: resp.Body, hangUp: hangUp}
	msg, err := firstMessage(resp)
	if err != nil {
		stream.Close()
		return nil, fmt.Errorf("subscriptions/listen to %s: HTTP %s: %w", url, resp.Status, err)
	}
	switch msg := msg.(type) {
	case *jsonrpc.Response:
		stream.Close()
		if msg.Error == nil {
			return nil, errors.New("subscriptions/listen ended at once, without an error: nothing was subscribed")
		}
		return nil, msg.Error
	case *jsonrpc.Request:
		if msg.Method == protocol.NotificationSubscriptionsAcknowledged {
			return stream, nil
		}
		stream.Close()
		return nil, fmt.Errorf("subscriptions/listen: the first message is %s, not the acknowledgment", msg.Method)
	}
	stream.Close()
	return nil, fmt.Errorf("subscriptions/listen: unexpected message %T", msg)
}

// An openStream is a listen's response, open until Close hangs up.
type openStream struct {
	body   io.ReadCloser
	hangUp context.CancelFunc
}

// Close hangs up; it returns nil.
func (s *openStream) Close() error {
	s.hangUp()
	s.body.Close()
	return nil
}

// firstMessage returns the first JSON-RPC message of resp: its body, or
// the first event of an event stream.
func firstMessage(resp *http.Response) (jsonrpc.Message, error) {
	var data []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		// The acknowledgement of a listen names each URI it subscribes:
		// up to a request body's worth (4 MiB by default), not a line's.
		sc.Buffer(nil, 8<<20)
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
		return nil, errors.New("no message")
	}
	return jsonrpc.DecodeMessage(data)
}
