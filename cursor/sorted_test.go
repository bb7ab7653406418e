package cursor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// model is the reference a Sorted is checked against.
type model map[string]int

func (m model) list(after string, limit int) []Item[int] {
	var out []Item[int]
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}) {
		if k > after && len(out) < limit {
			out = append(out, Item[int]{Key: k, Value: m[k]})
		}
	}
	return out
}

// assertItems is assert.Equal but for telling nil from empty.
func assertItems(t *testing.T, want, got []Item[int], msgAndArgs ...any) {
	t.Helper()
	if len(want) == 0 {
		assert.Empty(t, got, msgAndArgs...)
		return
	}
	assert.Equal(t, want, got, msgAndArgs...)
}

// checkInvariants checks a Sorted's chunks: none empty or over chunkSize,
// keys strictly increasing within and across them, values matching byKey.
func checkInvariants[T comparable](t *testing.T, s *Sorted[T]) {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	n, prev := 0, ""
	for ci, c := range s.chunks {
		require.NotEmpty(t, c.keys, "chunk %d", ci)
		require.LessOrEqual(t, len(c.keys), chunkSize, "chunk %d", ci)
		require.Len(t, c.vals, len(c.keys), "chunk %d", ci)
		for i, k := range c.keys {
			require.Greater(t, k, prev, "chunk %d item %d", ci, i)
			v, ok := s.byKey[k]
			require.True(t, ok, "key %q", k)
			require.Equal(t, v, c.vals[i], "key %q", k)
			prev = k
			n++
		}
	}
	require.Equal(t, len(s.byKey), n)
}

func randKey(r *rand.Rand, n int) string {
	return fmt.Sprintf("k%05d", r.IntN(n))
}

func TestSortedModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	for _, keySpace := range []int{50, 3000, 20000} {
		t.Run(fmt.Sprint(keySpace), func(t *testing.T) {
			var s Sorted[int]
			m := model{}
			for op := range 5000 {
				// Grow for the first 3,500 operations, then shrink,
				// so that chunks split and then empty.
				k := randKey(r, keySpace)
				switch x := r.IntN(10); {
				case x < 6 && op < 3500 || x < 2:
					_, existed := m[k]
					m[k] = op
					assert.Equal(t, !existed, s.Set(k, op), "Set(%q)", k)
				case x < 9:
					_, existed := m[k]
					delete(m, k)
					assert.Equal(t, existed, s.Delete(k), "Delete(%q)", k)
				default:
					limit := r.IntN(1100)
					after := ""
					if r.IntN(4) > 0 {
						after = randKey(r, keySpace)
					}
					got, err := s.List(ctx, after, limit)
					require.NoError(t, err)
					assertItems(t, m.list(after, limit), got, "List(%q, %d)", after, limit)
				}
				if op%500 == 0 {
					checkInvariants(t, &s)
				}
				v, ok := s.Get(k)
				mv, mok := m[k]
				assert.Equal(t, mok, ok)
				assert.Equal(t, mv, v)
			}
			checkInvariants(t, &s)
			assert.Equal(t, len(m), s.Len())
			// The whole collection in one List and in pages.
			got, _ := s.List(ctx, "", len(m)+1)
			assert.Equal(t, m.list("", len(m)+1), got)
			var walked []Item[int]
			for after := ""; ; {
				page, _ := s.List(ctx, after, 7)
				walked = append(walked, page...)
				if len(page) < 7 {
					break
				}
				after = page[len(page)-1].Key
			}
			assert.Equal(t, m.list("", len(m)+1), walked)
			// Empty it.
			for k := range m {
				require.True(t, s.Delete(k))
			}
			assert.Zero(t, s.Len())
			got, _ = s.List(ctx, "", 10)
			assert.Empty(t, got)
			s.mu.RLock()
			assert.Empty(t, s.chunks)
			s.mu.RUnlock()
		})
	}
}

// TestSortedSequential adds keys in increasing and decreasing order, the
// cases where every insert goes to the last or first chunk.
func TestSortedSequential(t *testing.T) {
	ctx := context.Background()
	for _, reverse := range []bool{false, true} {
		var s Sorted[int]
		const n = 5 * chunkSize
		for i := range n {
			if reverse {
				i = n - 1 - i
			}
			require.True(t, s.Set(fmt.Sprintf("%06d", i), i))
		}
		checkInvariants(t, &s)
		got, _ := s.List(ctx, "", n)
		require.Len(t, got, n)
		for i, it := range got {
			assert.Equal(t, i, it.Value)
		}
		// Page boundaries fall on chunk boundaries and inside chunks.
		for _, after := range []int{0, chunkSize - 1, chunkSize, chunkSize + 1, n - 2, n - 1} {
			got, _ := s.List(ctx, fmt.Sprintf("%06d", after), 3)
			var want []Item[int]
			for i := after + 1; i < min(after+4, n); i++ {
				want = append(want, Item[int]{Key: fmt.Sprintf("%06d", i), Value: i})
			}
			assertItems(t, want, got, "after %d", after)
		}
	}
}

func TestSortedZero(t *testing.T) {
	var s Sorted[string]
	ctx := context.Background()
	assert.Zero(t, s.Len())
	_, ok := s.Get("a")
	assert.False(t, ok)
	assert.False(t, s.Delete("a"))
	assert.False(t, s.Delete(""))
	got, err := s.List(ctx, "", 10)
	assert.NoError(t, err)
	assert.Empty(t, got)
	got, _ = s.List(ctx, "a", 10)
	assert.Empty(t, got)
}

func TestSortedEmptyKey(t *testing.T) {
	var s Sorted[string]
	assert.False(t, s.Set("", "x"))
	assert.Zero(t, s.Len())
	_, ok := s.Get("")
	assert.False(t, ok)
	s.Set("a", "a")
	assert.False(t, s.Set("", "x"))
	assert.False(t, s.Delete(""))
	got, _ := s.List(context.Background(), "", 10)
	assert.Equal(t, []Item[string]{{"a", "a"}}, got)
}

func TestSortedSetExisting(t *testing.T) {
	var s Sorted[string]
	assert.True(t, s.Set("a", "1"))
	assert.False(t, s.Set("a", "2"))
	v, _ := s.Get("a")
	assert.Equal(t, "2", v)
	assert.Equal(t, 1, s.Len())
	got, _ := s.List(context.Background(), "", 10)
	assert.Equal(t, []Item[string]{{"a", "2"}}, got)
	assert.True(t, s.Delete("a"))
	assert.False(t, s.Delete("a"))
	assert.True(t, s.Set("a", "3"))
}

func TestSortedListAfter(t *testing.T) {
	var s Sorted[int]
	ctx := context.Background()
	for i := 0; i < 3000; i += 2 { // even keys only
		s.Set(fmt.Sprintf("%04d", i), i)
	}
	for _, tc := range []struct {
		after string
		limit int
		want  []int
	}{
		{"", 3, []int{0, 2, 4}},
		{"0000", 3, []int{2, 4, 6}},                      // present
		{"0001", 3, []int{2, 4, 6}},                      // absent
		{"00000", 2, []int{2, 4}},                        // absent, between
		{"/", 2, []int{0, 2}},                            // absent, before all
		{"1000", 2, []int{1002, 1004}},                   // present, mid
		{"1001", 2, []int{1002, 1004}},                   // absent, mid
		{"2996", 5, []int{2998}},                         // present, near the end
		{"2997", 5, []int{2998}},                         // absent, near the end
		{"2998", 5, nil},                                 // present, last
		{"2999", 5, nil},                                 // absent, past the end
		{"9", 5, nil},                                    // past the end
		{"\xff", 5, nil},                                 // past the end
		{"1000", 0, nil},                                 // limit 0
		{"1000", -1, nil},                                // negative limit
		{"2990", 1 << 62, []int{2992, 2994, 2996, 2998}}, // huge limit
	} {
		got, err := s.List(ctx, tc.after, tc.limit)
		require.NoError(t, err)
		var vals []int
		for _, it := range got {
			vals = append(vals, it.Value)
			assert.Equal(t, fmt.Sprintf("%04d", it.Value), it.Key)
		}
		assert.Equal(t, tc.want, vals, "List(%q, %d)", tc.after, tc.limit)
	}
}

// TestSortedListIsACopy checks that a List result is the caller's to keep
// and change.
func TestSortedListIsACopy(t *testing.T) {
	var s Sorted[int]
	ctx := context.Background()
	for i := range 10 {
		s.Set(fmt.Sprint(i), i)
	}
	got, _ := s.List(ctx, "", 5)
	got[0].Value = 100
	_ = append(got, Item[int]{"x", 1}) // does not write into the Sorted
	s.Set("0", 0)
	again, _ := s.List(ctx, "", 6)
	assert.Equal(t, 0, again[0].Value)
	assert.Equal(t, "5", again[5].Key)
}

// TestSortedReleasesValues checks that a deleted value is not kept alive by
// the Sorted (for example in the spare capacity of a split chunk).
func TestSortedReleasesValues(t *testing.T) {
	var s Sorted[*[64]byte]
	var refs []weak.Pointer[[64]byte]
	const n = 4 * chunkSize
	for i := range n {
		v := new([64]byte)
		refs = append(refs, weak.Make(v))
		s.Set(fmt.Sprintf("%06d", i), v)
	}
	// Delete all but the first, which keeps the first chunk.
	for i := 1; i < n; i++ {
		s.Delete(fmt.Sprintf("%06d", i))
	}
	runtime.GC()
	runtime.GC()
	alive := 0
	for _, r := range refs[1:] {
		if r.Value() != nil {
			alive++
		}
	}
	assert.Zero(t, alive, "deleted values still reachable")
	runtime.KeepAlive(&s)
}

func TestSortedConcurrent(t *testing.T) {
	var s Sorted[int]
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 0))
			for i := range 2000 {
				k := randKey(r, 3000)
				switch r.IntN(3) {
				case 0:
					s.Set(k, i)
				case 1:
					s.Delete(k)
				default:
					items, _ := s.List(ctx, k, 50)
					for j := 1; j < len(items); j++ {
						if items[j-1].Key >= items[j].Key {
							t.Errorf("List out of order: %q, %q", items[j-1].Key, items[j].Key)
							return
						}
					}
					s.Get(k)
					s.Len()
				}
			}
		})
	}
	wg.Wait()
	checkInvariants(t, &s)
}
