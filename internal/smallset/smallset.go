// Package smallset is a set that costs little while small: a sorted slice
// up to a size, a map above it. Most MCP sessions watch a few URIs, and a
// slice costs a third of a map's memory; a session allowed thousands
// makes a map, whose inserts stay cheap.
package smallset

import (
	"cmp"
	"slices"
)

// SortedMax is the size up to which a Set is a sorted slice.
const SortedMax = 4096

// A Set of values of T. The zero value is an empty set. A Set is held by
// value: after Add or Remove, store it back (a map inside is shared, the
// slice header is not).
type Set[T cmp.Ordered] struct {
	sorted []T
	big    map[T]struct{}
}

// Len returns how many values s holds.
func (s *Set[T]) Len() int {
	if s.big != nil {
		return len(s.big)
	}
	return len(s.sorted)
}

// Has reports whether s holds v.
func (s *Set[T]) Has(v T) bool {
	if s.big != nil {
		_, ok := s.big[v]
		return ok
	}
	_, ok := slices.BinarySearch(s.sorted, v)
	return ok
}

// Add adds v, which s must not hold. A growing slice grows by a quarter,
// not double: a large set wastes little.
func (s *Set[T]) Add(v T) {
	switch {
	case s.big != nil:
		s.big[v] = struct{}{}
	case len(s.sorted) < SortedMax:
		i, _ := slices.BinarySearch(s.sorted, v)
		if n := len(s.sorted); n == cap(s.sorted) {
			more := max(1, n)
			if n >= 16 {
				more = n / 4
			}
			grown := make([]T, n, n+more)
			copy(grown, s.sorted)
			s.sorted = grown
		}
		s.sorted = slices.Insert(s.sorted, i, v)
	default:
		s.big = make(map[T]struct{}, SortedMax+1)
		for _, x := range s.sorted {
			s.big[x] = struct{}{}
		}
		s.big[v] = struct{}{}
		s.sorted = nil
	}
}

// Remove removes v, if s holds it.
func (s *Set[T]) Remove(v T) {
	if s.big != nil {
		delete(s.big, v)
		return
	}
	if i, ok := slices.BinarySearch(s.sorted, v); ok {
		s.sorted = slices.Delete(s.sorted, i, i+1) // clears the freed element
	}
}

// Each calls f with each value of s: in order, while s is a slice.
func (s *Set[T]) Each(f func(T)) {
	if s.big != nil {
		for v := range s.big {
			f(v)
		}
		return
	}
	for _, v := range s.sorted {
		f(v)
	}
}
