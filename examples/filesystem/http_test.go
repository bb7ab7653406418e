package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// These tests run the binary as a streamable HTTP server, which serves
// clients of every protocol version on /mcp.

// startHTTP starts the server on root over streamable HTTP, with
// serverArgs, and returns the URL of its MCP endpoint. The server is
// stopped when t ends.
func startHTTP(t *testing.T, root string) string {
	t.Helper()
	return "http://" + mcptest.StartHTTP(t, binPath, append([]string{"-root", root}, serverArgs...)...) + httpPath
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
	f := newFixture(t)
	url := startHTTP(t, f.root)
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
	f := newFixture(t)
	url := startHTTP(t, f.root)
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
			// does not report a refusal: send its subscriptions/listen
			// request by hand.
			subscribe := func(uri string) error { return listen(t, url, uri) }
			if version < "2026-07-28" {
				cs := mcptest.ConnectHTTP(t, url, "", version, nil)
				subscribe = func(uri string) error {
					return cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri})
				}
			}
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

// invalidParams checks that err is a JSON-RPC -32602 error, and returns it.
func invalidParams(t *testing.T, err error, uri string) *jsonrpc.Error {
	t.Helper()
	var jerr *jsonrpc.Error
	require.True(t, errors.As(err, &jerr), "%s: want a JSON-RPC error, got %v", uri, err)
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), jerr.Code, uri)
	return jerr
}

// listen sends the subscriptions/listen request of a 2026-07-28 client
// subscribing to uri, and returns the server's error, or nil once the
// server has acknowledged the subscription; the stream is then closed.
func listen(t *testing.T, url, uri string) error {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": map[string]any{
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    "2026-07-28",
			mcp.MetaKeyClientInfo:         map[string]string{"name": "filesystem-test", "version": "v0"},
			mcp.MetaKeyClientCapabilities: map[string]any{},
		},
		"notifications": map[string]any{"resourceSubscriptions": []string{uri}},
	}})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := mcptest.HTTPClient(t, "").Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()

	// The answer is one JSON-RPC message, the error, or an event stream
	// whose first message acknowledges the subscription.
	var msg struct {
		Method string
		Error  *jsonrpc.Error
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				require.NoError(t, json.Unmarshal([]byte(data), &msg))
				break
			}
		}
		require.NoError(t, sc.Err())
	} else {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg), "HTTP %s", resp.Status)
	}
	if msg.Error != nil {
		return msg.Error
	}
	require.Equal(t, "notifications/subscriptions/acknowledged", msg.Method)
	return nil
}

// TestCursorsAcrossRestart begins a list walk with a client of each
// protocol version, restarts the server, and goes on with the walk: with
// the same keys, from a file or the environment, or after a rotation, the
// walk continues; with none, the server used a random key, and the cursors
// it issued are refused.
func TestCursorsAcrossRestart(t *testing.T) {
	f := newFixture(t)
	var want []string
	for _, k := range f.keys {
		want = append(want, uriOf(t, k))
	}
	oldKey, newKey := randomKey(t), randomKey(t)
	dir := t.TempDir()
	oldFile, rotated := filepath.Join(dir, "old-keys"), filepath.Join(dir, "rotated-keys")
	require.NoError(t, os.WriteFile(oldFile, []byte("# cursor keys\n"+oldKey+"\n"), 0o600))
	require.NoError(t, os.WriteFile(rotated, []byte("# the new key first, the old one after it\n"+newKey+"\n"+oldKey+"\n"), 0o600))

	const warn = `level=WARN msg="no cursor keys given: list cursors use a random key, and will not survive a restart or reach another replica"`
	type server struct {
		args []string
		env  []string
		log  string // a line the server logs at start-up
	}
	for _, tc := range []struct {
		name          string
		before, after server
		resumes       bool
	}{
		{"file", server{args: []string{"-cursor-keys", oldFile}, log: `msg="cursor keys loaded" from="file ` + oldFile + ` (1 key)"`},
			server{args: []string{"-cursor-keys", oldFile}, log: `from="file ` + oldFile + ` (1 key)"`}, true},
		{"env", server{env: []string{cursor.KeysEnv + "=" + oldKey}, log: `msg="cursor keys loaded" from="$MCPRES_CURSOR_KEYS (1 key)"`},
			server{env: []string{cursor.KeysEnv + "=" + oldKey}, log: `from="$MCPRES_CURSOR_KEYS (1 key)"`}, true},
		{"rotated", server{args: []string{"-cursor-keys", oldFile}, log: `from="file ` + oldFile + ` (1 key)"`},
			server{args: []string{"-cursor-keys", rotated}, log: `from="file ` + rotated + ` (2 keys)"`}, true},
		{"none", server{log: warn}, server{log: warn}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := func(t *testing.T, s server) string {
				url, stderr := startLogged(t, s.env, append(append([]string{"-root", f.root}, serverArgs...), s.args...)...)
				logs := stderr.String()
				require.Contains(t, logs, s.log)
				require.NotContains(t, logs, oldKey, "keys are never logged")
				require.NotContains(t, logs, newKey, "keys are never logged")
				return url
			}
			cursors := map[string]string{}
			require.True(t, t.Run("before", func(t *testing.T) {
				url := start(t, tc.before)
				for _, version := range mcptest.Versions {
					cs := mcptest.ConnectHTTP(t, url, "", version, nil)
					res, err := cs.ListResources(t.Context(), nil)
					require.NoError(t, err, version)
					require.Equal(t, want[:7], resourceURIs(res.Resources), version)
					require.NotEmpty(t, res.NextCursor, version)
					cursors[version] = res.NextCursor
				}
			}))
			// The first server has stopped: a new process goes on.
			url := start(t, tc.after)
			for _, version := range mcptest.Versions {
				cs := mcptest.ConnectHTTP(t, url, "", version, nil)
				res, err := cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: cursors[version]})
				if !tc.resumes {
					var jerr *jsonrpc.Error
					require.True(t, errors.As(err, &jerr), "%s: want a JSON-RPC error, got %v", version, err)
					require.Equal(t, int64(jsonrpc.CodeInvalidParams), jerr.Code, version)
					require.Contains(t, jerr.Message, "invalid cursor", version)
					continue
				}
				require.NoError(t, err, version)
				require.Equal(t, want[7:14], resourceURIs(res.Resources), version)
			}
		})
	}
}

// Keys that cannot be read or are not keys stop the server at start-up,
// with an error that shows no key.
func TestBadCursorKeys(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte(base64.StdEncoding.EncodeToString([]byte("too short"))+"\n"), 0o600))
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"-cursor-keys", filepath.Join(dir, "missing")}, nil, "reading keys"},
		{[]string{"-cursor-keys", short}, nil, "fewer than 16"},
		{nil, []string{cursor.KeysEnv + "=not base64!"}, "$MCPRES_CURSOR_KEYS"},
	} {
		cmd := exec.Command(binPath, append([]string{"-root", dir}, tc.args...)...)
		cmd.Env = serverEnv(tc.env)
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

func resourceURIs(rs []*mcp.Resource) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.URI)
	}
	return out
}

// serverEnv is the environment of a server process: the test's, without
// any cursor keys, and env.
func serverEnv(env []string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, cursor.KeysEnv+"=") {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}

// startLogged is mcptest.StartHTTP for a test that reads the server's
// log: it starts the binary with args and -http on a free loopback
// address, in the environment serverEnv(env), waits until it logs the URL
// it serves, and returns that URL and the server's stderr. When t ends it
// interrupts the server and checks that it exits cleanly.
func startLogged(t *testing.T, env []string, args ...string) (string, *mcptest.Buffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	url := "http://" + addr + httpPath

	cmd := exec.Command(binPath, append(args, "-http", addr)...)
	cmd.Env = serverEnv(env)
	stderr := mcptest.Stderr(t, cmd)
	require.NoError(t, cmd.Start())
	var waitErr error
	exited := make(chan struct{}) // closed when the server has exited
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt) // an error means it has exited
		select {
		case <-exited:
			require.NoError(t, waitErr, "server exit")
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Error("server did not stop on interrupt; killed it")
		}
	})

	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(stderr.String(), "url="+url) {
		select {
		case <-exited:
			t.Fatalf("server exited before serving: %v\n%s", waitErr, stderr)
		case <-deadline:
			t.Fatalf("server not serving %s within 10s\n%s", url, stderr)
		case <-tick.C:
		}
	}
	return url, stderr
}
