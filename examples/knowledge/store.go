package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// A Store is an in-memory knowledge base: named collections of named
// markdown documents. It is safe for concurrent use. A collection exists
// while it holds at least one document.
type Store struct {
	mu          sync.RWMutex
	collections map[string]map[string]*Document // collection → name → document
}

// A Document is one markdown document. Its fields are never changed once
// the document is in a store: Put replaces it.
type Document struct {
	Collection string
	Name       string
	Title      string // the first "# " heading, else the name
	Markdown   string
	Updated    time.Time
}

// Key is the document's key in resources/list: "collection/name".
func (d *Document) Key() string { return d.Collection + "/" + d.Name }

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
	Size    int       `json:"size"`
	Updated time.Time `json:"updated"`
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

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{collections: make(map[string]map[string]*Document)}
}

// seed is the content of a new example store.
var seed = []struct{ collection, name, markdown string }{
	{"engineering", "onboarding", "# Engineering onboarding\n\nWelcome aboard! In your first week:\n\n1. Get access to the repository and CI.\n2. Run the test suite locally.\n3. Pair with your buddy on a small fix.\n"},
	{"engineering", "runbook", "# Production runbook\n\n## Paging\n\nAcknowledge within 5 minutes; escalate after 15.\n\n## Rollback\n\nRedeploy the previous release tag, then open an incident document.\n"},
	{"engineering", "code-review", "# Code review guide\n\n- Review within one working day.\n- Prefer small changes.\n- Say what must change and what is a suggestion.\n"},
	{"product", "roadmap", "# Product roadmap\n\n| Quarter | Theme |\n|---|---|\n| Q1 | Onboarding |\n| Q2 | Search |\n| Q3 | Integrations |\n"},
	{"product", "personas", "# Personas\n\n**Dana, team lead**: wants answers fast.\n\n**Sam, new hire**: wants to know where things are.\n"},
	{"support", "faq", "# Support FAQ\n\n**How do I reset my password?** Use the link on the sign-in page.\n\n**Where are invoices?** Under Settings, Billing.\n"},
}

// NewSeededStore returns a store holding a few example documents.
func NewSeededStore() *Store {
	s := NewStore()
	for _, d := range seed {
		if _, _, err := s.Put(d.collection, d.name, d.markdown); err != nil {
			panic(err) // the seed is fixed
		}
	}
	return s
}

// Put creates or replaces the document name in collection, creating the
// collection if needed. It reports whether the document, and the
// collection, are new.
func (s *Store) Put(collection, name, markdown string) (newDoc, newCollection bool, err error) {
	if err := CheckName("collection", collection); err != nil {
		return false, false, err
	}
	if err := CheckName("document", name); err != nil {
		return false, false, err
	}
	d := &Document{Collection: collection, Name: name, Title: title(name, markdown), Markdown: markdown, Updated: time.Now().UTC()}
	s.mu.Lock()
	defer s.mu.Unlock()
	docs := s.collections[collection]
	if docs == nil {
		docs = make(map[string]*Document)
		s.collections[collection] = docs
		newCollection = true
	}
	_, exists := docs[name]
	docs[name] = d
	return !exists, newCollection, nil
}

// Delete removes the document name from collection and reports whether it
// was there. A collection left empty is removed too.
func (s *Store) Delete(collection, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	docs := s.collections[collection]
	if _, ok := docs[name]; !ok {
		return false
	}
	delete(docs, name)
	if len(docs) == 0 {
		delete(s.collections, collection)
	}
	return true
}

// Document returns the document name in collection.
func (s *Store) Document(collection, name string) (*Document, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, ok := s.collections[collection][name]
	return d, ok
}

// Collections returns every collection, by name.
func (s *Store) Collections() []CollectionInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]CollectionInfo, 0, len(s.collections))
	for name, docs := range s.collections {
		out = append(out, CollectionInfo{Name: name, Documents: len(docs)})
	}
	slices.SortFunc(out, func(a, b CollectionInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Documents returns the documents of collection, by name, and whether the
// collection exists.
func (s *Store) Documents(collection string) ([]DocumentInfo, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	docs, ok := s.collections[collection]
	if !ok {
		return nil, false
	}
	out := make([]DocumentInfo, 0, len(docs))
	for _, d := range docs {
		out = append(out, DocumentInfo{Name: d.Name, Title: d.Title, Size: len(d.Markdown), Updated: d.Updated})
	}
	slices.SortFunc(out, func(a, b DocumentInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, true
}

// Counts returns the number of collections and of documents.
func (s *Store) Counts() (collections, documents int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, docs := range s.collections {
		documents += len(docs)
	}
	return len(s.collections), documents
}

// DocumentsAfter returns up to limit documents whose keys
// ("collection/name") come after after, in increasing key order.
func (s *Store) DocumentsAfter(after string, limit int) []*Document {
	s.mu.RLock()
	var all []*Document
	for _, docs := range s.collections {
		for _, d := range docs {
			if d.Key() > after {
				all = append(all, d)
			}
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(all, func(a, b *Document) int { return strings.Compare(a.Key(), b.Key()) })
	return all[:min(len(all), limit)]
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
