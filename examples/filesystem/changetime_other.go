//go:build !(linux || openbsd || dragonfly || solaris || darwin || freebsd || netbsd)

package main

import (
	"io/fs"
	"time"
)

// changeTime returns the modification time of fi: this platform reports
// no inode change time. (On Windows, NTFS sets a directory's modification
// time when an entry is created, removed or renamed.)
func changeTime(fi fs.FileInfo) time.Time {
	return fi.ModTime()
}
