// Package serve is the HTTP edge of an MCP server: the rules a server
// reachable by clients it does not trust needs, in front of any handler
// of the streamable HTTP transport. ListenAndServe is the one call most
// go-sdk servers make; Guard puts the same edge in front of another
// handler (mark3labs/mcp-go's, say).
//
// The edge, for every method of every protocol era:
//
//   - refuses a page of another origin (403), and answers CORS for the
//     origins allowed (Options.AllowedOrigins);
//   - records each request's client address, so that the caps and the
//     registry's rate limits tell anonymous callers apart;
//   - bounds a request's body in size (413) and time;
//   - refuses a request whose Mcp-Protocol-Version, Mcp-Method or
//     Mcp-Name header does not match its body (400, -32020
//     HeaderMismatch);
//   - gives event streams X-Accel-Buffering: no, and an SSE comment once
//     quiet, so that proxies neither buffer nor close them;
//   - caps the sessions and listen streams each caller, and all callers
//     together, hold open;
//   - with Options.Registry, in front of a go-sdk server the registry
//     made, serves each 2026-07-28 listen for resource subscriptions
//     itself, as go-sdk would: a stream then holds its HTTP request and
//     no go-sdk session.
//
// Handler adds an endpoint path and go-sdk's handler for every era
// (NewGoSDKHandler). NewServer adds an http.Server's limits on headers
// and idle connections. Serve and ListenAndServe add a clean shutdown.
// docs/security.md says what each rule holds off.
//
// The package is named for what it does for a user: serve an MCP server
// over HTTP. The registry (package resource) speaks MCP; everything HTTP
// is here.
package serve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handler returns the handler of server's endpoint: at opts.Path,
// NewGoSDKHandler serves clients of every protocol version behind Guard;
// every other path gets 404. A 2026-07-28 request is cancelled when its
// HTTP request ends. opts may be nil.
//
// Handler returns an error for a nil server, invalid options, or a Wrap
// that returns nil.
func Handler(server *mcp.Server, opts *Options) (http.Handler, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return o.handler(server)
}

// errNilServer is the error of a nil *mcp.Server.
var errNilServer = errors.New("serve: nil server")

// handler is Handler, with o checked.
func (o *Options) handler(server *mcp.Server) (http.Handler, error) {
	if server == nil {
		return nil, errNilServer
	}
	return o.endpoint(NewGoSDKHandler(server, &mcp.StreamableHTTPOptions{
		SessionTimeout:      o.SessionTimeout,
		MaxRequestBodyBytes: o.MaxBodyBytes,
		// A 2026-07-28 request ends with its HTTP request. Clients of
		// older protocols cancel a request with notifications/cancelled,
		// in their session, which does the same.
		PropagateRequestCancellation: true,
	}))
}

// endpoint returns the handler of the endpoint at o.Path: h behind Guard.
func (o *Options) endpoint(h http.Handler) (http.Handler, error) {
	g, err := o.guard(h)
	if err != nil {
		return nil, err
	}
	return &endpoint{path: o.Path, h: g}, nil
}

// An endpoint serves one path with h, and answers 404 to every other.
type endpoint struct {
	path string
	h    http.Handler
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != e.path {
		http.NotFound(w, req)
		return
	}
	e.h.ServeHTTP(w, req)
}

// NewServer returns an http.Server that serves h with the limits of opts:
// ReadHeaderTimeout, ReadTimeout, IdleTimeout, MaxHeaderBytes, and
// ErrorLog writing to opts.Logger. WriteTimeout stays 0: a deadline would
// cut event streams off. Its ConnContext gives each TCP connection a user
// timeout of opts.KeepAlive plus 30 s, which ends the event streams of
// clients gone without a word (Linux only; see docs/deployment.md). opts
// may be nil; its other fields are not used.
//
// Unlike Serve, it does not cancel requests when you stop it: its
// Shutdown waits for open event streams (GET streams, 2026-07-28
// listens) until its context ends. Set BaseContext to a context you
// cancel before Shutdown, or call Close after a grace period.
//
// NewServer returns an error for a nil h or invalid options.
func NewServer(h http.Handler, opts *Options) (*http.Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, errors.New("serve: nil handler")
	}
	return o.server(h), nil
}

// server is NewServer, with o checked.
func (o *Options) server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelError),
		ConnContext:       connContext(o.userTimeout()), // halfopen.go
	}
}

// Serve serves server's endpoint (see Handler) on ln until ctx ends, as
// ServeHandler does. It returns an error, without serving, for a nil
// server too.
func Serve(ctx context.Context, ln net.Listener, server *mcp.Server, opts *Options) error {
	if ln == nil {
		return errors.New("serve: nil listener")
	}
	o, err := opts.withDefaults()
	var h http.Handler
	if err == nil {
		h, err = o.handler(server)
	}
	if err != nil {
		ln.Close()
		return err
	}
	return o.serve(ctx, ln, h)
}

// ServeHandler serves h, any handler of the streamable HTTP transport,
// behind Guard at opts.Path, on ln, through an http.Server made by
// NewServer, until ctx ends. It logs the endpoint's URL first: "serving
// MCP over streamable HTTP" url=http://ADDR/mcp.
//
// When ctx ends, every request's context is cancelled too, which ends
// the event streams that would otherwise stay open. ServeHandler then
// stops accepting, and waits up to opts.ShutdownTimeout for handlers to
// return before it closes the connections left. It returns nil once the
// server has stopped.
//
// ServeHandler returns the error of http.Server.Serve if the server
// fails before ctx ends. It returns an error, without serving, for a nil
// ln, a nil h, or invalid options. It always closes ln.
func ServeHandler(ctx context.Context, ln net.Listener, h http.Handler, opts *Options) error {
	if ln == nil {
		return errors.New("serve: nil listener")
	}
	o, err := opts.withDefaults()
	if err == nil {
		h, err = o.endpoint(h)
	}
	if err != nil {
		ln.Close()
		return err
	}
	return o.serve(ctx, ln, h)
}

// serve serves the endpoint h on ln until ctx ends: ServeHandler, with o
// checked.
func (o *Options) serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := o.server(h)
	// Requests end when ctx does, so that open event streams do not hold
	// up Shutdown.
	srv.BaseContext = func(net.Listener) context.Context { return ctx }

	// Scripts and tests read the URL from this line
	// (scripts/conformance.sh, mcptest.Server.WaitLog): keep its form.
	o.Logger.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+o.Path)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		srv.Close() // the connections still open
		return err
	case <-ctx.Done():
	}
	// Stop accepting, wait for the handlers to return, then close
	// whatever connections are left: a client may hold one open that
	// never sends a request.
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
	}
	<-errc // http.ErrServerClosed
	return nil
}

// ListenAndServe listens on the TCP address addr, such as
// "127.0.0.1:8080", and serves server's endpoint there until ctx ends, as
// Serve does. It returns nil once the server has stopped, and the error of
// net.Listen if it cannot listen.
//
// It returns an error, without listening, for an empty addr, a nil
// server, or invalid options.
func ListenAndServe(ctx context.Context, addr string, server *mcp.Server, opts *Options) error {
	if addr == "" {
		return errors.New("serve: empty address")
	}
	o, err := opts.withDefaults()
	var h http.Handler
	if err == nil {
		h, err = o.handler(server)
	}
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return o.serve(ctx, ln, h)
}

// ListenAndServeHandler listens on the TCP address addr and serves h
// there until ctx ends, as ServeHandler does. It returns nil once the
// server has stopped, and the error of net.Listen if it cannot listen.
//
// It returns an error, without listening, for an empty addr, a nil h, or
// invalid options.
func ListenAndServeHandler(ctx context.Context, addr string, h http.Handler, opts *Options) error {
	if addr == "" {
		return errors.New("serve: empty address")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return err
	}
	eh, err := o.endpoint(h)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return o.serve(ctx, ln, eh)
}
