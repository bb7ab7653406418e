//go:build linux || openbsd || dragonfly || solaris

package main

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime returns the inode change time of fi, or its modification
// time if fi does not come from the operating system.
func changeTime(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Unix())
	}
	return fi.ModTime()
}
