package main

import (
	"testing"

	"github.com/mcpres/mcpres/mcptest"
)

// The server passes the resource audit clean, in every protocol era, over
// stdio. The audit walks the whole list: at 500 a page, 111 pages, which
// is paging enough (at 7 a page, 7,858 pages took 54 s under -race).
func TestAudit(t *testing.T) {
	db := seededDB(t)
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs := mcptest.Stdio(t, binPath, []string{"-db", db, "-page-size", "500"}, version, nil)
			mcptest.Audit(t, cs, nil)
		})
	}
}
