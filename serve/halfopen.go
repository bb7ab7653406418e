package serve

// This file holds what ends the connections of clients that vanished
// without a word, no FIN and no RST: a TCP user timeout on each
// connection the servers of the package accept.
//
// An event stream gets a comment once quiet for KeepAlive. When its
// client is gone, the comment is never acknowledged, and the kernel
// sends it again and again: on Linux, for about 16 min (tcp_retries2).
// TCP keepalive does not help, since it probes only a connection with
// nothing unacknowledged.
//
// TCP_USER_TIMEOUT (RFC 5482; Linux's tcp(7)) bounds how long sent data
// may stay unacknowledged: after that, the kernel closes the connection.
// The servers set it to Options.UserTimeout: by default KeepAlive plus
// 30 s. The first comment the client does not acknowledge leaves at most
// KeepAlive after it is gone, so the connection is closed within
// 2×KeepAlive + 30 s. The read that
// net/http keeps on the connection then fails, the request's context is
// cancelled, and the stream's handler returns.
//
// With TCP keepalive on (Go's listeners turn it on), the user timeout
// bounds a quiet connection too: the kernel closes it once a probe goes
// unanswered and nothing came for the user timeout.
//
// Elsewhere than on Linux, the connections get no user timeout.

import (
	"context"
	"net"
	"time"
)

// halfOpenSlack is what the user timeout adds to KeepAlive: time for a
// client on a slow or lossy link to acknowledge a comment.
const halfOpenSlack = 30 * time.Second

// userTimeout returns the TCP user timeout of the connections of o's
// servers: Options.UserTimeout, else KeepAlive (or 0 if comments are
// off) plus halfOpenSlack.
func (o *Options) userTimeout() time.Duration {
	if o.UserTimeout > 0 {
		return o.UserTimeout
	}
	return max(o.KeepAlive, 0) + halfOpenSlack
}

// connContext returns an http.Server.ConnContext that gives each TCP
// connection the user timeout d, and returns ctx as it is. A connection
// whose timeout cannot be set is served without one.
func connContext(d time.Duration) func(context.Context, net.Conn) context.Context {
	return func(ctx context.Context, c net.Conn) context.Context {
		_ = setUserTimeout(c, d)
		return ctx
	}
}

// tcpConn returns the TCP connection beneath c, such as a *tls.Conn's,
// or nil if there is none.
func tcpConn(c net.Conn) *net.TCPConn {
	for range 8 { // a few layers of wrapping; a cycle ends here
		switch v := c.(type) {
		case *net.TCPConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}
