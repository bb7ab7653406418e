package main

import (
	"testing"

	"github.com/mcpres/mcpres/mcptest"
)

// The server passes the resource audit clean, in every protocol era, over
// stdio.
func TestAudit(t *testing.T) {
	db := seededDB(t)
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs := mcptest.Stdio(t, binPath, []string{"-db", db, "-page-size", "7"}, version, nil)
			mcptest.Audit(t, cs, nil)
		})
	}
}
