package cursor

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sortedOf returns a Sorted holding keys, each with the value name/key.
func sortedOf(name string, keys ...string) *Sorted[string] {
	s := new(Sorted[string])
	for _, k := range keys {
		s.Set(k, name+"/"+k)
	}
	return s
}

// testSources returns sources, some empty, holding 8 items in all.
func testSources() []Source[string] {
	return []Source[string]{
		{Name: "", Provider: sortedOf("", "a", "b")},
		{Name: "empty", Provider: sortedOf("empty")},
		{Name: "m", Provider: sortedOf("m", "x", "y", "z")},
		{Name: "n", Provider: new(Sorted[string])},
		{Name: "p", Provider: sortedOf("p", "a", "c", "e")},
		{Name: "zz", Provider: sortedOf("zz")},
	}
}

var testSourcesAll = []string{"/a", "/b", "m/x", "m/y", "m/z", "p/a", "p/c", "p/e"}

// walk pages through sources from the start, checking that every page but
// the last is full and the last, and only it, has no next cursor.
func walk(t *testing.T, c *Codec, size int, sources []Source[string]) []string {
	t.Helper()
	ctx := context.Background()
	var all []string
	req := Request{Method: "m", Scope: "s", Size: size}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 1000, "walk does not end")
		page, next, err := Paginate(ctx, c, req, sources)
		require.NoError(t, err)
		all = append(all, page...)
		if next == "" {
			return all
		}
		require.Len(t, page, size, "a page with a next cursor is full")
		req.Cursor = next
	}
}

func TestPaginateWalk(t *testing.T) {
	c := newTestCodec(t, nil)
	for _, size := range []int{1, 2, 3, 4, 7, 8, 9, 100, 1 << 40, math.MaxInt - 1, math.MaxInt} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			assert.Equal(t, testSourcesAll, walk(t, c, size, testSources()))
		})
	}
}

// TestPaginateLastPageFull checks that a last page exactly full has no
// next cursor (the paginator looks one item ahead), and that pages end
// where they should.
func TestPaginateLastPageFull(t *testing.T) {
	c := newTestCodec(t, nil)
	ctx := context.Background()
	for _, size := range []int{1, 2, 4, 8} {
		req := Request{Method: "m", Size: size}
		n := 0
		for {
			page, next, err := Paginate(ctx, c, req, testSources())
			require.NoError(t, err)
			n++
			assert.Len(t, page, size)
			if next == "" {
				break
			}
			req.Cursor = next
		}
		assert.Equal(t, len(testSourcesAll)/size, n, "size %d", size)
	}
	// The last item of the last non-empty source ends a full page.
	page, next, err := Paginate(ctx, c, Request{Method: "m", Size: 3}, []Source[string]{
		{Name: "a", Provider: sortedOf("a", "1", "2", "3")},
		{Name: "b", Provider: sortedOf("b")},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"a/1", "a/2", "a/3"}, page)
	assert.Empty(t, next)
}

func TestPaginateEmpty(t *testing.T) {
	c := newTestCodec(t, nil)
	ctx := context.Background()
	for _, sources := range [][]Source[string]{
		nil,
		{},
		{{Name: "a", Provider: new(Sorted[string])}},
		{{Name: "a", Provider: new(Sorted[string])}, {Name: "b", Provider: new(Sorted[string])}},
	} {
		page, next, err := Paginate(ctx, c, Request{Method: "m", Size: 10}, sources)
		require.NoError(t, err)
		assert.Empty(t, page)
		assert.Empty(t, next)
	}
}

// TestPaginateEmptyCursorIsStart checks that "" is the first page however
// often it is asked for, in the middle of a walk too.
func TestPaginateEmptyCursorIsStart(t *testing.T) {
	c := newTestCodec(t, nil)
	ctx := context.Background()
	sources := testSources()
	first, next, err := Paginate(ctx, c, Request{Method: "m", Size: 3}, sources)
	require.NoError(t, err)
	assert.Equal(t, testSourcesAll[:3], first)
	require.NotEmpty(t, next)
	_, _, err = Paginate(ctx, c, Request{Method: "m", Size: 3, Cursor: next}, sources)
	require.NoError(t, err)
	again, next2, err := Paginate(ctx, c, Request{Method: "m", Size: 3, Cursor: ""}, sources)
	require.NoError(t, err)
	assert.Equal(t, first, again)
	// Cursors are encrypted with a random nonce: compare where they lead.
	pos, err := c.Decode("m", "", next)
	require.NoError(t, err)
	pos2, err := c.Decode("m", "", next2)
	require.NoError(t, err)
	assert.Equal(t, pos, pos2)
}

// TestPaginateRemovedSource checks that a cursor naming a source that is
// gone goes on with the sources after it, and that a cursor in a source
// whose key is gone goes on after that key.
func TestPaginateRemovedSource(t *testing.T) {
	c := newTestCodec(t, nil)
	ctx := context.Background()
	sources := testSources()
	// The first page of 4 ends in m, at "y".
	page, next, err := Paginate(ctx, c, Request{Method: "m", Size: 4}, sources)
	require.NoError(t, err)
	require.Equal(t, []string{"/a", "/b", "m/x", "m/y"}, page)

	// m is removed: the next page starts with p.
	without := append(sources[:2:2], sources[3:]...)
	page, next2, err := Paginate(ctx, c, Request{Method: "m", Size: 4, Cursor: next}, without)
	require.NoError(t, err)
	assert.Equal(t, []string{"p/a", "p/c", "p/e"}, page)
	assert.Empty(t, next2)

	// m is removed and so is everything after it: the walk is over.
	page, next2, err = Paginate(ctx, c, Request{Method: "m", Size: 4, Cursor: next}, sources[:2])
	require.NoError(t, err)
	assert.Empty(t, page)
	assert.Empty(t, next2)

	// m's cursor key "y" is deleted, and "x" with it: m goes on after "y".
	m := sources[2].Provider.(*Sorted[string])
	m.Delete("y")
	m.Delete("x")
	page, _, err = Paginate(ctx, c, Request{Method: "m", Size: 2, Cursor: next}, sources)
	require.NoError(t, err)
	assert.Equal(t, []string{"m/z", "p/a"}, page)

	// A source added before the cursor's is not visited; one after it is.
	more := append(sources[:2:2], Source[string]{Name: "l", Provider: sortedOf("l", "k")})
	more = append(more, sources[2:]...)
	more = append(more, Source[string]{Name: "~", Provider: sortedOf("~", "k")})
	page, _, err = Paginate(ctx, c, Request{Method: "m", Size: 10, Cursor: next}, more)
	require.NoError(t, err)
	assert.Equal(t, []string{"m/z", "p/a", "p/c", "p/e", "~/k"}, page)
}

// recorder is a Provider recording its calls.
type recorder struct {
	p     Provider[string]
	calls []string
}

func (r *recorder) List(ctx context.Context, after string, limit int) ([]Item[string], error) {
	r.calls = append(r.calls, fmt.Sprintf("%q %d", after, limit))
	return r.p.List(ctx, after, limit)
}

// TestPaginateProviderCalls checks what providers are asked for: never a
// limit below one, never more than one item beyond the page, and no
// source after the page is full and one more item seen.
func TestPaginateProviderCalls(t *testing.T) {
	c := newTestCodec(t, nil)
	ctx := context.Background()
	a := &recorder{p: sortedOf("a", "1", "2", "3")}
	b := &recorder{p: sortedOf("b", "1", "2")}
	z := &recorder{p: sortedOf("z", "1")}
	sources := []Source[string]{{"a", a}, {"b", b}, {"z", z}}
	page, next, err := Paginate(ctx, c, Request{Method: "m", Size: 4}, sources)
	require.NoError(t, err)
	assert.Equal(t, []string{"a/1", "a/2", "a/3", "b/1"}, page)
	assert.Equal(t, []string{`"" 5`}, a.calls)
	assert.Equal(t, []string{`"" 2`}, b.calls)
	assert.Empty(t, z.calls)

	a.calls, b.calls = nil, nil
	page, next, err = Paginate(ctx, c, Request{Method: "m", Size: 4, Cursor: next}, sources)
	require.NoError(t, err)
	assert.Equal(t, []string{"b/2", "z/1"}, page)
	assert.Empty(t, next)
	assert.Empty(t, a.calls)
	assert.Equal(t, []string{`"1" 5`}, b.calls)
	assert.Equal(t, []string{`"" 4`}, z.calls)
}

// TestPaginateProviderMore checks that a provider returning more than it
// was asked for does not make a page too long.
func TestPaginateProviderMore(t *testing.T) {
	c := newTestCodec(t, nil)
	all := sortedOf("a", "1", "2", "3", "4", "5", "6")
	greedy := ProviderFunc[string](func(ctx context.Context, after string, _ int) ([]Item[string], error) {
		return all.List(ctx, after, 100)
	})
	got := walk(t, c, 4, []Source[string]{{"a", greedy}, {"b", sortedOf("b", "1")}})
	assert.Equal(t, []string{"a/1", "a/2", "a/3", "a/4", "a/5", "a/6", "b/1"}, got)
}

func TestPaginateErrProvider(t *testing.T) {
	c := newTestCodec(t, nil)
	ctx := context.Background()
	fixed := func(keys ...string) Provider[string] {
		return ProviderFunc[string](func(context.Context, string, int) ([]Item[string], error) {
			items := make([]Item[string], len(keys))
			for i, k := range keys {
				items[i] = Item[string]{Key: k, Value: k}
			}
			return items, nil
		})
	}
	cursorAfterB := c.Encode("m", "", Position{Source: "s", Key: "b"})
	for _, tc := range []struct {
		name   string
		keys   []string
		cursor string
	}{
		{"out of order", []string{"a", "c", "b"}, ""},
		{"duplicate", []string{"a", "b", "b"}, ""},
		{"empty key first", []string{"", "a"}, ""},
		{"empty key later", []string{"a", ""}, ""},
		{"the after key", []string{"b", "c"}, cursorAfterB},
		{"before the after key", []string{"a", "c"}, cursorAfterB},
		{"out of order after the page", []string{"a", "b", "c", "d", "c"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, next, err := Paginate(ctx, c, Request{Method: "m", Size: 4, Cursor: tc.cursor},
				[]Source[string]{{Name: "s", Provider: fixed(tc.keys...)}})
			assert.ErrorIs(t, err, ErrProvider)
			assert.NotErrorIs(t, err, ErrInvalid)
			assert.Nil(t, page)
			assert.Empty(t, next)
		})
	}
	// An item past the lookahead is not looked at.
	page, _, err := Paginate(ctx, c, Request{Method: "m", Size: 2},
		[]Source[string]{{Name: "s", Provider: fixed("a", "b", "c", "")}})
	assert.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, page)
}

type testError struct{}

func (testError) Error() string { return "database on fire" }

func TestPaginateProviderError(t *testing.T) {
	c := newTestCodec(t, nil)
	ctx := context.Background()
	failing := ProviderFunc[string](func(context.Context, string, int) ([]Item[string], error) {
		return []Item[string]{{Key: "a", Value: "a"}}, testError{}
	})
	for _, sources := range [][]Source[string]{
		{{Name: "f", Provider: failing}},
		{{Name: "a", Provider: sortedOf("a", "1")}, {Name: "f", Provider: failing}},
	} {
		page, next, err := Paginate(ctx, c, Request{Method: "m", Size: 5}, sources)
		assert.Equal(t, testError{}, err) // as it is, not wrapped
		assert.Nil(t, page)
		assert.Empty(t, next)
	}
	// A source the page does not reach is not asked.
	page, _, err := Paginate(ctx, c, Request{Method: "m", Size: 1},
		[]Source[string]{{Name: "a", Provider: sortedOf("a", "1", "2")}, {Name: "f", Provider: failing}})
	assert.NoError(t, err)
	assert.Equal(t, []string{"a/1"}, page)

	// The context reaches the provider.
	type ctxKey struct{}
	ctx = context.WithValue(ctx, ctxKey{}, "v")
	var saw any
	_, _, err = Paginate(ctx, c, Request{Method: "m", Size: 1}, []Source[string]{{Name: "a",
		Provider: ProviderFunc[string](func(ctx context.Context, _ string, _ int) ([]Item[string], error) {
			saw = ctx.Value(ctxKey{})
			return nil, ctx.Err()
		})}})
	assert.NoError(t, err)
	assert.Equal(t, "v", saw)
}

func TestPaginateInvalidCursor(t *testing.T) {
	c := newTestCodec(t, nil)
	ctx := context.Background()
	sources := testSources()
	_, next, err := Paginate(ctx, c, Request{Method: "resources/list", Scope: "ada", Size: 2}, sources)
	require.NoError(t, err)
	other := newTestCodec(t, &Options{Keys: [][]byte{otherKey}})
	for _, req := range []Request{
		{Method: "resources/templates/list", Scope: "ada", Cursor: next},
		{Method: "resources/list", Scope: "bob", Cursor: next},
		{Method: "resources/list", Scope: "", Cursor: next},
		{Method: "resources/list", Scope: "ada", Cursor: next[1:]},
		{Method: "resources/list", Scope: "ada", Cursor: next + "A"},
		{Method: "resources/list", Scope: "ada", Cursor: "100"},
		{Method: "resources/list", Scope: "ada", Cursor: " "},
		{Method: "resources/list", Scope: "ada", Cursor: other.Encode("resources/list", "ada", Position{Key: "a"})},
	} {
		req.Size = 2
		page, next, err := Paginate(ctx, c, req, sources)
		assert.ErrorIs(t, err, ErrInvalid, "%+v", req)
		assert.Nil(t, page)
		assert.Empty(t, next)
	}
}

func TestPaginateBadSize(t *testing.T) {
	c := newTestCodec(t, nil)
	for _, size := range []int{0, -1, math.MinInt} {
		page, next, err := Paginate(context.Background(), c, Request{Method: "m", Size: size}, testSources())
		assert.Error(t, err, "size %d", size)
		assert.NotErrorIs(t, err, ErrInvalid)
		assert.Nil(t, page)
		assert.Empty(t, next)
	}
}

// TestPaginateUnsortedSources checks that sources out of order or with
// the same name twice are refused rather than silently mis-walked.
func TestPaginateUnsortedSources(t *testing.T) {
	c := newTestCodec(t, nil)
	for _, names := range [][]string{{"b", "a"}, {"a", "a"}, {"", "b", "a"}, {"a", "c", "b"}} {
		var sources []Source[string]
		for _, n := range names {
			sources = append(sources, Source[string]{Name: n, Provider: sortedOf(n, "k")})
		}
		_, _, err := Paginate(context.Background(), c, Request{Method: "m", Size: 10}, sources)
		assert.Error(t, err, "%q", names)
		assert.NotErrorIs(t, err, ErrInvalid)
	}
}

// TestPaginateLongPosition checks the paginator never hands out a cursor
// Decode would refuse as too long: it fails on the page instead, saying
// why, so that the walk does not break one page later with an "invalid
// cursor" blamed on the client.
func TestPaginateLongPosition(t *testing.T) {
	c := newTestCodec(t, nil)
	ctx := context.Background()
	long := strings.Repeat("k", MaxLength)
	_, _, err := Paginate(ctx, c, Request{Method: "m", Size: 1},
		[]Source[string]{{Name: "s", Provider: sortedOf("s", long, long+"2")}})
	assert.Error(t, err)
	assert.NotErrorIs(t, err, ErrInvalid)
	// The same as the last item is fine: it needs no cursor.
	page, next, err := Paginate(ctx, c, Request{Method: "m", Size: 1},
		[]Source[string]{{Name: "s", Provider: sortedOf("s", long)}})
	assert.NoError(t, err)
	assert.Len(t, page, 1)
	assert.Empty(t, next)
	// Keys up to the documented bound work.
	key := strings.Repeat("k", 6000)
	got := walk(t, c, 1, []Source[string]{{Name: "s", Provider: sortedOf("s", key+"1", key+"2", key+"3")}})
	assert.Len(t, got, 3)
}

// TestWalkUnderMutation is the keyset property: a walk, while items and
// whole sources are added and removed between its pages (before, at and
// after where it is), returns every item that exists throughout it once,
// and nothing twice.
func TestWalkUnderMutation(t *testing.T) {
	const iterations = 400
	c := newTestCodec(t, nil)
	ctx := context.Background()
	names := []string{"", "a", "b", "bb", "c", "d"}
	alphabet := "abc"
	randKey := func(r *rand.Rand) string {
		var b strings.Builder
		for range 1 + r.IntN(3) {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	type item struct{ source, key string }
	parse := func(v string) item {
		s, k, _ := strings.Cut(v, "\x00")
		return item{s, k}
	}
	compare := func(a, b item) int {
		return cmp.Or(strings.Compare(a.source, b.source), strings.Compare(a.key, b.key))
	}

	for iter := range iterations {
		r := rand.New(rand.NewPCG(20260101, uint64(iter)))
		world := map[string]*Sorted[string]{}
		set := func(src, key string) {
			if s := world[src]; s != nil {
				s.Set(key, src+"\x00"+key)
			}
		}
		for _, n := range names {
			if r.IntN(3) > 0 {
				world[n] = new(Sorted[string])
				for range r.IntN(20) {
					set(n, randKey(r))
				}
			}
		}
		// Everything there at the start, less what is deleted (or
		// whose source is removed) during the walk.
		throughout := map[item]bool{}
		for n, s := range world {
			items, _ := s.List(ctx, "", s.Len())
			for _, it := range items {
				throughout[item{n, it.Key}] = true
			}
		}
		del := func(src, key string) {
			if s := world[src]; s != nil && s.Delete(key) {
				delete(throughout, item{src, key})
			}
		}
		sources := func() []Source[string] {
			var out []Source[string]
			for _, n := range slices.Sorted(maps.Keys(world)) {
				out = append(out, Source[string]{Name: n, Provider: world[n]})
			}
			return out
		}

		size := 1 + r.IntN(6)
		req := Request{Method: "m", Scope: "x", Size: size}
		var seen []item
		for pages := 0; ; pages++ {
			if pages > 1000 {
				t.Fatalf("iteration %d: walk does not end", iter)
			}
			page, next, err := Paginate(ctx, c, req, sources())
			if err != nil {
				t.Fatalf("iteration %d: %v", iter, err)
			}
			if next != "" && len(page) != size {
				t.Fatalf("iteration %d: page of %d with a next cursor, size %d", iter, len(page), size)
			}
			for _, v := range page {
				it := parse(v)
				if len(seen) > 0 && compare(seen[len(seen)-1], it) >= 0 {
					t.Fatalf("iteration %d: %q after %q: repeated or out of order", iter, it, seen[len(seen)-1])
				}
				seen = append(seen, it)
			}
			if next == "" {
				break
			}
			req.Cursor = next
			pos := seen[len(seen)-1]
			// Mutate between pages.
			for range r.IntN(6) {
				src := names[r.IntN(len(names))]
				switch op := r.IntN(12); op {
				case 0, 1: // anywhere
					set(src, randKey(r))
				case 2: // just before the position
					set(pos.source, pos.key[:len(pos.key)-1]+"a")
					set(pos.source, pos.key[:len(pos.key)-1])
				case 3: // just after it
					set(pos.source, pos.key+"\x00")
					set(pos.source, pos.key+"a")
				case 4: // at it, deleted and added back
					del(pos.source, pos.key)
					if r.IntN(2) == 0 {
						set(pos.source, pos.key)
					}
				case 5, 6: // anywhere
					del(src, randKey(r))
				case 7: // the next item
					if s := world[pos.source]; s != nil {
						if items, _ := s.List(ctx, pos.key, 1); len(items) > 0 {
							del(pos.source, items[0].Key)
						}
					}
				case 8: // the previous item
					if s := world[pos.source]; s != nil {
						items, _ := s.List(ctx, "", s.Len())
						i, _ := slices.BinarySearchFunc(items, pos.key, func(it Item[string], k string) int {
							return strings.Compare(it.Key, k)
						})
						if i > 0 {
							del(pos.source, items[i-1].Key)
						}
					}
				case 9: // a source added
					if world[src] == nil {
						world[src] = new(Sorted[string])
						for range r.IntN(10) {
							set(src, randKey(r))
						}
					}
				case 10, 11: // a source removed: the current one, or any
					if op == 10 {
						src = pos.source
					}
					if s := world[src]; s != nil {
						items, _ := s.List(ctx, "", s.Len())
						for _, it := range items {
							delete(throughout, item{src, it.Key})
						}
						delete(world, src)
					}
				}
			}
		}
		got := map[item]bool{}
		for _, it := range seen {
			got[it] = true
		}
		for it := range throughout {
			if !got[it] {
				t.Fatalf("iteration %d (page size %d): %q existed throughout the walk but was skipped", iter, size, it)
			}
		}
	}
}
