package main

import (
	"io/fs"
	"os"
	"time"
)

// A dirVersion tells one state of a directory's entries from the next:
// the directory's identity (its device and inode, compared with
// os.SameFile) and its inode change time, which the file system sets at
// every creation, removal or rename of an entry (and at a change of the
// directory's own mode or times), and which, unlike the modification
// time, no program can set back. Where the platform reports no change time
// the modification time stands in (see changeTime).
//
// Two versions of a directory are equal as long as nothing in it has
// changed, but the converse needs care: a file system stamps a change
// with its clock rounded down to its granularity, so a change made within
// the same tick as the one before leaves the time as it was. A version is
// therefore trusted only once settled: see settled.
type dirVersion struct {
	fi      fs.FileInfo // the directory's, for os.SameFile
	changed time.Time   // its inode change time
}

// versionOf returns the version of the directory whose FileInfo is fi.
// The FileInfo of anything else gives a version that is equal to no
// directory's.
func versionOf(fi fs.FileInfo) dirVersion {
	return dirVersion{fi: fi, changed: changeTime(fi)}
}

// equal reports whether v and w are the same directory at the same change
// time. A zero dirVersion is equal to none.
func (v dirVersion) equal(w dirVersion) bool {
	return v.fi != nil && w.fi != nil && os.SameFile(v.fi, w.fi) && v.changed.Equal(w.changed)
}

// The granularity margins of settled. A file system that keeps sub-second
// times stamps changes with a clock that moves at least every scheduler
// tick (at most 10 ms on Linux, 15.6 ms on Windows) and rounds to at most
// 10 ms (exFAT); one that keeps whole seconds rounds to one second (ext3,
// HFS+) or two (FAT).
const (
	fineMargin   = 50 * time.Millisecond
	coarseMargin = 3 * time.Second
)

// settled reports whether any change made to the directory after v was
// read is sure to give it another change time (see settled). A directory
// changed just before it was read is not settled: an index read from it
// is used once and not kept (see fileServer.index).
func (v dirVersion) settled(now time.Time) bool {
	return settled(v.changed, now)
}

// settled reports whether a file (or directory) whose change time was
// changed when it was looked at, after now, is sure to get another change
// time at its next change: whether the file system's clock had passed
// changed by more than its granularity at now (see settledAt). Only then
// does an unchanged change time say that the file has not changed since.
//
// The comparison holds for a file system whose clock is the local one;
// see README.md for network file systems.
func settled(changed, now time.Time) bool {
	return now.After(settledAt(changed))
}

// settledAt returns when the file system's clock is sure to have passed
// the change time changed by more than its granularity: fineMargin after
// it, or coarseMargin for a change time in whole seconds, as a file system
// that keeps no finer times reports.
func settledAt(changed time.Time) time.Time {
	if changed.Nanosecond() == 0 {
		return changed.Add(coarseMargin)
	}
	return changed.Add(fineMargin)
}
