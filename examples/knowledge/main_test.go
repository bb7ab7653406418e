package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// binPath is the server binary TestMain builds, once for all tests.
var binPath string

func TestMain(m *testing.M) { os.Exit(mcptest.RunWithBinary(m, ".", &binPath)) }

// pageSize is the server's resources/list page size in the tests: small, so
// that listing takes several pages.
const pageSize = 3

// testDB returns the path of a new database file, in a temporary
// directory of t's, that does not exist yet: each test has its own
// knowledge base, created and seeded by the server it starts.
func testDB(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "knowledge.db")
}

// documentsURI returns the URI of collection's documents list, as a client
// sends it: the tests' names need no percent-encoding, so the URIs are
// spelt out here as clients would, not built as the server builds them.
func documentsURI(collection string) string {
	return "resource://knowledge/" + collection + "/documents"
}

// documentURI returns the URI of a document.
func documentURI(collection, doc string) string {
	return "resource://knowledge/" + collection + "/document/" + doc
}

// statsURI returns the URI of collection's statistics.
func statsURI(collection string) string {
	return "resource://knowledge/" + collection + "/stats"
}

// newTestServer serves, in process, a knowledge base of its own (in a
// temporary file) configured by cfg. The registry and the store are closed
// when t ends, after the sessions connected later are.
func newTestServer(t *testing.T, cfg config, logger *slog.Logger) (*mcp.Server, *resource.Registry) {
	t.Helper()
	store, created, err := OpenStore(t.Context(), testDB(t))
	require.NoError(t, err)
	require.True(t, created, "a new database is created")
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	server, reg, err := newServer(store, cfg, logger)
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	return server, reg
}

// connect starts the server binary with args and connects a client on
// version over stdio, with the notifications it receives recorded in n.
// Unless args hold -db, the server has a database of its own (testDB).
func connect(t *testing.T, bin, version string, args ...string) (cs *mcp.ClientSession, n *mcptest.Notifications) {
	t.Helper()
	if !slices.Contains(args, "-db") {
		args = append(args, "-db", testDB(t))
	}
	n = new(mcptest.Notifications)
	cs = mcptest.Stdio(t, bin, append([]string{"-page-size", fmt.Sprint(pageSize)}, args...), version, n.ClientOptions(nil))
	require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
	return cs, n
}

func TestStdio(t *testing.T) {
	bin := binPath
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs, _ := connect(t, bin, version)
			exercise(t, cs, version)
		})
	}
}

// listAll lists every page of resources.
func listAll(t *testing.T, cs *mcp.ClientSession) (map[string]*mcp.Resource, int) {
	t.Helper()
	got := make(map[string]*mcp.Resource)
	pages := mcptest.ListPages(t, cs)
	for _, page := range pages {
		require.LessOrEqual(t, len(page), pageSize)
		for _, r := range page {
			require.NotContains(t, got, r.URI, "listed twice")
			got[r.URI] = r
		}
	}
	return got, len(pages)
}

func read(t *testing.T, cs *mcp.ClientSession, uri string) *mcp.ResourceContents {
	t.Helper()
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	require.NoError(t, err, uri)
	require.Len(t, res.Contents, 1, uri)
	c := res.Contents[0]
	require.Equal(t, uri, c.URI)
	return c
}

func readJSON(t *testing.T, cs *mcp.ClientSession, uri string, v any) {
	t.Helper()
	c := read(t, cs, uri)
	require.Equal(t, "application/json", c.MIMEType, uri)
	require.NoError(t, json.Unmarshal([]byte(c.Text), v), uri)
}

// exercise checks what the knowledge base serves through cs, a session
// that asked for protocol version.
func exercise(t *testing.T, cs *mcp.ClientSession, version string) {
	ctx := t.Context()

	// resources/list, every page: the static resources, every collection's
	// documents list and statistics, and every seeded document.
	got, pages := listAll(t, cs)
	require.Greater(t, pages, 1, "listing takes several pages")
	wantDocs := map[string]string{}
	for _, d := range seed {
		wantDocs[documentURI(d.collection, d.name)] = d.markdown
	}
	require.Len(t, got, 2+3+3+len(wantDocs))
	for _, uri := range []string{
		collectionsURI, healthURI,
		documentsURI("engineering"), documentsURI("product"), documentsURI("support"),
		statsURI("engineering"), statsURI("product"), statsURI("support"),
	} {
		require.Contains(t, got, uri)
		require.Equal(t, "application/json", got[uri].MIMEType, uri)
	}
	for uri, md := range wantDocs {
		r := got[uri]
		require.NotNil(t, r, "document %s not listed", uri)
		require.Equal(t, "text/markdown", r.MIMEType, uri)
		require.Equal(t, int64(len(md)), r.Size, uri)
		require.NotEmpty(t, r.Title, uri)
	}
	require.Equal(t, "Engineering onboarding", got[documentURI("engineering", "onboarding")].Title)

	// Templates.
	tmpls, err := cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	var tnames []string
	for _, tm := range tmpls.ResourceTemplates {
		tnames = append(tnames, tm.URITemplate)
	}
	require.ElementsMatch(t, []string{documentsTmpl, documentTmpl, statsTmpl}, tnames)

	// The collections, with their document counts.
	var cols struct {
		Collections []CollectionInfo `json:"collections"`
	}
	readJSON(t, cs, collectionsURI, &cols)
	require.Equal(t, []CollectionInfo{{"engineering", 3}, {"product", 2}, {"support", 1}}, cols.Collections)

	// One collection's documents.
	var docs struct {
		Collection string         `json:"collection"`
		Documents  []DocumentInfo `json:"documents"`
	}
	readJSON(t, cs, documentsURI("product"), &docs)
	require.Equal(t, "product", docs.Collection)
	require.Len(t, docs.Documents, 2)
	require.Equal(t, "personas", docs.Documents[0].Name)
	require.Equal(t, "roadmap", docs.Documents[1].Name)
	require.Equal(t, "Product roadmap", docs.Documents[1].Title)
	require.Equal(t, len(wantDocs[documentURI("product", "roadmap")]), docs.Documents[1].Size)
	require.False(t, docs.Documents[1].Updated.IsZero())

	// One collection's statistics.
	require.Equal(t, CollectionStats{Collection: "product", Documents: 2, Bytes: seedBytes("product"), Updated: latest(t, cs, "product")},
		readStats(t, cs, "product"))

	// A markdown document.
	c := read(t, cs, documentURI("engineering", "runbook"))
	require.Equal(t, "text/markdown", c.MIMEType)
	require.Equal(t, wantDocs[documentURI("engineering", "runbook")], c.Text)

	// Health.
	var health map[string]any
	readJSON(t, cs, healthURI, &health)
	require.Equal(t, "ok", health["status"])
	require.EqualValues(t, 3, health["collections"])
	require.EqualValues(t, len(wantDocs), health["documents"])
	require.Contains(t, health, "uptimeSeconds")

	// Unknown collections and documents are not found, with the code the
	// client's version expects.
	wantCode := int64(-32002)
	if version >= "2026-07-28" {
		wantCode = jsonrpc.CodeInvalidParams
	}
	for _, uri := range []string{
		documentsURI("nosuch"),
		documentURI("nosuch", "onboarding"),
		documentURI("engineering", "nosuch"),
		documentURI("product", "runbook"), // in another collection
		"resource://knowledge/engineering/document/",
		statsURI("nosuch"),
	} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var jerr *jsonrpc.Error
		require.True(t, errors.As(err, &jerr), "%s: want a JSON-RPC error, got %v", uri, err)
		require.Equal(t, wantCode, jerr.Code, uri)
		require.Equal(t, "Resource not found", jerr.Message, uri)
	}

	// Completion.
	complete := func(tmpl, arg, value string, bound map[string]string) []string {
		t.Helper()
		values, err := completeValues(ctx, cs, tmpl, arg, value, bound)
		require.NoError(t, err)
		return values
	}
	require.Equal(t, []string{"engineering"}, complete(documentsTmpl, "collection", "eng", nil))
	require.Equal(t, []string{"support"}, complete(statsTmpl, "collection", "s", nil))
	require.Equal(t, []string{"engineering", "product", "support"}, complete(documentTmpl, "collection", "", nil))
	require.Equal(t, []string{"product"}, complete(documentTmpl, "collection", "P", nil))
	require.Equal(t, []string{"code-review", "onboarding", "runbook"}, complete(documentTmpl, "doc", "", map[string]string{"collection": "engineering"}))
	require.Equal(t, []string{"roadmap"}, complete(documentTmpl, "doc", "r", map[string]string{"collection": "product"}))
	require.Equal(t, []string{"runbook"}, complete(documentTmpl, "doc", "r", map[string]string{"collection": "engineering"}))
	require.Empty(t, complete(documentTmpl, "doc", "", map[string]string{"collection": "nosuch"}))
	require.ElementsMatch(t, []string{"roadmap", "runbook"}, complete(documentTmpl, "doc", "r", nil), "unbound: every collection")
}

// callTool calls a tool and fails t if it reports an error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, "%s: %v", name, res.Content)
	return res
}

// TestSubscriptions subscribes, over stdio on each protocol version, to
// documents and statistics, and checks who is told of which edit.
func TestSubscriptions(t *testing.T) {
	bin := binPath
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs, n := connect(t, bin, version)
			ctx := t.Context()
			require.True(t, cs.InitializeResult().Capabilities.Resources.Subscribe, "subscribe capability")

			runbook := documentURI("engineering", "runbook")
			onboarding := documentURI("engineering", "onboarding")
			roadmap := documentURI("product", "roadmap")
			engineeringStats := statsURI("engineering")
			require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: runbook}))
			require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: roadmap}))
			require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: engineeringStats}))

			// Editing the runbook notifies the subscribers of it and of its
			// collection's statistics, and the new text is what a read
			// returns.
			edits := 0
			md := ""
			editRunbook := func() {
				edits++
				md = fmt.Sprintf("# Production runbook\n\nEdit %d.\n", edits)
				res := callTool(t, cs, "put_document", map[string]any{"collection": "engineering", "doc": "runbook", "markdown": md})
				require.Contains(t, fmt.Sprint(res.StructuredContent), runbook)
			}
			n.WaitUpdated(t, runbook, editRunbook)
			n.WaitUpdated(t, engineeringStats, editRunbook)
			require.Equal(t, md, read(t, cs, runbook).Text)

			// Editing onboarding, which nobody watches, notifies nobody;
			// a later edit of the roadmap shows that the notifications for
			// the first one have been sent.
			callTool(t, cs, "put_document", map[string]any{"collection": "engineering", "doc": "onboarding", "markdown": "# Onboarding\n\nChanged.\n"})
			n.WaitUpdated(t, roadmap, func() {
				callTool(t, cs, "put_document", map[string]any{"collection": "product", "doc": "roadmap", "markdown": "# Product roadmap\n\nRevised.\n"})
			})
			require.NotContains(t, n.Updated(), onboarding, "a document nobody subscribed to")
			require.NotContains(t, n.Updated(), documentURI("support", "faq"), "a document nobody subscribed to")

			// Unsubscribing silences the runbook.
			require.NoError(t, cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: runbook}))
			if version < "2026-07-28" {
				before := count(n.Updated(), runbook)
				callTool(t, cs, "put_document", map[string]any{"collection": "engineering", "doc": "runbook", "markdown": "# Runbook\n\nAgain.\n"})
				n.WaitUpdated(t, roadmap, func() {
					callTool(t, cs, "put_document", map[string]any{"collection": "product", "doc": "roadmap", "markdown": "# Product roadmap\n\nRevised again.\n"})
				})
				require.Equal(t, before, count(n.Updated(), runbook), "no update after unsubscribing")

				// What does not exist cannot be subscribed to (every version
				// is checked in process, by TestSubscribeMissing: a
				// 2026-07-28 client subscribes in the background, and does
				// not report the refusal).
				checkRefused(t, legacySubscribe(t, cs), missingURIs...)
			}
		})
	}
}

// count returns how many times uri occurs in uris.
func count(uris []string, uri string) int {
	n := 0
	for _, u := range uris {
		if u == uri {
			n++
		}
	}
	return n
}

func TestCreateAndDelete(t *testing.T) {
	bin := binPath
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs, n := connect(t, bin, version)

			// Creating a document (in a new collection) sends list_changed
			// and makes it listed and readable. A 2026-07-28 client listens
			// for list_changed in the background, so each try creates
			// another document until one is heard of.
			var created []string
			n.WaitListChanged(t, func() {
				doc := fmt.Sprintf("postmortem-%d", len(created)+1)
				res := callTool(t, cs, "put_document", map[string]any{"collection": "incidents", "doc": doc, "markdown": "# Postmortem\n\nWhat happened.\n"})
				require.Contains(t, fmt.Sprint(res.StructuredContent), "created:true")
				created = append(created, documentURI("incidents", doc))
			})
			got, _ := listAll(t, cs)
			for _, uri := range created {
				require.Contains(t, got, uri)
				require.Equal(t, "Postmortem", got[uri].Title)
				require.Equal(t, "# Postmortem\n\nWhat happened.\n", read(t, cs, uri).Text)
			}
			require.Contains(t, got, documentsURI("incidents"))
			var cols struct {
				Collections []CollectionInfo `json:"collections"`
			}
			readJSON(t, cs, collectionsURI, &cols)
			require.Contains(t, cols.Collections, CollectionInfo{"incidents", len(created)})

			// Deleting them all removes the collection.
			for _, uri := range created {
				doc := uri[strings.LastIndex(uri, "/")+1:]
				callTool(t, cs, "delete_document", map[string]any{"collection": "incidents", "doc": doc})
			}
			got, _ = listAll(t, cs)
			require.NotContains(t, got, created[0])
			require.NotContains(t, got, documentsURI("incidents"))
			_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: created[0]})
			require.Error(t, err)

			// Bad input is a tool error.
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "put_document", Arguments: map[string]any{"collection": "Bad Name", "doc": "x", "markdown": "# x\n"}})
			require.NoError(t, err)
			require.True(t, res.IsError)
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_document", Arguments: map[string]any{"collection": "engineering", "doc": "nosuch"}})
			require.NoError(t, err)
			require.True(t, res.IsError)
		})
	}
}

// TestHTTP runs the binary over streamable HTTP and connects a client of
// every protocol version to its one endpoint, /mcp, all at once: each
// reads the knowledge base as over stdio, and each is told, on its own
// stream, of an edit of the document it subscribed to and of a document
// created.
func TestHTTP(t *testing.T) {
	addr := mcptest.StartHTTP(t, binPath, "-page-size", fmt.Sprint(pageSize), "-db", testDB(t))
	url := "http://" + addr + mcpPath

	sessions := make([]*mcp.ClientSession, len(mcptest.Versions))
	notes := make([]*mcptest.Notifications, len(mcptest.Versions))
	for i, version := range mcptest.Versions {
		notes[i] = new(mcptest.Notifications)
		sessions[i] = connectAs(t, url, "", version, notes[i].ClientOptions(nil))
	}
	for i, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) { exercise(t, sessions[i], version) })
	}

	t.Run("Notifications", func(t *testing.T) {
		runbook := documentURI("engineering", "runbook")
		for _, cs := range sessions {
			require.True(t, cs.InitializeResult().Capabilities.Resources.Subscribe, "subscribe capability")
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: runbook}))
		}
		// Each client edits in turn until it is told (a 2026-07-28 client
		// listens in the background), and then creates documents until it
		// hears that the list changed; every other client is connected
		// meanwhile, and is told as well.
		edits, created := 0, 0
		for i, cs := range sessions {
			n := notes[i]
			n.WaitUpdated(t, runbook, func() {
				edits++
				md := fmt.Sprintf("# Production runbook\n\nEdit %d over HTTP.\n", edits)
				callTool(t, cs, "put_document", map[string]any{"collection": "engineering", "doc": "runbook", "markdown": md})
			})
			n.WaitListChanged(t, func() {
				created++
				doc := fmt.Sprintf("http-%d", created)
				callTool(t, cs, "put_document", map[string]any{"collection": "incidents", "doc": doc, "markdown": "# " + doc + "\n"})
			})
		}
	})

	t.Run("OtherPaths", func(t *testing.T) {
		for _, path := range []string{"/", "/mcp/", "/sse", "/mcp/x"} {
			resp, err := mcptest.HTTPClient(t, "").Post("http://"+addr+path, "application/json",
				strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{}}`))
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
		}
	})
}
