package serve_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// The proxy tests' idle timeout, and the keep-alive period, well below
// it, that keeps streams open through it. They are real time: the
// tests wait for events (comments passed, a stream cut, an update),
// never for a time.
const (
	proxyIdleTimeout = 500 * time.Millisecond
	testKeepAlive    = 100 * time.Millisecond
)

// Through a reverse proxy that closes an event stream quiet for
// proxyIdleTimeout, as a load balancer does, the stream a client of each
// era holds open to be told of changes (a 2025-11-25 session's GET
// stream, a 2026-07-28 subscriptions/listen) stays open past that
// timeout with KeepAlive shorter: more comments pass than fit in it, the
// proxy cuts nothing, the client opens no other stream, and then the
// update of a change arrives.
func TestKeepAliveThroughProxy(t *testing.T) {
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			s := newTestServer(t)
			p := startProxy(t, startHandler(t, s.Server, &serve.Options{KeepAlive: testKeepAlive}).URL)
			// Updates only: a 2026-07-28 client would listen for
			// list_changed on a stream of its own.
			updates := make(chan string, 10)
			cs := mcptest.ConnectHTTP(t, p.url+serve.DefaultPath, "", version, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
					updates <- req.Params.URI
				},
			})
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: helloURI}))
			stream := mcptest.Receive(t, p.opened, "the long-lived event stream, through the proxy")
			require.Equal(t, "no", stream.header.Get("X-Accel-Buffering"))

			// Each comment comes after testKeepAlive with nothing passed,
			// so these span more than the proxy's idle timeout.
			for range proxyIdleTimeout/testKeepAlive + 1 {
				mcptest.Receive(t, stream.comments, "a keep-alive comment through the proxy")
			}
			require.NoError(t, s.reg.Changed(helloURI))
			require.Equal(t, helloURI, mcptest.Receive(t, updates, "the update"))

			select {
			case <-stream.cut:
				t.Fatal("the proxy cut the stream as idle")
			case again := <-p.opened:
				t.Fatalf("the client opened another long-lived stream: %s %s", again.method, again.mcpMethod)
			default:
			}
		})
	}
}

// The control: with the comments turned off, the proxy cuts the quiet
// stream, on which no comment passed.
func TestNoKeepAliveThroughProxyIsCut(t *testing.T) {
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			s := newTestServer(t)
			off := func(h http.Handler) http.Handler { return resource.WithKeepAlive(h, -1) }
			p := startProxy(t, startHandler(t, s.Server, &serve.Options{KeepAlive: testKeepAlive, Wrap: off}).URL)
			cs := mcptest.ConnectHTTP(t, p.url+serve.DefaultPath, "", version, nil)
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: helloURI}))
			stream := mcptest.Receive(t, p.opened, "the long-lived event stream, through the proxy")
			require.Equal(t, "no", stream.header.Get("X-Accel-Buffering"), "the header stays")
			mcptest.Receive(t, stream.cut, "the proxy's cut of the quiet stream")
			require.Empty(t, stream.comments, "keep-alive comments")
			if version < protocol.SessionlessSince {
				// The session's client, cut off, opens its GET stream
				// again; what was sent in between is lost. (go-sdk
				// v1.8's 2026-07-28 client does not listen again: its
				// Subscribe to the URI has ended for good.)
				mcptest.Receive(t, p.opened, "the GET stream, opened again after the cut")
			}
		})
	}
}

// A proxy is an httputil.ReverseProxy in front of a server, whose
// transport closes an event stream on which nothing has come from the
// server for proxyIdleTimeout: the proxy then aborts the response to the
// client, and the connection to the server is closed, as when a load
// balancer's idle timeout cuts a stream.
type proxy struct {
	url    string
	opened chan *proxiedStream // each long-lived event stream, as it opens
}

// startProxy starts a proxy in front of the server at backend, closed
// when t ends.
func startProxy(t *testing.T, backend string) *proxy {
	t.Helper()
	target, err := url.Parse(backend)
	require.NoError(t, err)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	p := &proxy{opened: make(chan *proxiedStream, 10)}
	rp := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: &idleCutter{next: tr, opened: p.opened},
		ErrorLog:  log.New(io.Discard, "", 0),
	}
	ps := httptest.NewServer(rp)
	t.Cleanup(ps.Close)
	p.url = ps.URL
	return p
}

// An idleCutter is the proxy's transport: it cuts each event stream the
// server answers with once it has been quiet for proxyIdleTimeout.
type idleCutter struct {
	next   http.RoundTripper
	opened chan<- *proxiedStream
}

func (c *idleCutter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	s := &proxiedStream{
		method: req.Method, mcpMethod: req.Header.Get(protocol.HeaderMethod), header: resp.Header,
		body: resp.Body, comments: make(chan struct{}, 1000), cut: make(chan struct{}),
	}
	s.timer = time.AfterFunc(proxyIdleTimeout, s.cutIdle)
	resp.Body = s
	if s.method == http.MethodGet || s.mcpMethod == protocol.MethodListen {
		c.opened <- s
	}
	return resp, nil
}

// A proxiedStream is the body of an event stream passing through the
// proxy.
type proxiedStream struct {
	method, mcpMethod string
	header            http.Header
	body              io.ReadCloser
	comments          chan struct{} // one per keep-alive comment passed
	cut               chan struct{} // closed once the proxy cut the stream as idle

	mu    sync.Mutex
	timer *time.Timer
	done  bool   // cut or closed
	line  []byte // the line being passed
}

func (s *proxiedStream) Read(p []byte) (int, error) {
	n, err := s.body.Read(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n > 0 && !s.done {
		s.timer.Reset(proxyIdleTimeout)
	}
	for _, b := range p[:n] {
		if b != '\n' {
			s.line = append(s.line, b)
			continue
		}
		if bytes.HasPrefix(s.line, []byte(": keepalive")) {
			s.comments <- struct{}{}
		}
		s.line = s.line[:0]
	}
	return n, err
}

func (s *proxiedStream) Close() error {
	s.mu.Lock()
	s.done = true
	s.timer.Stop()
	s.mu.Unlock()
	return s.body.Close()
}

// cutIdle closes the stream, which has been quiet for proxyIdleTimeout:
// the proxy's read fails, and it aborts the client's response.
func (s *proxiedStream) cutIdle() {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.done = true
	close(s.cut)
	s.mu.Unlock()
	s.body.Close()
}
