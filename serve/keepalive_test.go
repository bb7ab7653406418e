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
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// The proxy tests' idle timeout, and the keep-alive period, well below
// it, that keeps streams open through it. They are real time: the
// tests wait for events (comments passed, a stream cut, an update),
// never for a time. The margin between them is what a loaded machine
// may stall the server or the proxy for without the proxy cutting a
// stream that got its comments: on two busy cores under the race
// detector, stalls of several hundred milliseconds happen.
const (
	proxyIdleTimeout = time.Second
	testKeepAlive    = 100 * time.Millisecond
)

// Through a reverse proxy that closes an event stream quiet for
// proxyIdleTimeout (1 s here; 60 s, commonly, for a load balancer), the
// stream a client of each era holds open to be told of changes (a
// 2025-11-25 session's GET stream, a 2026-07-28 subscriptions/listen)
// stays open past that timeout with KeepAlive shorter: more comments
// pass than fit in it, the proxy cuts nothing, the client opens no other
// stream, and then the update of a change arrives.
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
				stream.await(t, stream.comments, "a keep-alive comment through the proxy")
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
			p := startProxy(t, startHandler(t, s.Server, &serve.Options{KeepAlive: -1}).URL)
			cs := mcptest.ConnectHTTP(t, p.url+serve.DefaultPath, "", version, nil)
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: helloURI}))
			stream := mcptest.Receive(t, p.opened, "the long-lived event stream, through the proxy")
			require.Equal(t, "no", stream.header.Get("X-Accel-Buffering"), "the header stays")
			stream.await(t, stream.cut, "the proxy's cut of the quiet stream")
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
		ErrorLog:  log.New(testLog{t}, "proxy: ", 0),
	}
	ps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// The proxy reads the whole request before it forwards it, as
		// nginx does (proxy_request_buffering). Streamed, the body would
		// race: net/http's server drains and closes it once the proxy
		// writes the response's header, and http.Transport reads it once
		// more after its declared length, which then fails and breaks
		// the connection to the server when the server answered first
		// (golang/go#40747).
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out := req.Clone(req.Context())
		out.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, out)
	}))
	t.Cleanup(ps.Close)
	p.url = ps.URL
	return p
}

// A testLog writes to t's log, for the proxy's errors: the read error
// of each stream it cuts, say.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
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
		body: resp.Body, comments: make(chan struct{}, 1000), cut: make(chan struct{}), ended: make(chan struct{}),
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
	ended             chan struct{} // closed once the proxy closed the stream otherwise

	mu     sync.Mutex
	timer  *time.Timer
	done   bool   // cut or closed
	line   []byte // the line being passed
	passed []byte // everything passed, for a failure to show
	err    error  // the stream's last read error
}

// await waits for a value from c, failing t, with what the stream passed,
// if the stream is cut or ends otherwise first, or nothing comes within
// mcptest.WaitTimeout.
func (s *proxiedStream) await(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	timer := time.NewTimer(mcptest.WaitTimeout)
	defer timer.Stop()
	var cut <-chan struct{} = s.cut
	if c == cut {
		cut = nil
	}
	select {
	case <-c:
		return
	case <-cut:
		t.Errorf("the proxy cut the stream as idle before %s", what)
	case <-s.ended:
		select {
		case <-c:
			return
		default:
		}
		t.Errorf("the stream ended before %s", what)
	case <-timer.C:
		t.Errorf("no %s within %v", what, mcptest.WaitTimeout)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Fatalf("the stream (%s %s) passed %q, last read error %v", s.method, s.mcpMethod, s.passed, s.err)
}

func (s *proxiedStream) Read(p []byte) (int, error) {
	n, err := s.body.Read(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n > 0 && !s.done {
		s.timer.Reset(proxyIdleTimeout)
	}
	s.passed = append(s.passed, p[:n]...)
	if err != nil {
		s.err = err
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
	if !s.done {
		s.done = true
		s.timer.Stop()
		close(s.ended)
	}
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

// The quiet stream a client of each era holds open to be told of changes
// (a 2025-11-25 session's GET stream, a 2026-07-28 subscriptions/listen)
// gets one SSE comment per quiet period of Options.KeepAlive, and carries
// X-Accel-Buffering: no; an update on it starts the period again. On
// synctest's fake clock, with go-sdk's client and the edge talking
// through an in-process transport.
func TestKeepAliveEveryEra(t *testing.T) {
	const period = 10 * time.Second
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { keepAliveEveryEra(t, version, period) })
		})
	}
}

// keepAliveEveryEra is TestKeepAliveEveryEra for a client of
// version, in a bubble.
func keepAliveEveryEra(t *testing.T, version string, period time.Duration) {
	s := newTestServer(t)
	listenErrors := make(chan error, 10)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == protocol.MethodListen && err != nil {
				listenErrors <- err
			}
			return res, err
		}
	})
	mem := &inMemory{h: guarded(t, s.Server, &serve.Options{KeepAlive: period}, nil)}
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
	require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: helloURI}))
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
	require.NoError(t, s.reg.Changed(helloURI))
	synctest.Wait()
	require.Equal(t, []string{helloURI}, drain(updates))
	time.Sleep(period * 3 / 4)
	synctest.Wait()
	require.Equal(t, 3, stream.comments(), "no comment a period after the last comment, with an update since")
	time.Sleep(period / 2)
	synctest.Wait()
	require.Equal(t, 4, stream.comments(), "a comment a period after the update")
	select {
	case err := <-listenErrors:
		t.Fatalf("listen refused: %v", err)
	default:
	}
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
