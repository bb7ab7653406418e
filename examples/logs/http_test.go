package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// Over HTTP, one server process serves clients of every protocol version
// at once on /mcp. Each lists, reads, completes and subscribes as over
// stdio. Without -follow the server reads its file once, so no client is
// ever sent an update or list_changed; TestHTTPFollow follows a file that
// grows.
func TestHTTP(t *testing.T) {
	addr := mcptest.StartHTTP(t, binPath, "-file", writeTestLog(t), "-page-size", "3")
	url := "http://" + addr + "/mcp"

	// Every client connects first, so that all are connected to the
	// server at once.
	sessions := make([]*mcp.ClientSession, len(mcptest.Versions))
	for i, version := range mcptest.Versions {
		sessions[i] = mcptest.ConnectHTTP(t, url, "", version, nil)
	}
	for i, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs := sessions[i]
			require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
			caps := cs.InitializeResult().Capabilities.Resources
			require.NotNil(t, caps)
			require.True(t, caps.Subscribe, "subscribe advertised")
			exercise(t, cs, version)

			// Refused in every era. go-sdk's 2026-07-28 client subscribes
			// in the background and never reports a refusal: SubscribeHTTP
			// sends the subscriptions/listen itself.
			for _, uri := range noSuchSlices {
				requireNoSuchResource(t, mcptest.SubscribeHTTP(t, url, "", version, uri), uri)
			}
		})
	}

	// /mcp is the only path served.
	client := mcptest.HTTPClient(t, "")
	for _, path := range []string{"/", "/mcp/", "/other"} {
		resp, err := client.Post("http://"+addr+path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		require.NoError(t, err, path)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
}

// The keys of -cursor-keys make the list cursors' codec: the server says
// where they came from at start-up, never the keys themselves, and a bad
// file stops it. What the keys do across restarts is package cursor's to
// test (TestLoadCodec), and the quickstart's, end to end.
func TestCursorKeysFlag(t *testing.T) {
	dir := t.TempDir()
	key := base64.StdEncoding.EncodeToString([]byte("the logs example's cursor key, 32"))
	keyFile := filepath.Join(dir, "cursor-keys")
	require.NoError(t, os.WriteFile(keyFile, []byte(key+"\n"), 0o600))
	t.Setenv(cursor.KeysEnv, "")

	s := mcptest.StartServer(t, binPath, "-file", writeTestLog(t), "-cursor-keys", keyFile)
	out := s.WaitLog(`msg="serving MCP over streamable HTTP"`)
	require.Contains(t, out, `level=INFO msg="list cursors use the keys given" from="file `+keyFile+` (1 key)"`)
	require.NotContains(t, out, key)

	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte("c2hvcnQ=\n"), 0o600)) // "short"
	out2, err := exec.Command(binPath, "-file", writeTestLog(t), "-cursor-keys", short, "-http", "127.0.0.1:0").CombinedOutput()
	require.Error(t, err, "a key of 5 bytes; output:\n%s", out2)
	require.Contains(t, string(out2), "fewer than 16")
	require.NotContains(t, string(out2), "serving MCP")
}

// With -follow, one server process tells clients of every protocol version
// at once, over HTTP, of what is appended to its file: each is sent an
// update for a slice it subscribed to that gained lines, and then a
// list_changed for a new slice, which it lists, reads, and subscribes to.
func TestHTTPFollow(t *testing.T) {
	path := writeTestLog(t)
	s := mcptest.StartServer(t, binPath, "-file", path, "-follow", "50ms", "-page-size", "3")

	const (
		grown  = "log://alpha/2026-11-20/20-24" // the slice of testLog's last line
		newURI = "log://new1/2026-11-21/00-04"  // the slice of the first line of a new service
	)
	// Every client connects first, so that all are connected to the
	// server at once when each waits for its notifications.
	sessions := make([]*mcp.ClientSession, len(mcptest.Versions))
	notes := make([]*mcptest.Notifications, len(mcptest.Versions))
	for i, version := range mcptest.Versions {
		notes[i] = new(mcptest.Notifications)
		sessions[i] = mcptest.ConnectHTTP(t, s.URL("/mcp"), "", version, notes[i].ClientOptions(nil))
		require.Equal(t, version, sessions[i].InitializeResult().ProtocolVersion, "negotiated version")
		require.True(t, sessions[i].InitializeResult().Capabilities.Resources.ListChanged, "listChanged advertised")
	}

	// Each change function appends a line each time it is called, which
	// WaitUpdated and WaitListChanged do until the client is notified.
	var updates, added int
	update := func() {
		updates++
		appendTo(t, path, fmt.Sprintf("2026-11-20T23:59:59.5Z alpha INFO follow %d\n", updates))
	}
	// A new service each time: each appended line is a new slice, and
	// makes a list_changed.
	newSlice := func() {
		added++
		appendTo(t, path, fmt.Sprintf("2026-11-21T00:30:00Z new%d INFO new slice\n", added))
	}

	// An update for the slice each subscribed to.
	for i, version := range mcptest.Versions {
		require.NoError(t, sessions[i].Subscribe(t.Context(), &mcp.SubscribeParams{URI: grown}), version)
		// The slice to come does not exist yet. (go-sdk's 2026-07-28 client
		// subscribes in the background and never reports a refusal:
		// SubscribeHTTP sends the subscriptions/listen itself.)
		requireNoSuchResource(t, mcptest.SubscribeHTTP(t, s.URL("/mcp"), "", version, newURI), newURI)
	}
	for i, version := range mcptest.Versions {
		t.Run(version+"/updated", func(t *testing.T) { notes[i].WaitUpdated(t, grown, update) })
	}
	grownFile, err := os.ReadFile(path)
	require.NoError(t, err)

	// A list_changed for the new slice. The server indexes the file in
	// order, so once a client has it, every line before is served too.
	for i, version := range mcptest.Versions {
		t.Run(version+"/list_changed", func(t *testing.T) { notes[i].WaitListChanged(t, newSlice) })
	}
	newLine := "2026-11-21T00:30:00Z new1 INFO new slice\n"
	want := expectedSlices(t, string(grownFile)+newLine)
	require.Contains(t, want, wantSlice{"new1/2026-11-21/00-04", newLine})

	// Each lists the new slice, reads it and the slice that grew, and
	// subscribes to it.
	for i, version := range mcptest.Versions {
		t.Run(version+"/new", func(t *testing.T) {
			cs := sessions[i]
			list, _ := mcptest.ListAll(t, cs)
			sizes := make(map[string]int64)
			for _, r := range list {
				sizes[r.URI] = r.Size
			}
			for _, w := range want {
				require.Equal(t, int64(len(w.text)), sizes["log://"+w.key], w.key)
			}
			require.Equal(t, want[slices.IndexFunc(want, func(w wantSlice) bool { return "log://"+w.key == grown })].text, readText(t, cs, grown))
			require.Equal(t, newLine, readText(t, cs, newURI))

			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: newURI}))
		})
	}

	// Each is told when the new slice gains lines, and reads them.
	var more int
	grow := func() {
		more++
		appendTo(t, path, fmt.Sprintf("2026-11-21T00:30:00Z new1 INFO more %d\n", more))
	}
	for i, version := range mcptest.Versions {
		t.Run(version+"/new/updated", func(t *testing.T) {
			notes[i].WaitUpdated(t, newURI, grow)
			got := readText(t, sessions[i], newURI)
			require.True(t, strings.HasPrefix(got, newLine+"2026-11-21T00:30:00Z new1 INFO more 1\n"), got)
		})
	}
}
