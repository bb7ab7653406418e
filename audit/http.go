package audit

// This file is what an audit over streamable HTTP needs of its client.
// At 2026-07-28 a client cancels a request over HTTP by closing its
// response stream: "closing the SSE response stream is itself the
// cancellation signal and no notifications/cancelled message is
// expected" (basic/transports/streamable-http, Sending Messages). go-sdk
// v1.8's client closes the stream of a request whose context ends (a
// subscriptions/listen ended by Unsubscribe, a call given up), and then
// posts notifications/cancelled as well, without the _meta every
// 2026-07-28 message carries. A correct server may refuse that post (the
// Python SDK and mcp-go v1.2.1 do): "If the server cannot accept it, it
// MUST return an HTTP error status code (e.g., 400 Bad Request)". go-sdk's
// client takes the refusal
// for a broken connection and closes the session, and the audit would
// fail a correct server for what its own client did. HTTPTransport keeps
// the post off the wire.

import (
	"net/http"

	"github.com/mcpres/mcpres/internal/protocol"
)

// HTTPTransport returns the http.RoundTripper for the go-sdk client of an
// audit over streamable HTTP (mcp.StreamableClientTransport.HTTPClient's
// Transport). It sends every request by next (nil means
// http.DefaultTransport), but the notifications/cancelled of a client of
// 2026-07-28 or later: it answers that itself, 202 Accepted, and does not
// send it, so that the closed stream alone ends the request, as the
// transport of that version says.
func HTTPTransport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return cancelByClosing{next: next}
}

// cancelByClosing is HTTPTransport's round tripper.
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
// for a client whose version cancels by closing the stream. go-sdk's
// client of 2026-07-28 names both in the headers (Mcp-Method,
// Mcp-Protocol-Version), so the body is not read.
func closedStreamCancels(req *http.Request) bool {
	return req.Method == http.MethodPost &&
		req.Header.Get(protocol.HeaderMethod) == protocol.NotificationCancelled &&
		req.Header.Get(protocol.HeaderProtocolVersion) >= protocol.CancelByClosingSince
}
