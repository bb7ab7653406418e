package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
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
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// A walk through resources/list started before the server restarts
// continues after it if the server has the same cursor keys, from a file
// or from the environment; with no keys it is refused, and the server
// warns at start-up that it would be.
func TestCursorKeysAcrossRestart(t *testing.T) {
	logFile := writeTestLog(t)
	keyFile := filepath.Join(t.TempDir(), "cursor-keys")
	key := newKey(t)
	// An old key after the new one: rotation in progress.
	require.NoError(t, os.WriteFile(keyFile, []byte("# cursor keys, newest first\n"+key+"\n"+newKey(t)+"\n"), 0o600))

	for _, tc := range []struct {
		name    string
		args    []string
		env     string
		resumes bool
		log     []string // in the server's one line about cursors
	}{
		{"file", []string{"-cursor-keys", keyFile}, "", true, []string{`level=INFO msg="list cursors use the keys given"`, keyFile}},
		{"env", nil, key, true, []string{`level=INFO msg="list cursors use the keys given"`, "$" + cursor.KeysEnv}},
		{"none", nil, "", false, []string{`level=WARN msg="no cursor keys given: list cursors use a random key, so they will not survive a restart or reach another replica;`,
			"-cursor-keys FILE", "$" + cursor.KeysEnv}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(cursor.KeysEnv, tc.env)
			args := append([]string{"-file", logFile, "-page-size", "3"}, tc.args...)

			// The first page of each version's walk, from one server.
			var first []*mcp.ListResourcesResult
			t.Run("before", func(t *testing.T) {
				s := mcptest.StartServer(t, binPath, args...)
				for _, version := range mcptest.Versions {
					cs := mcptest.ConnectHTTP(t, s.URL("/mcp"), "", version, nil)
					page, err := cs.ListResources(t.Context(), nil)
					require.NoError(t, err, version)
					require.Len(t, page.Resources, 3, version)
					require.NotEmpty(t, page.NextCursor, version)
					first = append(first, page)
				}
				checkStartupLog(t, s, tc.log, key)
			})

			// The rest, from the next server: the walk goes on, nothing
			// skipped or listed twice, or the cursor is refused.
			t.Run("after", func(t *testing.T) {
				s := mcptest.StartServer(t, binPath, args...)
				for i, version := range mcptest.Versions {
					t.Run(version, func(t *testing.T) {
						cs := mcptest.ConnectHTTP(t, s.URL("/mcp"), "", version, nil)
						err := mcptest.ContinueWalk(t, cs, first[i])
						if tc.resumes {
							require.NoError(t, err, "the walk across the restart")
							return
						}
						var jerr *jsonrpc.Error
						require.True(t, errors.As(err, &jerr), "want a JSON-RPC error, got %v", err)
						require.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code)
						mcptest.ListAll(t, cs) // a new walk is served
					})
				}
				checkStartupLog(t, s, tc.log, key)
			})
		})
	}
}

// A bad key file stops the server before it serves anything.
func TestCursorKeysInvalid(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "cursor-keys")
	require.NoError(t, os.WriteFile(keyFile, []byte("c2hvcnQ=\n"), 0o600)) // "short"
	for _, tc := range []struct{ name, arg string }{
		{"short key", keyFile},
		{"missing file", keyFile + ".missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(binPath, "-cursor-keys", tc.arg, "-http", "127.0.0.1:0").CombinedOutput()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "want the server to fail, got %v; output:\n%s", err, out)
			require.Equal(t, 1, exit.ExitCode())
			require.Contains(t, string(out), `level=ERROR msg="server failed"`)
			require.NotContains(t, string(out), "serving MCP")
		})
	}
}

// newKey returns a new random cursor key, base64-encoded as key files and
// $MCPRES_CURSOR_KEYS hold it.
func newKey(t *testing.T) string {
	b := make([]byte, 32)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(b)
}

// checkStartupLog checks the log of s once it holds the line giving the
// URL s serves MCP on, the last it logs at start-up: that it holds one line
// about cursors, that the line holds each of want, and that the log does
// not reveal key.
func checkStartupLog(t *testing.T, s *mcptest.Server, want []string, key string) {
	t.Helper()
	out := s.WaitLog(`msg="serving MCP over streamable HTTP" url=` + s.URL("/mcp") + "\n")
	var lines []string
	for line := range strings.Lines(out) {
		if strings.Contains(line, "cursor") {
			lines = append(lines, line)
		}
	}
	require.Len(t, lines, 1, "one line about cursors; stderr:\n%s", out)
	for _, w := range want {
		require.Contains(t, lines[0], w)
	}
	require.NotContains(t, out, key)
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
