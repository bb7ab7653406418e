//go:build !linux

package serve

// Elsewhere than on Linux, no TCP user timeout (see halfopen.go).

import (
	"net"
	"time"
)

// setUserTimeout does nothing: the system has no TCP_USER_TIMEOUT that
// package syscall reaches.
func setUserTimeout(net.Conn, time.Duration) error { return nil }
