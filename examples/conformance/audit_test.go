package main

import (
	"testing"

	"github.com/mcpres/mcpres/mcptest"
)

// The server passes the resource audit clean, in every protocol era, over
// stdio.
func TestAudit(t *testing.T) {
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs := mcptest.Stdio(t, binPath, nil, version, nil)
			mcptest.Audit(t, cs, nil)
		})
	}
}
