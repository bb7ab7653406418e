package serve_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// versions are the protocol versions of the tests' clients: one of each
// era, a stateful session and stateless requests.
var versions = []string{protocol.Version20251125, protocol.Version20260728}

const (
	helloURI = "test://hello"
	// slowURI is read by a function that waits for its context to end.
	slowURI = "test://slow"
)

// A testServer is a go-sdk server of a registry, reg, that holds
// helloURI and slowURI.
type testServer struct {
	*mcp.Server
	reg     *resource.Registry
	started chan struct{} // a read of slowURI has started
	ended   chan error    // and ended, with its context's cause (nil if not cancelled)
}

// newTestServer returns a testServer, whose registry is closed when t
// ends.
func newTestServer(t *testing.T) *testServer {
	t.Helper()
	s := &testServer{started: make(chan struct{}, 1), ended: make(chan error, 1)}
	reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, reg.Add(&mcp.Resource{URI: helloURI, Name: "hello", MIMEType: "text/plain"}, resource.Text("hello")))
	require.NoError(t, reg.Add(&mcp.Resource{URI: slowURI, Name: "slow"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			s.started <- struct{}{}
			select {
			case <-ctx.Done():
				s.ended <- context.Cause(ctx)
				return nil, ctx.Err()
			case <-t.Context().Done(): // the read was not cancelled
				s.ended <- nil
				return nil, t.Context().Err()
			}
		}))
	s.reg = reg
	s.Server, err = reg.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	require.NoError(t, err)
	return s
}

// readHello reads helloURI through cs, and checks what it gets.
func readHello(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: helloURI})
	require.NoError(t, err)
	require.Len(t, res.Contents, 1)
	require.Equal(t, "hello", res.Contents[0].Text)
}

// requireStatus checks that a POST of a ping without a token, to each of
// paths on the server at base (http://host:port), gets the status want.
func requireStatus(t *testing.T, want int, base string, paths ...string) {
	t.Helper()
	client := mcptest.HTTPClient(t, "")
	for _, path := range paths {
		resp, err := client.Post(base+path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		require.NoError(t, err, path)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, path)
	}
}

// startHandler serves the Handler of server and opts on a loopback port,
// until t ends.
func startHandler(t *testing.T, server *mcp.Server, opts *serve.Options) *httptest.Server {
	t.Helper()
	h, err := serve.Handler(server, opts)
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close) // once t.Context() is done, which ends any read left
	return ts
}

// The handler serves clients of each era at /mcp, and nothing else.
func TestHandler(t *testing.T) {
	ts := startHandler(t, newTestServer(t).Server, nil)

	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			cs := mcptest.ConnectHTTP(t, ts.URL+serve.DefaultPath, "", version, nil)
			require.Equal(t, version, cs.InitializeResult().ProtocolVersion)
			readHello(t, cs)
		})
	}
	requireStatus(t, http.StatusNotFound, ts.URL, "/", "/mcp/", "/mcpx", "/other", "/MCP")
}

// Options.Path moves the endpoint; the default path is then 404.
func TestHandlerPath(t *testing.T) {
	ts := startHandler(t, newTestServer(t).Server, &serve.Options{Path: "/api/mcp"})

	readHello(t, mcptest.ConnectHTTP(t, ts.URL+"/api/mcp", "", protocol.Version20260728, nil))
	requireStatus(t, http.StatusNotFound, ts.URL, "/mcp", "/api", "/api/mcp/")
}

// A client of each era that cancels a read cancels the read function's
// context: a 2026-07-28 client by ending its HTTP request (which takes
// StreamableHTTPOptions.PropagateRequestCancellation), an older one with
// notifications/cancelled in its session.
func TestHandlerCancelledRead(t *testing.T) {
	s := newTestServer(t)
	ts := startHandler(t, s.Server, nil)

	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			cs := mcptest.ConnectHTTP(t, ts.URL+serve.DefaultPath, "", version, nil)
			ctx, cancel := context.WithCancel(t.Context())
			go func() {
				<-s.started
				cancel()
			}()
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: slowURI})
			require.ErrorIs(t, err, context.Canceled)
			require.Error(t, mcptest.Receive(t, s.ended, "cancellation of the read function's context"))
		})
	}
}

// Options.Wrap wraps the endpoint alone: other paths are 404 before it.
func TestHandlerWrap(t *testing.T) {
	const token = "secret"
	var wrapped int
	ts := startHandler(t, newTestServer(t).Server, &serve.Options{Wrap: func(next http.Handler) http.Handler {
		wrapped++
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Header.Get("Authorization") != "Bearer "+token {
				http.Error(w, "no token", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, req)
		})
	}})
	require.Equal(t, 1, wrapped, "Wrap called once")

	readHello(t, mcptest.ConnectHTTP(t, ts.URL+serve.DefaultPath, token, protocol.Version20260728, nil))
	requireStatus(t, http.StatusUnauthorized, ts.URL, serve.DefaultPath)
	requireStatus(t, http.StatusNotFound, ts.URL, "/", "/other")
}

// The endpoint refuses a 2026-07-28 request whose request-metadata
// headers do not match its body with 400 and -32020 HeaderMismatch (each
// rule is tested in metadata_test.go), and serves one whose headers
// match.
func TestHandlerRequestMetadata(t *testing.T) {
	ts := startHandler(t, newTestServer(t).Server, nil)
	client := mcptest.HTTPClient(t, "")
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + helloURI + `","_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	post := func(version, name string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL+serve.DefaultPath, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(protocol.HeaderMethod, protocol.MethodRead)
		req.Header.Set(protocol.HeaderName, name)
		if version != "" {
			req.Header.Set(protocol.HeaderProtocolVersion, version)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var b bytes.Buffer
		_, err = b.ReadFrom(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, b.String()
	}
	status, answer := post(protocol.Version20260728, helloURI)
	require.Equal(t, http.StatusOK, status, answer)
	require.Contains(t, answer, `"text":"hello"`)
	for what, req := range map[string][2]string{
		"another Mcp-Name":              {protocol.Version20260728, "test://other"},
		"an older Mcp-Protocol-Version": {protocol.Version20251125, helloURI},
		"no Mcp-Protocol-Version":       {"", helloURI},
	} {
		status, answer := post(req[0], req[1])
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", what, answer)
		require.Contains(t, answer, `"code":-32020`, what)
	}
}

// withOrigin is an http.RoundTripper that sends an Origin header, as a
// browser does for a web page, and keeps the status and Content-Type of
// the last answer.
type withOrigin struct {
	origin string
	mu     sync.Mutex
	last   []string // status code and Content-Type
}

func (o *withOrigin) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Origin", o.origin)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		o.mu.Lock()
		o.last = []string{strconv.Itoa(resp.StatusCode), resp.Header.Get("Content-Type")}
		o.mu.Unlock()
	}
	return resp, err
}

// The endpoint refuses a web page of another origin with 403, before
// Wrap, and logs it to Options.Logger; it serves its own origin, those
// of AllowedOrigins, and clients that send no Origin. Its first lines
// are the snippet of docs/security.md.
func TestHandlerOrigin(t *testing.T) {
	opts := &serve.Options{
		AllowedOrigins: []string{"https://app.example.com"}, // the web app that calls the server from browsers
	}
	// A real server: serve.ListenAndServe(ctx, addr, server, opts)

	var log mcptest.Buffer
	var mu sync.Mutex // guards wrapped
	wrapped := 0
	opts.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.Wrap = func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			mu.Lock()
			wrapped++
			mu.Unlock()
			h.ServeHTTP(w, req)
		})
	}
	ts := startHandler(t, newTestServer(t).Server, opts)
	url := ts.URL + serve.DefaultPath
	for _, version := range versions {
		readHello(t, mcptest.ConnectHTTP(t, url, "", version, nil))
		for _, origin := range []string{ts.URL, "https://app.example.com"} {
			transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &withOrigin{origin: origin}}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "browser"}, nil).Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err, "%s from %s", version, origin)
			readHello(t, cs)
			cs.Close()
		}

		mu.Lock()
		before := wrapped
		mu.Unlock()
		browser := &withOrigin{origin: "http://attacker.example"}
		transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: browser}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "browser"}, nil).Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err == nil {
			cs.Close()
		}
		require.Error(t, err, version)
		browser.mu.Lock()
		require.Equal(t, []string{"403", "application/json"}, browser.last, version)
		browser.mu.Unlock()
		mu.Lock()
		require.Equal(t, before, wrapped, "%s: Wrap saw no refused request", version)
		mu.Unlock()
	}
	mu.Lock()
	defer mu.Unlock()
	require.Regexp(t, `level=DEBUG msg="refused a request for its Origin header" origin=http://attacker.example host=127.0.0.1:\d+ reason=".+" method=POST`, log.String())
}

// NewServer sets the limits of the options, or their defaults, and no
// WriteTimeout.
func TestNewServer(t *testing.T) {
	defaults := serve.Options{
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	for _, tc := range []struct {
		name string
		opts *serve.Options
		want serve.Options
	}{
		{"nil options", nil, defaults},
		{"zero options", &serve.Options{}, defaults},
		{"options", &serve.Options{ReadHeaderTimeout: 1, ReadTimeout: 2, IdleTimeout: 3, MaxHeaderBytes: 4},
			serve.Options{ReadHeaderTimeout: 1, ReadTimeout: 2, IdleTimeout: 3, MaxHeaderBytes: 4}},
		{"some options", &serve.Options{ReadTimeout: time.Minute},
			serve.Options{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.NotFoundHandler()
			srv, err := serve.NewServer(h, tc.opts)
			require.NoError(t, err)
			require.NotNil(t, srv.Handler)
			require.Equal(t, tc.want.ReadHeaderTimeout, srv.ReadHeaderTimeout, "ReadHeaderTimeout")
			require.Equal(t, tc.want.ReadTimeout, srv.ReadTimeout, "ReadTimeout")
			require.Equal(t, tc.want.IdleTimeout, srv.IdleTimeout, "IdleTimeout")
			require.Equal(t, tc.want.MaxHeaderBytes, srv.MaxHeaderBytes, "MaxHeaderBytes")
			require.Zero(t, srv.WriteTimeout, "WriteTimeout: event streams stay open")
			require.NotNil(t, srv.ErrorLog)
		})
	}
	// The constants say the same.
	require.Equal(t, defaults, serve.Options{
		ReadHeaderTimeout: serve.DefaultReadHeaderTimeout,
		ReadTimeout:       serve.DefaultReadTimeout,
		IdleTimeout:       serve.DefaultIdleTimeout,
		MaxHeaderBytes:    serve.DefaultMaxHeaderBytes,
	})
	require.Equal(t, "/mcp", serve.DefaultPath)
	require.Equal(t, 30*time.Minute, serve.DefaultSessionTimeout)
	require.Equal(t, 2*time.Second, serve.DefaultShutdownTimeout)
}

// net/http's own errors go to Options.Logger, at Error.
func TestNewServerErrorLog(t *testing.T) {
	var buf bytes.Buffer
	srv, err := serve.NewServer(http.NotFoundHandler(), &serve.Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	require.NoError(t, err)
	srv.ErrorLog.Print("http: something failed")
	require.Contains(t, buf.String(), `level=ERROR msg="http: something failed"`)
}

// Serve serves clients of each era until its context ends, then returns
// nil and releases the port, although each client still holds an event
// stream open: their requests' contexts end with Serve's.
func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	var log bytes.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- serve.Serve(ctx, ln, newTestServer(t).Server, &serve.Options{
			Logger: slog.New(slog.NewTextHandler(&log, nil)),
			// Open streams must not hold up the shutdown: if they did,
			// Serve would wait this long to close their connections.
			ShutdownTimeout: time.Hour,
		})
	}()

	url := "http://" + addr + serve.DefaultPath
	for _, version := range versions {
		var n mcptest.Notifications
		cs := mcptest.ConnectHTTP(t, url, "", version, n.ClientOptions(nil))
		readHello(t, cs)
		// A 2025-11-25 session holds its GET stream open from the start;
		// a 2026-07-28 client opens a subscriptions/listen stream.
		require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: helloURI}))
	}
	requireStatus(t, http.StatusNotFound, "http://"+addr, "/", "/other")

	cancel()
	require.NoError(t, mcptest.Receive(t, done, "return of Serve (open streams would hold up the shutdown)"))
	require.Contains(t, log.String(), `level=INFO msg="serving MCP over streamable HTTP" url=`+url+"\n")
	again, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the port is released")
	again.Close()
}

// lines is an io.Writer that sends each write on the channel, for a test
// that waits for a log line.
type lines chan string

func (l lines) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}

// ListenAndServe listens on the address, logs the URL it serves, and
// stops when its context ends.
func TestListenAndServe(t *testing.T) {
	log := make(lines, 10)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- serve.ListenAndServe(ctx, "127.0.0.1:0", newTestServer(t).Server, &serve.Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	}()

	var line string
	select {
	case line = <-log:
	case err := <-done:
		t.Fatalf("ListenAndServe returned %v", err)
	}
	m := regexp.MustCompile(`msg="serving MCP over streamable HTTP" url=(http://127\.0\.0\.1:\d+/mcp)\n$`).FindStringSubmatch(line)
	require.NotNil(t, m, "the log line giving the URL: %s", line)
	for _, version := range versions {
		readHello(t, mcptest.ConnectHTTP(t, m[1], "", version, nil))
	}
	cancel()
	require.NoError(t, <-done)
}

// ListenAndServe returns the error of an address it cannot listen on.
func TestListenAndServeAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	err = serve.ListenAndServe(t.Context(), ln.Addr().String(), newTestServer(t).Server, &serve.Options{Logger: slog.New(slog.DiscardHandler)})
	require.ErrorIs(t, err, syscall.EADDRINUSE)
}

// Every entry point refuses bad input with an error that says what is
// wrong, and Serve closes its listener all the same.
func TestInvalid(t *testing.T) {
	server := newTestServer(t).Server
	quiet := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name string
		opts *serve.Options
		want []string // in the error
	}{
		{"relative path", &serve.Options{Path: "mcp"}, []string{`serve: Options.Path: "mcp" is not a URL path`}},
		{"path with a query", &serve.Options{Path: "/mcp?a=b"}, []string{`serve: Options.Path: "/mcp?a=b" is not a URL path`}},
		{"negative ReadHeaderTimeout", &serve.Options{ReadHeaderTimeout: -time.Second}, []string{"serve: Options.ReadHeaderTimeout: negative duration -1s"}},
		{"negative ReadTimeout", &serve.Options{ReadTimeout: -1}, []string{"serve: Options.ReadTimeout: negative duration -1ns"}},
		{"negative IdleTimeout", &serve.Options{IdleTimeout: -1}, []string{"serve: Options.IdleTimeout: negative duration"}},
		{"negative SessionTimeout", &serve.Options{SessionTimeout: -1}, []string{"serve: Options.SessionTimeout: negative duration"}},
		{"negative ShutdownTimeout", &serve.Options{ShutdownTimeout: -1}, []string{"serve: Options.ShutdownTimeout: negative duration"}},
		// A negative KeepAlive is no error: it turns the comments off
		// (TestNoKeepAliveThroughProxyIsCut).
		{"negative MaxHeaderBytes", &serve.Options{MaxHeaderBytes: -1}, []string{"serve: Options.MaxHeaderBytes: negative number -1"}},
		{"negative MaxBodyBytes", &serve.Options{MaxBodyBytes: -1}, []string{"serve: Options.MaxBodyBytes: negative number -1"}},
		{"negative MaxSessionsPerCaller", &serve.Options{MaxSessionsPerCaller: -1}, []string{"serve: Options.MaxSessionsPerCaller: negative number -1"}},
		{"negative MaxSessions", &serve.Options{MaxSessions: -1}, []string{"serve: Options.MaxSessions: negative number -1"}},
		{"negative MaxListensPerCaller", &serve.Options{MaxListensPerCaller: -1}, []string{"serve: Options.MaxListensPerCaller: negative number -1"}},
		{"two bad fields", &serve.Options{ReadTimeout: -1, MaxHeaderBytes: -1}, []string{"Options.ReadTimeout", "Options.MaxHeaderBytes"}},
		{"an allowed origin with a path", &serve.Options{AllowedOrigins: []string{"*", "https://app.example.com/"}},
			[]string{`serve: Options.AllowedOrigins[1]: "https://app.example.com/" is not an origin: it has a path`}},
		{"null allowed", &serve.Options{AllowedOrigins: []string{"null"}}, []string{`serve: Options.AllowedOrigins[0]: "null"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Logger = quiet
			check := func(what string, err error) {
				t.Helper()
				require.Error(t, err, what)
				for _, w := range tc.want {
					require.Contains(t, err.Error(), w, what)
				}
			}
			_, err := serve.Handler(server, tc.opts)
			check("Handler", err)
			_, err = serve.NewServer(http.NotFoundHandler(), tc.opts)
			check("NewServer", err)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			check("Serve", serve.Serve(t.Context(), ln, server, tc.opts))
			_, err = ln.Accept()
			require.ErrorIs(t, err, net.ErrClosed, "Serve closed its listener")
			// Were it to listen on the port ln held, the error would be
			// another.
			check("ListenAndServe", serve.ListenAndServe(t.Context(), ln.Addr().String(), server, tc.opts))
		})
	}

	t.Run("nil server", func(t *testing.T) {
		_, err := serve.Handler(nil, nil)
		require.EqualError(t, err, "serve: nil server")
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		require.EqualError(t, serve.Serve(t.Context(), ln, nil, nil), "serve: nil server")
		_, err = ln.Accept()
		require.ErrorIs(t, err, net.ErrClosed, "Serve closed its listener")
		require.EqualError(t, serve.ListenAndServe(t.Context(), "127.0.0.1:0", nil, nil), "serve: nil server")
	})
	t.Run("nil handler", func(t *testing.T) {
		_, err := serve.NewServer(nil, nil)
		require.EqualError(t, err, "serve: nil handler")
	})
	t.Run("nil listener", func(t *testing.T) {
		require.EqualError(t, serve.Serve(t.Context(), nil, server, nil), "serve: nil listener")
	})
	t.Run("empty address", func(t *testing.T) {
		require.EqualError(t, serve.ListenAndServe(t.Context(), "", server, nil), "serve: empty address")
	})
	t.Run("Wrap returns nil", func(t *testing.T) {
		_, err := serve.Handler(server, &serve.Options{Wrap: func(http.Handler) http.Handler { return nil }})
		require.EqualError(t, err, "serve: Options.Wrap returned a nil handler")
	})
}
