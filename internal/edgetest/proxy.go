package edgetest

// This file holds the reverse proxy of the keep-alive tests: one that
// cuts an event stream that has been quiet for proxyIdleTimeout, as a
// load balancer's idle timeout does.

import (
	"bytes"
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
	keepAlivePeriod  = 100 * time.Millisecond
)

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
