package cursor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// A Provider lists a collection in key order: List returns up to limit
// items whose keys come after after (from the first if after is ""), in
// strictly increasing key order; keys are never empty. Returning fewer
// than limit means there are no more. For a database table that is
//
//	SELECT key, … FROM t WHERE key > $after ORDER BY key LIMIT $limit
//
// Keys are compared as Go strings compare (bytewise), and must sort so in
// the order the provider lists them: numbers as decimal text do not
// ("10" < "9"), so key integer ids with IntKey and timestamps with
// TimeKey (TimeKey(t)+IntKey(id) for timestamps that repeat), which sort
// bytewise as the values do, and turn after back into a value for the
// query with ParseIntKey and ParseTimeKey; or use text keys the database
// orders bytewise (a binary or "C" collation).
type Provider[T any] interface {
	List(ctx context.Context, after string, limit int) ([]Item[T], error)
}

// ProviderFunc adapts a function to Provider.
type ProviderFunc[T any] func(ctx context.Context, after string, limit int) ([]Item[T], error)

// List calls f.
func (f ProviderFunc[T]) List(ctx context.Context, after string, limit int) ([]Item[T], error) {
	return f(ctx, after, limit)
}

// A Source is one named, ordered part of a paginated list.
type Source[T any] struct {
	Name     string
	Provider Provider[T]
}

// ErrProvider is wrapped by Paginate's error when a provider breaks its
// contract: an empty key, keys out of order, or not after the key asked
// for.
var ErrProvider = errors.New("cursor: provider returned keys out of order")

// A Request says which page of which list to read.
type Request struct {
	// Method and Scope bind cursors: one issued for another method or
	// scope is invalid (see Codec.Encode).
	Method, Scope string
	// Cursor is where the page starts; "" is the start of the list.
	Cursor string
	// Size is the most items the page holds; it must be positive.
	Size int
	// Scan, for PaginateFiltered, bounds the items one page may look at,
	// kept or not; it must then be more than Size. Zero means no bound.
	// Paginate ignores it.
	Scan int
}

// Paginate returns one page of the list made of sources, in order: every
// item of the first source in key order, then of the second, and so on.
// Sources must be sorted by Name, with distinct names. next is the cursor
// of the following page, "" if this one is the last.
//
// Paginate returns an error matching ErrInvalid for a cursor c did not
// issue for this method and scope (see Codec.Decode), an error wrapping
// ErrProvider for a provider that breaks its contract, and a provider's
// own error as it is. A source named in a cursor that has since been
// removed is not an error: the page goes on with the sources after it.
// It also fails, rather than issue a cursor Decode would refuse, if the
// page's last source name and key are too long for one (see Encode), and
// if sources are not sorted by Name or a name repeats.
func Paginate[T any](ctx context.Context, c *Codec, req Request, sources []Source[T]) (page []T, next string, err error) {
	req.Scan = 0
	return PaginateFiltered(ctx, c, req, sources, nil)
}

// PaginateFiltered is Paginate over only the items keep accepts (all of
// them if keep is nil): a page holds up to req.Size accepted items, and
// the items keep refuses are passed over as if they were not there. Each
// page looks ahead for one more accepted item to tell whether there is a
// next page, and next continues after the page's last item, so that
// which pages a walk sees, their sizes and their cursors' positions do
// not depend on the refused items at all, while a page scans at most
// req.Scan items (kept or refused).
//
// When the scan budget runs out first, the page ends there: it holds the
// accepted items found so far, possibly none, and next continues after
// the last item scanned. A walk then still sees every accepted item once,
// in order, but its pages are shorter, and more of them, than without
// the refused items. req.Scan of zero means no budget.
//
// keep is called once for each item scanned, in order. PaginateFiltered
// fails as Paginate does, and also if req.Scan is positive and not more
// than req.Size.
func PaginateFiltered[T any](ctx context.Context, c *Codec, req Request, sources []Source[T], keep func(T) bool) (page []T, next string, err error) {
	if req.Size <= 0 {
		return nil, "", fmt.Errorf("cursor: page size %d", req.Size)
	}
	if req.Scan < 0 || req.Scan > 0 && req.Scan <= req.Size {
		return nil, "", fmt.Errorf("cursor: scan budget %d for a page of %d", req.Scan, req.Size)
	}
	for i := 1; i < len(sources); i++ {
		if sources[i-1].Name >= sources[i].Name {
			return nil, "", fmt.Errorf("cursor: source %q is listed after %q: not sorted by name or a name repeats", sources[i].Name, sources[i-1].Name)
		}
	}
	var pos Position
	if req.Cursor != "" {
		if pos, err = c.Decode(req.Method, req.Scope, req.Cursor); err != nil {
			return nil, "", err
		}
	}
	si, _ := slices.BinarySearchFunc(sources, pos.Source, func(s Source[T], name string) int {
		return strings.Compare(s.Name, name)
	})
	after := ""
	if si < len(sources) && sources[si].Name == pos.Source {
		after = pos.Key
	}
	// Size may be huge, meaning "all": allocate for what comes.
	page = make([]T, 0, min(req.Size, maxPrealloc))
	s := scan[T]{req: req, keep: keep}
	for ; si < len(sources); si, after = si+1, "" {
		done, err := s.source(ctx, sources[si], after, &page)
		if err != nil {
			return nil, "", err
		}
		if done {
			if next, err = s.cursor(c); err != nil {
				return nil, "", err
			}
			return page, next, nil
		}
	}
	return page, "", nil
}

// A scan gathers one page from the sources in turn.
type scan[T any] struct {
	req     Request
	keep    func(T) bool
	scanned int      // items looked at
	kept    int      // of which accepted
	next    Position // where the next page starts
}

// source gathers the page's items from src, after the key after, into
// page: as many as it takes to fill the page and see one more accepted
// item, or to spend the scan budget. done is set when the page is over
// with a next page to come (its position in s.next).
func (s *scan[T]) source(ctx context.Context, src Source[T], after string, page *[]T) (done bool, err error) {
	for {
		// Ask for one item more than the page still needs: if it comes,
		// there is a next page. Once items have been refused, ask for as
		// many as the share accepted so far suggests.
		want := s.req.Size - len(*page)
		if want < math.MaxInt {
			want++
		}
		if s.scanned > s.kept && want < maxScanChunk {
			ratio := min(s.scanned/max(s.kept, 1)+1, 16)
			want = min(want*ratio, maxScanChunk)
		}
		if s.req.Scan > 0 {
			want = min(want, s.req.Scan-s.scanned)
		}
		items, err := src.Provider.List(ctx, after, want)
		if err != nil {
			return false, err
		}
		if len(items) > want {
			items = items[:want]
		}
		for _, it := range items {
			if it.Key == "" || it.Key <= after {
				return false, fmt.Errorf("%w: source %q gave %q after %q", ErrProvider, src.Name, it.Key, after)
			}
			after = it.Key
			s.scanned++
			if s.keep != nil && !s.keep(it.Value) {
				continue
			}
			if len(*page) == s.req.Size {
				return true, nil // the look-ahead: s.next is the page's last item
			}
			*page = append(*page, it.Value)
			s.kept++
			s.next = Position{Source: src.Name, Key: it.Key}
		}
		if s.req.Scan > 0 && s.scanned >= s.req.Scan {
			s.next = Position{Source: src.Name, Key: after} // the last item scanned
			return true, nil
		}
		if len(items) < want {
			return false, nil // src has no more
		}
	}
}

// cursor encodes s.next, failing rather than issue a cursor Decode would
// refuse.
func (s *scan[T]) cursor(c *Codec) (string, error) {
	next := c.Encode(s.req.Method, s.req.Scope, s.next)
	if len(next) > MaxLength {
		return "", fmt.Errorf("cursor: source %q and key %q are too long for a cursor (%d bytes in all)",
			trim(s.next.Source), trim(s.next.Key), len(s.next.Source)+len(s.next.Key))
	}
	return next, nil
}

// maxScanChunk bounds what PaginateFiltered asks a provider for at once
// while it scans past refused items.
const maxScanChunk = 1 << 14

// maxPrealloc bounds the capacity Paginate allocates for a page up front.
const maxPrealloc = 1024

// trim shortens s for an error message.
func trim(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
