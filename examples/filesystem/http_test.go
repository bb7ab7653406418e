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
	"strings"
	"testing"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// These tests run the binary as a streamable HTTP server, which serves
// clients of every protocol version on /mcp.

// startHTTP starts the server on root over streamable HTTP, with
// serverArgs and args. The server is stopped when t ends, if not before.
func startHTTP(t *testing.T, root string, args ...string) *mcptest.Server {
	t.Helper()
	return mcptest.StartServer(t, binPath, append(append([]string{"-root", root}, serverArgs...), args...)...)
}

// An httpClient is a client session of one protocol version and the
// notifications it receives.
type httpClient struct {
	version string
	*mcp.ClientSession
	n *mcptest.Notifications
}

// TestHTTP connects a client of each protocol version to one server
// process at once: each lists, reads, and is notified of the changes of
// what it subscribed to and of the list.
func TestHTTP(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	url := startHTTP(t, f.root).URL(httpPath)
	ctx := t.Context()

	var clients []httpClient
	for _, version := range mcptest.Versions {
		n := &mcptest.Notifications{}
		cs := mcptest.ConnectHTTP(t, url, "", version, n.ClientOptions(nil))
		require.Equal(t, version, cs.InitializeResult().ProtocolVersion)
		caps := cs.InitializeResult().Capabilities.Resources
		require.NotNil(t, caps, version)
		require.True(t, caps.Subscribe && caps.ListChanged, "%s: subscribe and listChanged advertised", version)
		clients = append(clients, httpClient{version, cs, n})
	}
	for _, c := range clients {
		require.Len(t, listedURIs(t, c.ClientSession), len(f.keys), c.version)
		res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///hello.txt"})
		require.NoError(t, err, c.version)
		require.Equal(t, "Hello, world!\n", res.Contents[0].Text, c.version)
		_, err = c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///%2e%2e/secret"})
		requireNotFound(t, err, c.version, "file:///%2e%2e/secret")
	}

	// One edit of a file all three subscribed to reaches each.
	const watched = "file:///watched.txt"
	for _, c := range clients {
		require.NoError(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: watched}), c.version)
	}
	i := 0
	for _, c := range clients {
		// A 2026-07-28 listen is acknowledged in the background: edit
		// until this client has heard of one.
		c.n.WaitUpdated(t, watched, func() { i++; f.write(t, "watched.txt", fmt.Appendf(nil, "http %d\n", i)) })
	}

	// Files whose names need percent-encoding appear in each client's
	// list, read back, and notify their subscribers.
	created := map[string]string{"a b.txt": "file:///a%20b.txt", "café.md": "file:///caf%C3%A9.md"}
	for _, c := range clients {
		drain(t, c.n)
	}
	for _, c := range clients {
		c.n.WaitListChanged(t, func() {
			for name := range created {
				removeIfExists(t, f.path(name)) // so that each call comes and goes
				f.write(t, name, []byte("v1 "+name))
			}
		})
	}
	for _, c := range clients {
		all, _ := listAll(t, c.ClientSession)
		byURI := map[string]*mcp.Resource{}
		for _, r := range all {
			byURI[r.URI] = r
		}
		for name, uri := range created {
			require.Contains(t, byURI, uri, c.version)
			require.Equal(t, name, byURI[uri].Name, c.version)
			res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			require.NoError(t, err, c.version)
			require.Equal(t, uri, res.Contents[0].URI, c.version)
			require.Equal(t, "v1 "+name, res.Contents[0].Text, c.version)
			require.NoError(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}), c.version)
		}
	}
	for name, uri := range created {
		for _, c := range clients {
			c.n.WaitUpdated(t, uri, func() { i++; f.write(t, name, fmt.Appendf(nil, "v2 %d", i)) })
		}
	}

	// MCP is served on /mcp alone.
	hc := mcptest.HTTPClient(t, "")
	base := strings.TrimSuffix(url, httpPath)
	for _, path := range []string{"/", "/mcp/", "/mcp/x", "/sse"} {
		resp, err := hc.Post(base+path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		require.NoError(t, err, path)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
}

// TestSubscribeOnlyWhatExists subscribes a client of each protocol
// version to what a read serves, which is accepted, and to what it does
// not, which is refused as "no such resource".
func TestSubscribeOnlyWhatExists(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	url := startHTTP(t, f.root).URL(httpPath)
	accepted := []string{
		"file:///hello.txt", "file:///sp%20ace/%C3%A9.md", "file:///a/b/c.txt",
		"file:///link-in", "file:///a/", "file:///",
	}
	// Other spellings than the registry's own, which reads accept, are
	// refused with the URI to subscribe to: changes are reported under it.
	otherSpellings := map[string]string{
		"file:///%61/b/c.txt":        "file:///a/b/c.txt",
		"file:///hello%2Etxt":        "file:///hello.txt",
		"file:///sp%20ace/%c3%a9.md": "file:///sp%20ace/%C3%A9.md",
		"file:///a%2Fb/c.txt":        "file:///a/b/c.txt",
		"file:///C#.md":              "file:///C%23.md", // read, it is the file C with a fragment: not found
	}
	refused := []string{
		"file:///nope.txt", "file:///a/b/nope/",
		"file:///a",          // a directory named as a file
		"file:///hello.txt/", // a file named as a directory
		"file:///.env", "file:///.hiddendir/", "file:///id.key", "file:///node_modules/pkg/index.js",
		"file:///link-out", "file:///dir-out/secret", "file:///dir-out/root/hello.txt",
		"file:///../secret", "file:///a/../../secret", "file:///%2e%2e/secret", "file:///%2E%2E/secret",
		"file:///a%2F..%2F..%2Fsecret", "file:///..%5Csecret", "file:///a%5C..%5C..%5Csecret",
		"file:///a%00b", "file:////etc/passwd", "file:///a//b/c.txt", "file:///./hello.txt",
	}
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			// go-sdk's 2026-07-28 client subscribes in the background, and
			// does not report a refusal: mcptest.SubscribeHTTP sends its
			// subscriptions/listen request itself.
			subscribe := func(uri string) error { return mcptest.SubscribeHTTP(t, url, "", version, uri) }
			for _, uri := range accepted {
				require.NoError(t, subscribe(uri), uri)
			}
			for _, uri := range refused {
				jerr := invalidParams(t, subscribe(uri), uri)
				require.Contains(t, jerr.Message, "no such resource", uri)
			}
			for uri, own := range otherSpellings {
				jerr := invalidParams(t, subscribe(uri), uri)
				require.Contains(t, jerr.Message, `the server names this resource "`+own+`"`, uri)
			}
		})
	}
}

// invalidParams checks that err, of what, is a JSON-RPC -32602 error, and
// returns it.
func invalidParams(t *testing.T, err error, what string) *jsonrpc.Error {
	t.Helper()
	var jerr *jsonrpc.Error
	require.True(t, errors.As(err, &jerr), "%s: want a JSON-RPC error, got %v", what, err)
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), jerr.Code, what)
	return jerr
}

// TestCursorsAcrossRestart begins a list walk with a client of each
// protocol version, restarts the server, and goes on with the walk: with
// the same keys, from a file or the environment, or after a rotation, the
// walk continues; with none, the server used a random key, and the cursors
// it issued are refused. The servers inherit the test's environment, where
// TestMain leaves no keys: the case with keys in the environment sets
// them, and runs with the sequential tests (TestCursorsAcrossRestartEnv),
// the others in parallel.
func TestCursorsAcrossRestart(t *testing.T) {
	t.Parallel()
	cursorsAcrossRestart(t, false)
}

// TestCursorsAcrossRestartEnv is the case of TestCursorsAcrossRestart
// with the keys in $MCPRES_CURSOR_KEYS, which it sets: a test that sets
// the environment cannot run in parallel.
func TestCursorsAcrossRestartEnv(t *testing.T) {
	cursorsAcrossRestart(t, true)
}

// cursorsAcrossRestart runs the cases of TestCursorsAcrossRestart that
// set $MCPRES_CURSOR_KEYS (env), or the others, in parallel.
func cursorsAcrossRestart(t *testing.T, env bool) {
	f := newFixture(t)
	want := f.uris(t)
	oldKey, newKey := randomKey(t), randomKey(t)
	dir := t.TempDir()
	oldFile, rotated := filepath.Join(dir, "old-keys"), filepath.Join(dir, "rotated-keys")
	require.NoError(t, os.WriteFile(oldFile, []byte("# cursor keys\n"+oldKey+"\n"), 0o600))
	require.NoError(t, os.WriteFile(rotated, []byte("# the new key first, the old one after it\n"+newKey+"\n"+oldKey+"\n"), 0o600))

	const warn = `level=WARN msg="no cursor keys given: list cursors use a random key, so they will not survive a restart or reach another replica"`
	type server struct {
		args []string
		key  string // in $MCPRES_CURSOR_KEYS
		log  string // a line the server logs at start-up
	}
	for _, tc := range []struct {
		name          string
		before, after server
		resumes       bool
	}{
		{"file", server{args: []string{"-cursor-keys", oldFile}, log: `msg="list cursors use the keys given" from="file ` + oldFile + ` (1 key)"`},
			server{args: []string{"-cursor-keys", oldFile}, log: `from="file ` + oldFile + ` (1 key)"`}, true},
		{"env", server{key: oldKey, log: `msg="list cursors use the keys given" from="$MCPRES_CURSOR_KEYS (1 key)"`},
			server{key: oldKey, log: `from="$MCPRES_CURSOR_KEYS (1 key)"`}, true},
		{"rotated", server{args: []string{"-cursor-keys", oldFile}, log: `from="file ` + oldFile + ` (1 key)"`},
			server{args: []string{"-cursor-keys", rotated}, log: `from="file ` + rotated + ` (2 keys)"`}, true},
		{"none", server{log: warn}, server{log: warn}, false},
	} {
		if (tc.before.key != "" || tc.after.key != "") != env {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			if !env {
				t.Parallel()
			}
			// start starts the server s, waits until it has logged the URL
			// it serves (its last line at start-up), checks its log, and
			// returns that URL.
			start := func(t *testing.T, s server) string {
				if env {
					t.Setenv(cursor.KeysEnv, s.key)
				}
				srv := startHTTP(t, f.root, s.args...)
				url := srv.URL(httpPath)
				logs := srv.WaitLog("url=" + url)
				require.Contains(t, logs, s.log)
				require.NotContains(t, logs, oldKey, "keys are never logged")
				require.NotContains(t, logs, newKey, "keys are never logged")
				return url
			}
			first := map[string]*mcp.ListResourcesResult{}
			require.True(t, t.Run("before", func(t *testing.T) {
				url := start(t, tc.before)
				for _, version := range mcptest.Versions {
					cs := mcptest.ConnectHTTP(t, url, "", version, nil)
					res, err := cs.ListResources(t.Context(), nil)
					require.NoError(t, err, version)
					require.Equal(t, want[:7], resourceURIs(res.Resources), version)
					require.NotEmpty(t, res.NextCursor, version)
					first[version] = res
				}
			}))
			// The first server has stopped: a new process goes on with
			// each walk, and lists what a walk from the start does.
			url := start(t, tc.after)
			for _, version := range mcptest.Versions {
				t.Run(version, func(t *testing.T) {
					cs := mcptest.ConnectHTTP(t, url, "", version, nil)
					err := mcptest.ContinueWalk(t, cs, first[version])
					if !tc.resumes {
						require.Contains(t, invalidParams(t, err, "the cursor from before").Message, "invalid cursor")
						return
					}
					require.NoError(t, err)
					require.Equal(t, want, listedURIs(t, cs))
				})
			}
		})
	}
}

// Keys that cannot be read or are not keys stop the server at start-up,
// with an error that shows no key.
func TestBadCursorKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte(base64.StdEncoding.EncodeToString([]byte("too short"))+"\n"), 0o600))
	for _, tc := range []struct {
		args []string
		key  string // in $MCPRES_CURSOR_KEYS
		want string
	}{
		{[]string{"-cursor-keys", filepath.Join(dir, "missing")}, "", "reading keys"},
		{[]string{"-cursor-keys", short}, "", "fewer than 16"},
		{nil, "not base64!", "$MCPRES_CURSOR_KEYS"},
	} {
		cmd := exec.Command(binPath, append([]string{"-root", dir}, tc.args...)...)
		cmd.Env = append(os.Environ(), cursor.KeysEnv+"="+tc.key) // the last wins
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "%v: want exit status 1, got %v\n%s", tc.args, err, out)
		require.Equal(t, 1, exit.ExitCode(), "%s", out)
		require.Contains(t, string(out), tc.want)
		require.NotContains(t, string(out), "dG9vIHNob3J0", "the key is not shown")
	}
}

// randomKey returns a new cursor key, as `head -c 32 /dev/urandom |
// base64` makes one.
func randomKey(t *testing.T) string {
	b := make([]byte, 32)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(b)
}

// resourceURIs returns the URIs of rs, in order.
func resourceURIs(rs []*mcp.Resource) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.URI)
	}
	return out
}
