package resource_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCursorReason sends, over the protocol, a cursor refused for each
// reason there is: the client gets -32602 "invalid cursor" and nothing
// more, whatever the reason, and the server's log one record at Debug
// that names it.
func TestCursorReason(t *testing.T) {
	t.Parallel()
	forEachVersion(t, func(t *testing.T, version string) {
		f := newReasonFixture(t, version)
		alice, bob := f.connect(t), f.connect(t) // in that order: see Identity

		first := f.listCursor(t, alice)
		tampered := flipBit(t, first)
		templates := f.templatesCursor(t, alice)
		foreign := f.foreignCursor(t)

		for _, tc := range []struct {
			name   string
			client *mcp.ClientSession
			cursor string
			later  time.Duration
			reason string
		}{
			{"tampered", alice, tampered, 0, "invalid cursor: tampered with"},
			{"other method", alice, templates, 0, "invalid cursor: issued for another method"},
			{"expired", alice, first, 2 * time.Minute, "invalid cursor: expired at"},
			{"unknown key", alice, foreign, 0, "invalid cursor: made with an unknown key"},
			{"other caller", bob, first, 0, "invalid cursor: issued for another scope"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f.clock.advance(tc.later)
				defer f.clock.advance(-tc.later)
				before := len(f.records(t))

				_, err := tc.client.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: tc.cursor})
				jerr := rpcError(t, err)
				assert.Equal(t, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor"}, jerr,
					"the client learns nothing of why")

				added := f.records(t)[before:]
				require.Len(t, added, 1, "one log record")
				rec := added[0]
				assert.Equal(t, "DEBUG", rec["level"])
				assert.Equal(t, "resource request refused: invalid cursor", rec["msg"])
				assert.Equal(t, "resources/list", rec["method"])
				assert.Contains(t, rec, "session_id")
				assert.IsType(t, "", rec["session_id"])
				reason, _ := rec["reason"].(string)
				assert.True(t, strings.HasPrefix(reason, tc.reason), "reason %q, want %q…", reason, tc.reason)
			})
		}

		// The cursor was good all along, for its caller, in time.
		res, err := alice.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: first})
		require.NoError(t, err)
		assert.Equal(t, "x://b", res.Resources[0].URI)
	})
}

// A reasonFixture is a registry with a codec of a fixed key and a TTL on
// a clock the test sets, whose log the test reads, and whose callers'
// identities are "alice" and "bob" by the order of their sessions.
type reasonFixture struct {
	version string
	reg     *resource.Registry
	server  *mcp.Server
	logs    *syncBuffer
	clock   *testClock

	mu         sync.Mutex
	identities map[mcp.Session]string
}

func newReasonFixture(t *testing.T, version string) *reasonFixture {
	f := &reasonFixture{
		version:    version,
		logs:       new(syncBuffer),
		clock:      &testClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)},
		identities: map[mcp.Session]string{},
	}
	codec, err := cursor.NewCodec(&cursor.Options{
		Keys: [][]byte{[]byte("the server's own key, of 16 bytes or more")},
		TTL:  time.Minute,
		Now:  f.clock.Now,
	})
	require.NoError(t, err)
	f.reg = newRegistry(t, &resource.Options{
		PageSize: 1,
		Cursors:  codec,
		Logger:   slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Identity: f.identity,
	})
	for _, u := range []string{"x://a", "x://b", "x://c"} {
		require.NoError(t, f.reg.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)))
	}
	for _, u := range []string{"t://a/{x}", "t://b/{x}"} {
		require.NoError(t, f.reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: u, Name: u}, nil2))
	}
	f.server, err = f.reg.NewServer(&mcp.Implementation{Name: "t", Version: "v0"}, nil)
	require.NoError(t, err)
	return f
}

// identity names the caller of a session by the order of their first
// requests: alice, then bob.
func (f *reasonFixture) identity(_ context.Context, req mcp.Request) string {
	if req == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s := req.GetSession()
	id, ok := f.identities[s]
	if !ok {
		id = [...]string{"alice", "bob", "eve"}[min(len(f.identities), 2)]
		f.identities[s] = id
	}
	return id
}

// connect connects a client, and lists once so that its identity is set
// in order.
func (f *reasonFixture) connect(t *testing.T) *mcp.ClientSession {
	cs := mcptest.Connect(t, f.server, f.version, nil)
	_, err := cs.ListResources(t.Context(), nil)
	require.NoError(t, err)
	return cs
}

// listCursor returns the cursor of the second page of resources/list.
func (f *reasonFixture) listCursor(t *testing.T, cs *mcp.ClientSession) string {
	res, err := cs.ListResources(t.Context(), nil)
	require.NoError(t, err)
	require.NotEmpty(t, res.NextCursor)
	return res.NextCursor
}

// templatesCursor returns the cursor of the second page of
// resources/templates/list.
func (f *reasonFixture) templatesCursor(t *testing.T, cs *mcp.ClientSession) string {
	res, err := cs.ListResourceTemplates(t.Context(), nil)
	require.NoError(t, err)
	require.NotEmpty(t, res.NextCursor)
	return res.NextCursor
}

// foreignCursor returns a cursor of resources/list from another registry,
// alike but for its codec's key.
func (f *reasonFixture) foreignCursor(t *testing.T) string {
	codec, err := cursor.NewCodec(&cursor.Options{
		Keys: [][]byte{[]byte("another server's key, 16 bytes or more")},
		TTL:  time.Minute,
		Now:  f.clock.Now,
	})
	require.NoError(t, err)
	other := newRegistry(t, &resource.Options{PageSize: 1, Cursors: codec, Logger: quietLogger(),
		Identity: func(context.Context, mcp.Request) string { return "alice" }})
	for _, u := range []string{"x://a", "x://b"} {
		require.NoError(t, other.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)))
	}
	server, err := other.NewServer(&mcp.Implementation{Name: "t", Version: "v0"}, nil)
	require.NoError(t, err)
	return f.listCursor(t, mcptest.Connect(t, server, f.version, nil))
}

// records returns the log's records, decoded.
func (f *reasonFixture) records(t *testing.T) []map[string]any {
	var recs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(f.logs.String()))
	for sc.Scan() {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), "%s", sc.Bytes())
		recs = append(recs, rec)
	}
	return recs
}

// flipBit returns cursor with one bit of its ciphertext flipped: still
// base64url of the right length, but altered.
func flipBit(t *testing.T, c string) string {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	require.NoError(t, err)
	raw[len(raw)/2] ^= 0x10
	return base64.RawURLEncoding.EncodeToString(raw)
}

// A testClock is a settable Options.Now.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
