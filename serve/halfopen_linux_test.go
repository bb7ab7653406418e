package serve

// The tests of halfopen.go: the user timeout each server gives its
// connections, and an event stream whose client's link is cut, in
// network namespaces of the test's own, ended by it.

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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

// newNetns returns a new network namespace, which ends with t. It skips
// t where namespaces cannot be made.
func newNetns(t *testing.T) *netns {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	for _, tool := range []string{"ip", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("network namespaces need %s (iproute2, util-linux): %v", tool, err)
		}
	}
	n := &netns{do: make(chan func())}
	errc := make(chan error)
	go func() {
		// Never unlocked: the thread ends with the goroutine, and does not
		// carry the namespace to other goroutines.
		runtime.LockOSThread()
		if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		n.path = fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), syscall.Gettid())
		errc <- nil
		for f := range n.do {
			f()
		}
	}()
	require.NoError(t, <-errc, "unshare(CLONE_NEWNET)")
	t.Cleanup(func() { close(n.do) })
	return n
}

// run runs f in the namespace.
func (n *netns) run(f func()) {
	done := make(chan struct{})
	n.do <- func() { f(); close(done) }
	<-done
}

// ip runs ip(8) with args in the namespace.
func (n *netns) ip(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("nsenter", append([]string{"--net=" + n.path, "ip"}, args...)...).CombinedOutput()
	require.NoError(t, err, "ip %s: %s", strings.Join(args, " "), out)
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
	edge, far := newNetns(t), newNetns(t)
	edge.ip(t, "link", "add", "edge0", "type", "veth", "peer", "name", "client0", "netns", far.path)
	edge.ip(t, "addr", "add", "10.0.0.1/30", "dev", "edge0")
	edge.ip(t, "link", "set", "edge0", "up")
	far.ip(t, "addr", "add", "10.0.0.2/30", "dev", "client0")
	far.ip(t, "link", "set", "client0", "up")

	const keepAlive = 200 * time.Millisecond
	const slack = time.Second // halfOpenSlack, shortened
	o, err := (&Options{KeepAlive: keepAlive, Logger: slog.New(slog.DiscardHandler)}).withDefaults()
	require.NoError(t, err)

	// serveStreams serves a go-sdk server in edge, with the user timeout
	// d (0 for none), and connects a client to it from far. It returns
	// its GET streams.
	serveStreams := func(d time.Duration) *streams {
		h, err := o.handler(mcp.NewServer(&mcp.Implementation{Name: "edge", Version: "v0"}, nil))
		require.NoError(t, err)
		s := &streams{h: h, opened: make(chan struct{}, 10), done: make(chan struct{}, 10)}
		srv := o.server(s)
		srv.ConnContext = nil
		if d > 0 {
			srv.ConnContext = connContext(d)
		}
		var ln net.Listener
		edge.run(func() { ln, err = net.Listen("tcp", "10.0.0.1:0") })
		require.NoError(t, err)
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })

		var mu sync.Mutex
		var conns []net.Conn
		tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (c net.Conn, err error) {
			far.run(func() { c, err = (&net.Dialer{}).DialContext(ctx, network, addr) })
			if err == nil {
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
			return c, err
		}}
		transport := &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + o.Path,
			HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "far", Version: "v0"}, nil).
			Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err)
		t.Cleanup(func() {
			// The link is down: close the client's connections first, so
			// that Close does not wait on them.
			mu.Lock()
			for _, c := range conns {
				c.Close()
			}
			mu.Unlock()
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

	far.ip(t, "link", "set", "client0", "down")
	cut := time.Now()
	mcptest.Receive(t, timed.done, "end of the GET stream of the client cut off")
	elapsed := time.Since(cut)
	bound := 2*keepAlive + slack
	t.Logf("ended %v after the cut (bound %v)", elapsed.Round(time.Millisecond), bound)
	// The kernel's timers are coarse; a second more still tells this
	// apart from the 16 min without the user timeout.
	require.Less(t, elapsed, bound+time.Second, "the stream ended too late")
	select {
	case <-untimed.done:
		t.Fatal("the GET stream of the server without the user timeout ended too: the cut was not silent")
	default:
	}
}
