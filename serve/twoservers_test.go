package serve_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two servers in one process, each with its own registry, caps and
// logger, over real HTTP: each is held to its own caps, and logs to its
// own logger. Nothing is shared between them through the package.
func TestTwoServersKeepTheirOwnCaps(t *testing.T) {
	t.Parallel()
	type edge struct {
		url  string
		logs *lockedBuffer
	}
	start := func(name string, maxPerCaller int) edge {
		logs := &lockedBuffer{}
		logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		reg, err := resource.NewRegistry(&resource.Options{Logger: logger})
		require.NoError(t, err)
		t.Cleanup(func() { reg.Close() })
		server, err := reg.NewServer(&mcp.Implementation{Name: name, Version: "v0"}, nil)
		require.NoError(t, err)
		h, err := serve.Handler(server, &serve.Options{Registry: reg, Logger: logger, MaxSessionsPerCaller: maxPerCaller})
		require.NoError(t, err)
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		return edge{url: ts.URL + serve.DefaultPath, logs: logs}
	}
	a, b := start("a", 1), start("b", 2)

	initialize := func(url string) int {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"v0"}}}`
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, []int{200, 429}, []int{initialize(a.url), initialize(a.url)}, "a: one session per caller")
	assert.Equal(t, []int{200, 200, 429}, []int{initialize(b.url), initialize(b.url), initialize(b.url)}, "b: two sessions per caller")

	assert.Contains(t, a.logs.String(), "cap=1")
	assert.NotContains(t, a.logs.String(), "cap=2")
	assert.Contains(t, b.logs.String(), "cap=2")
	assert.NotContains(t, b.logs.String(), "cap=1")
}

// A lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
