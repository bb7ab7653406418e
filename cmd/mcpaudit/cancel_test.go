package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
)

// refuseCancelled answers 400 Bad Request to a POST of
// notifications/cancelled from a client of 2026-07-28 or later, as that
// version's transport allows ("If the server cannot accept it, it MUST
// return an HTTP error status code"), and sends every other request to
// next. It counts the refusals.
type refuseCancelled struct {
	next    http.Handler
	refused atomic.Int32
}

func (h *refuseCancelled) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPost && req.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "notifications/cancelled" {
			h.refused.Add(1)
			http.Error(w, "no notifications/cancelled at 2026-07-28: close the stream", http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	h.next.ServeHTTP(w, req)
}

// touchServer returns a go-sdk server of two text resources that takes
// subscriptions, with a tool, touch, that tells the subscribers of its
// uri that it changed.
func touchServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "touch", Version: "v0"}, &mcp.ServerOptions{
		Logger:             slog.New(slog.DiscardHandler),
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	for _, uri := range []string{"test://a", "test://b"} {
		s.AddResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain"},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: uri}}}, nil
			})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "touch"}, func(ctx context.Context, _ *mcp.CallToolRequest, args struct {
		URI string `json:"uri"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: args.URI})
	})
	return s
}

// A server that refuses notifications/cancelled at 2026-07-28 with 400,
// as the transport of that version allows, is audited with -change and
// passes: the audit ends its listen by closing the stream, and sends no
// notifications/cancelled for the server to refuse. (Before
// audit.HTTPTransport, go-sdk's client sent one, took the 400 for a
// broken connection, and the next tools/call failed: exit 2.)
func TestRefusedCancellation(t *testing.T) {
	t.Parallel()
	s := touchServer()
	h := &refuseCancelled{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})}
	url := mcptest.ServeHandler(t, h) + "/mcp"
	code, out, stderr := mcpaudit("-protocol", "2026-07-28", "-wait", "2s", "-change", touch, "-url", url)
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Contains(t, out, "at protocol 2026-07-28")
	assert.NotContains(t, out, "skipped: subscription delivery", "delivery was checked")
	assert.NotContains(t, out, "subscribe.delivers")
	assert.Zero(t, h.refused.Load(), "the audit sent notifications/cancelled")

	// The refusal is real: a client that sends it is refused.
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}`))
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	resp, err := http.DefaultClient.Do(req)
	if assert.NoError(t, err) {
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	}
}
