// Package mcptest helps the tests of an MCP server drive the server
// through the real protocol, as an MCP host does: in process, it connects
// a go-sdk client to a *mcp.Server at a given protocol version (Connect),
// or over streamable HTTP to any http.Handler, go-sdk's or mcp-go's
// (ConnectHandler); out of process, it builds the server's binary, connects a go-sdk client
// to it over stdio, starts it as a streamable HTTP server (StartHTTP, or
// StartServer for a server the test reads the log of, stops or restarts)
// and connects to that, with a bearer token if the server wants one. It
// lists every page of the server's resources, waits for the updates and
// list_changed a client is sent (Notifications), tells whether a server
// accepts a subscription in every protocol era (SubscribeHTTP; Versions
// names them), and audits a server's resources against the MCP
// specification (Audit, which runs package audit).
//
// Every helper takes the test's testing.TB, fails the test (with
// t.Fatal or an equivalent require call) when it cannot do its job, and
// registers cleanups that stop whatever it started. The server's stderr is
// logged when the test fails.
//
// Building the binary can take a while, up to a minute or so when the go
// command has nothing cached yet. If the build has not finished after two
// seconds, Build and RunWithBinary say on stderr what they are building,
// and then how long it took; a quicker build prints nothing. A test that
// does not need the server in a separate process does without the build:
// Connect serves a *mcp.Server in the test's own process, which is faster.
//
// A test in a server's main package:
//
//	func TestServer(t *testing.T) {
//		bin := mcptest.Build(t, ".")
//		cs := mcptest.Stdio(t, bin, []string{"-page-size", "10"}, "2025-11-25", nil)
//		resources, pages := mcptest.ListAll(t, cs)
//		// ... check resources and pages, read them with cs ...
//	}
package mcptest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// Build runs `go build` on the package in dir (a directory, such as "."
// in a test of the server's main package), in the module that holds dir,
// and returns the path of the binary, which it writes into t.TempDir(),
// named after dir. It fails t, with the build's output, if the build
// fails.
//
// If the build has not finished after two seconds, Build writes a line to
// os.Stderr saying what it builds, and another with the time it took once
// it is done. It does not use t.Log, whose output go test shows only once
// the test has ended: too late for someone wondering why nothing happens.
// go test passes stderr on as it comes when it tests the package in the
// current directory (plain `go test`), or with -json, or with -v and a
// single package; otherwise it holds it, and shows it for a passing
// package only with -v.
//
// A test that does not need the server in a separate process can use
// Connect instead, which needs no binary.
func Build(t testing.TB, dir string) string {
	t.Helper()
	bin, out, err := build(dir, t.TempDir(), os.Stderr, buildNoticeDelay)
	require.NoError(t, err, "go build:\n%s", out)
	return bin
}

// RunWithBinary builds the package in dir once for all of a package's
// tests, as Build does, sets *bin to the binary's path, runs the tests and
// removes the binary, returning m.Run's exit code. Call it from TestMain:
//
//	var bin string
//
//	func TestMain(m *testing.M) { os.Exit(mcptest.RunWithBinary(m, ".", &bin)) }
//
// As Build does, it says on os.Stderr what it builds, and then how long
// it took, if the build takes more than two seconds. If the build fails it
// prints the build's output to stderr and returns 1 without running the
// tests. Tests that do not need a separate process can use Connect
// instead, which needs no binary.
func RunWithBinary(m *testing.M, dir string, bin *string) int {
	tmp, err := os.MkdirTemp("", "mcptest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	path, out, err := build(dir, tmp, os.Stderr, buildNoticeDelay)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	*bin = path
	return m.Run()
}

// buildNoticeDelay is how long Build and RunWithBinary let `go build` run
// before they say what they are building.
const buildNoticeDelay = 2 * time.Second

// build builds the package in dir into outDir, naming the binary after
// dir, and returns its path and the build's output. If the build has not
// finished after delay (at once if delay <= 0), it writes to w a line
// saying what it builds, and another with the time the build took once it
// has ended; a quicker build writes nothing.
func build(dir, outDir string, w io.Writer, delay time.Duration) (bin string, out []byte, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(outDir, filepath.Base(abs))
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = abs
	var output bytes.Buffer
	cmd.Stdout = &output
	cmd.Stderr = &output
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return bin, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if delay > 0 {
		timer := time.NewTimer(delay)
		select {
		case err := <-done:
			timer.Stop()
			return bin, output.Bytes(), err
		case <-timer.C:
		}
	}
	what := abs
	if filepath.Clean(dir) != abs {
		what = dir + " (" + abs + ")"
	}
	fmt.Fprintf(w, "mcptest: building %s for the tests; a first build can take a minute...\n", what)
	err = <-done
	took := time.Since(start).Round(100 * time.Millisecond)
	if err != nil {
		fmt.Fprintf(w, "mcptest: building %s failed after %v\n", dir, took)
	} else {
		fmt.Fprintf(w, "mcptest: built %s in %v\n", dir, took)
	}
	return bin, output.Bytes(), err
}

// A Buffer collects a subprocess's output. It is safe for concurrent use:
// the process writes while the test reads.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p to b. It never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what has been written to b so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Stderr sets cmd.Stderr, before cmd starts, to a new Buffer, which it
// returns, and logs the Buffer with t.Logf when t ends if t has failed.
func Stderr(t testing.TB, cmd *exec.Cmd) *Buffer {
	stderr := new(Buffer)
	cmd.Stderr = stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr)
		}
	})
	return stderr
}

// Stdio starts bin with args, connects to it over stdio a client with opts
// (nil for none) that asks for protocol version, and returns the session.
// It does not check which version the server chose: see the session's
// InitializeResult. When t ends it closes the session, which closes the
// server's stdin and waits for it to exit, and fails t unless the server
// exits cleanly. It fails t if the client cannot connect. The server's
// stderr is logged if t fails.
func Stdio(t testing.TB, bin string, args []string, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, args...)
	Stderr(t, cmd)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptest", Version: "v0"}, opts)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() {
		// Closing stdin must make the server exit cleanly.
		require.NoError(t, cs.Close(), "server exit")
	})
	return cs
}

// StartHTTP picks a free loopback address, starts `bin args... -http
// addr`, waits until addr accepts connections and returns addr (host:port,
// without a scheme). It fails t if the server exits before it listens or
// does not listen within about ten seconds. When t ends it interrupts the
// server (os.Interrupt) and fails t unless the server then exits cleanly
// within ten seconds; if it does not, it kills it. The server's stderr is
// logged if t fails. StartServer does the same and returns the server,
// for a test that reads its log or stops it early.
func StartHTTP(t testing.TB, bin string, args ...string) string {
	t.Helper()
	return StartServer(t, bin, args...).Addr
}

// A Server is a server process StartServer started, serving streamable
// HTTP.
type Server struct {
	// Addr is the loopback address the server listens on: host:port.
	Addr string
	// Stderr holds what the server has written to its standard error so
	// far: its log.
	Stderr *Buffer

	t       testing.TB
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has exited
	waitErr error         // cmd.Wait's, once exited is closed
	stop    sync.Once
}

// StartServer starts `bin args... -http addr` on a free loopback address,
// as StartHTTP does, and returns the server once it accepts connections.
// It fails t as StartHTTP does, and stops the server when t ends unless
// the test stopped it before.
func StartServer(t testing.TB, bin string, args ...string) *Server {
	t.Helper()
	s := &Server{Addr: freeLoopbackAddr(t), t: t, exited: make(chan struct{})}
	s.cmd = exec.Command(bin, append(append([]string(nil), args...), "-http", s.Addr)...)
	s.Stderr = Stderr(t, s.cmd)
	require.NoError(t, s.cmd.Start())
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(s.Stop)
	waitForListener(t, s.Addr, s.exited, s.Stderr)
	return s
}

// URL returns the URL of path on the server: "http://" + Addr + path, such
// as s.URL("/mcp").
func (s *Server) URL(path string) string { return "http://" + s.Addr + path }

// Stop interrupts the server (os.Interrupt) and waits until it exits,
// failing the test unless it exits cleanly within ten seconds, after
// which it kills it. Later calls do nothing. A test stops a server early
// to restart it, or to read all it logged.
func (s *Server) Stop() {
	s.stop.Do(func() {
		if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
			s.cmd.Process.Kill()
		}
		select {
		case <-s.exited:
			if s.waitErr != nil {
				s.t.Errorf("server exit: %v", s.waitErr)
			}
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.exited
			s.t.Error("server did not stop on interrupt; killed it")
		}
	})
}

// Kill kills the server process at once (SIGKILL), as a crash or an
// out-of-memory kill would: requests in flight fail and connections
// drop. It waits until the process has gone; its exit status is not
// checked. Later calls, and Stop after it, do nothing.
func (s *Server) Kill() {
	s.stop.Do(func() {
		s.cmd.Process.Kill()
		<-s.exited
	})
}

// HTTPClient returns an HTTP client for a test of a streamable HTTP
// server: every request carries token in an "Authorization: Bearer"
// header, as from an MCP host configured with one (no header if token is
// ""), and its idle connections are closed when t ends, so that a server
// stopped afterwards is not kept waiting for them. A go-sdk client of
// 2026-07-28 or later that uses it ends a request (a call given up, a
// subscriptions/listen ended by Unsubscribe) only by closing the
// request's stream, as that version's transport says: HTTPClient
// answers the notifications/cancelled go-sdk posts after closing it
// with 202 Accepted, and does not send it (audit.HTTPTransport).
func HTTPClient(t testing.TB, token string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	if token == "" {
		return &http.Client{Transport: audit.HTTPTransport(tr)}
	}
	return &http.Client{Transport: audit.HTTPTransport(withHeader{"Authorization", "Bearer " + token, tr})}
}

// WithHeader returns a copy of c (http.DefaultClient if nil) whose every
// request carries the header key: value, replacing any the request has.
// A test plays several callers with it, behind an edge that names them
// by a header (serve.Options.ClientAddressHeader, say).
func WithHeader(c *http.Client, key, value string) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	copied := *c
	copied.Transport = withHeader{key, value, next}
	return &copied
}

// withHeader sends every request with one header set.
type withHeader struct {
	key, value string
	next       http.RoundTripper
}

func (h withHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(h.key, h.value)
	return h.next.RoundTrip(req)
}

// ConnectHTTP connects a go-sdk client with opts (nil for none) to the
// streamable HTTP endpoint url (such as "http://" + the address StartHTTP
// returns), over HTTPClient's client with token, and asking for protocol
// version; it returns the session, which is closed when t ends. It does
// not check which version the server chose. It fails t if the client
// cannot connect. A 2026-07-28 session stays usable after Unsubscribe
// ends a listen, on a server that would refuse go-sdk's
// notifications/cancelled (see HTTPClient).
func ConnectHTTP(t testing.TB, url, token, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptest", Version: "v0"}, opts)
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: HTTPClient(t, token)}
	cs, err := client.Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err, "connecting to %s", url)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// freeLoopbackAddr returns a loopback address with a port no one listens
// on, for a server process to listen on. The port is below the kernel's
// range of ephemeral ports (32768 and up on Linux), from which every
// outgoing connection and every listen on port 0 takes one: a port
// picked there and closed again can be taken by another process before
// the server listens, one picked here only by another explicit choice.
func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	return FreePort(t)
}

// FreePort returns "127.0.0.1:P", P a port between 20000 and 32767 that
// no one listens on when it returns: for a server process a test starts
// and tells its port. It fails t if it finds none in 100 tries.
func FreePort(t testing.TB) string {
	t.Helper()
	for range 100 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(20000+rand.IntN(12768)))
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
	t.Fatal("mcptest: no free port between 20000 and 32767 in 100 tries")
	return ""
}

// waitForListener waits, for at most about ten seconds, until addr accepts
// connections. It fails t if the server exits first, that is if exited is
// closed.
func waitForListener(t testing.TB, addr string, exited <-chan struct{}, stderr *Buffer) {
	t.Helper()
	var d net.Dialer
	for range 100 {
		select {
		case <-exited:
			t.Fatalf("server exited before listening:\n%s", stderr)
		default:
		}
		dialCtx, cancel := context.WithTimeout(t.Context(), time.Second)
		conn, err := d.DialContext(dialCtx, "tcp", addr)
		cancel()
		if err == nil {
			conn.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("server did not listen on %s", addr)
}

// maxPages is the most pages ListPages reads before it decides that the
// server's cursors never end. It is a variable only so that the package's
// test of the limit can lower it (export_test.go).
var maxPages = 10_000

// ListPages calls resources/list, following NextCursor until it is empty,
// and returns each page's resources in order. It fails t if a call fails,
// if the server returns a cursor it returned before, or if there are more
// than 10,000 pages.
func ListPages(t testing.TB, cs *mcp.ClientSession) [][]*mcp.Resource {
	t.Helper()
	var pages [][]*mcp.Resource
	seen := make(map[string]bool)
	params := &mcp.ListResourcesParams{}
	for {
		res, err := cs.ListResources(t.Context(), params)
		require.NoError(t, err, "resources/list, page %d", len(pages)+1)
		pages = append(pages, res.Resources)
		if res.NextCursor == "" {
			return pages
		}
		require.False(t, seen[res.NextCursor], "resources/list: page %d repeats cursor %q", len(pages), res.NextCursor)
		require.Less(t, len(pages), maxPages, "resources/list: too many pages")
		seen[res.NextCursor] = true
		params = &mcp.ListResourcesParams{Cursor: res.NextCursor}
	}
}

// ListAll lists every page of resources/list, as ListPages does, and
// returns the resources of all pages, in order, and the number of pages.
// It fails t as ListPages does.
func ListAll(t testing.TB, cs *mcp.ClientSession) (resources []*mcp.Resource, pages int) {
	t.Helper()
	all := ListPages(t, cs)
	for _, page := range all {
		resources = append(resources, page...)
	}
	return resources, len(all)
}

// WaitLog waits until the server's stderr holds substr, for at most ten
// seconds, and returns all it has written so far; it fails the test if
// substr does not come. A server logs on its own time: StartServer returns
// once the server accepts connections, which may be before its start-up
// lines are written.
func (s *Server) WaitLog(substr string) string {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := s.Stderr.String()
		if strings.Contains(out, substr) {
			return out
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("mcptest: no %q in the server's log within 10s:\n%s", substr, out)
		}
		select {
		case <-s.exited:
			s.t.Fatalf("mcptest: the server exited without logging %q:\n%s", substr, s.Stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// ContinueWalk goes on with a resources/list walk on cs from first, a page
// a client was given before, by this server or by another (a replica, or
// the same server before a restart): it asks cs for the page after
// first.NextCursor and returns the server's error if it refuses the
// cursor. If it accepts it, ContinueWalk follows the walk to its end and
// checks that first's resources and the rest, in order, are what a walk
// from the start lists on cs: nothing skipped, nothing twice. It fails t
// if first is the last page, if a later page fails, or if the walks
// differ.
func ContinueWalk(t testing.TB, cs *mcp.ClientSession, first *mcp.ListResourcesResult) error {
	t.Helper()
	require.NotEmpty(t, first.NextCursor, "mcptest.ContinueWalk: the first page is the last")
	page, err := cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: first.NextCursor})
	if err != nil {
		return err
	}
	walk := append(slices.Clone(first.Resources), page.Resources...)
	for n := 0; page.NextCursor != ""; n++ {
		require.Less(t, n, maxPages, "mcptest.ContinueWalk: more than %d pages", maxPages)
		page, err = cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: page.NextCursor})
		require.NoError(t, err, "mcptest.ContinueWalk: a later page")
		walk = append(walk, page.Resources...)
	}
	all, _ := ListAll(t, cs)
	require.Equal(t, uris(all), uris(walk), "mcptest.ContinueWalk: the walk that went on differs from one from the start")
	return nil
}

// uris returns the URIs of resources, in order.
func uris(resources []*mcp.Resource) []string {
	out := make([]string, len(resources))
	for i, r := range resources {
		out[i] = r.URI
	}
	return out
}
