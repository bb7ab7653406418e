// Knowledge is an MCP resource server for a team knowledge base, built
// with mcpres: collections of markdown documents, kept in an embedded
// SQLite database (the pure-Go modernc.org/sqlite, no cgo).
//
// It serves:
//
//   - resource://knowledge/collections: the collections and how many
//     documents each holds, as JSON;
//   - resource://knowledge/{collection}/documents: one collection's
//     documents (name, title, size, last update), as JSON;
//   - resource://knowledge/{collection}/document/{doc}: one document, as
//     markdown;
//   - resource://knowledge/{collection}/stats: one collection's
//     statistics (document count, bytes, last update), as JSON;
//   - resource://system/health: the server's status, as JSON.
//
// resources/list holds the two static resources, every collection's
// documents list and statistics, and every document, paged, each page of
// template instances one keyset query. {collection} and {doc} can be
// completed; {doc} completes among the documents of the collection already
// chosen, if any.
//
// The database is the file -db names, by default knowledge.db in the
// mcpres folder of the user cache directory. It is created, with a few
// example documents, on first run, and keeps every edit across restarts;
// -db :memory: serves a database of its own that is lost on exit.
//
// Clients may subscribe to any of these resources that exists: a
// subscription to a document, or to the documents list or statistics of a
// collection, that does not exist is refused as "no such resource"
// (-32602), after a lookup of the primary key (resource.WithExists). The
// tools put_document and delete_document edit the knowledge base:
// subscribers of what changed get notifications/resources/updated, and
// creating or deleting a document sends
// notifications/resources/list_changed.
//
// Run it over stdio, the way MCP hosts launch servers:
//
//	go run ./examples/knowledge
//
// or over streamable HTTP, as http://127.0.0.1:8080/mcp:
//
//	go run ./examples/knowledge -http 127.0.0.1:8080
//
// One URL serves clients of every protocol version, each with its
// notifications (serve.ListenAndServe): clients of 2025-06-18 and
// 2025-11-25 hold a session and receive them on its GET stream; 2026-07-28
// clients need no session and receive them on their subscriptions/listen
// streams. Every other path is 404. Logs go to stderr: on stdio, stdout
// carries the protocol.
//
// resources/list cursors are encrypted with the keys of the file
// -cursor-keys names, else of $MCPRES_CURSOR_KEYS (one base64 key a line,
// the first encrypting, the others still decrypting: see
// cursor.LoadKeys), so that a client's walk through the list survives a
// restart and continues on another replica that holds the same keys.
// Without either, a random key is used, and the server says so at
// start-up (at Warn level over HTTP).
//
// Without -tokens, the HTTP server has no authentication: keep it on a
// loopback address. With -tokens FILE, every HTTP request must carry a
// bearer token listed in FILE (go-sdk's auth.RequireBearerToken; an unknown
// or missing token gets HTTP 401), and each token sees only the collections
// it is granted:
//
//	go run ./examples/knowledge -http 127.0.0.1:8080 -tokens examples/knowledge/tokens.example.json
//
// FILE is JSON (see TokensFile; tokens.example.json holds demo secrets):
//
//	{"tokens": [
//		{"token": "alice-secret", "user": "alice", "collections": ["engineering", "support"]},
//		{"token": "bob-secret", "user": "bob", "collections": ["product"]}
//	]}
//
// where "*" grants every collection. A caller's resources/list then holds
// the static resources and only their collections' documents lists,
// statistics and documents; reading, subscribing to or completing
// anything of another collection is answered exactly as if it did not
// exist; list cursors are bound to the user; the collections resource
// lists only the caller's collections (health still counts everything);
// and the tools refuse collections the caller is not granted. Every
// denial is logged at Info level (the registry's access log; allowed
// accesses are at Debug).
//
// -read-rate N caps resources/read at N a second, in bursts of up to N,
// per caller (per user with -tokens; per client address for anonymous
// HTTP callers; one budget for a stdio session); a read beyond it is
// answered with error 429 "Rate limit exceeded". 0, the default, sets
// no limit.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// The knowledge base's URIs.
const (
	collectionsURI   = "resource://knowledge/collections"
	healthURI        = "resource://system/health"
	documentsTmpl    = "resource://knowledge/{collection}/documents"
	documentTmpl     = "resource://knowledge/{collection}/document/{doc}"
	statsTmpl        = "resource://knowledge/{collection}/stats"
	markdownMIMEType = "text/markdown"
	jsonMIMEType     = "application/json"
)

func main() {
	dbPath := flag.String("db", "", "keep the knowledge base in the SQLite database `file`, created with example documents if need be (default knowledge.db in the user cache directory's mcpres folder; :memory: for one lost on exit)")
	httpAddr := flag.String("http", "", "serve streamable HTTP on `addr` (such as 127.0.0.1:8080) instead of stdio")
	pageSize := flag.Int("page-size", resource.DefaultPageSize, "the most resources one resources/list page holds")
	tokensFile := flag.String("tokens", "", "with -http, require the bearer tokens listed in the JSON `file`, each seeing its own collections")
	readRate := flag.Float64("read-rate", 0, "allow each caller `N` resources/read a second, in bursts of N (0: no limit)")
	cursorKeys := flag.String("cursor-keys", "", "encrypt list cursors with the keys in `file`: one base64 key a line, the first encrypting (default $"+cursor.KeysEnv+", else a random key)")
	flag.Parse()

	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "knowledge: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}

	cfg, err := newConfig(*dbPath, *httpAddr, *pageSize, *tokensFile, *readRate, *cursorKeys)
	if err != nil {
		fmt.Fprintf(os.Stderr, "knowledge: %v\n", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(cfg, logger); err != nil {
		logger.Error("server failed", "error", err)
		os.Exit(1)
	}
}

// A config is what the command line asks for.
type config struct {
	dbPath   string // the SQLite database; "" for DefaultDBPath
	httpAddr string // "" for stdio
	pageSize int
	tokens   *tokenSet // nil: no authentication
	readRate float64   // reads a second per caller; 0: no limit
	// cursors encrypts list cursors; nil means a random key. keysFrom
	// says where its keys come from, for the log: "" for a random key.
	cursors  *cursor.Codec
	keysFrom string
}

// newConfig checks the flags and loads the tokens file, if any, and makes
// the codec of list cursors, with the keys of the file cursorKeysFile, if
// it is not "", else of $MCPRES_CURSOR_KEYS, else a random key.
func newConfig(dbPath, httpAddr string, pageSize int, tokensFile string, readRate float64, cursorKeysFile string) (config, error) {
	cfg := config{dbPath: dbPath, httpAddr: httpAddr, pageSize: pageSize, readRate: readRate}
	if readRate < 0 {
		return config{}, fmt.Errorf("-read-rate %v: want 0 (no limit) or more", readRate)
	}
	cursors, from, err := cursor.LoadCodec(cursorKeysFile, cursor.KeysEnv, nil)
	if err != nil {
		return config{}, fmt.Errorf("cursor keys: %w", err)
	}
	cfg.cursors, cfg.keysFrom = cursors, from
	if tokensFile == "" {
		return cfg, nil
	}
	if httpAddr == "" {
		return config{}, errors.New("-tokens needs -http: bearer tokens are an HTTP matter, and a stdio server serves whoever launched it")
	}
	tokens, err := loadTokens(tokensFile)
	if err != nil {
		return config{}, fmt.Errorf("-tokens: %w", err)
	}
	cfg.tokens = tokens
	return cfg, nil
}

// run opens the knowledge base in cfg.dbPath, creating it if need be, and
// serves it over stdio, or over streamable HTTP on cfg.httpAddr if it is
// set, until the client hangs up (on stdio) or the process is interrupted.
func run(cfg config, logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	path := cfg.dbPath
	if path == "" {
		var err error
		if path, err = DefaultDBPath(); err != nil {
			return err
		}
	}
	store, created, err := OpenStore(ctx, path)
	if err != nil {
		return err
	}
	defer store.Close() // after the registry
	if created {
		logger.Info("created the knowledge base with example documents", "db", path)
	} else {
		logger.Info("opened the knowledge base", "db", path)
	}
	cursor.LogKeys(logger, cfg.keysFrom, cfg.httpAddr != "", "-cursor-keys FILE or $"+cursor.KeysEnv)

	server, reg, err := newServer(store, cfg, logger)
	if err != nil {
		return err
	}
	defer reg.Close() // after the server has stopped
	if cfg.httpAddr != "" {
		opts, err := httpOptions(cfg.tokens, logger)
		if err != nil {
			return err
		}
		opts.Registry = reg // the edge serves listens' subscriptions, and names callers as reg does
		return serve.ListenAndServe(ctx, cfg.httpAddr, server, opts)
	}
	err = server.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil // interrupted
	}
	return err
}

// newServer returns an MCP server for the knowledge base in store,
// configured by cfg (but for cfg.dbPath: store is open already), and the
// registry it serves, which the caller closes once the server has stopped,
// before it closes store. With cfg.tokens set, the registry lets each
// caller at the collections their token grants, and logs the refusals of
// its access log at Info level.
func newServer(store *Store, cfg config, logger *slog.Logger) (*mcp.Server, *resource.Registry, error) {
	kb := &knowledge{store: store, logger: logger, started: time.Now(), restricted: cfg.tokens != nil}
	opts := &resource.Options{
		Logger:     logger,
		PageSize:   cfg.pageSize,
		Cursors:    cfg.cursors,
		RateLimits: resource.RateLimits{Read: readLimit(cfg.readRate)},
	}
	if kb.restricted {
		opts.Authorize = kb.authorize
		// An operator sees every refusal; every access is at Debug.
		opts.AccessLog = resource.AccessLogOptions{DeniedLevel: slog.LevelInfo}
	}
	reg, err := resource.NewRegistry(opts)
	if err != nil {
		return nil, nil, err
	}
	kb.reg = reg
	if err := kb.register(); err != nil {
		reg.Close()
		return nil, nil, err
	}
	// The server serves the registry's subscriptions too; kb.put reports
	// changes with reg.Changed.
	server, err := reg.NewServer(&mcp.Implementation{Name: "knowledge", Title: "mcpres knowledge base", Version: "v0.1.0"}, nil)
	if err != nil {
		reg.Close()
		return nil, nil, err
	}
	kb.addTools(server)
	return server, reg, nil
}

// readLimit is the rate limit of perSecond reads a second, in bursts of as
// many (at least one); 0 means no limit (nil).
func readLimit(perSecond float64) *resource.RateLimit {
	if perSecond <= 0 {
		return nil
	}
	return &resource.RateLimit{Rate: rate.Limit(perSecond), Burst: max(1, int(perSecond))}
}

// knowledge serves a store through a registry.
type knowledge struct {
	store   *Store
	reg     *resource.Registry
	logger  *slog.Logger
	started time.Time
	// restricted is set when callers present bearer tokens: each then
	// sees and edits only the collections their token grants.
	restricted bool
}

// register adds the knowledge base's resources and templates to k.reg.
func (k *knowledge) register() error {
	if err := k.reg.Add(&mcp.Resource{
		URI: collectionsURI, Name: "collections", Title: "Collections",
		Description: "Every collection, with its number of documents.", MIMEType: jsonMIMEType,
	}, k.readCollections); err != nil {
		return err
	}
	if err := k.reg.Add(&mcp.Resource{
		URI: healthURI, Name: "health", Title: "Health",
		Description: "The server's status, counts and uptime.", MIMEType: jsonMIMEType,
	}, k.readHealth); err != nil {
		return err
	}
	if err := k.reg.AddTemplate(&mcp.ResourceTemplate{
		URITemplate: documentsTmpl, Name: "documents", Title: "Documents of a collection",
		Description: "The documents of {collection}: name, title, size and last update.", MIMEType: jsonMIMEType,
	}, k.readDocuments,
		resource.WithExists(k.collectionExists),
		resource.WithCompleter("collection", k.completeCollection),
		resource.WithInstances(k.listCollections(documentsTmpl, "documents", "Documents of ", "The %d documents of %s.")),
	); err != nil {
		return err
	}
	if err := k.reg.AddTemplate(&mcp.ResourceTemplate{
		URITemplate: statsTmpl, Name: "stats", Title: "Statistics of a collection",
		Description: "The number of documents of {collection}, their size in bytes and their latest update.", MIMEType: jsonMIMEType,
	}, k.readStats,
		resource.WithExists(k.collectionExists),
		resource.WithCompleter("collection", k.completeCollection),
		resource.WithInstances(k.listCollections(statsTmpl, "stats", "Statistics of ", "How much the %d documents of %s hold, and their latest update.")),
	); err != nil {
		return err
	}
	return k.reg.AddTemplate(&mcp.ResourceTemplate{
		URITemplate: documentTmpl, Name: "document", Title: "Document",
		Description: "The document {doc} of {collection}, in markdown.", MIMEType: markdownMIMEType,
	}, k.readDocument,
		resource.WithExists(k.documentExists),
		resource.WithCompleter("collection", k.completeCollection),
		resource.WithCompleter("doc", k.completeDoc),
		resource.WithInstances(k.listDocuments),
	)
}

// documentExists tells resources/subscribe whether a document exists: one
// lookup of the primary key.
func (k *knowledge) documentExists(ctx context.Context, vars resource.Vars) (bool, error) {
	return k.store.HasDocument(ctx, vars.Get("collection"), vars.Get("doc"))
}

// collectionExists tells resources/subscribe whether the collection of a
// documents list or statistics exists: whether it holds a document.
func (k *knowledge) collectionExists(ctx context.Context, vars resource.Vars) (bool, error) {
	return k.store.HasCollection(ctx, vars.Get("collection"))
}

// documentURI returns the URI of a document, as clients send it. Store
// names need no percent-encoding, but Expand encodes what needs it,
// which concatenation would not.
func (k *knowledge) documentURI(collection, doc string) (string, error) {
	return k.reg.Expand(documentTmpl, "collection", collection, "doc", doc)
}

// jsonResult returns v, indented, as a read result.
func jsonResult(v any) (*mcp.ReadResourceResult, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: string(data) + "\n"}}}, nil
}

// readCollections lists the collections the caller may see: all of them
// unless k is restricted.
func (k *knowledge) readCollections(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	all, err := k.store.Collections(ctx)
	if err != nil {
		return nil, err
	}
	cols := slices.DeleteFunc(all, func(c CollectionInfo) bool { return !k.mayUse(req, c.Name) })
	if cols == nil {
		cols = []CollectionInfo{} // [], not null
	}
	return jsonResult(map[string]any{"collections": cols})
}

func (k *knowledge) readHealth(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	cols, docs, err := k.store.Counts(ctx)
	if err != nil {
		return nil, err
	}
	return jsonResult(map[string]any{
		"status":        "ok",
		"collections":   cols,
		"documents":     docs,
		"uptimeSeconds": int64(time.Since(k.started).Seconds()),
	})
}

func (k *knowledge) readDocuments(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
	collection := vars.Get("collection")
	docs, err := k.store.Documents(ctx, collection) // resource.ErrNotFound if there is no such collection
	if err != nil {
		return nil, err
	}
	return jsonResult(map[string]any{"collection": collection, "documents": docs})
}

func (k *knowledge) readDocument(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
	d, err := k.store.Document(ctx, vars.Get("collection"), vars.Get("doc")) // or resource.ErrNotFound
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: d.Markdown}}}, nil
}

// readStats reads a collection's statistics: {"collection": …,
// "documents": N, "bytes": B, "updated": "…"}, the time of its latest
// update in RFC 3339.
func (k *knowledge) readStats(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
	st, err := k.store.Stats(ctx, vars.Get("collection")) // or resource.ErrNotFound
	if err != nil {
		return nil, err
	}
	return jsonResult(st)
}

// listCollections returns the instance list of the template tmpl, whose
// one variable is {collection}, with one resource per collection, keyed by
// collection name: Name is "collection/"+name, Title title+collection, and
// Description describe filled in with the collection's number of documents
// and name. Each page is one keyset query (Store.CollectionsAfter).
func (k *knowledge) listCollections(tmpl, name, title, describe string) resource.ListFunc {
	return func(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
		cols, err := k.store.CollectionsAfter(ctx, after, limit)
		if err != nil {
			return nil, err
		}
		out := make([]cursor.Item[*mcp.Resource], len(cols))
		for i, c := range cols {
			uri, err := k.reg.Expand(tmpl, "collection", c.Name)
			if err != nil {
				return nil, err // logged; the client gets -32603
			}
			out[i] = cursor.Item[*mcp.Resource]{Key: c.Name, Value: &mcp.Resource{
				URI: uri, Name: c.Name + "/" + name, Title: title + c.Name,
				Description: fmt.Sprintf(describe, c.Documents, c.Name), MIMEType: jsonMIMEType,
			}}
		}
		return out, nil
	}
}

// listDocuments lists every document, keyed "collection/doc": each page is
// one keyset query (Store.DocumentsAfter).
func (k *knowledge) listDocuments(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
	docs, err := k.store.DocumentsAfter(ctx, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]cursor.Item[*mcp.Resource], len(docs))
	for i, d := range docs {
		uri, err := k.documentURI(d.Collection, d.Name)
		if err != nil {
			return nil, err // logged; the client gets -32603
		}
		key := d.Key()
		out[i] = cursor.Item[*mcp.Resource]{Key: key, Value: &mcp.Resource{
			URI: uri, Name: key, Title: d.Title,
			MIMEType: markdownMIMEType, Size: int64(d.Size),
		}}
	}
	return out, nil
}

// completeCollection proposes the collections whose names start with
// partial, ignoring case.
func (k *knowledge) completeCollection(ctx context.Context, partial string, bound map[string]string) ([]string, error) {
	cols, err := k.store.Collections(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range cols {
		if hasPrefixFold(c.Name, partial) {
			out = append(out, c.Name)
		}
	}
	return out, nil
}

// completeDoc proposes the documents of the collection already chosen
// (context.arguments), or of every collection if none is, whose names start
// with partial, ignoring case.
func (k *knowledge) completeDoc(ctx context.Context, partial string, bound map[string]string) ([]string, error) {
	names, err := k.store.Names(ctx, bound["collection"]) // "": every collection's
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(names, func(name string) bool { return !hasPrefixFold(name, partial) }), nil
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// PutInput is the input of the put_document tool.
type PutInput struct {
	Collection string `json:"collection" jsonschema:"the collection, created if needed (a-z, 0-9, '.', '_', '-')"`
	Doc        string `json:"doc" jsonschema:"the document name (a-z, 0-9, '.', '_', '-')"`
	Markdown   string `json:"markdown" jsonschema:"the document's new content, in markdown"`
}

// DeleteInput is the input of the delete_document tool.
type DeleteInput struct {
	Collection string `json:"collection" jsonschema:"the collection"`
	Doc        string `json:"doc" jsonschema:"the document name"`
}

// EditOutput is what the editing tools return.
type EditOutput struct {
	URI     string `json:"uri"`
	Created bool   `json:"created,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
}

// addTools adds the tools that edit the knowledge base.
func (k *knowledge) addTools(server *mcp.Server) {
	mcp.AddTool(server, &mcp.Tool{
		Name:        "put_document",
		Title:       "Put document",
		Description: "Create or replace a markdown document in the knowledge base; subscribers of the document are notified.",
	}, k.put)
	mcp.AddTool(server, &mcp.Tool{
		Name:        "delete_document",
		Title:       "Delete document",
		Description: "Delete a document from the knowledge base.",
	}, k.delete)
}

func (k *knowledge) put(ctx context.Context, req *mcp.CallToolRequest, in PutInput) (*mcp.CallToolResult, EditOutput, error) {
	if strings.TrimSpace(in.Markdown) == "" {
		return nil, EditOutput{}, errors.New("markdown is empty; use delete_document to delete a document")
	}
	if !k.mayUse(req, in.Collection) {
		// The same answer whether or not the collection exists.
		return nil, EditOutput{}, fmt.Errorf("you may not write to collection %q", in.Collection)
	}
	newDoc, err := k.store.Put(ctx, in.Collection, in.Doc, in.Markdown)
	if err != nil {
		return nil, EditOutput{}, err // reported to the client as a tool error
	}
	k.changed(in.Collection, in.Doc, newDoc)
	uri, err := k.documentURI(in.Collection, in.Doc)
	if err != nil {
		return nil, EditOutput{}, err
	}
	return nil, EditOutput{URI: uri, Created: newDoc}, nil
}

func (k *knowledge) delete(ctx context.Context, req *mcp.CallToolRequest, in DeleteInput) (*mcp.CallToolResult, EditOutput, error) {
	// A collection the caller may not see looks like a missing one.
	deleted := false
	if k.mayUse(req, in.Collection) {
		var err error
		if deleted, err = k.store.Delete(ctx, in.Collection, in.Doc); err != nil {
			return nil, EditOutput{}, err
		}
	}
	if !deleted {
		return nil, EditOutput{}, fmt.Errorf("no document %q in collection %q", in.Doc, in.Collection)
	}
	k.changed(in.Collection, in.Doc, true)
	uri, err := k.documentURI(in.Collection, in.Doc)
	if err != nil {
		return nil, EditOutput{}, err
	}
	return nil, EditOutput{URI: uri, Deleted: true}, nil
}

// changed tells subscribers that a document changed, and with it its
// collection's documents list and statistics, the collections list (its
// counts) and health. If a document was created or deleted, resources/list
// changed too. A URI that cannot be built or that no client could
// subscribe to is a bug, logged at Error: its subscribers would never be
// told.
func (k *knowledge) changed(collection, doc string, listChanged bool) {
	uris := []string{collectionsURI, healthURI}
	for _, inst := range []struct {
		tmpl string
		vars []string
	}{
		{documentTmpl, []string{"collection", collection, "doc", doc}},
		{documentsTmpl, []string{"collection", collection}},
		{statsTmpl, []string{"collection", collection}},
	} {
		uri, err := k.reg.Expand(inst.tmpl, inst.vars...)
		if err != nil {
			k.logger.Error("cannot notify the subscribers of a change", "template", inst.tmpl, "vars", inst.vars, "error", err)
			continue
		}
		uris = append(uris, uri)
	}
	for _, uri := range uris {
		if err := k.reg.Changed(uri); err != nil {
			k.logger.Error("cannot notify the subscribers of a change", "uri", uri, "error", err)
		}
	}
	if listChanged {
		k.reg.NotifyListChanged()
	}
}

// mcpPath is the path of the MCP endpoint: package serve's default. Every
// other path is 404.
const mcpPath = serve.DefaultPath

// httpOptions returns the options of the HTTP server: package serve's
// defaults, with bearer-token authentication if tokens is not nil, and
// the read-header timeout $KNOWLEDGE_READ_HEADER_TIMEOUT (a Go duration)
// sets, for tests.
func httpOptions(tokens *tokenSet, logger *slog.Logger) (*serve.Options, error) {
	opts := &serve.Options{
		Logger: logger,
		Wrap: func(h http.Handler) http.Handler {
			// Every request of a session carries the token; go-sdk
			// refuses a session's requests made with another user's.
			// Rate budgets (-read-rate) follow the caller: a token's
			// user, or an anonymous client's address, which the edge
			// records.
			if tokens == nil {
				return h
			}
			return tokens.requireToken(h)
		},
	}
	if v := os.Getenv("KNOWLEDGE_READ_HEADER_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("KNOWLEDGE_READ_HEADER_TIMEOUT=%q: want a positive duration such as 200ms", v)
		}
		opts.ReadHeaderTimeout = d
	}
	return opts, nil
}
