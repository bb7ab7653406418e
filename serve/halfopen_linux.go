package serve

// The TCP user timeout on Linux (see halfopen.go).

import (
	"cmp"
	"net"
	"syscall"
	"time"
)

// tcpUserTimeout is TCP_USER_TIMEOUT of <linux/tcp.h>, which package
// syscall does not name. Its value is in milliseconds.
const tcpUserTimeout = 0x12

// setUserTimeout sets the TCP user timeout of c to d. It does nothing to
// a connection that is not TCP.
func setUserTimeout(c net.Conn, d time.Duration) error {
	tc := tcpConn(c)
	if tc == nil {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, int(d.Milliseconds()))
	})
	return cmp.Or(err, serr)
}
