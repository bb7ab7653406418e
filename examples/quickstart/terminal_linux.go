//go:build linux

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// isTerminal reports whether f is a terminal: whether it answers the
// TCGETS ioctl, which asks a terminal for its settings. Unlike a check
// for a character device, it tells a terminal from /dev/null.
func isTerminal(f *os.File) bool {
	var termios syscall.Termios
	return ioctl(f, syscall.TCGETS, unsafe.Pointer(&termios)) == nil
}

// ioctl makes the ioctl request req on f, with argument arg.
func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	err = conn.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg))
	})
	if err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}
