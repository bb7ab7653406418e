package main

import (
	"testing"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/mcptest"
)

// The server passes the resource audit clean, in every protocol era, over
// stdio, serving a tree of tricky names, hidden and denied files and
// links, every file read. One rule is waived: a directory is listed as
// inode/directory, what it is, and reads as its listing, text/plain.
func TestAudit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, 2)
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel() // each with a server of its own; nothing changes the tree
			cs := mcptest.Stdio(t, binPath, []string{"-root", dir, "-page-size", "7"}, version, nil)
			mcptest.Audit(t, cs, &audit.Options{
				Reads: audit.AllReads,
				Waive: map[string]string{"read.agrees-with-list": "a directory is listed as inode/directory and reads as its listing, text/plain"},
			})
		})
	}
}
