package main

import (
	"context"
	"testing"

	"github.com/mcpres/mcpres/audit"
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
			// At 2026-07-28 go-sdk's client does not report a refused
			// listen: the audit asks with one of its own, as bob.
			opts := &audit.Options{Subscribe: func(ctx context.Context, uri string) error {
				return audit.SubscribeHTTP(ctx, mcptest.HTTPClient(t, bobToken), url, version, uri)
			}}
			mcptest.Audit(t, cs, opts)
		})
	}
}
