package mcptest

// This file keeps a 2026-07-28 client's notifications/cancelled off the
// wire. Over streamable HTTP, 2026-07-28 makes the end of a request's
// response stream its cancellation: "closing the SSE response stream is
// itself the cancellation signal and no notifications/cancelled message
// is expected". go-sdk v1.8's client closes the stream of a request
// whose context ends (a call given up, a subscriptions/listen ended by
// Unsubscribe or Close), and then also posts notifications/cancelled,
// without the _meta every 2026-07-28 message carries. A server that
// checks it (mcp-go v1.2.1) answers 400, and the client takes that for a
// broken connection: its session ends, and its next call fails with
// "client is closing". The clients of HTTPClient answer that post
// themselves, so that the closed stream alone ends the request, as the
// transport says.

import (
	"net/http"

	"github.com/mcpres/mcpres/internal/protocol"
)

// cancelByClosing answers, with 202 Accepted and without sending it, a
// POST of notifications/cancelled from a client of 2026-07-28 or later,
// and sends every other request through next.
type cancelByClosing struct {
	next http.RoundTripper
}

func (c cancelByClosing) RoundTrip(req *http.Request) (*http.Response, error) {
	if !closedStreamCancels(req) {
		return c.next.RoundTrip(req)
	}
	if req.Body != nil {
		req.Body.Close()
	}
	return &http.Response{
		Status:     "202 Accepted",
		StatusCode: http.StatusAccepted,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     make(http.Header),
		Body:       http.NoBody,
		Request:    req,
	}, nil
}

// closedStreamCancels reports whether req posts notifications/cancelled
// for a client whose protocol version cancels by closing the stream. A
// client of 2026-07-28 names both in the headers (Mcp-Method,
// Mcp-Protocol-Version), so the body is not read.
func closedStreamCancels(req *http.Request) bool {
	return req.Method == http.MethodPost &&
		req.Header.Get(protocol.HeaderMethod) == protocol.NotificationCancelled &&
		req.Header.Get(protocol.HeaderProtocolVersion) >= protocol.CancelByClosingSince
}
