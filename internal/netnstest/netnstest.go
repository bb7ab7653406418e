//go:build linux

// Package netnstest joins two network namespaces of a test's own with a
// veth pair, so that a test can cut a client's link without a FIN or an
// RST: what a client whose network vanished looks like to a server. The
// tests of package serve and of the mcpgo module use it. It needs root,
// ip(8) (iproute2) and nsenter(1) (util-linux); without them, Link skips
// the test.
package netnstest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// A NS is a network namespace, served by a thread of its own.
type NS struct {
	path string // of the namespace, for nsenter
	do   chan func()
}

// A Pair is two namespaces joined by a veth pair: the server's, at
// ServerAddr, and the client's, at 10.0.0.2.
type Pair struct {
	Server, Client *NS
}

// ServerAddr is the server's address in a Pair.
const ServerAddr = "10.0.0.1"

// Link returns two new namespaces, joined, with their links up; they end
// with t. It skips t where namespaces cannot be made.
func Link(t *testing.T) *Pair {
	t.Helper()
	p := &Pair{Server: newNS(t), Client: newNS(t)}
	p.Server.ip(t, "link", "add", "edge0", "type", "veth", "peer", "name", "client0", "netns", p.Client.path)
	p.Server.ip(t, "addr", "add", ServerAddr+"/30", "dev", "edge0")
	p.Server.ip(t, "link", "set", "edge0", "up")
	p.Client.ip(t, "addr", "add", "10.0.0.2/30", "dev", "client0")
	p.Client.ip(t, "link", "set", "client0", "up")
	return p
}

// Cut takes the client's end of the link down: from then on the packets
// of either side are dropped, and neither is told.
func (p *Pair) Cut(t *testing.T) { p.Client.ip(t, "link", "set", "client0", "down") }

// Listen listens on TCP at ServerAddr, on any port, in the server's
// namespace.
func (p *Pair) Listen(t *testing.T) net.Listener {
	t.Helper()
	var ln net.Listener
	var err error
	p.Server.Run(func() { ln, err = net.Listen("tcp", ServerAddr+":0") })
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// Dial dials from the client's namespace: a DialContext for an
// http.Transport.
func (p *Pair) Dial(ctx context.Context, network, addr string) (c net.Conn, err error) {
	p.Client.Run(func() { c, err = (&net.Dialer{}).DialContext(ctx, network, addr) })
	return c, err
}

// HTTPClient returns an HTTP client whose connections are dialed from the
// client's namespace, and a function that closes every connection it
// dialed: once the link is cut, call it before closing what would wait
// on them.
func (p *Pair) HTTPClient() (*http.Client, func()) {
	var mu sync.Mutex
	var conns []net.Conn
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := p.Dial(ctx, network, addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
		return c, err
	}}
	return &http.Client{Transport: tr}, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}
}

// newNS returns a new network namespace, which ends with t.
func newNS(t *testing.T) *NS {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	for _, tool := range []string{"ip", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("network namespaces need %s (iproute2, util-linux): %v", tool, err)
		}
	}
	n := &NS{do: make(chan func())}
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
	if err := <-errc; err != nil {
		t.Fatalf("unshare(CLONE_NEWNET): %v", err)
	}
	t.Cleanup(func() { close(n.do) })
	return n
}

// Run runs f in the namespace, on its thread.
func (n *NS) Run(f func()) {
	done := make(chan struct{})
	n.do <- func() { f(); close(done) }
	<-done
}

// ip runs ip(8) with args in the namespace.
func (n *NS) ip(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("nsenter", append([]string{"--net=" + n.path, "ip"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}
