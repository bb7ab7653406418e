package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionBehindGetsWhatWaited: a session of each era before
// 2026-07-28 whose client stops reading its GET stream falls behind; the
// notifications that wait for it meanwhile all reach it, whole, once it
// reads again, and none stays in the server's buffer: flushed after the
// last of the run. The registry writes them itself (Options.Registry,
// no EventStore), or, where go-sdk numbers the stream's events (an
// EventStore), go-sdk writes them with the stream's flushes held.
func TestSessionBehindGetsWhatWaited(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-06-18", "2025-11-25"} {
		for _, store := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/EventStore=%t", version, store), func(t *testing.T) {
				t.Parallel()
				// No keep-alive comment, whose flush would send what a
				// missing one left in the buffer.
				c := smallServer{registry: true, opts: serve.Options{KeepAlive: -1}}
				if store {
					c.sdk = &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil), SessionTimeout: time.Hour}
				}
				sessionBehind(t, version, c)
			})
		}
	}
}

func sessionBehind(t *testing.T, version string, c smallServer) {
	reg, hs := c.start(t)
	// The session: a subscription to each of a hundred big URIs (a) and
	// five more (b), and its GET stream, over a connection with small
	// buffers: the header is read, then nothing more for a while.
	var a, b []string
	for i := range 100 {
		a = append(a, "big://r/"+strings.Repeat("a", 1000)+strconv.Itoa(i))
	}
	for i := range 5 {
		b = append(b, "big://r/b"+strconv.Itoa(i))
	}
	body, conn := rawSession(t, hs, version, append(append([]string(nil), a...), b...))

	// Each a URI changes, each a first change, sent at once: 100 KB, which
	// fill the stream's buffers, so that the writes block and the later
	// notifications wait in the session's queue. Then each b URI changes,
	// and waits too.
	for _, uri := range a {
		require.NoError(t, reg.Changed(uri))
	}
	for _, uri := range b {
		require.NoError(t, reg.Changed(uri))
	}

	// The client reads again: every event is whole, and each b URI's
	// notification arrives with nothing more sent.
	seen := make(map[string]bool)
	deadline := time.Now().Add(mcptest.WaitTimeout)
	require.NoError(t, conn.SetReadDeadline(deadline))
	for len(seen) < len(b) {
		var ev strings.Builder
		for {
			line, err := body.ReadString('\n')
			require.NoError(t, err, "b URIs seen: %v; event so far: %q", seen, ev.String())
			ev.WriteString(line)
			if line == "\n" {
				break
			}
		}
		if strings.HasPrefix(ev.String(), ":") || strings.HasPrefix(ev.String(), "event: prime\n") {
			continue // a keep-alive comment, or go-sdk's priming event
		}
		data, ok := strings.CutPrefix(ev.String(), "event: message\n")
		require.True(t, ok, "a whole event: %q", ev.String())
		if id, rest, found := strings.Cut(data, "\n"); found && strings.HasPrefix(id, "id: ") {
			data = rest // go-sdk's event ID, with an EventStore
		}
		data, ok = strings.CutPrefix(data, "data: ")
		require.True(t, ok, "a whole event: %q", ev.String())
		var msg struct {
			Method string
			Params struct{ URI string }
		}
		require.NoError(t, json.Unmarshal([]byte(data), &msg), "a whole event: %q", ev.String())
		require.Equal(t, protocol.NotificationResourceUpdated, msg.Method)
		if strings.HasPrefix(msg.Params.URI, "big://r/b") {
			seen[msg.Params.URI] = true
		}
	}
}

// rawSession opens a session of version on hs (initialize, initialized,
// a resources/subscribe of each of uris) and its GET stream, over a
// connection whose read buffer is small, and returns the stream's body
// after go-sdk's first comment, and the connection.
func rawSession(t *testing.T, hs *httptest.Server, version string, uris []string) (*bufio.Reader, net.Conn) {
	t.Helper()
	var id string
	post := func(body string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if id != "" {
			req.Header.Set(protocol.HeaderSessionID, id)
			req.Header.Set(protocol.HeaderProtocolVersion, version)
		}
		resp, err := mcptest.HTTPClient(t, "").Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		require.Less(t, resp.StatusCode, 300, "%s: %s", body, out)
		if id == "" {
			id = resp.Header.Get(protocol.HeaderSessionID)
		}
	}
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`)
	require.NotEmpty(t, id)
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, uri := range uris {
		post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":%q}}`, i+2, uri))
	}

	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(4096))
	_, err = fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n%s: %s\r\n%s: %s\r\n\r\n",
		hs.Listener.Addr(), protocol.HeaderSessionID, id, protocol.HeaderProtocolVersion, version)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body := bufio.NewReader(resp.Body)
	line, err := body.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, ": ok\n", line, "go-sdk's first bytes on the stream")
	line, err = body.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "\n", line, "the comment's blank line")
	return body, conn
}

// TestSessionStreamAsGoSDK: on a session's GET stream, the registry
// writes each resources/updated itself (Options.Registry attaches the
// stream as a resource.SessionWriter), byte for byte as go-sdk writes it
// behind an edge with no registry, for each era with such a stream.
func TestSessionStreamAsGoSDK(t *testing.T) {
	t.Parallel()
	uris := []string{"big://r/7", "big://r/x%26y"}
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			var events [2][]string
			for i, registry := range []bool{true, false} {
				reg, hs := smallServer{registry: registry}.start(t)
				body, conn := rawSession(t, hs, version, uris)
				require.NoError(t, conn.SetReadDeadline(time.Now().Add(mcptest.WaitTimeout)))
				for _, uri := range uris {
					require.NoError(t, reg.Changed(uri))
					events[i] = append(events[i], nextUpdated(t, body))
				}
			}
			assert.Equal(t, events[1], events[0], "the registry's events, then go-sdk's")
			assert.Contains(t, events[0][1], `"uri":"big://r/x%26y"`)
		})
	}
}

// TestSessionStreamWithEventStore: where go-sdk numbers a session's
// events (an EventStore), the registry writes none itself: each
// resources/updated on the GET stream is go-sdk's, with its event ID.
func TestSessionStreamWithEventStore(t *testing.T) {
	t.Parallel()
	reg, hs := smallServer{registry: true,
		sdk: &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil), SessionTimeout: time.Hour}}.start(t)
	body, conn := rawSession(t, hs, "2025-11-25", []string{"big://r/7"})
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(mcptest.WaitTimeout)))
	require.NoError(t, reg.Changed("big://r/7"))
	assert.Regexp(t, `^event: message\nid: \S+\ndata: \{.*"uri":"big://r/7"`, nextUpdated(t, body))
}

// TestSessionStreamAfterMiddleware: a resources/updated that a sending
// middleware added after NewServer changed (here, a _meta) is go-sdk's
// to write, as changed, not the registry's.
func TestSessionStreamAfterMiddleware(t *testing.T) {
	t.Parallel()
	reg, hs := smallServer{registry: true, server: func(s *mcp.Server) {
		s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if p, ok := req.GetParams().(*mcp.ResourceUpdatedNotificationParams); ok {
					p.Meta = mcp.Meta{"trace": "t1"}
				}
				return next(ctx, method, req)
			}
		})
	}}.start(t)
	body, conn := rawSession(t, hs, "2025-11-25", []string{"big://r/7"})
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(mcptest.WaitTimeout)))
	require.NoError(t, reg.Changed("big://r/7"))
	assert.Contains(t, nextUpdated(t, body), `"_meta":{"trace":"t1"}`)
}

// nextUpdated returns the next resources/updated event on body, whole.
func nextUpdated(t *testing.T, body *bufio.Reader) string {
	t.Helper()
	var ev strings.Builder
	for {
		line, err := body.ReadString('\n')
		require.NoError(t, err, "event so far: %q", ev.String())
		ev.WriteString(line)
		if line == "\n" {
			if strings.Contains(ev.String(), protocol.NotificationResourceUpdated) {
				return ev.String()
			}
			ev.Reset() // a comment, or go-sdk's priming event
		}
	}
}
