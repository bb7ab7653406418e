package resource_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// The quiet stream a client of each era holds open to be told of changes
// (a 2025-11-25 session's GET stream, a 2026-07-28 subscriptions/listen)
// gets one SSE comment per quiet period of WithKeepAlive, and carries
// X-Accel-Buffering: no; an update on it starts the period again. On
// synctest's fake clock, with go-sdk's client and NewHTTPHandler talking
// through an in-process transport.
func TestHTTPKeepAlive(t *testing.T) {
	t.Parallel()
	const period = 10 * time.Second
	forEachEra(t, func(t *testing.T, version string) {
		s := newSubscriptions(t, nil)
		mem := &inMemory{h: resource.WithKeepAlive(resource.NewHTTPHandler(s.server, nil), period)}
		updates := make(chan string, 10)
		client := mcp.NewClient(&mcp.Implementation{Name: "watcher"}, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				updates <- req.Params.URI
			},
		})
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: "http://mcp.test/mcp", HTTPClient: &http.Client{Transport: mem}},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		require.NoError(t, err)
		defer cs.Close()
		require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "log://prod/api"}))
		synctest.Wait()
		stream := mem.stream(t)
		require.Equal(t, "text/event-stream", stream.header.Get("Content-Type"))
		require.Equal(t, "no", stream.header.Get("X-Accel-Buffering"))

		time.Sleep(period / 2)
		for n := 1; n <= 3; n++ {
			time.Sleep(period)
			synctest.Wait()
			require.Equal(t, n, stream.comments(), "comments after %d quiet periods", n)
		}
		// 3.5 periods: an update, which starts the quiet period again.
		require.NoError(t, s.reg.Changed("log://prod/api"))
		synctest.Wait()
		require.Equal(t, []string{"log://prod/api"}, drain(updates))
		time.Sleep(period * 3 / 4)
		synctest.Wait()
		require.Equal(t, 3, stream.comments(), "no comment a period after the last comment, with an update since")
		time.Sleep(period / 2)
		synctest.Wait()
		require.Equal(t, 4, stream.comments(), "a comment a period after the update")
		select {
		case err := <-s.listenErrors:
			t.Fatalf("listen refused: %v", err)
		default:
		}
	})
}

// drain returns what c holds now.
func drain[T any](c chan T) []T {
	var out []T
	for {
		select {
		case v := <-c:
			out = append(out, v)
		default:
			return out
		}
	}
}

// An inMemory is an http.RoundTripper that serves each request with h in
// the test's process, streaming the response to the client as h writes
// it: a go-sdk client talks to NewHTTPHandler inside a synctest bubble,
// where no connection can be made. It records each response, for the
// test to count the comments of the long-lived one.
type inMemory struct {
	h         http.Handler
	mu        sync.Mutex
	responses []*memResponse
}

// stream returns the one long-lived event stream served: a GET stream or
// a subscriptions/listen.
func (m *inMemory) stream(t *testing.T) *memResponse {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	var streams []*memResponse
	for _, r := range m.responses {
		if r.method == http.MethodGet || r.mcpMethod == protocol.MethodListen {
			streams = append(streams, r)
		}
	}
	require.Len(t, streams, 1, "long-lived event streams")
	return streams[0]
}

func (m *inMemory) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	sreq := req.Clone(ctx)
	sreq.RequestURI, sreq.RemoteAddr = req.URL.RequestURI(), "192.0.2.1:1234"
	pr, pw := io.Pipe()
	r := &memResponse{method: req.Method, mcpMethod: req.Header.Get(protocol.HeaderMethod), pending: http.Header{}, pw: pw, sent: make(chan struct{})}
	m.mu.Lock()
	m.responses = append(m.responses, r)
	m.mu.Unlock()
	go func() {
		defer cancel()
		m.h.ServeHTTP(r, sreq)
		r.WriteHeader(http.StatusOK) // if the handler wrote nothing
		pw.Close()
		if req.Body != nil {
			req.Body.Close()
		}
	}()
	select {
	case <-r.sent:
	case <-req.Context().Done():
		cancel()
		pr.Close()
		return nil, req.Context().Err()
	}
	return &http.Response{
		Status: http.StatusText(r.code), StatusCode: r.code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: r.header, ContentLength: -1, Request: req,
		Body: &memBody{PipeReader: pr, cancel: cancel},
	}, nil
}

// A memResponse is the http.ResponseWriter of one request to an inMemory.
type memResponse struct {
	method, mcpMethod string
	pending           http.Header // until sent
	pw                *io.PipeWriter

	mu     sync.Mutex
	sent   chan struct{} // closed once the header is written
	code   int
	header http.Header // as written
	writes []string
}

func (r *memResponse) Header() http.Header { return r.pending }

func (r *memResponse) WriteHeader(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writeHeader(code)
}

func (r *memResponse) writeHeader(code int) {
	if r.header == nil {
		r.code, r.header = code, r.pending.Clone()
		close(r.sent)
	}
}

func (r *memResponse) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.writeHeader(http.StatusOK)
	r.writes = append(r.writes, string(p))
	r.mu.Unlock()
	return r.pw.Write(p) // until the client reads it, as on a connection
}

func (r *memResponse) Flush() { r.WriteHeader(http.StatusOK) }

// comments returns the number of SSE comments written, but go-sdk's
// ": ok" at the start of a GET stream.
func (r *memResponse) comments() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, w := range r.writes {
		for line := range strings.Lines(w) {
			if strings.HasPrefix(line, ":") && line != ": ok\n" {
				n++
			}
		}
	}
	return n
}

// A memBody is the body of an inMemory response: closing it is hanging
// up, which cancels the request.
type memBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b *memBody) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}
