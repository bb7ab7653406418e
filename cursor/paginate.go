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
// Keys are compared as Go strings compare (bytewise): pad numeric keys so
// that they sort as numbers, or use keys the database orders bytewise.
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
	if req.Size <= 0 {
		return nil, "", fmt.Errorf("cursor: page size %d", req.Size)
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
	// Gather one item more than the page holds: if it comes, there is a
	// next page, and the cursor goes after the page's last item.
	// Size may be huge, meaning "all": allocate for what comes.
	page = make([]T, 0, min(req.Size, maxPrealloc))
	var last Position
	for ; si < len(sources); si, after = si+1, "" {
		src := sources[si]
		want := req.Size - len(page)
		if want < math.MaxInt {
			want++
		}
		items, err := src.Provider.List(ctx, after, want)
		if err != nil {
			return nil, "", err
		}
		if len(items) > want {
			items = items[:want]
		}
		prev := after
		for _, it := range items {
			if it.Key == "" || it.Key <= prev {
				return nil, "", fmt.Errorf("%w: source %q gave %q after %q", ErrProvider, src.Name, it.Key, prev)
			}
			prev = it.Key
			if len(page) == req.Size {
				next := c.Encode(req.Method, req.Scope, last)
				if len(next) > MaxLength {
					return nil, "", fmt.Errorf("cursor: source %q and key %q are too long for a cursor (%d bytes in all)",
						trim(last.Source), trim(last.Key), len(last.Source)+len(last.Key))
				}
				return page, next, nil
			}
			page = append(page, it.Value)
			last = Position{Source: src.Name, Key: it.Key}
		}
	}
	return page, "", nil
}

// maxPrealloc bounds the capacity Paginate allocates for a page up front.
const maxPrealloc = 1024

// trim shortens s for an error message.
func trim(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
