package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/mcpres/mcpres/resource"

	_ "modernc.org/sqlite" // database/sql driver "sqlite", pure Go
)

// A Store is a knowledge base kept in an SQLite database: named
// collections of named markdown documents. It is safe for concurrent use,
// by several goroutines and by several processes sharing the database
// file. A collection exists while it holds at least one document.
//
// The methods that look something up return resource.ErrNotFound when it
// does not exist, so that read functions can return their errors as they
// are.
type Store struct {
	db *sql.DB
}

// A Document is one markdown document.
type Document struct {
	Collection string
	Name       string
	Title      string // the first "# " heading, else the name
	Markdown   string
	Updated    time.Time
}

// A DocumentEntry is a document as resources/list shows it: where it is
// and what DocumentInfo says of it, without its markdown.
type DocumentEntry struct {
	Collection string
	DocumentInfo
}

// Key is the document's key in resources/list: "collection/name".
func (d DocumentEntry) Key() string { return d.Collection + "/" + d.Name }

// A CollectionInfo describes a collection in resource://knowledge/collections.
type CollectionInfo struct {
	Name      string `json:"name"`
	Documents int    `json:"documents"`
}

// A DocumentInfo describes a document in
// resource://knowledge/{collection}/documents.
type DocumentInfo struct {
	Name    string    `json:"name"`
	Title   string    `json:"title"`
	Size    int       `json:"size"` // bytes of markdown
	Updated time.Time `json:"updated"`
}

// CollectionStats is the content of resource://knowledge/{collection}/stats.
type CollectionStats struct {
	Collection string    `json:"collection"`
	Documents  int       `json:"documents"`
	Bytes      int64     `json:"bytes"`   // of markdown, over every document
	Updated    time.Time `json:"updated"` // the latest update of a document
}

// validName is the form of collection and document names: lowercase
// letters, digits, '.', '_' and '-', starting with a letter or digit. Such
// names need no percent-encoding in a URI.
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// CheckName returns an error if name is not a valid collection or document
// name.
func CheckName(what, name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("invalid %s name %q: use 1 to 64 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit", what, name)
	}
	return nil
}

// MemoryDB, as the path of OpenStore (and -db), is a new in-memory
// database, lost when the store is closed: for tests and demonstrations.
const MemoryDB = ":memory:"

// DefaultDBPath returns where the knowledge base is kept unless -db says
// otherwise: knowledge.db in the mcpres folder of the user cache directory
// (of the temporary directory if there is none), which it creates if need
// be.
func DefaultDBPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "mcpres")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return filepath.Join(dir, "knowledge.db"), nil
}

// schemaVersion is the PRAGMA user_version of a database whose schema
// OpenStore has created; a new database's is 0.
const schemaVersion = 1

// schema creates the documents table. updated holds UTC times in
// timeLayout.
//
// documents_by_key indexes the documents' list key, collection || '/' ||
// name, so that a page of resources/list is one keyset query over the
// index (see DocumentsAfter). The primary key's order, by collection and
// then name, is not the order of the keys: "ops-eu/a" comes before
// "ops/b" ('-' < '/') although "ops" comes before "ops-eu".
var schema = []string{
	`CREATE TABLE documents (
		collection TEXT NOT NULL,
		name       TEXT NOT NULL,
		title      TEXT NOT NULL,
		markdown   TEXT NOT NULL,
		updated    TEXT NOT NULL,
		PRIMARY KEY (collection, name)
	)`,
	`CREATE INDEX documents_by_key ON documents (` + docKey + `)`,
}

// docKey is the SQL expression of a document's list key, DocumentEntry.Key.
// Its comparisons, like every comparison of TEXT that names no collation,
// use SQLite's default BINARY collation: memcmp over the UTF-8 bytes,
// which is how Go compares strings and the order resource.ListFunc wants
// keys in.
const docKey = "collection || '/' || name"

// timeLayout is how updated is stored: RFC 3339 in UTC with nanoseconds,
// always the same width, so that the text order of two times (max(updated)
// in Stats) is their time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// seed is the content of a new knowledge base.
var seed = []struct{ collection, name, markdown string }{
	{"engineering", "onboarding", "# Engineering onboarding\n\nWelcome aboard! In your first week:\n\n1. Get access to the repository and CI.\n2. Run the test suite locally.\n3. Pair with your buddy on a small fix.\n"},
	{"engineering", "runbook", "# Production runbook\n\n## Paging\n\nAcknowledge within 5 minutes; escalate after 15.\n\n## Rollback\n\nRedeploy the previous release tag, then open an incident document.\n"},
	{"engineering", "code-review", "# Code review guide\n\n- Review within one working day.\n- Prefer small changes.\n- Say what must change and what is a suggestion.\n"},
	{"product", "roadmap", "# Product roadmap\n\n| Quarter | Theme |\n|---|---|\n| Q1 | Onboarding |\n| Q2 | Search |\n| Q3 | Integrations |\n"},
	{"product", "personas", "# Personas\n\n**Dana, team lead**: wants answers fast.\n\n**Sam, new hire**: wants to know where things are.\n"},
	{"support", "faq", "# Support FAQ\n\n**How do I reset my password?** Use the link on the sign-in page.\n\n**Where are invoices?** Under Settings, Billing.\n"},
}

// OpenStore opens the knowledge base in the SQLite database at path (a
// file, or MemoryDB). If the database is new (the file does not exist, or
// holds no knowledge base yet) it creates the schema and the example
// documents, in one transaction, and reports created. The caller closes
// the store.
func OpenStore(ctx context.Context, path string) (s *Store, created bool, err error) {
	if path == "" {
		return nil, false, errors.New("no database path")
	}
	// WAL lets readers and a writer work at once, in this process and
	// others; busy_timeout makes a writer wait for another instead of
	// failing; _txlock=immediate starts every transaction (the writes')
	// with the write lock, so that two cannot both read and then both
	// wait to write.
	params := "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", "file:"+path+params)
	if err != nil {
		return nil, false, err
	}
	if path == MemoryDB {
		// Each connection to ":memory:" is a database of its own: keep
		// one, for good.
		db.SetMaxOpenConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
	}
	s = &Store{db: db}
	if created, err = s.init(ctx); err != nil {
		db.Close()
		return nil, false, fmt.Errorf("database %s: %w", path, err)
	}
	return s, created, nil
}

// init creates the schema and the example documents if the database has
// not got them yet, and reports whether it did.
func (s *Store) init(ctx context.Context) (created bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return false, err
	}
	switch version {
	case schemaVersion:
		return false, nil
	case 0:
	default:
		return false, fmt.Errorf("schema version %d, not the %d this program knows", version, schemaVersion)
	}
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return false, err
		}
	}
	now := time.Now()
	for _, d := range seed {
		if err := upsert(ctx, tx, d.collection, d.name, d.markdown, now); err != nil {
			return false, err
		}
	}
	// The version is part of the transaction: a database is seeded once.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// upsert creates or replaces a document.
func upsert(ctx context.Context, tx *sql.Tx, collection, name, markdown string, updated time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO documents (collection, name, title, markdown, updated) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (collection, name) DO UPDATE SET title = excluded.title, markdown = excluded.markdown, updated = excluded.updated`,
		collection, name, title(name, markdown), markdown, updated.UTC().Format(timeLayout))
	return err
}

// parseTime parses a stored time.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad time in the database: %w", err)
	}
	return t, nil
}

// Put creates or replaces the document name in collection, creating the
// collection if needed, and reports whether the document is new.
func (s *Store) Put(ctx context.Context, collection, name, markdown string) (newDoc bool, err error) {
	if err := CheckName("collection", collection); err != nil {
		return false, err
	}
	if err := CheckName("document", name); err != nil {
		return false, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var exists bool
	if err := tx.QueryRowContext(ctx, hasDocumentQuery, collection, name).Scan(&exists); err != nil {
		return false, err
	}
	if err := upsert(ctx, tx, collection, name, markdown, time.Now()); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	return !exists, nil
}

// Delete removes the document name from collection and reports whether it
// was there. A collection left empty is gone.
func (s *Store) Delete(ctx context.Context, collection, name string) (bool, error) {
	res, err := s.db.ExecContext(ctx, "DELETE FROM documents WHERE collection = ? AND name = ?", collection, name)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Document returns the document name in collection, or
// resource.ErrNotFound.
func (s *Store) Document(ctx context.Context, collection, name string) (*Document, error) {
	d := &Document{Collection: collection, Name: name}
	var updated string
	err := s.db.QueryRowContext(ctx, "SELECT title, markdown, updated FROM documents WHERE collection = ? AND name = ?",
		collection, name).Scan(&d.Title, &d.Markdown, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, resource.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if d.Updated, err = parseTime(updated); err != nil {
		return nil, err
	}
	return d, nil
}

// hasDocumentQuery tells whether a document exists, for HasDocument and
// Put: one lookup of the primary key.
const hasDocumentQuery = `SELECT EXISTS (SELECT 1 FROM documents WHERE collection = ? AND name = ?)`

// HasDocument reports whether collection holds a document named name.
func (s *Store) HasDocument(ctx context.Context, collection, name string) (bool, error) {
	var ok bool
	err := s.db.QueryRowContext(ctx, hasDocumentQuery, collection, name).Scan(&ok)
	return ok, err
}

// hasCollectionQuery is HasCollection's query: one search of the primary
// key by its first column, which stops at the first document.
const hasCollectionQuery = `SELECT EXISTS (SELECT 1 FROM documents WHERE collection = ?)`

// HasCollection reports whether collection exists: whether it holds a
// document.
func (s *Store) HasCollection(ctx context.Context, collection string) (bool, error) {
	var ok bool
	err := s.db.QueryRowContext(ctx, hasCollectionQuery, collection).Scan(&ok)
	return ok, err
}

// Collections returns every collection, by name.
func (s *Store) Collections(ctx context.Context) ([]CollectionInfo, error) {
	return s.CollectionsAfter(ctx, "", -1) // SQLite reads LIMIT -1 as no limit
}

// collectionsAfterQuery is CollectionsAfter's keyset query. It walks the
// primary key; collection names are compared bytewise (TEXT without a
// collation is compared with SQLite's default BINARY collation), the order
// resource.ListFunc wants keys in.
const collectionsAfterQuery = `SELECT collection, count(*) FROM documents
	WHERE collection > ? GROUP BY collection ORDER BY collection LIMIT ?`

// CollectionsAfter returns up to limit collections whose names come after
// after, by name, in one keyset query.
func (s *Store) CollectionsAfter(ctx context.Context, after string, limit int) ([]CollectionInfo, error) {
	rows, err := s.db.QueryContext(ctx, collectionsAfterQuery, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CollectionInfo
	for rows.Next() {
		var c CollectionInfo
		if err := rows.Scan(&c.Name, &c.Documents); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Documents returns the documents of collection, by name, or
// resource.ErrNotFound if there is no such collection.
func (s *Store) Documents(ctx context.Context, collection string) ([]DocumentInfo, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, title, octet_length(markdown), updated FROM documents
		WHERE collection = ? ORDER BY name`, collection)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []DocumentInfo
	for rows.Next() {
		var d DocumentInfo
		var updated string
		if err := rows.Scan(&d.Name, &d.Title, &d.Size, &updated); err != nil {
			return nil, err
		}
		if d.Updated, err = parseTime(updated); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, resource.ErrNotFound
	}
	return out, nil
}

// documentsAfterQuery is DocumentsAfter's keyset query. It walks the
// index documents_by_key; keys are compared bytewise (see docKey).
const documentsAfterQuery = `SELECT collection, name, title, octet_length(markdown), updated FROM documents
	WHERE ` + docKey + ` > ? ORDER BY ` + docKey + ` LIMIT ?`

// DocumentsAfter returns up to limit documents whose keys
// ("collection/name", DocumentEntry.Key) come after after, in increasing
// key order, in one keyset query.
func (s *Store) DocumentsAfter(ctx context.Context, after string, limit int) ([]DocumentEntry, error) {
	rows, err := s.db.QueryContext(ctx, documentsAfterQuery, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]DocumentEntry, 0, limit)
	for rows.Next() {
		var d DocumentEntry
		var updated string
		if err := rows.Scan(&d.Collection, &d.Name, &d.Title, &d.Size, &updated); err != nil {
			return nil, err
		}
		if d.Updated, err = parseTime(updated); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// Names returns the names of the documents of collection, or of every
// collection if collection is "", sorted and without repeats.
func (s *Store) Names(ctx context.Context, collection string) ([]string, error) {
	q, args := "SELECT DISTINCT name FROM documents ORDER BY name", []any(nil)
	if collection != "" {
		q, args = "SELECT name FROM documents WHERE collection = ? ORDER BY name", []any{collection}
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// Holding returns the collections that hold a document named name, by
// name.
func (s *Store) Holding(ctx context.Context, name string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT collection FROM documents WHERE name = ? ORDER BY collection", name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Stats returns the statistics of collection, computed by one aggregate
// query over its documents, or resource.ErrNotFound if there is no such
// collection.
func (s *Store) Stats(ctx context.Context, collection string) (*CollectionStats, error) {
	st := &CollectionStats{Collection: collection}
	var updated string
	err := s.db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(octet_length(markdown)), 0), coalesce(max(updated), '')
		FROM documents WHERE collection = ?`, collection).Scan(&st.Documents, &st.Bytes, &updated)
	if err != nil {
		return nil, err
	}
	if st.Documents == 0 {
		return nil, resource.ErrNotFound
	}
	if st.Updated, err = parseTime(updated); err != nil {
		return nil, err
	}
	return st, nil
}

// Counts returns the number of collections and of documents.
func (s *Store) Counts(ctx context.Context) (collections, documents int, err error) {
	err = s.db.QueryRowContext(ctx, "SELECT count(DISTINCT collection), count(*) FROM documents").Scan(&collections, &documents)
	return collections, documents, err
}

// title returns the text of markdown's first level-one heading, or name if
// it has none.
func title(name, markdown string) string {
	for line := range strings.Lines(markdown) {
		if t, ok := strings.CutPrefix(strings.TrimSpace(line), "# "); ok && strings.TrimSpace(t) != "" {
			return strings.TrimSpace(t)
		}
	}
	return name
}
