package main

import (
	"testing"

	"github.com/mcpres/mcpres/mcptest"
)

// The server passes the resource audit clean, in every protocol era, over
// stdio. The audit walks the whole list: that of seededDB's database, at
// 500 a page, 12 pages, which is paging enough (the 111 pages of a new
// database took 20 s an era under -race, and at 7 a page, 7,858 pages
// took 54 s). The eras are audited in parallel, each on a database of its
// own.
func TestAudit(t *testing.T) {
	t.Parallel()
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			cs := mcptest.Stdio(t, binPath, []string{"-db", seededDB(t), "-page-size", "500"}, version, nil)
			mcptest.Audit(t, cs, nil)
		})
	}
}
