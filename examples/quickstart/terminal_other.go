//go:build !linux

package main

import "os"

// isTerminal reports whether f is a character device, as terminals and
// consoles are. So are /dev/null and Windows' NUL, which it takes for
// terminals too: the hint it decides on is then printed needlessly, but a
// host, which talks to the server through pipes, never sees it.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
