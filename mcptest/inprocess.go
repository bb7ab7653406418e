package mcptest

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// Connect connects server, in the test's process, to a go-sdk client with
// opts (nil for none) over mcp.NewInMemoryTransports, asking for protocol
// version ("" for the client's latest), and returns the client's session.
// Unlike Stdio and ConnectHTTP it checks the version the server chose: it
// fails t unless that is version, when version is not "". It fails t if
// either side cannot connect. When t ends it closes the client session and
// waits until the server session has ended, so that the server's handlers
// have returned and its session is gone from server.Sessions().
//
// Every version go-sdk speaks works, 2026-07-28 (server/discover, no
// initialize) as well as 2025-06-18 and 2025-11-25:
//
//	func TestRead(t *testing.T) {
//		server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
//		// ... add resources to server ...
//		for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
//			t.Run(version, func(t *testing.T) {
//				cs := mcptest.Connect(t, server, version, nil)
//				res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///a.txt"})
//				// ... check res and err ...
//			})
//		}
//	}
func Connect(t testing.TB, server *mcp.Server, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	// The server must be connected first: the client starts the session.
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	require.NoError(t, err, "connecting the server")
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptest", Version: "v0"}, opts)
	cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		ss.Close()
		ss.Wait()
		require.NoError(t, err, "connecting the client, protocol version %q", version)
	}
	t.Cleanup(func() {
		// Closing the client's end of the pipe ends the server session;
		// Wait returns once it has.
		cs.Close()
		ss.Wait()
	})
	if got := cs.InitializeResult().ProtocolVersion; version != "" && got != version {
		t.Fatalf("mcptest.Connect: the server negotiated protocol version %q, not the %q asked for", got, version)
	}
	return cs
}
