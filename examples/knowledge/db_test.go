package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/stretchr/testify/require"
)

// TestRestart runs the binary on a -db file that does not exist yet,
// which it creates and seeds, edits the knowledge base, stops the binary
// and starts it again on the same file: the edits are there, and the
// example documents are not seeded again.
func TestRestart(t *testing.T) {
	db := testDB(t)
	require.NoFileExists(t, db)
	md := "# Outage of 1 March\n\nThe database ran out of disk.\n"
	var engineering CollectionStats

	require.True(t, t.Run("first run", func(t *testing.T) {
		cs, _ := connect(t, binPath, "2025-11-25", "-db", db)
		require.FileExists(t, db, "created on first run")
		got, _ := listAll(t, cs)
		require.Len(t, got, 2+3+3+len(seed))
		for _, d := range seed {
			require.Equal(t, d.markdown, read(t, cs, documentURI(d.collection, d.name)).Text)
		}

		callTool(t, cs, "put_document", map[string]any{"collection": "incidents", "doc": "outage", "markdown": md})
		callTool(t, cs, "delete_document", map[string]any{"collection": "support", "doc": "faq"})
		engineering = readStats(t, cs, "engineering")
	})) // the server has exited

	require.True(t, t.Run("restart", func(t *testing.T) {
		cs, _ := connect(t, binPath, "2026-07-28", "-db", db)
		require.Equal(t, md, read(t, cs, documentURI("incidents", "outage")).Text)
		requireNotFound(t, cs, "2026-07-28", documentURI("support", "faq"))
		var cols struct {
			Collections []CollectionInfo `json:"collections"`
		}
		readJSON(t, cs, collectionsURI, &cols)
		require.Equal(t, []CollectionInfo{{"engineering", 3}, {"incidents", 1}, {"product", 2}}, cols.Collections)
		require.Equal(t, engineering, readStats(t, cs, "engineering"), "the same statistics, times to the nanosecond")
		require.Equal(t, CollectionStats{Collection: "incidents", Documents: 1, Bytes: int64(len(md)), Updated: latest(t, cs, "incidents")},
			readStats(t, cs, "incidents"))
	}))
}

// TestArguments checks that the binary refuses arguments it does not
// know, such as a database file without -db, rather than serve another
// database.
func TestArguments(t *testing.T) {
	db := testDB(t)
	out, err := exec.Command(binPath, "-db", db, "other.db").CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "an argument: %v", err)
	require.Equal(t, 2, exit.ExitCode())
	require.Contains(t, string(out), `unexpected arguments ["other.db"]`)
	require.NoFileExists(t, db)
}

// TestOpenStore checks that OpenStore creates and seeds a database once,
// and that MemoryDB is a knowledge base of its own that the server serves.
func TestOpenStore(t *testing.T) {
	path := testDB(t)
	for i, wantCreated := range []bool{true, false} {
		store, created, err := OpenStore(t.Context(), path)
		require.NoError(t, err, "open %d", i+1)
		require.Equal(t, wantCreated, created, "open %d", i+1)
		_, docs, err := store.Counts(t.Context())
		require.NoError(t, err)
		require.Equal(t, len(seed), docs, "open %d", i+1)
		if i == 0 {
			// Seeding is by schema version, not by emptiness: a knowledge
			// base emptied stays empty.
			for _, d := range seed {
				ok, err := store.Delete(t.Context(), d.collection, d.name)
				require.NoError(t, err)
				require.True(t, ok)
			}
			other, created, err := OpenStore(t.Context(), path) // while the first is open
			require.NoError(t, err)
			require.False(t, created)
			require.NoError(t, other.Close())
			for _, d := range seed {
				_, err := store.Put(t.Context(), d.collection, d.name, d.markdown)
				require.NoError(t, err)
			}
		}
		require.NoError(t, store.Close())
	}

	store, created, err := OpenStore(t.Context(), MemoryDB)
	require.NoError(t, err)
	require.True(t, created)
	defer store.Close()
	server, reg, err := newServer(store, config{pageSize: pageSize}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer reg.Close()
	cs := mcptest.Connect(t, server, "2025-11-25", nil)
	callTool(t, cs, "put_document", map[string]any{"collection": "notes", "doc": "a", "markdown": "# A\n"})
	require.Equal(t, "# A\n", read(t, cs, documentURI("notes", "a")).Text)
	require.Equal(t, 1, readStats(t, cs, "notes").Documents)
}

// TestListKeyOrder lists, in process, documents whose list keys
// ("collection/name") sort otherwise than their collections and names
// do: "ops-eu/b" comes before "ops/a" ('-' < '/'), although "ops" comes
// before "ops-eu". The registry refuses a list whose keys go backwards, so
// listing every page shows that each is one keyset query in key order.
func TestListKeyOrder(t *testing.T) {
	server, _ := newTestServer(t, config{pageSize: 2}, slog.New(slog.DiscardHandler))
	cs := mcptest.Connect(t, server, "2025-11-25", nil)
	var want []string
	for _, key := range []string{"ops/a", "ops-eu/b", "ops.old/c", "ops/a-b", "ops/a.c", "ops0/d", "ops_x/e"} {
		collection, doc, _ := strings.Cut(key, "/")
		callTool(t, cs, "put_document", map[string]any{"collection": collection, "doc": doc, "markdown": "# " + key + "\n"})
		want = append(want, documentURI(collection, doc), statsURI(collection), documentsURI(collection))
	}
	got, pages := mcptest.ListAll(t, cs)
	require.Greater(t, pages, 10)
	var uris []string
	for _, r := range got {
		uris = append(uris, r.URI)
	}
	require.Subset(t, uris, want)
	require.Len(t, uris, 2+2*(3+5)+len(seed)+7, "every resource once")
}

// TestQueryPlans checks that the list queries are keyset queries: SQLite
// searches an index from the key after which the page starts, in the
// index's order, rather than scanning and sorting the table; and that the
// existence checks of resources/subscribe are searches of the primary key.
func TestQueryPlans(t *testing.T) {
	store, _, err := OpenStore(t.Context(), testDB(t))
	require.NoError(t, err)
	defer store.Close()
	for _, tc := range []struct {
		query string
		args  []any
		want  []string
	}{
		{documentsAfterQuery, []any{"", 10}, []string{"SEARCH documents USING INDEX documents_by_key (<expr>>?)"}},
		{collectionsAfterQuery, []any{"", 10}, []string{"SEARCH documents USING COVERING INDEX sqlite_autoindex_documents_1 (collection>?)"}},
		{hasDocumentQuery, []any{"engineering", "runbook"}, []string{
			"SCAN CONSTANT ROW", "SCALAR SUBQUERY 1",
			"SEARCH documents USING COVERING INDEX sqlite_autoindex_documents_1 (collection=? AND name=?)",
		}},
		{hasCollectionQuery, []any{"engineering"}, []string{
			"SCAN CONSTANT ROW", "SCALAR SUBQUERY 1",
			"SEARCH documents USING COVERING INDEX sqlite_autoindex_documents_1 (collection=?)",
		}},
	} {
		rows, err := store.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+tc.query, tc.args...)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			plan = append(plan, detail)
		}
		require.NoError(t, rows.Err())
		rows.Close()
		require.Equal(t, tc.want, plan, fmt.Sprintf("plan of %s", tc.query))
	}

	// The checks themselves.
	for _, tc := range []struct {
		collection, doc string
		want            bool
	}{
		{"engineering", "runbook", true},
		{"engineering", "roadmap", false},
		{"nosuch", "runbook", false},
		{"engineering", "", false},
	} {
		ok, err := store.HasDocument(t.Context(), tc.collection, tc.doc)
		require.NoError(t, err)
		require.Equal(t, tc.want, ok, "HasDocument(%q, %q)", tc.collection, tc.doc)
	}
	for c, want := range map[string]bool{"engineering": true, "support": true, "nosuch": false, "runbook": false, "": false} {
		ok, err := store.HasCollection(t.Context(), c)
		require.NoError(t, err)
		require.Equal(t, want, ok, "HasCollection(%q)", c)
	}
}
