package main

import (
	"testing"

	"github.com/mcpres/mcpres/mcptest"
)

// The server passes the resource audit clean, in every protocol era, over
// stdio, and over HTTP for a caller who may see some of its resources.
func TestAudit(t *testing.T) {
	for _, version := range mcptest.Versions {
		t.Run("stdio/"+version, func(t *testing.T) {
			cs, _ := connect(t, binPath, version)
			mcptest.Audit(t, cs, nil)
		})
	}
	url := "http://" + mcptest.StartHTTP(t, binPath, "-tokens", tokensFile(t), "-page-size", "5", "-db", testDB(t)) + mcpPath
	for _, version := range mcptest.Versions {
		t.Run("http/"+version, func(t *testing.T) {
			cs := connectAs(t, url, bobToken, version, nil)
			mcptest.Audit(t, cs, nil)
		})
	}
}
