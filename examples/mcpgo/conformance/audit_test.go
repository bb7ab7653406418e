package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/internal/conformance"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// binPath is the server binary TestMain builds, once for all tests.
var binPath string

func TestMain(m *testing.M) { os.Exit(mcptest.RunWithBinary(m, ".", &binPath)) }

// The server passes the resource audit clean, in every protocol era,
// over mcp-go's stdio and streamable HTTP; a subscriber of the watched
// resource is told of its changes. (The official suite, which
// scripts/conformance.sh mcp-go runs, checks the rest.)
func TestAudit(t *testing.T) {
	t.Parallel()
	for _, version := range mcptest.Versions {
		t.Run("stdio/"+version, func(t *testing.T) {
			t.Parallel()
			var updates audit.Updates
			cs := mcptest.Stdio(t, binPath, []string{"-update", "100ms"}, version, clientOptions(&updates))
			mcptest.Audit(t, cs, auditOptions(&updates))
		})
		t.Run("http/"+version, func(t *testing.T) {
			t.Parallel()
			var updates audit.Updates
			addr := mcptest.StartHTTP(t, binPath, "-update", "100ms")
			cs := mcptest.ConnectHTTP(t, "http://"+addr+"/mcp", "", version, clientOptions(&updates))
			mcptest.Audit(t, cs, auditOptions(&updates))
		})
	}
}

// clientOptions has the audit's client collect its notifications in
// updates.
func clientOptions(updates *audit.Updates) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ResourceUpdatedHandler:     updates.Handle,
		ResourceListChangedHandler: updates.HandleListChanged,
	}
}

// auditOptions check that a subscriber of the watched resource is told
// of its changes, which it makes by itself.
func auditOptions(updates *audit.Updates) *audit.Options {
	return &audit.Options{
		Updates:   updates,
		ChangeURI: conformance.WatchedURI,
		Change:    func(context.Context, string) error { return nil },
		Wait:      5 * time.Second,
	}
}
