package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// newKey returns a new cursor key, as `head -c 32 /dev/urandom | base64`
// makes one.
func newKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(b)
}

// writeKeys writes a cursor keys file named name, in a temporary
// directory, and returns its path.
func writeKeys(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// TestCursorKeys walks resources/list over HTTP across restarts of the
// binary on one database: a walk started before a restart continues
// after it when the server has the same cursor keys, from -cursor-keys
// or from $MCPRES_CURSOR_KEYS; and after the keys are rotated as the
// README says. Without keys the cursor is refused with -32602, and the
// server warns, at start-up, that it uses a random key.
func TestCursorKeys(t *testing.T) {
	db := testDB(t)
	oldKey, newerKey := newKey(t), newKey(t)
	keys := writeKeys(t, "cursor-keys", "# the knowledge base's list cursor keys\n"+oldKey+"\n")
	rotated := writeKeys(t, "cursor-keys", newerKey+"\n"+oldKey+" # until its cursors no longer matter\n")
	rotatedOut := writeKeys(t, "cursor-keys", newerKey+"\n")
	t.Setenv(cursor.KeysEnv, "") // no keys from the environment unless a step sets it

	const version = "2025-11-25"
	// start starts the server with args, waits until it has logged the
	// URL it serves (its last line at start-up), checks that its log
	// holds wantLog and none of the keys, and connects to it.
	start := func(t *testing.T, wantLog string, args ...string) *mcp.ClientSession {
		t.Helper()
		s := mcptest.StartServer(t, binPath, append(args, "-db", db, "-page-size", fmt.Sprint(pageSize))...)
		log := s.WaitLog(`msg="serving MCP over streamable HTTP" url=` + s.URL(mcpPath) + "\n")
		require.Contains(t, log, wantLog)
		require.NotContains(t, log, oldKey)
		require.NotContains(t, log, newerKey)
		return connectAs(t, s.URL(mcpPath), "", version, nil)
	}

	// The whole list, and the first page of a walk, whose cursor the next
	// servers are given: mcptest.ContinueWalk goes on with the walk, and
	// checks it lists what a walk from the start does.
	var all []*mcp.Resource
	var first *mcp.ListResourcesResult
	require.True(t, t.Run("first", func(t *testing.T) {
		cs := start(t, `level=INFO msg="list cursors use the keys given" from="file `+keys+` (1 key)"`, "-cursor-keys", keys)
		all, _ = mcptest.ListAll(t, cs)
		var err error
		first, err = cs.ListResources(t.Context(), nil)
		require.NoError(t, err)
		require.NotEmpty(t, first.NextCursor)
	}))
	require.Greater(t, len(all), 2*pageSize, "the walk has pages after a restart")

	t.Run("same file", func(t *testing.T) {
		cs := start(t, `from="file `+keys, "-cursor-keys", keys)
		require.NoError(t, mcptest.ContinueWalk(t, cs, first), "the walk continues where it stopped")
	})

	t.Run("environment", func(t *testing.T) {
		t.Setenv(cursor.KeysEnv, oldKey)
		cs := start(t, `level=INFO msg="list cursors use the keys given" from="$`+cursor.KeysEnv+` (1 key)"`)
		require.NoError(t, mcptest.ContinueWalk(t, cs, first), "the walk continues where it stopped")
	})

	// Rotation: the new key first, the old one after it while its cursors
	// matter, then the old one dropped.
	var newFirst *mcp.ListResourcesResult
	require.True(t, t.Run("rotated", func(t *testing.T) {
		cs := start(t, `from="file `+rotated+` (2 keys)"`, "-cursor-keys", rotated)
		require.NoError(t, mcptest.ContinueWalk(t, cs, first), "the old key still decrypts")
		var err error
		newFirst, err = cs.ListResources(t.Context(), nil) // its cursor made with the new key
		require.NoError(t, err)
	}))
	t.Run("rotated out", func(t *testing.T) {
		cs := start(t, `from="file `+rotatedOut+` (1 key)"`, "-cursor-keys", rotatedOut)
		require.NoError(t, mcptest.ContinueWalk(t, cs, newFirst), "the new key's cursors")
		jerr := rpcError(t, mcptest.ContinueWalk(t, cs, first), "a cursor of a key dropped")
		require.Equal(t, int64(jsonrpc.CodeInvalidParams), jerr.Code)
	})

	t.Run("no keys", func(t *testing.T) {
		cs := start(t, `level=WARN msg="no cursor keys given: list cursors use a random key`)
		jerr := rpcError(t, mcptest.ContinueWalk(t, cs, first), "a cursor after a restart without keys")
		require.Equal(t, int64(jsonrpc.CodeInvalidParams), jerr.Code)
		require.Equal(t, "invalid cursor", jerr.Message)
		fresh, _ := mcptest.ListAll(t, cs)
		require.Equal(t, all, fresh, "a new walk")
	})

	t.Run("bad keys", func(t *testing.T) {
		for text, want := range map[string]string{
			"":              "no keys",
			"not base64!\n": "key 1 (line 1)",
			base64.StdEncoding.EncodeToString([]byte("short")) + "\n": "fewer than 16",
		} {
			out, err := exec.Command(binPath, "-cursor-keys", writeKeys(t, "cursor-keys", text), "-db", db).CombinedOutput()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "keys %q: %v", text, err)
			require.Equal(t, 2, exit.ExitCode(), "keys %q", text)
			require.Contains(t, string(out), "knowledge: cursor keys: ", "keys %q", text)
			require.Contains(t, string(out), want, "keys %q", text)
		}
	})
}
