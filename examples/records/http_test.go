package main

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestHTTP serves SQLite over streamable HTTP from one server process to
// a client of each protocol version at once: each lists, reads, receives
// the updates of the rows it subscribed to, whether update_row or another
// process changed them, and is refused subscriptions to rows that do not
// exist.
func TestHTTP(t *testing.T) {
	t.Parallel()
	dbPath := seededDB(t)
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
		clients[i] = &client{ClientSession: cs, n: n, size: seededSize}
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
			version := mcptest.Versions[i]
			for _, uri := range seededSize.missingRows() {
				var err error
				if version < "2026-07-28" {
					err = c.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri})
				} else {
					// go-sdk's client listens in the background and never
					// reports a refusal: SubscribeHTTP sends the listen itself.
					err = mcptest.SubscribeHTTP(t, "http://"+addr+mcpPath, "", version, uri)
				}
				requireNoSuchResource(t, err, uri)
			}
		}
	})

	// Each client lists and reads at once: nothing changes now.
	for i, c := range clients {
		version := mcptest.Versions[i]
		t.Run("list/"+version, func(t *testing.T) {
			t.Parallel()
			checkList(t, c)
		})
		t.Run("read/"+version, func(t *testing.T) {
			t.Parallel()
			checkRead(t, c, version)
		})
	}
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

// connectCursor connects a client of cursorVersion to s, and returns the
// session and a function that closes it and the connections of its HTTP
// client, to call before s stops. (mcptest.ConnectHTTP closes them when
// the test ends; a connection the client opened and never used, still
// open when the server stops, holds up its graceful shutdown until its
// 2 s timeout.)
func connectCursor(t *testing.T, s *mcptest.Server) (*mcp.ClientSession, func()) {
	t.Helper()
	hc := mcptest.HTTPClient(t, "")
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptest", Version: "v0"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: s.URL(mcpPath), HTTPClient: hc}
	cs, err := client.Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: cursorVersion})
	require.NoError(t, err, "connecting to %s", s.URL(mcpPath))
	return cs, func() {
		cs.Close()
		hc.CloseIdleConnections()
	}
}

// firstPage lists the first page of resources/list from s, and checks
// that the page after it is full and has a next: a walk that goes on from
// it at another server crosses pages there.
func firstPage(t *testing.T, s *mcptest.Server) *mcp.ListResourcesResult {
	t.Helper()
	cs, done := connectCursor(t, s)
	defer done() // before the server stops
	first, err := cs.ListResources(t.Context(), nil)
	require.NoError(t, err)
	require.NotEmpty(t, first.NextCursor)
	second, err := cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: first.NextCursor})
	require.NoError(t, err)
	require.Len(t, second.Resources, testPageSize)
	require.NotEmpty(t, second.NextCursor)
	return first
}

// continueWalk goes on at s with the walk whose first page, first, a
// server that has since stopped listed, as mcptest.ContinueWalk does: it
// returns the error if s refuses the cursor, and otherwise checks that
// the walk lists what one from the start does.
func continueWalk(t *testing.T, s *mcptest.Server, first *mcp.ListResourcesResult) error {
	t.Helper()
	cs, done := connectCursor(t, s)
	defer done() // before the server stops
	return mcptest.ContinueWalk(t, cs, first)
}

// requireContinues checks that s goes on with the walk of first.
func requireContinues(t *testing.T, s *mcptest.Server, first *mcp.ListResourcesResult) {
	t.Helper()
	require.NoError(t, continueWalk(t, s, first), "a cursor from before the restart")
}

// requireRefused checks that s refuses the cursor after first.
func requireRefused(t *testing.T, s *mcptest.Server, first *mcp.ListResourcesResult) {
	t.Helper()
	jerr := rpcError(t, continueWalk(t, s, first), "a cursor from before the restart")
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), jerr.Code)
	require.Equal(t, "invalid cursor", jerr.Message)
}

// requireKeysFrom checks the start-up log of s once it holds the line
// giving the URL s serves MCP on, the last it logs at start-up: its one
// line about cursor keys is at Info level, naming where they came from and
// none of key material.
func requireKeysFrom(t *testing.T, s *mcptest.Server, from string, keys ...string) {
	t.Helper()
	log := s.WaitLog(`msg="serving MCP over streamable HTTP" url=` + s.URL(mcpPath) + "\n")
	require.Regexp(t, `level=INFO msg="list cursors use the keys given" from="`+regexp.QuoteMeta(from)+` \(\d+ keys?\)"`, log)
	require.NotContains(t, log, "level=WARN")
	for _, k := range keys {
		require.NotContains(t, log, k)
		require.NotContains(t, log, k[:8])
	}
}

// cursorArgs returns the arguments of a server of the cursor tests: a
// filled database of t's own, which every server t starts serves.
func cursorArgs(t *testing.T) []string {
	return []string{"-db", seededDB(t), "-page-size", strconv.Itoa(testPageSize)}
}

// keysFile returns the path of a cursor key file in t's temporary
// directory, and a function that writes keys into it.
func keysFile(t *testing.T) (path string, write func(keys ...string)) {
	path = filepath.Join(t.TempDir(), "cursor-keys")
	return path, func(keys ...string) {
		t.Helper()
		text := "# cursor keys: the first encrypts, the others still decrypt\n" + strings.Join(keys, "\n") + "\n"
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	}
}

// TestCursorKeys checks that a list walk started before a restart goes on
// after it when the server has the same cursor keys from -cursor-keys,
// through a key rotation, and is refused otherwise. -cursor-keys wins
// over $MCPRES_CURSOR_KEYS, so these run in parallel, whatever the
// environment holds; TestCursorKeysEnvironment checks keys from the
// environment, and none.
func TestCursorKeys(t *testing.T) {
	t.Parallel()

	t.Run("file", func(t *testing.T) {
		t.Parallel()
		keyFile, writeKeys := keysFile(t)
		withFile := append([]string{"-cursor-keys", keyFile}, cursorArgs(t)...)
		key := newKey()
		writeKeys(key)
		s := mcptest.StartServer(t, binPath, withFile...)
		requireKeysFrom(t, s, "file "+keyFile, key)
		first := firstPage(t, s)
		s.Stop()

		s = mcptest.StartServer(t, binPath, withFile...)
		requireKeysFrom(t, s, "file "+keyFile, key)
		requireContinues(t, s, first)
	})

	t.Run("rotation", func(t *testing.T) {
		t.Parallel()
		keyFile, writeKeys := keysFile(t)
		withFile := append([]string{"-cursor-keys", keyFile}, cursorArgs(t)...)
		older, newer := newKey(), newKey()
		writeKeys(older)
		s := mcptest.StartServer(t, binPath, withFile...)
		oldFirst := firstPage(t, s)
		s.Stop()

		// The new key first, the old one after it: the old cursors still
		// work, and new ones are made with the new key.
		writeKeys(newer, older)
		s = mcptest.StartServer(t, binPath, withFile...)
		requireKeysFrom(t, s, "file "+keyFile, older, newer)
		requireContinues(t, s, oldFirst)
		newFirst := firstPage(t, s)
		s.Stop()

		// The old key dropped: its cursors are refused, the new ones work.
		writeKeys(newer)
		s = mcptest.StartServer(t, binPath, withFile...)
		requireRefused(t, s, oldFirst)
		requireContinues(t, s, newFirst)
	})
}

// TestCursorKeysEnvironment checks, as TestCursorKeys does, that a list
// walk goes on after a restart with the keys of $MCPRES_CURSOR_KEYS, and
// that without keys it does not. The servers it starts inherit its
// environment, which it sets (mcptest.StartServer cannot give a server
// an environment of its own), so it cannot run in parallel with others.
func TestCursorKeysEnvironment(t *testing.T) {
	t.Setenv(cursor.KeysEnv, "") // no keys from the environment unless a step sets them
	// This test runs alone, before the parallel ones, which wait for it:
	// it serves a copy of seededDB's small database, whose walks are
	// short, rather than a new one of 55,000 rows.
	args := cursorArgs(t)

	t.Run("environment", func(t *testing.T) {
		key := newKey()
		t.Setenv(cursor.KeysEnv, key)
		s := mcptest.StartServer(t, binPath, args...)
		requireKeysFrom(t, s, "$"+cursor.KeysEnv, key)
		first := firstPage(t, s)
		s.Stop()

		s = mcptest.StartServer(t, binPath, args...)
		requireKeysFrom(t, s, "$"+cursor.KeysEnv, key)
		requireContinues(t, s, first)
		s.Stop()

		// Another key refuses the cursor.
		t.Setenv(cursor.KeysEnv, newKey())
		s = mcptest.StartServer(t, binPath, args...)
		requireRefused(t, s, first)
	})

	t.Run("none", func(t *testing.T) {
		s := mcptest.StartServer(t, binPath, args...)
		first := firstPage(t, s) // good for as long as the process runs
		s.Stop()
		warnings := regexp.MustCompile(`(?m)^.*level=WARN.*$`).FindAllString(s.Stderr.String(), -1)
		require.Len(t, warnings, 1, "one warning:\n%s", s.Stderr)
		require.Contains(t, warnings[0], `msg="no cursor keys given: list cursors use a random key`)
		require.Contains(t, warnings[0], "-cursor-keys FILE")
		require.Contains(t, warnings[0], cursor.KeysEnv)

		s = mcptest.StartServer(t, binPath, args...)
		requireRefused(t, s, first)
	})
}
