package main

import (
	"container/list"
	"errors"
	"sync"
)

// defaultListCache is what -list-cache defaults to: room for the index of
// a directory of about a million and a half files with 12-byte names, its
// MIME notes included, or of many smaller ones.
const defaultListCache = 64 << 20

// An indexCache keeps directory indexes (see dirIndex), by the
// directory's path, within a budget of bytes: together, the indexes it
// holds and those being built (which reserve their bytes as they grow)
// never take more than its limit. To make room it drops the least
// recently used index first. An index it drops is freed once the list
// requests that are walking it are done with it.
//
// It keeps each index with the version of the directory it was read from
// (see dirVersion), and gives it out only for that version: a directory
// whose entries have changed since is read again.
//
// An indexCache is safe for concurrent use. The zero limit keeps nothing:
// every directory is then scanned (see dirCursor).
type indexCache struct {
	limit int64

	mu    sync.Mutex
	used  int64                    // bytes of the indexes held and of the reservations
	lru   list.List                // of *cachedIndex, the most recently used first
	byDir map[string]*list.Element // by the directory's path relative to the root

	mimes mimeTable // the MIME types the notes of its indexes hold
}

// A cachedIndex is one directory's entry in an indexCache.
type cachedIndex struct {
	rel  string
	ver  dirVersion
	idx  *dirIndex // nil: too large for the cache; the directory is scanned
	size int64
}

// markerSize is what an indexCache counts for a directory it records as
// too large to index: the record itself.
const markerSize = 256

// errTooLarge stops the build of an index that would take more than the
// cache's whole limit; errNoRoom one that does not fit beside the indexes
// other requests are building.
var (
	errTooLarge = errors.New("directory index larger than the cache")
	errNoRoom   = errors.New("no room in the cache for the directory index")
)

// newIndexCache returns a cache of at most limit bytes of indexes. A
// limit of zero or less keeps nothing.
func newIndexCache(limit int64) *indexCache {
	return &indexCache{limit: max(limit, 0), byDir: make(map[string]*list.Element), mimes: mimeTable{ids: make(map[string]uint16)}}
}

// get returns the index of the directory rel if the cache holds one read
// from version v of it, and whether it holds a record of v at all: a
// record with a nil index says the directory is too large to index. An
// index of another version is dropped.
func (c *indexCache) get(rel string, v dirVersion) (idx *dirIndex, found bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byDir[rel]
	if e == nil {
		return nil, false
	}
	ci := e.Value.(*cachedIndex)
	if !ci.ver.equal(v) {
		c.remove(e) // stale: free its bytes now
		return nil, false
	}
	c.lru.MoveToFront(e)
	return ci.idx, true
}

// A reservation is the budget an index takes while it is built.
type reservation struct {
	c *indexCache
	n int64 // bytes reserved
}

// reserve returns an empty reservation in c, for an index about to be
// built.
func (c *indexCache) reserve() *reservation { return &reservation{c: c} }

// grow adds n bytes to r, dropping the least recently used indexes to make
// room. It returns errTooLarge, reserving nothing, if r would exceed the
// cache's limit by itself, and errNoRoom if it would with the other
// reservations, once every index is dropped.
func (r *reservation) grow(n int64) error {
	c := r.c
	if r.n+n > c.limit {
		return errTooLarge
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.used+n > c.limit && c.lru.Len() > 0 {
		c.remove(c.lru.Back())
	}
	if c.used+n > c.limit {
		return errNoRoom
	}
	c.used += n
	r.n += n
	return nil
}

// release gives r's bytes back, for an index that will not be kept.
func (r *reservation) release() {
	r.c.mu.Lock()
	r.c.used -= r.n
	r.c.mu.Unlock()
	r.n = 0
}

// add records idx, whose bytes r holds, as the index of version v of the
// directory rel, replacing what the cache held for rel; r is spent. A nil
// idx records that version v is too large to index: for that, add reserves
// markerSize bytes itself, and records nothing if there is no room.
func (c *indexCache) add(rel string, v dirVersion, idx *dirIndex, r *reservation) {
	if idx == nil {
		r = c.reserve()
		if r.grow(markerSize) != nil {
			return
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.byDir[rel]; e != nil {
		c.remove(e)
	}
	c.byDir[rel] = c.lru.PushFront(&cachedIndex{rel: rel, ver: v, idx: idx, size: r.n})
	r.n = 0 // now the entry's
}

// forget drops what the cache holds for the directory rel, if anything.
func (c *indexCache) forget(rel string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.byDir[rel]; e != nil {
		c.remove(e)
	}
}

// usage returns how many directories the cache holds and how many bytes
// they and the reservations take.
func (c *indexCache) usage() (dirs int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.used
}

// remove drops the entry e. c.mu must be held.
func (c *indexCache) remove(e *list.Element) {
	ci := c.lru.Remove(e).(*cachedIndex)
	delete(c.byDir, ci.rel)
	c.used -= ci.size
}
