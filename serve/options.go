package serve

// This file holds the Options of the HTTP server, their defaults, and the
// check that refuses what is not meant.

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/mcpres/mcpres/internal/origin"
	"github.com/mcpres/mcpres/resource"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The defaults of Options, for a server reachable by clients it does not
// trust. There is no WriteTimeout: streamable HTTP answers with event
// streams that stay open as long as the client listens (a 2026-07-28
// subscriptions/listen request, or an older session's GET stream), and a
// write deadline would cut them off.
const (
	// DefaultPath is the path of the MCP endpoint, the conventional one.
	DefaultPath = "/mcp"
	// DefaultReadHeaderTimeout bounds how long a client may take to send
	// a request's headers. A client that trickles them to hold a
	// connection open (slowloris) is disconnected.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds reading a whole request, headers and body.
	// net/http lifts the read deadline once the body has been read, so it
	// does not end a response that streams for longer.
	DefaultReadTimeout = 30 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection that waits this
	// long for its next request.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxHeaderBytes caps the size of a request's headers; larger
	// ones get 431. net/http's own default is 1 MiB. Bearer tokens fit
	// with room to spare. (go-sdk caps request bodies at 4 MiB.)
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultSessionTimeout closes the session of a client before
	// protocol 2026-07-28, and ends its subscriptions, once the client
	// has sent no request for this long. Clients that went away without
	// a word are not remembered for ever. An open GET stream does not
	// count as activity: a client that only listens must ping more often
	// (go-sdk's ClientOptions.KeepAlive) to keep its session.
	DefaultSessionTimeout = 30 * time.Minute
	// DefaultShutdownTimeout is how long handlers get to return once the
	// server stops. Their requests' contexts are cancelled first, so a
	// handler that watches its context returns at once.
	DefaultShutdownTimeout = 2 * time.Second
	// DefaultMaxBodyBytes caps a request's body, as go-sdk does.
	DefaultMaxBodyBytes = mcp.DefaultMaxRequestBodyBytes
	// DefaultMaxSessionsPerCaller caps the stateful sessions (clients
	// before 2026-07-28) one caller holds open at once.
	DefaultMaxSessionsPerCaller = 100
	// DefaultMaxSessions caps the stateful sessions of every caller
	// together.
	DefaultMaxSessions = 10_000
	// DefaultMaxListensPerCaller caps the 2026-07-28
	// subscriptions/listen streams one caller holds open at once.
	DefaultMaxListensPerCaller = 16
	// DefaultMaxSessionBytesPerCaller caps the bytes of the initialize
	// requests of one caller's open sessions: what go-sdk keeps of each.
	DefaultMaxSessionBytesPerCaller = 1 << 20
	// DefaultMaxSessionBytes caps those of every caller together.
	DefaultMaxSessionBytes = 32 << 20
	// DefaultReclaimAfter is how long a session must be idle, with no
	// open stream, before the edge ends it to make room at a cap.
	DefaultReclaimAfter = time.Minute
	// DefaultMaxStreams caps the event streams open at once, listens and
	// GET streams together: each holds a connection, a file descriptor and
	// goroutines.
	DefaultMaxStreams = 4096
	// DefaultIPv4Prefix groups anonymous IPv4 callers by /24 network.
	DefaultIPv4Prefix = 24
	// DefaultIPv6Prefix groups anonymous IPv6 callers by /64 network: the
	// block one host or site is commonly given.
	DefaultIPv6Prefix = 64
)

// Options configures the edge and the HTTP server. A nil *Options, like
// the zero value, means every default. Zero fields mean the default their
// comment names; negative ones are refused, not guessed at, but for
// KeepAlive. No limit can be turned off here: to lift one of the
// http.Server's, change the field of the server NewServer returns.
type Options struct {
	// Path is the URL path of the MCP endpoint: it begins with '/', and
	// holds no '?' or '#'. Requests to any other path get 404. "" means
	// DefaultPath.
	Path string
	// ReadHeaderTimeout is http.Server's: how long a client may take to
	// send a request's headers. Zero means DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// ReadTimeout is http.Server's: how long a client may take to send a
	// whole request. Zero means DefaultReadTimeout.
	ReadTimeout time.Duration
	// IdleTimeout is http.Server's: how long a keep-alive connection
	// waits for its next request. Zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxHeaderBytes is http.Server's: the most bytes of request headers
	// read. Zero means DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// SessionTimeout closes the session of a client before protocol
	// 2026-07-28 that has sent no request for this long; 2026-07-28
	// clients have no session. Zero means DefaultSessionTimeout.
	SessionTimeout time.Duration
	// ShutdownTimeout is how long Serve waits, once its context ends, for
	// handlers to return before it closes the connections left. Zero
	// means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// KeepAlive is how long an event stream may stay quiet before it gets
	// an SSE comment: a listen, a session's GET stream, or a response sent
	// as events. The comment keeps a proxy or load balancer in front from
	// closing the stream as idle. Keep it below the shortest idle timeout
	// between the server and its clients. Zero means DefaultKeepAlive
	// (25 s); negative turns the comments off.
	KeepAlive time.Duration
	// UserTimeout is how long data the server sent may go unacknowledged
	// before the kernel ends the connection (TCP_USER_TIMEOUT; Linux
	// only): a client whose network vanished without a FIN or RST has its
	// event streams released then, as KeepAlive's comments are such
	// data. Zero means KeepAlive (none if comments are off) plus 30 s:
	// time for a client on a slow or lossy link to acknowledge a comment.
	UserTimeout time.Duration
	// MaxBodyBytes caps a request's body; a longer one gets 413. Zero
	// means DefaultMaxBodyBytes (4 MiB).
	MaxBodyBytes int64
	// MaxSessionsPerCaller caps the stateful sessions one caller holds
	// open; a request that would open one more gets 429. Zero means
	// DefaultMaxSessionsPerCaller.
	MaxSessionsPerCaller int
	// MaxSessions caps the stateful sessions of every caller together; a
	// request that would open one more gets 503. Zero means
	// DefaultMaxSessions.
	MaxSessions int
	// MaxSessionBytesPerCaller caps the bytes of the initialize requests
	// of one caller's open sessions, since a session keeps its client's
	// description: one over it gets 429. Zero means
	// DefaultMaxSessionBytesPerCaller.
	MaxSessionBytesPerCaller int64
	// MaxSessionBytes caps those of every caller together: at it, room is
	// made as at MaxSessions, else 503. Zero means DefaultMaxSessionBytes.
	MaxSessionBytes int64
	// ReclaimAfter is how long a session must have had no request, and no
	// open stream, before the edge ends it to make room when a cap on
	// sessions is reached: a crashed client's sessions do not hold their
	// place for SessionTimeout. Zero means DefaultReclaimAfter.
	ReclaimAfter time.Duration
	// MaxStreams caps the event streams open at once, listens and GET
	// streams together. At the cap, a stream of the caller that holds the
	// most is closed for a newcomer; else the newcomer gets 503. Zero
	// means DefaultMaxStreams.
	MaxStreams int
	// MaxListensPerCaller caps the subscriptions/listen streams one caller
	// holds open; one more is refused with -32602. Zero means
	// DefaultMaxListensPerCaller.
	MaxListensPerCaller int
	// ClientAddressHeader names the header that holds the client's
	// address, such as "X-Forwarded-For": the last address in it is the
	// client's. Set it only behind a proxy that appends it, for a client
	// can send any header. "" means the connection's remote address.
	ClientAddressHeader string
	// IPv4Prefix is the length, in bits, of the network an anonymous IPv4
	// caller is counted in: the callers of one /24 share their caps and
	// rate budgets. 32 counts each address apart. Zero means
	// DefaultIPv4Prefix; more than 32 is refused.
	IPv4Prefix int
	// IPv6Prefix is IPv4Prefix's counterpart for IPv6 callers. 128 counts
	// each address apart. Zero means DefaultIPv6Prefix; more than 128 is
	// refused.
	IPv6Prefix int
	// Registry, if not nil, is the registry the server serves: it names
	// each request's caller for the caps as its rate limits do
	// (resource.Registry.CallerOf). Nil names a caller by its verified
	// token, else its address.
	//
	// In front of a go-sdk server the registry made (Handler,
	// ListenAndServe, or Guard in front of NewGoSDKHandler), the edge then
	// serves each 2026-07-28 subscriptions/listen that asks for resource
	// subscriptions alone itself (resource.Registry.OpenListen), as go-sdk
	// would, byte for byte: the stream holds its HTTP request and no
	// go-sdk session, and each notification is written once, straight to
	// the response. go-sdk's receiving middleware does not see those
	// listens; the registry's Authorizer, rate limits and Observer see
	// each, and Wrap each request. Listens that ask for list_changed go to
	// go-sdk. The GET stream of each older session is attached to the
	// registry (resource.Registry.AttachSessionStream): a session that
	// fell behind gets the notifications that waited for it in one write;
	// unless go-sdk numbers the stream's events (an EventStore, given to
	// NewGoSDKHandler), the registry writes each resources/updated on it
	// itself (resource.SessionWriter), the bytes go-sdk would write, for
	// less CPU than go-sdk's connection spends on them.
	Registry *resource.Registry
	// Logger receives the URL Serve serves, at Info, each refusal of the
	// edge, at Debug (a client's mistake) or Warn (a cap), and net/http's
	// own errors (http.Server.ErrorLog), at Error. Nil means
	// slog.Default().
	Logger *slog.Logger
	// Wrap, if not nil, wraps the handler behind the edge:
	// authentication, say. The caps are inside it, so that they see the
	// identity it verified. Requests to other paths never reach it, nor
	// requests the edge refused. Nil means none.
	Wrap func(http.Handler) http.Handler
	// AllowedOrigins lists the origins of the web pages allowed to call
	// the endpoint besides its own, each "scheme://host[:port]" as a
	// browser sends it in the Origin header, such as
	// "https://app.example.com". A request whose Origin header is
	// another origin, or not an origin ("null", say), gets 403. A request without the header, from a client
	// that is not a browser, passes. Nil means the endpoint's own origin
	// only: that of the Host header, which a proxy in front may rewrite
	// (list the public origin then). An entry that is not an origin is an
	// error.
	//
	// "*" turns the check off: any web page a user visits can then call
	// the server from the user's browser and network. Allow "*" only for
	// a server that needs a bearer token on every request (see Wrap),
	// which a browser does not attach by itself.
	AllowedOrigins []string
}

// withDefaults returns o checked, with every zero field set to its
// default. Its error names each wrong field and says why.
func (o *Options) withDefaults() (Options, error) {
	var c Options
	if o != nil {
		c = *o
	}
	var errs []error
	bad := func(field string, err error) {
		errs = append(errs, fmt.Errorf("serve: Options.%s: %w", field, err))
	}
	// Path is compared with the request's decoded path, so an escape
	// ('%') could never match.
	if c.Path != "" && (!strings.HasPrefix(c.Path, "/") || strings.ContainsAny(c.Path, "?#%")) {
		bad("Path", fmt.Errorf("%q is not a URL path: want one such as %q", c.Path, DefaultPath))
	}
	for _, d := range []struct {
		field string
		value time.Duration
	}{
		{"ReadHeaderTimeout", c.ReadHeaderTimeout},
		{"ReadTimeout", c.ReadTimeout},
		{"IdleTimeout", c.IdleTimeout},
		{"SessionTimeout", c.SessionTimeout},
		{"ShutdownTimeout", c.ShutdownTimeout},
		{"ReclaimAfter", c.ReclaimAfter},
		{"UserTimeout", c.UserTimeout},
	} {
		if d.value < 0 {
			bad(d.field, fmt.Errorf("negative duration %v", d.value))
		}
	}
	for _, n := range []struct {
		field string
		value int64
	}{
		{"MaxHeaderBytes", int64(c.MaxHeaderBytes)},
		{"MaxBodyBytes", c.MaxBodyBytes},
		{"MaxSessionsPerCaller", int64(c.MaxSessionsPerCaller)},
		{"MaxSessions", int64(c.MaxSessions)},
		{"MaxListensPerCaller", int64(c.MaxListensPerCaller)},
		{"MaxStreams", int64(c.MaxStreams)},
		{"MaxSessionBytesPerCaller", c.MaxSessionBytesPerCaller},
		{"MaxSessionBytes", c.MaxSessionBytes},
		{"IPv4Prefix", int64(c.IPv4Prefix)},
		{"IPv6Prefix", int64(c.IPv6Prefix)},
	} {
		if n.value < 0 {
			bad(n.field, fmt.Errorf("negative number %d", n.value))
		}
	}
	if c.IPv4Prefix > 32 {
		bad("IPv4Prefix", fmt.Errorf("%d bits: an IPv4 address has 32", c.IPv4Prefix))
	}
	if c.IPv6Prefix > 128 {
		bad("IPv6Prefix", fmt.Errorf("%d bits: an IPv6 address has 128", c.IPv6Prefix))
	}
	if _, err := origin.NewPolicy(c.AllowedOrigins, "serve: Options.AllowedOrigins"); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return Options{}, err
	}
	c.Path = cmp.Or(c.Path, DefaultPath)
	c.ReadHeaderTimeout = cmp.Or(c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	c.ReadTimeout = cmp.Or(c.ReadTimeout, DefaultReadTimeout)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, DefaultIdleTimeout)
	c.MaxHeaderBytes = cmp.Or(c.MaxHeaderBytes, DefaultMaxHeaderBytes)
	c.SessionTimeout = cmp.Or(c.SessionTimeout, DefaultSessionTimeout)
	c.ShutdownTimeout = cmp.Or(c.ShutdownTimeout, DefaultShutdownTimeout)
	c.KeepAlive = cmp.Or(c.KeepAlive, DefaultKeepAlive)
	c.MaxBodyBytes = cmp.Or(c.MaxBodyBytes, DefaultMaxBodyBytes)
	c.MaxSessionsPerCaller = cmp.Or(c.MaxSessionsPerCaller, DefaultMaxSessionsPerCaller)
	c.MaxSessions = cmp.Or(c.MaxSessions, DefaultMaxSessions)
	c.MaxListensPerCaller = cmp.Or(c.MaxListensPerCaller, DefaultMaxListensPerCaller)
	c.ReclaimAfter = cmp.Or(c.ReclaimAfter, DefaultReclaimAfter)
	c.MaxStreams = cmp.Or(c.MaxStreams, DefaultMaxStreams)
	c.MaxSessionBytesPerCaller = cmp.Or(c.MaxSessionBytesPerCaller, DefaultMaxSessionBytesPerCaller)
	c.MaxSessionBytes = cmp.Or(c.MaxSessionBytes, DefaultMaxSessionBytes)
	c.IPv4Prefix = cmp.Or(c.IPv4Prefix, DefaultIPv4Prefix)
	c.IPv6Prefix = cmp.Or(c.IPv6Prefix, DefaultIPv6Prefix)
	c.Logger = cmp.Or(c.Logger, slog.Default())
	return c, nil
}
