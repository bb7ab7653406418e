// Package serve serves an MCP server over streamable HTTP, as a server
// reachable by clients it does not trust needs it. ListenAndServe is the
// one call most servers make:
//
//   - one endpoint, /mcp by default, serves clients of every protocol
//     version with their notifications (resource.NewHTTPHandler); every
//     other path is 404;
//   - a 2026-07-28 request ends with its HTTP request: when the client
//     cancels it or hangs up, the handler's context is cancelled;
//   - the sessions of older clients that went away are reclaimed
//     (SessionTimeout);
//   - a request from a web page of another origin (its Origin header)
//     is refused with 403, unless AllowedOrigins lists that origin;
//     clients that are not browsers send no Origin, and pass. A page
//     that reaches the server through DNS rebinding names the server's
//     own host as its origin: go-sdk refuses it on loopback addresses,
//     elsewhere require authentication (see docs/security.md);
//   - a 2026-07-28 request whose Mcp-Protocol-Version, Mcp-Method or
//     Mcp-Name header does not match its body gets 400 and -32020
//     HeaderMismatch (resource.NewHTTPHandler);
//   - event streams carry X-Accel-Buffering: no, and an SSE comment
//     once quiet for KeepAlive, so that a proxy or load balancer in front
//     neither buffers them nor closes a stream that waits for changes as
//     idle;
//   - slow or oversized requests are cut off (ReadHeaderTimeout,
//     ReadTimeout, MaxHeaderBytes), idle connections closed (IdleTimeout);
//   - when the context ends, the server stops: requests in flight (event
//     streams included) are cancelled, and their handlers given up to
//     ShutdownTimeout to return.
//
// Handler and NewServer are its parts, for a server that mounts the
// endpoint in a mux of its own, or serves TLS.
//
// The rules of the HTTP edge live here, so that every server built on
// mcpres gets each new one by upgrading.
package serve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"

	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handler returns the handler of server's endpoint: at opts.Path,
// resource.NewHTTPHandler serves clients of every protocol version, with
// opts.SessionTimeout, request cancellation on stateless HTTP, and a
// comment on each event stream quiet for opts.KeepAlive, behind
// opts.Wrap, behind the check of the Origin header (opts.AllowedOrigins;
// refusals logged to opts.Logger at Debug); every other path gets 404.
// opts may be nil.
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
	// Clients of 2025-06-18 and 2025-11-25 get a session, and their
	// notifications on its GET stream; 2026-07-28 clients need no
	// session, and get theirs on their subscriptions/listen streams.
	h := resource.NewHTTPHandler(server, &mcp.StreamableHTTPOptions{
		SessionTimeout: o.SessionTimeout,
		// A 2026-07-28 request ends with its HTTP request. Clients of
		// older protocols cancel a request with notifications/cancelled,
		// in their session, which does the same.
		PropagateRequestCancellation: true,
	})
	if o.Wrap != nil {
		if h = o.Wrap(h); h == nil {
			return nil, errors.New("serve: Options.Wrap returned a nil handler")
		}
	}
	// Event streams get a comment once quiet for o.KeepAlive. Outside
	// Wrap, so that a WithKeepAlive in Wrap, nearer the streams, decides.
	h = resource.WithKeepAlive(h, o.KeepAlive)
	// Web pages of other origins are refused before Wrap sees them (with
	// 403, not a 401 of its authentication), and refusals logged to
	// o.Logger; the check of resource.NewHTTPHandler passes what this one
	// passed.
	h, err := resource.CheckOrigin(h, &resource.OriginOptions{Allowed: o.AllowedOrigins, Logger: o.Logger})
	if err != nil {
		return nil, err // withDefaults checked AllowedOrigins
	}
	return &endpoint{path: o.Path, h: h}, nil
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
// cut event streams off. opts may be nil; its other fields are not used.
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
	}
}

// Serve serves server's endpoint (see Handler) on ln, through an
// http.Server made by NewServer, until ctx ends. It logs the endpoint's
// URL first: "serving MCP over streamable HTTP" url=http://ADDR/mcp.
//
// When ctx ends, every request's context is cancelled too, which ends
// the event streams that would otherwise stay open. Serve then stops
// accepting, and waits up to opts.ShutdownTimeout for handlers to return
// before it closes the connections left. It returns nil once the server
// has stopped.
//
// Serve returns the error of http.Server.Serve if the server fails
// before ctx ends. It returns an error, without serving, for a nil ln, a
// nil server, or invalid options. It always closes ln.
func Serve(ctx context.Context, ln net.Listener, server *mcp.Server, opts *Options) error {
	if ln == nil {
		return errors.New("serve: nil listener")
	}
	o, err := opts.withDefaults()
	if err != nil {
		ln.Close()
		return err
	}
	h, err := o.handler(server)
	if err != nil {
		ln.Close()
		return err
	}
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
	if err != nil {
		return err
	}
	if server == nil {
		return errNilServer
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return Serve(ctx, ln, server, &o)
}
