package serve

// The tests of halfopen.go: the user timeout each server gives its
// connections, and an event stream whose client's link is cut, in
// network namespaces of the test's own, ended by it.

import (
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/mcpres/mcpres/internal/netnstest"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// userTimeoutOf returns the TCP user timeout of c.
func userTimeoutOf(t *testing.T, c net.Conn) time.Duration {
	t.Helper()
	rc, err := tcpConn(c).SyscallConn()
	require.NoError(t, err)
	var ms int
	var serr error
	require.NoError(t, rc.Control(func(fd uintptr) {
		ms, serr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout)
	}))
	require.NoError(t, serr)
	return time.Duration(ms) * time.Millisecond
}

// Every server NewServer makes gives each connection it accepts, bare or
// beneath TLS, a user timeout of KeepAlive plus 30 s; Serve and the
// others serve through such a server.
func TestUserTimeout(t *testing.T) {
	for _, tc := range []struct {
		name      string
		keepAlive time.Duration
		want      time.Duration
	}{
		{"default keep-alive", 0, DefaultKeepAlive + 30*time.Second},
		{"short keep-alive", 200 * time.Millisecond, 30*time.Second + 200*time.Millisecond},
		{"no comments", -1, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := NewServer(http.NotFoundHandler(), &Options{KeepAlive: tc.keepAlive})
			require.NoError(t, err)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			client, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			defer client.Close()
			c, err := ln.Accept()
			require.NoError(t, err)
			defer c.Close()

			require.Zero(t, userTimeoutOf(t, c), "%s: the kernel's default, before ConnContext", tc.name)
			srv.ConnContext(t.Context(), tls.Server(c, &tls.Config{}))
			require.Equal(t, tc.want, userTimeoutOf(t, c), "%s: beneath TLS", tc.name)
		})
	}
}

// A netns is a network namespace of the test's own: unshare(2) made it
// for a thread that stays in it and runs what the test asks there.
type netns struct {
	path string // of the namespace, for nsenter
	do   chan func()
}

// streams is a handler that reports each GET request, an event stream,
// as it starts and as its handler returns.
type streams struct {
	h            http.Handler
	opened, done chan struct{}
}

func (s *streams) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodGet {
		s.opened <- struct{}{}
		defer func() { s.done <- struct{}{} }()
	}
	s.h.ServeHTTP(w, req)
}

// A client that vanishes without a word, its link cut, has its GET
// stream ended within 2×KeepAlive plus the slack of the user timeout. A
// server without the user timeout keeps the same stream open: the cut
// sends neither FIN nor RST.
//
// The server and the client are in two network namespaces, joined by a
// veth pair; the cut takes the client's end down, so that the packets
// of either side are dropped. The clock is the real one: the kernel's
// timers end the connection.
func TestHalfOpenStreamEnds(t *testing.T) {
	link := netnstest.Link(t)
	const keepAlive = 200 * time.Millisecond
	const slack = time.Second // halfOpenSlack, shortened
	o, err := (&Options{KeepAlive: keepAlive, UserTimeout: keepAlive + slack, Logger: slog.New(slog.DiscardHandler)}).withDefaults()
	require.NoError(t, err)

	// serveStreams serves a go-sdk server in the server's namespace, with
	// the user timeout o gives (d), or none (d 0), and connects a client
	// to it from the client's. It returns its GET streams.
	serveStreams := func(d time.Duration) *streams {
		h, err := o.handler(mcp.NewServer(&mcp.Implementation{Name: "edge", Version: "v0"}, nil))
		require.NoError(t, err)
		s := &streams{h: h, opened: make(chan struct{}, 10), done: make(chan struct{}, 10)}
		srv := o.server(s)
		if d == 0 {
			srv.ConnContext = nil
		}
		ln := link.Listen(t)
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })

		client, closeConns := link.HTTPClient()
		transport := &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + o.Path,
			HTTPClient: client, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "far", Version: "v0"}, nil).
			Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err)
		t.Cleanup(func() {
			// The link is down: close the client's connections first, so
			// that Close does not wait on them.
			closeConns()
			cs.Close()
		})
		mcptest.Receive(t, s.opened, "GET stream")
		return s
	}
	timed := serveStreams(keepAlive + slack)
	untimed := serveStreams(0)

	// A few comments pass, and are acknowledged, before the cut: the user
	// timeout must not end a healthy stream. Real clock: the kernel's TCP
	// timers and a network namespace cannot join a synctest bubble.
	time.Sleep(3 * keepAlive)
	for name, s := range map[string]*streams{"with": timed, "without": untimed} {
		select {
		case <-s.done:
			t.Fatalf("the GET stream of the server %s the user timeout ended before the cut", name)
		default:
		}
	}

	link.Cut(t)
	cut := time.Now()
	mcptest.Receive(t, timed.done, "end of the GET stream of the client cut off")
	elapsed := time.Since(cut)
	bound := 2*keepAlive + slack
	t.Logf("ended %v after the cut (bound %v)", elapsed.Round(time.Millisecond), bound)
	// The kernel checks the user timeout when a retransmission timer
	// fires, and those back off (0.2, 0.4, 0.8, 1.6 s on a veth pair): a
	// few seconds more still tell this apart from the 16 min without it.
	require.Less(t, elapsed, bound+3*time.Second, "the stream ended too late")
	select {
	case <-untimed.done:
		t.Fatal("the GET stream of the server without the user timeout ended too: the cut was not silent")
	default:
	}
}
