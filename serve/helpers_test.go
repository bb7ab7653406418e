package serve_test

// Helpers the tests of the edge share: a registry's server to put behind
// it, clients that record what they are notified of, and the decoding of
// the edge's refusals.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allVersions are the protocol versions a server made with the library
// serves.
var allVersions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// guarded returns go-sdk's handler for every era of server, with sdkOpts,
// behind Guard with opts (nil for the defaults). Its refusals are not
// logged unless opts names a Logger.
func guarded(t *testing.T, server *mcp.Server, opts *serve.Options, sdkOpts *mcp.StreamableHTTPOptions) http.Handler {
	t.Helper()
	var o serve.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	h, err := serve.Guard(serve.NewGoSDKHandler(server, sdkOpts), &o)
	require.NoError(t, err)
	return h
}

// startGuarded serves guarded(t, server, opts, sdkOpts) on a loopback
// port, at every path, until t ends, and returns its URL.
func startGuarded(t *testing.T, server *mcp.Server, opts *serve.Options, sdkOpts *mcp.StreamableHTTPOptions) string {
	t.Helper()
	hs := httptest.NewServer(guarded(t, server, opts, sdkOpts))
	t.Cleanup(hs.Close)
	return hs.URL
}

// eraRegistry is a registry with a static resource, docs://readme, and a
// template whose instances exist for ids 1 to 9, db://users/{id}, served
// by a server made with NewServer. The registry is closed when t ends.
func eraRegistry(t *testing.T) (*resource.Registry, *mcp.Server) {
	t.Helper()
	reg, err := resource.NewRegistry(&resource.Options{Logger: quietLogger(),
		Subscriptions: resource.SubscriptionOptions{Window: time.Millisecond}, ListChangedDelay: time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://readme", Name: "readme"}, resource.Text("hello")))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"},
		func(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
			return nil, resource.ErrNotFound
		},
		resource.WithExists(func(_ context.Context, vars resource.Vars) (bool, error) {
			id := vars.Get("id")
			return len(id) == 1 && id >= "1" && id <= "9", nil
		})))
	server, err := reg.NewServer(&mcp.Implementation{Name: "eras", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	return reg, server
}

// httpWatcher is a client over streamable HTTP that records what it is
// notified of.
type httpWatcher struct {
	session *mcp.ClientSession
	updates chan string
	listed  chan struct{}
}

// connectHTTPWatcher connects a watcher at version to the streamable HTTP
// endpoint url.
func connectHTTPWatcher(t *testing.T, url, version string) *httpWatcher {
	t.Helper()
	w := &httpWatcher{updates: make(chan string, 100), listed: make(chan struct{}, 100)}
	w.session = mcptest.ConnectHTTP(t, url, "", version, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			w.updates <- req.Params.URI
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			w.listed <- struct{}{}
		},
	})
	require.Equal(t, version, w.session.InitializeResult().ProtocolVersion)
	return w
}

// sessions counts the sessions server holds.
func sessions(server *mcp.Server) int {
	n := 0
	for range server.Sessions() {
		n++
	}
	return n
}

// rpcError returns the JSON-RPC error inside err, failing t if there is
// none.
func rpcError(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	require.Error(t, err)
	var jerr *jsonrpc.Error
	require.True(t, errors.As(err, &jerr), "error %v (%T) is not a JSON-RPC error", err, err)
	return jerr
}

// errorWithoutID returns the error of body, a JSON-RPC error response
// without id, as the transport allows an HTTP refusal to carry; it fails
// t if body is not one. (go-sdk's jsonrpc.DecodeMessage refuses a
// response without id.)
func errorWithoutID(t *testing.T, body []byte) *jsonrpc.Error {
	t.Helper()
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &fields), "%s", body)
	assert.NotContains(t, fields, "id", "a JSON-RPC error response that has no id: %s", body)
	assert.JSONEq(t, `"2.0"`, string(fields["jsonrpc"]), "%s", body)
	var jerr jsonrpc.Error
	require.NoError(t, json.Unmarshal(fields["error"], &jerr), "%s", body)
	return &jerr
}

// An inMemory is an http.RoundTripper that serves each request with h in
// the test's process, streaming the response to the client as h writes
// it: a go-sdk client talks to the edge inside a synctest bubble,
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
