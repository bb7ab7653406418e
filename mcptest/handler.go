package mcptest

// This file serves an http.Handler in the test's own process, through
// net/http/httptest, and connects a go-sdk client to it over streamable
// HTTP: the in-process way to test a server whose transport is HTTP, on
// go-sdk (mcp.NewStreamableHTTPHandler) or another SDK (mcp-go's
// server.NewStreamableHTTPServer).

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeHandler serves h on a new loopback httptest.Server and returns its
// URL ("http://127.0.0.1:port", no path), to pass to ConnectHTTP with
// the path h serves MCP on. The server is closed when t ends, after the
// sessions ConnectHTTP connected later are closed.
func ServeHandler(t testing.TB, h http.Handler) string {
	t.Helper()
	if h == nil {
		t.Fatal("mcptest.ServeHandler: nil handler")
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// ConnectHandler serves h as ServeHandler does and connects a go-sdk
// client with opts (nil for none) to it over streamable HTTP, as
// ConnectHTTP does, posting to the path "/" and asking for protocol
// version ("" for the client's latest). It returns the client's session,
// closed when t ends, before the server is. Like Connect, it fails t
// unless the server chose version, when version is not "". It fails t
// if the client cannot connect.
//
// h serves MCP at every path: a handler made by
// mcp.NewStreamableHTTPHandler or by mcp-go's
// server.NewStreamableHTTPServer. For a handler that serves it at one
// path only (a mux), or a server that wants a bearer token, call
// ServeHandler and then ConnectHTTP.
func ConnectHandler(t testing.TB, h http.Handler, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs := ConnectHTTP(t, ServeHandler(t, h)+"/", "", version, opts)
	if got := cs.InitializeResult().ProtocolVersion; version != "" && got != version {
		t.Fatalf("mcptest.ConnectHandler: the server negotiated protocol version %q, not the %q asked for", got, version)
	}
	return cs
}
