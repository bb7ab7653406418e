package main

import (
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestHTTP serves SQLite over streamable HTTP from one server process to
// a client of each protocol version at once: each lists, reads, and
// receives the updates of the rows it subscribed to, whether update_row
// or another process changed them.
func TestHTTP(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "records.db")
	addr := mcptest.StartHTTP(t, binPath, "-db", dbPath, "-poll", testPoll, "-page-size", strconv.Itoa(testPageSize))

	// MCP is served on /mcp, and nowhere else.
	hc := mcptest.HTTPClient(t, "")
	for _, path := range []string{"/", "/mcp/", "/mcp/x", "/sse"} {
		resp, err := hc.Get("http://" + addr + path)
		require.NoError(t, err, path)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}

	clients := make([]*client, len(mcptest.Versions))
	for i, version := range mcptest.Versions {
		n := new(mcptest.Notifications)
		cs := mcptest.ConnectHTTP(t, "http://"+addr+"/mcp", "", version, n.ClientOptions(nil))
		require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
		require.True(t, cs.InitializeResult().Capabilities.Resources.Subscribe, "%s: subscribe capability", version)
		clients[i] = &client{ClientSession: cs, n: n}
	}
	subscribe := func(t *testing.T, uri string) {
		t.Helper()
		for i, c := range clients {
			require.NoError(t, c.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}), mcptest.Versions[i])
		}
	}

	t.Run("update_row", func(t *testing.T) {
		const id = 200
		uri := "db://users/" + strconv.Itoa(id)
		subscribe(t, uri)
		var name string
		change := setName(t, clients[0].ClientSession, id, &name)
		for _, c := range clients {
			c.n.WaitUpdated(t, uri, change)
		}
		for _, c := range clients {
			require.Equal(t, name, readJSON(t, c.ClientSession, uri)["name"])
		}
	})

	t.Run("another process", func(t *testing.T) {
		const id = 201
		uri := "db://users/" + strconv.Itoa(id)
		subscribe(t, uri)
		st, err := openSQLite(dbPath)
		require.NoError(t, err)
		defer st.Close()
		write := writer(t, st.db, st.ph)
		var name string
		change := func() {
			name = "Elsewhere " + strconv.FormatInt(time.Now().UnixNano(), 10)
			write(id, name)
		}
		for _, c := range clients {
			c.n.WaitUpdated(t, uri, change)
		}
		for _, c := range clients {
			require.Equal(t, name, readJSON(t, c.ClientSession, uri)["name"])
		}
	})

	t.Run("refused", func(t *testing.T) {
		for i, c := range clients {
			if version := mcptest.Versions[i]; version < "2026-07-28" { // see TestSubscribeExists
				for _, uri := range missingRows {
					requireNoSuchResource(t, c.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}), uri)
				}
			}
		}
	})

	for i, c := range clients {
		version := mcptest.Versions[i]
		t.Run("list/"+version, func(t *testing.T) { checkList(t, c) })
		t.Run("read/"+version, func(t *testing.T) { checkRead(t, c, version) })
	}
}

// An httpServer is the server binary serving streamable HTTP, started by
// startHTTP.
type httpServer struct {
	url    string // of the MCP endpoint, http://127.0.0.1:PORT/mcp
	stderr *mcptest.Buffer
	// stop interrupts the server and fails the test unless it then exits
	// cleanly; it is called when the test ends, if not before.
	stop func()
}

// urlLine is the start-up log line that gives the MCP endpoint's URL.
var urlLine = regexp.MustCompile(`msg="serving MCP over streamable HTTP" url=(http://\S+/mcp)\n`)

// A urlWatcher receives a server's stderr, and sends the URL of urlLine
// on found once it has been written.
type urlWatcher struct {
	mu    sync.Mutex
	text  []byte
	found chan string // buffered; receives one URL
	sent  bool
}

func (w *urlWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.sent {
		w.text = append(w.text, p...)
		if m := urlLine.FindSubmatch(w.text); m != nil {
			w.found <- string(m[1])
			w.sent = true
		}
	}
	return len(p), nil
}

// startHTTP starts the server binary with args and the environment env,
// serving streamable HTTP on a free loopback port, and returns once it
// has logged the URL it serves. Unlike mcptest.StartHTTP it gives the
// server's stderr to the test, and lets it stop the server before it ends.
func startHTTP(t *testing.T, env []string, args ...string) *httpServer {
	t.Helper()
	cmd := exec.Command(binPath, append(append([]string(nil), args...), "-http", "127.0.0.1:0")...)
	cmd.Env = env
	s := &httpServer{stderr: mcptest.Stderr(t, cmd)}
	w := &urlWatcher{found: make(chan string, 1)}
	cmd.Stderr = io.MultiWriter(s.stderr, w)
	require.NoError(t, cmd.Start())
	var waitErr error
	exited := make(chan struct{}) // closed when the server has exited
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				cmd.Process.Kill()
			}
			select {
			case <-exited:
				require.NoError(t, waitErr, "server exit")
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-exited
				t.Error("server did not stop on interrupt; killed it")
			}
		})
	}
	t.Cleanup(s.stop)
	select {
	case s.url = <-w.found:
	case <-exited:
		t.Fatalf("server exited before serving:\n%s", s.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not log its URL within 30s:\n%s", s.stderr)
	}
	return s
}

// environ returns the test's environment without the variable name.
func environ(name string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, name+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// newKey returns a new random cursor key, as the README says to make one:
// head -c 32 /dev/urandom | base64.
func newKey() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails
	return base64.StdEncoding.EncodeToString(b)
}

// cursorVersion is the protocol version of the clients of the cursor
// tests: one without a session, whose list walks outlive any one server
// process most naturally.
const cursorVersion = "2026-07-28"

// listPage lists the page of resources/list at cursor ("" for the first)
// from the server at url, in a session of its own.
func listPage(t *testing.T, url, cursor string) (*mcp.ListResourcesResult, error) {
	t.Helper()
	cs := mcptest.ConnectHTTP(t, url, "", cursorVersion, nil)
	defer cs.Close() // before the server stops
	return cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: cursor})
}

// twoPages lists the first two pages of resources/list from the server at
// url, and checks the second page is full and has a next.
func twoPages(t *testing.T, url string) (first, second *mcp.ListResourcesResult) {
	t.Helper()
	first, err := listPage(t, url, "")
	require.NoError(t, err)
	require.NotEmpty(t, first.NextCursor)
	second, err = listPage(t, url, first.NextCursor)
	require.NoError(t, err)
	require.Len(t, second.Resources, testPageSize)
	require.NotEmpty(t, second.NextCursor)
	return first, second
}

// uris returns the URIs of resources.
func uris(resources []*mcp.Resource) []string {
	out := make([]string, len(resources))
	for i, r := range resources {
		out[i] = r.URI
	}
	return out
}

// requireContinues checks that cursor, from a server that has since
// stopped, lists from the server at url the page want.
func requireContinues(t *testing.T, url, cursor string, want *mcp.ListResourcesResult) {
	t.Helper()
	got, err := listPage(t, url, cursor)
	require.NoError(t, err, "a cursor from before the restart")
	require.Equal(t, uris(want.Resources), uris(got.Resources))
}

// requireRefused checks that the server at url refuses cursor.
func requireRefused(t *testing.T, url, cursor string) {
	t.Helper()
	_, err := listPage(t, url, cursor)
	jerr := rpcError(t, err, "a cursor from before the restart")
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), jerr.Code)
	require.Equal(t, "invalid cursor", jerr.Message)
}

// requireKeysFrom checks the server's one start-up line about cursor keys:
// at Info level, naming where they came from and none of key material.
func requireKeysFrom(t *testing.T, s *httpServer, from string, keys ...string) {
	t.Helper()
	log := s.stderr.String()
	require.Regexp(t, `level=INFO msg="list cursors use the given keys" from="`+regexp.QuoteMeta(from)+` \(\d+ keys?\)"`, log)
	require.NotContains(t, log, "level=WARN")
	for _, k := range keys {
		require.NotContains(t, log, k)
		require.NotContains(t, log, k[:8])
	}
}

// TestCursorKeys checks that a list walk started before a restart goes on
// after it when the server has the same cursor keys, from -cursor-keys or
// $MCPRES_CURSOR_KEYS, through a key rotation, and is refused otherwise.
func TestCursorKeys(t *testing.T) {
	dir := t.TempDir()
	env := environ(cursor.KeysEnv)
	args := []string{"-db", filepath.Join(dir, "records.db"), "-page-size", strconv.Itoa(testPageSize)}
	keyFile := filepath.Join(dir, "cursor-keys")
	writeKeys := func(keys ...string) {
		t.Helper()
		text := "# cursor keys: the first encrypts, the others still decrypt\n" + strings.Join(keys, "\n") + "\n"
		require.NoError(t, os.WriteFile(keyFile, []byte(text), 0o600))
	}
	withFile := append([]string{"-cursor-keys", keyFile}, args...)

	t.Run("file", func(t *testing.T) {
		key := newKey()
		writeKeys(key)
		s := startHTTP(t, env, withFile...)
		requireKeysFrom(t, s, "file "+keyFile, key)
		first, second := twoPages(t, s.url)
		s.stop()

		s = startHTTP(t, env, withFile...)
		requireKeysFrom(t, s, "file "+keyFile, key)
		requireContinues(t, s.url, first.NextCursor, second)
	})

	t.Run("environment", func(t *testing.T) {
		key := newKey()
		withKey := append(env[:len(env):len(env)], cursor.KeysEnv+"="+key)
		s := startHTTP(t, withKey, args...)
		requireKeysFrom(t, s, "$"+cursor.KeysEnv, key)
		first, second := twoPages(t, s.url)
		s.stop()

		s = startHTTP(t, withKey, args...)
		requireKeysFrom(t, s, "$"+cursor.KeysEnv, key)
		requireContinues(t, s.url, first.NextCursor, second)
		s.stop()

		// Another key refuses the cursor.
		s = startHTTP(t, append(env[:len(env):len(env)], cursor.KeysEnv+"="+newKey()), args...)
		requireRefused(t, s.url, first.NextCursor)
	})

	t.Run("rotation", func(t *testing.T) {
		older, newer := newKey(), newKey()
		writeKeys(older)
		s := startHTTP(t, env, withFile...)
		oldFirst, oldSecond := twoPages(t, s.url)
		s.stop()

		// The new key first, the old one after it: the old cursors still
		// work, and new ones are made with the new key.
		writeKeys(newer, older)
		s = startHTTP(t, env, withFile...)
		requireKeysFrom(t, s, "file "+keyFile, older, newer)
		requireContinues(t, s.url, oldFirst.NextCursor, oldSecond)
		newFirst, newSecond := twoPages(t, s.url)
		s.stop()

		// The old key dropped: its cursors are refused, the new ones work.
		writeKeys(newer)
		s = startHTTP(t, env, withFile...)
		requireRefused(t, s.url, oldFirst.NextCursor)
		requireContinues(t, s.url, newFirst.NextCursor, newSecond)
	})

	t.Run("none", func(t *testing.T) {
		s := startHTTP(t, env, args...)
		first, _ := twoPages(t, s.url) // good for as long as the process runs
		s.stop()
		warnings := regexp.MustCompile(`(?m)^.*level=WARN.*$`).FindAllString(s.stderr.String(), -1)
		require.Len(t, warnings, 1, "one warning:\n%s", s.stderr)
		require.Contains(t, warnings[0], `msg="no cursor keys given: list cursors use a random key`)
		require.Contains(t, warnings[0], "-cursor-keys FILE")
		require.Contains(t, warnings[0], cursor.KeysEnv)

		s = startHTTP(t, env, args...)
		requireRefused(t, s.url, first.NextCursor)
	})
}
