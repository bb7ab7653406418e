package mcptest_test

import (
	"net/http"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// newHandler returns go-sdk's streamable HTTP handler of server for
// clients of version: a stateless one from 2026-07-28, whose clients
// need no session (go-sdk's stateful handler answers them with
// 2025-11-25).
func newHandler(server *mcp.Server, version string) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: version >= "2026-07-28"})
}

// ConnectHandler serves go-sdk's handler in process and connects at each
// version; the session reads through it.
func TestConnectHandler(t *testing.T) {
	t.Parallel()
	server := newServer(nil)
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs := mcptest.ConnectHandler(t, newHandler(server, version), version, nil)
			require.Equal(t, version, cs.InitializeResult().ProtocolVersion)
			res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///hello.txt"})
			require.NoError(t, err)
			require.Len(t, res.Contents, 1)
			require.Equal(t, "hello", res.Contents[0].Text)
		})
	}
}

// A handler on one path of a mux is served by ServeHandler and reached
// by ConnectHTTP at that path.
func TestServeHandlerMux(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/mcp", newHandler(newServer(nil), "2025-11-25"))
	url := mcptest.ServeHandler(t, mux)
	cs := mcptest.ConnectHTTP(t, url+"/mcp", "", "2025-11-25", nil)
	_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///hello.txt"})
	require.NoError(t, err)
}

// ConnectHandler fails the test when the server chooses another
// version than the one asked for.
func TestConnectHandlerWrongVersion(t *testing.T) {
	t.Parallel()
	h := newHandler(newServer(&mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}}), "2025-06-18")
	ft := &fakeTB{TB: t}
	ft.run(func() { mcptest.ConnectHandler(ft, h, "2025-06-18", nil) })
	defer ft.cleanup()
	require.True(t, ft.failed, "ConnectHandler did not fail the test")
	require.Equal(t, []string{`mcptest.ConnectHandler: the server negotiated protocol version "2025-11-25", not the "2025-06-18" asked for`}, ft.errors)
}
