package audit_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/audit/internal/broken"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// eras are the protocol versions the audit is tried at.
var eras = []string{"2025-11-25", "2026-07-28"}

// quiet is a logger that discards.
var quiet = slog.New(slog.DiscardHandler)

// plainServer returns a plain go-sdk server that accepts every
// subscription, its log discarded.
func plainServer() *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "v0"}, &mcp.ServerOptions{
		Logger:             quiet,
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
}

// connect connects a client of version to s in process, its updates
// collected in u if u is not nil.
func connect(t *testing.T, s *mcp.Server, version string, u *audit.Updates) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if u != nil {
		opts.ResourceUpdatedHandler = u.Handle
		opts.ResourceListChangedHandler = u.HandleListChanged
	}
	return mcptest.Connect(t, s, version, opts)
}

// forge makes s answer method with answer instead of its own handler: a
// way to make a server break a rule go-sdk would not let it break.
var forge = broken.Forge

// run audits cs with opts, failing t if Run returns an error.
func run(t *testing.T, cs *mcp.ClientSession, opts *audit.Options) *audit.Report {
	t.Helper()
	r, err := audit.Run(t.Context(), cs, opts)
	require.NoError(t, err)
	return r
}

// ruleIDs returns the IDs of r's findings that are not waived, sorted,
// each once.
func ruleIDs(r *audit.Report) []string {
	var ids []string
	for _, f := range r.Findings {
		if f.Waived == "" && !slices.Contains(ids, f.Rule.ID) {
			ids = append(ids, f.Rule.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// rulesIn returns the rule IDs of r's unwaived findings in the areas
// named by prefixes (such as "template.").
func rulesIn(r *audit.Report, prefixes ...string) []string {
	var ids []string
	for _, id := range ruleIDs(r) {
		if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(id, p) }) {
			ids = append(ids, id)
		}
	}
	return ids
}

// findingsOf returns r's findings of rule id, as "target: seen".
func findingsOf(r *audit.Report, id string) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Rule.ID == id {
			out = append(out, f.Target+": "+f.Seen)
		}
	}
	return out
}
