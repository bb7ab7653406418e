package main

import (
	"log/slog"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// readStats reads the statistics of collection through cs.
func readStats(t *testing.T, cs *mcp.ClientSession, collection string) CollectionStats {
	t.Helper()
	var st CollectionStats
	readJSON(t, cs, statsURI(collection), &st)
	return st
}

// latest returns the latest update of a document of collection, as its
// documents list, read through cs, says.
func latest(t *testing.T, cs *mcp.ClientSession, collection string) time.Time {
	t.Helper()
	var docs struct {
		Documents []DocumentInfo `json:"documents"`
	}
	readJSON(t, cs, documentsURI(collection), &docs)
	require.NotEmpty(t, docs.Documents, collection)
	var max time.Time
	for _, d := range docs.Documents {
		if d.Updated.After(max) {
			max = d.Updated
		}
	}
	return max
}

// seedBytes returns the size in bytes of the example documents of
// collection.
func seedBytes(collection string) int64 {
	var n int64
	for _, d := range seed {
		if d.collection == collection {
			n += int64(len(d.markdown))
		}
	}
	return n
}

// requireNotFound checks that reading uri through cs, a session on
// protocol version, is answered "Resource not found".
func requireNotFound(t *testing.T, cs *mcp.ClientSession, version, uri string) {
	t.Helper()
	wantCode := int64(resource.CodeLegacyResourceNotFound)
	if version >= "2026-07-28" {
		wantCode = jsonrpc.CodeInvalidParams
	}
	_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	jerr := rpcError(t, err, uri)
	require.Equal(t, wantCode, jerr.Code, uri)
	require.Equal(t, "Resource not found", jerr.Message, uri)
}

// TestStats checks resource://knowledge/{collection}/stats, served in
// process, through put_document and delete_document.
func TestStats(t *testing.T) {
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			server, _ := newTestServer(t, config{pageSize: pageSize}, slog.New(slog.DiscardHandler))
			n := new(mcptest.Notifications)
			cs := mcptest.Connect(t, server, version, n.ClientOptions(nil))
			checkStats(t, cs, n, version)
		})
	}
}

// TestStatsStdio checks the statistics as TestStats does, of the binary
// over stdio.
func TestStatsStdio(t *testing.T) {
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs, n := connect(t, binPath, version)
			checkStats(t, cs, n, version)
		})
	}
}

// checkStats checks, through cs, a session on protocol version of a newly
// seeded knowledge base whose notifications n records, that a
// collection's statistics are right after a put and a delete, and that
// their subscribers are told when they change.
func checkStats(t *testing.T, cs *mcp.ClientSession, n *mcptest.Notifications, version string) {
	ctx := t.Context()
	engineering, support := statsURI("engineering"), statsURI("support")

	// The seeded collection: its documents, their bytes and the latest
	// update of one of them.
	before := readStats(t, cs, "engineering")
	require.Equal(t, CollectionStats{Collection: "engineering", Documents: 3, Bytes: seedBytes("engineering"), Updated: latest(t, cs, "engineering")}, before)

	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: engineering}))
	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: support}))

	// A put adds a document, its bytes (not its characters) and its time;
	// the subscribers of the collection's statistics are told, those of
	// another collection's are not. A 2026-07-28 client subscribes in the
	// background, so the put is repeated until the update comes: it
	// replaces the same document each time.
	md := "# Glossary\n\nSLO — service-level objective. Café, naïve, déjà vu.\n"
	require.Greater(t, len(md), utf8.RuneCountInString(md), "the test document has multi-byte characters")
	start := time.Now()
	n.WaitUpdated(t, engineering, func() {
		callTool(t, cs, "put_document", map[string]any{"collection": "engineering", "doc": "glossary", "markdown": md})
	})
	require.NotContains(t, n.Updated(), support, "a put in engineering notified the subscribers of support's statistics")
	after := readStats(t, cs, "engineering")
	require.Equal(t, CollectionStats{Collection: "engineering", Documents: 4, Bytes: before.Bytes + int64(len(md)), Updated: latest(t, cs, "engineering")}, after)
	require.False(t, after.Updated.Before(start), "updated %v, before the put at %v", after.Updated, start)
	require.True(t, after.Updated.After(before.Updated))

	// Rewriting support's document as it is notifies the subscribers of
	// support's statistics (whose subscription, on 2026-07-28, is then
	// known to listen).
	faq := seed[len(seed)-1]
	require.Equal(t, "support", faq.collection)
	n.WaitUpdated(t, support, func() {
		callTool(t, cs, "put_document", map[string]any{"collection": "support", "doc": faq.name, "markdown": faq.markdown})
	})

	// A delete takes the new document away again: the latest update is
	// again a seeded document's. Both subscriptions are listening by now,
	// so each delete is done once.
	deleteOnce := func(collection, doc string) func() {
		done := false
		return func() {
			if !done {
				done = true
				callTool(t, cs, "delete_document", map[string]any{"collection": collection, "doc": doc})
			}
		}
	}
	n.WaitUpdated(t, engineering, deleteOnce("engineering", "glossary"))
	require.Equal(t, before, readStats(t, cs, "engineering"))

	// Deleting a collection's last document deletes the collection: its
	// statistics are not found any more, and their subscribers are told.
	n.WaitUpdated(t, support, deleteOnce("support", faq.name))
	requireNotFound(t, cs, version, support)

	// An unknown collection has no statistics; a put creates them.
	requireNotFound(t, cs, version, statsURI("incidents"))
	callTool(t, cs, "put_document", map[string]any{"collection": "incidents", "doc": "outage", "markdown": md})
	incidents := readStats(t, cs, "incidents")
	require.Equal(t, CollectionStats{Collection: "incidents", Documents: 1, Bytes: int64(len(md)), Updated: latest(t, cs, "incidents")}, incidents)
	resources, _ := listAll(t, cs)
	require.Contains(t, resources, statsURI("incidents"))
	require.NotContains(t, resources, support)
}
