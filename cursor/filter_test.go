package cursor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A filteredPage is what a walk of PaginateFiltered saw of one page.
type filteredPage struct {
	items []string
	next  Position // zero on the last page
}

// walkFiltered walks sources with PaginateFiltered, keeping the items
// whose value contains "alice", and returns its pages with their
// cursors' positions. It checks that no page scans more than scan items
// (if scan is positive).
func walkFiltered(t *testing.T, c *Codec, size, scan int, sources []Source[string]) []filteredPage {
	t.Helper()
	var pages []filteredPage
	req := Request{Method: "m", Scope: "alice", Size: size, Scan: scan}
	for len(pages) < 10_000 {
		scanned := 0
		keep := func(v string) bool { scanned++; return strings.Contains(v, "alice") }
		page, next, err := PaginateFiltered(t.Context(), c, req, sources, keep)
		require.NoError(t, err)
		if scan > 0 {
			require.LessOrEqual(t, scanned, scan, "page %d scanned past its budget", len(pages)+1)
		}
		p := filteredPage{items: page}
		if next != "" {
			p.next, err = c.Decode("m", "alice", next)
			require.NoError(t, err)
		}
		pages = append(pages, p)
		if next == "" {
			return pages
		}
		req.Cursor = next
	}
	t.Fatal("walk does not end")
	return nil
}

// interleaved returns sources holding alice's items, and n of bob's
// spread among them at random (before, between and after alice's), in
// two sources.
func interleaved(rng *rand.Rand, alice, bob int) []Source[string] {
	a, b := new(Sorted[string]), new(Sorted[string])
	for i := range alice {
		k := fmt.Sprintf("%06d", (i+1)*1000)
		src := a
		if i%2 == 1 {
			src = b
		}
		src.Set(k, "alice/"+k)
	}
	for range bob {
		k := fmt.Sprintf("%06d", rng.IntN((alice+1)*1000))
		if strings.HasSuffix(k, "000") {
			continue // alice's
		}
		src := a
		if rng.IntN(2) == 1 {
			src = b
		}
		src.Set(k, "bob/"+k)
	}
	return []Source[string]{{"a", a}, {"b", b}}
}

// Within the scan budget, what a filtered walk sees does not depend on
// the refused items: the same pages, the same sizes, the same positions
// in the cursors, with 1,000 refused items interleaved or none.
func TestPaginateFilteredHidesRefused(t *testing.T) {
	t.Parallel()
	c := newTestCodec(t, nil)
	for _, size := range []int{1, 2, 3, 7, 100} {
		rng := rand.New(rand.NewPCG(uint64(size), 9))
		alone := walkFiltered(t, c, size, 0, interleaved(rng, 13, 0))
		mixed := walkFiltered(t, c, size, 2_000, interleaved(rng, 13, 1_000))
		assert.Equal(t, alone, mixed, "page size %d", size)
		var all []string
		for _, p := range alone {
			all = append(all, p.items...)
		}
		assert.Len(t, all, 13)
		if size < 13 {
			assert.Len(t, alone, (13+size-1)/size, "page size %d: full pages, and no empty last page", size)
		}
	}
}

// When the budget runs out, pages come back short (possibly empty), but
// the walk still sees each kept item once, in order, and no page scans
// more than the budget.
func TestPaginateFilteredBudget(t *testing.T) {
	t.Parallel()
	c := newTestCodec(t, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	sources := interleaved(rng, 20, 3_000)
	want := walkFiltered(t, c, 4, 0, sources)
	got := walkFiltered(t, c, 4, 10, sources)
	flatten := func(pages []filteredPage) (items []string) {
		for _, p := range pages {
			items = append(items, p.items...)
		}
		return items
	}
	assert.Equal(t, flatten(want), flatten(got))
	assert.Greater(t, len(got), len(want), "an exhausted budget shows as more, shorter pages")
	short := 0
	for _, p := range got[:len(got)-1] {
		if len(p.items) < 4 {
			short++
		}
	}
	assert.Positive(t, short)
}

// A provider is never asked for more than the budget has left, and the
// request is checked.
func TestPaginateFilteredProviderCalls(t *testing.T) {
	t.Parallel()
	c := newTestCodec(t, nil)
	s := new(Sorted[string])
	for i := range 100 {
		s.Set(fmt.Sprintf("%03d", i), "bob")
	}
	r := &recorder{p: s}
	page, next, err := PaginateFiltered(context.Background(), c, Request{Method: "m", Size: 5, Scan: 30}, []Source[string]{{"a", r}},
		func(v string) bool { return v == "alice" })
	require.NoError(t, err)
	assert.Empty(t, page)
	pos, err := c.Decode("m", "", next)
	require.NoError(t, err)
	assert.Equal(t, Position{Source: "a", Key: "029"}, pos, "the next page starts after the last item scanned")
	total := 0
	for _, call := range r.calls {
		var after string
		var limit int
		_, err := fmt.Sscanf(call, "%q %d", &after, &limit)
		require.NoError(t, err)
		total += limit
	}
	assert.Equal(t, 30, total, "asked for exactly the budget: %v", r.calls)

	for _, scan := range []int{-1, 5, 3} {
		_, _, err := PaginateFiltered(context.Background(), c, Request{Method: "m", Size: 5, Scan: scan}, []Source[string]{{"a", r}}, nil)
		assert.Error(t, err, "scan %d for a page of 5", scan)
	}
}
