package cursor

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// An Item is a value with the key it is listed by.
type Item[T any] struct {
	Key   string
	Value T
}

// chunkSize bounds the items of one chunk of a Sorted: an insert or delete
// moves at most this many, whatever the size of the collection.
const chunkSize = 512

// A Sorted is an in-memory collection kept in key order: Set, Delete and
// List each cost O(log n) plus the items they touch, so that changing one
// item among 100,000 leaves the next page as cheap as the last. It
// implements Provider. The zero Sorted is empty and ready to use; it is
// safe for concurrent use.
type Sorted[T any] struct {
	mu     sync.RWMutex
	chunks []*chunk[T] // in key order; none empty
	byKey  map[string]T
}

type chunk[T any] struct {
	keys []string
	vals []T
}

func (c *chunk[T]) last() string { return c.keys[len(c.keys)-1] }

// Len returns the number of items.
func (s *Sorted[T]) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.byKey)
}

// Get returns the value with the given key, if there is one.
func (s *Sorted[T]) Get(key string) (T, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.byKey[key]
	return v, ok
}

// Set sets the value of key, adding it if it is new, and reports whether
// it was new. Keys must not be empty (a Provider never lists one): Set
// ignores an empty key and returns false.
func (s *Sorted[T]) Set(key string, v T) bool {
	if key == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKey == nil {
		s.byKey = make(map[string]T)
	}
	_, existed := s.byKey[key]
	s.byKey[key] = v
	ci := s.chunkFor(key)
	if ci == len(s.chunks) {
		if ci == 0 {
			s.chunks = append(s.chunks, &chunk[T]{})
		} else {
			ci-- // after every key: append to the last chunk
		}
	}
	c := s.chunks[ci]
	i, found := slices.BinarySearch(c.keys, key)
	if found {
		c.vals[i] = v
		return false
	}
	c.keys = slices.Insert(c.keys, i, key)
	c.vals = slices.Insert(c.vals, i, v)
	if len(c.keys) > chunkSize {
		// Both halves get arrays of their own size: c's grown array
		// would keep up to twice the room it needs, for good (a
		// collection filled in key order splits its last chunk again
		// and again, and the room left behind was most of its memory).
		half := len(c.keys) / 2
		next := &chunk[T]{
			keys: slices.Clone(c.keys[half:]),
			vals: slices.Clone(c.vals[half:]),
		}
		c.keys, c.vals = slices.Clone(c.keys[:half]), slices.Clone(c.vals[:half])
		s.chunks = slices.Insert(s.chunks, ci+1, next)
	}
	return !existed
}

// Delete removes key and reports whether it was there.
func (s *Sorted[T]) Delete(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byKey[key]; !ok {
		return false
	}
	delete(s.byKey, key)
	ci := s.chunkFor(key)
	c := s.chunks[ci]
	i, _ := slices.BinarySearch(c.keys, key)
	c.keys = slices.Delete(c.keys, i, i+1)
	c.vals = slices.Delete(c.vals, i, i+1)
	if len(c.keys) == 0 {
		s.chunks = slices.Delete(s.chunks, ci, ci+1)
	}
	return true
}

// chunkFor returns the index of the first chunk whose last key is at least
// key: where key is or would go; len(chunks) if key is after them all.
func (s *Sorted[T]) chunkFor(key string) int {
	i, _ := slices.BinarySearchFunc(s.chunks, key, func(c *chunk[T], key string) int {
		return strings.Compare(c.last(), key)
	})
	return i
}

// List returns, in key order, up to limit items whose keys come after
// after (from the first if after is ""). It never fails; it has the
// signature of Provider.List.
func (s *Sorted[T]) List(_ context.Context, after string, limit int) ([]Item[T], error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ci, i := 0, 0
	if after != "" {
		ci = s.chunkFor(after)
		if ci < len(s.chunks) {
			var found bool
			i, found = slices.BinarySearch(s.chunks[ci].keys, after)
			if found {
				i++
			}
		}
	}
	var out []Item[T]
	for ; ci < len(s.chunks) && len(out) < limit; ci, i = ci+1, 0 {
		c := s.chunks[ci]
		if out == nil {
			out = make([]Item[T], 0, min(limit, len(s.byKey)))
		}
		for ; i < len(c.keys) && len(out) < limit; i++ {
			out = append(out, Item[T]{Key: c.keys[i], Value: c.vals[i]})
		}
	}
	return out, nil
}
