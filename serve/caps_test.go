package serve_test

// The caps of the edge on what callers hold open (sessions.go,
// listens.go), for go-sdk's handler, on synctest's fake clock: clients
// talk to the edge through an in-process transport, each naming its
// caller in an X-Client header (Options.ClientAddressHeader), so that
// one test plays several callers.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capsURL is the endpoint of a capsFixture, reached in process.
const capsURL = "http://mcp.test/mcp"

// A capsFixture is a registry with the template caps://r/{n}, served
// behind Guard with the fixture's options, whose Warn lines go to logs.
type capsFixture struct {
	server *mcp.Server
	mem    *inMemory
	logs   *mcptest.Buffer
}

func newCapsFixture(t *testing.T, opts serve.Options) *capsFixture {
	t.Helper()
	f := &capsFixture{logs: &mcptest.Buffer{}}
	reg, err := resource.NewRegistry(&resource.Options{Logger: quietLogger()})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "caps://r/{n}", Name: "r"},
		func(_ context.Context, _ *mcp.ReadResourceRequest, v resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: v.Get("n")}}}, nil
		}))
	f.server, err = reg.NewServer(&mcp.Implementation{Name: "caps", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	// The sessions raw requests opened, which no client deletes, end
	// with the test: none is left in the bubble.
	t.Cleanup(func() {
		for s := range f.server.Sessions() {
			s.Close()
		}
	})
	opts.ClientAddressHeader = "X-Client"
	opts.Logger = slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	f.mem = &inMemory{h: guarded(t, f.server, &opts, nil)}
	return f
}

// client returns an HTTP client whose requests name caller.
func (f *capsFixture) client(caller string) *http.Client {
	return mcptest.WithHeader(&http.Client{Transport: f.mem}, "X-Client", caller)
}

// connect opens a session of a client before 2026-07-28 for caller; the
// session is closed when t ends.
func (f *capsFixture) connect(t *testing.T, caller string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "caps-test", Version: "v0"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: capsURL, HTTPClient: f.client(caller)}
	cs, err := client.Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// listen opens a 2026-07-28 listen stream of caller to uris; the stream
// is closed when t ends.
func (f *capsFixture) listen(t *testing.T, caller string, uris ...string) (io.Closer, error) {
	stream, err := audit.ListenHTTP(t.Context(), f.client(caller), capsURL, "2026-07-28", uris)
	if err == nil {
		t.Cleanup(func() { stream.Close() })
	}
	return stream, err
}

// initialize posts an initialize of protocol 2025-11-25 for caller, as a
// client opening a session does, and returns the answer.
func (f *capsFixture) initialize(t *testing.T, caller string) *http.Response {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]string{"name": "raw", "version": "v0"},
	}})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, capsURL, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := f.client(caller).Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sessionRefusal asserts that resp refuses a session with status and a
// JSON-RPC error without id, of code CodeRateLimited, naming the cap.
func sessionRefusal(t *testing.T, resp *http.Response, status int, capName string) {
	t.Helper()
	assert.Equal(t, status, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Empty(t, resp.Header.Get("Mcp-Session-Id"))
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	rpcErr := errorWithoutID(t, data)
	assert.Equal(t, int64(resource.CodeRateLimited), rpcErr.Code)
	assert.Contains(t, rpcErr.Message, capName)
	assert.JSONEq(t, `{"method":"initialize","retryAfterMs":1000}`, string(rpcErr.Data))
}

// A caller holds at most MaxListensPerCaller listen streams open; one
// more is answered -32602, with the request's id, before the handler
// sees it. Another caller is not held by it, and hanging up gives the
// place back. The refusals of a burst are logged once.
func TestListensPerCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newCapsFixture(t, serve.Options{MaxListensPerCaller: 2})
		first, err := f.listen(t, "mallory", "caps://r/0")
		require.NoError(t, err)
		_, err = f.listen(t, "mallory", "caps://r/1")
		require.NoError(t, err)
		for range 3 {
			_, err = f.listen(t, "mallory", "caps://r/2")
			jerr := rpcError(t, err)
			assert.EqualValues(t, resource.CodeRateLimited, jerr.Code)
			assert.Contains(t, jerr.Message, "holds 2 subscriptions/listen streams open")
		}
		_, err = f.listen(t, "alice", "caps://r/2")
		require.NoError(t, err)
		require.NoError(t, first.Close())
		synctest.Wait()
		_, err = f.listen(t, "mallory", "caps://r/3")
		require.NoError(t, err, "a place for mallory's listen once one closed")
		assert.Equal(t, 1, strings.Count(f.logs.String(), "listen streams per caller"), f.logs.String())
		assert.Contains(t, f.logs.String(), "level=WARN")
	})
}

// The answer to a listen over the cap is 429, as for a session, with
// Retry-After and a JSON-RPC response to the request, with its id, so
// that the client can tell which listen was refused.
func TestListenRefusalAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newCapsFixture(t, serve.Options{MaxListensPerCaller: 1})
		_, err := f.listen(t, "mallory", "caps://r/0")
		require.NoError(t, err)
		body := `{"jsonrpc":"2.0","id":"l-2","method":"subscriptions/listen","params":{"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` +
			`"notifications":{"resourceSubscriptions":["caps://r/1"]}}}`
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, capsURL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "subscriptions/listen")
		resp, err := f.client("mallory").Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, "1", resp.Header.Get("Retry-After"))
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		msg, err := jsonrpc.DecodeMessage(data)
		require.NoError(t, err, "%s", data)
		res, ok := msg.(*jsonrpc.Response)
		require.True(t, ok, "%s", data)
		assert.Equal(t, "l-2", res.ID.Raw())
		require.NotNil(t, res.Error, "%s", data)
		var jerr *jsonrpc.Error
		require.ErrorAs(t, res.Error, &jerr)
		assert.EqualValues(t, resource.CodeRateLimited, jerr.Code)
	})
}

// A caller holds at most MaxSessionsPerCaller sessions open: a request
// that would open one more gets 429 and opens none. A session the client
// deletes frees its place at once; one the server closes (as
// SessionTimeout does) frees it once a request needs it, within a second.
func TestSessionsPerCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newCapsFixture(t, serve.Options{MaxSessionsPerCaller: 2})
		a, err := f.connect(t, "mallory")
		require.NoError(t, err)
		_, err = f.connect(t, "mallory")
		require.NoError(t, err)
		before := sessions(f.server)
		for range 5 {
			sessionRefusal(t, f.initialize(t, "mallory"), http.StatusTooManyRequests, "sessions per caller (2)")
		}
		_, err = f.connect(t, "mallory")
		assert.Error(t, err, "a go-sdk client is refused too")
		assert.Equal(t, before, sessions(f.server), "a refused request opens no session")
		assert.Equal(t, 1, strings.Count(f.logs.String(), "sessions per caller"), "one line for the burst: %s", f.logs.String())
		_, err = f.connect(t, "alice")
		require.NoError(t, err)
		// A session the client deletes frees its place at once.
		require.NoError(t, a.Close())
		c, err := f.connect(t, "mallory")
		require.NoError(t, err)

		// A session the server closes frees its place once a request
		// needs it: the gate looks for such sessions once a second at
		// most, and looked just now.
		sessionRefusal(t, f.initialize(t, "mallory"), http.StatusTooManyRequests, "sessions per caller")
		for s := range f.server.Sessions() {
			if s.ID() == c.ID() {
				s.Close()
			}
		}
		synctest.Wait()
		sessionRefusal(t, f.initialize(t, "mallory"), http.StatusTooManyRequests, "sessions per caller")
		time.Sleep(time.Second) // synctest's clock: pruneEvery (1 s) passes, and the gate looks again
		assert.Equal(t, http.StatusOK, f.initialize(t, "mallory").StatusCode,
			"a place for mallory once the server closed one of its sessions")
	})
}

// All callers together hold at most MaxSessions sessions open: one more
// gets 503. 2026-07-28 clients need no session, and are served.
func TestSessionsInAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newCapsFixture(t, serve.Options{MaxSessions: 2})
		_, err := f.connect(t, "alice")
		require.NoError(t, err)
		_, err = f.connect(t, "bob")
		require.NoError(t, err)
		sessionRefusal(t, f.initialize(t, "carol"), http.StatusServiceUnavailable, "sessions in all (2)")
		_, err = f.listen(t, "carol", "caps://r/0")
		require.NoError(t, err)
	})
}

// The caps' defaults, as their constants say.
func TestCapsDefaults(t *testing.T) {
	assert.Equal(t, 100, serve.DefaultMaxSessionsPerCaller)
	assert.Equal(t, 10_000, serve.DefaultMaxSessions)
	assert.Equal(t, 16, serve.DefaultMaxListensPerCaller)
}
