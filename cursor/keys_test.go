package cursor_test

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// someInts are random int64s of every magnitude, both signs, and the
// extremes.
func someInts() []int64 {
	ns := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 32, -256, -255, -16, -15, -2, -1, 0, 1, 2, 15, 16, 255, 256, 1 << 32, math.MaxInt64 - 1, math.MaxInt64}
	r := rand.New(rand.NewPCG(2026, 2))
	for range 2000 {
		n := int64(r.Uint64()) >> r.IntN(64) // every magnitude
		ns = append(ns, n, -n)
	}
	return ns
}

func TestIntKeySorts(t *testing.T) {
	ns := someInts()
	byKey := slices.Clone(ns)
	slices.SortFunc(byKey, func(a, b int64) int { return strings.Compare(cursor.IntKey(a), cursor.IntKey(b)) })
	slices.Sort(ns)
	assert.Equal(t, ns, byKey)
	for i := 1; i < len(ns); i++ {
		a, b := cursor.IntKey(ns[i-1]), cursor.IntKey(ns[i])
		assert.Equal(t, cmp.Compare(ns[i-1], ns[i]), strings.Compare(a, b), "%d, %d", ns[i-1], ns[i])
	}
}

func TestIntKeyRoundTrip(t *testing.T) {
	for _, n := range someInts() {
		k := cursor.IntKey(n)
		assert.Len(t, k, cursor.IntKeyLength)
		assert.Equal(t, strings.ToLower(k), k)
		got, err := cursor.ParseIntKey(k)
		require.NoError(t, err, "%q", k)
		assert.Equal(t, n, got)
	}
	assert.Equal(t, "8000000000000000", cursor.IntKey(0))
	assert.Equal(t, "7fffffffffffffff", cursor.IntKey(-1))
	assert.Equal(t, "0000000000000000", cursor.IntKey(math.MinInt64))
	assert.Equal(t, "ffffffffffffffff", cursor.IntKey(math.MaxInt64))

	// A first page's after: every id but math.MinInt64 comes after it.
	n, err := cursor.ParseIntKey("")
	require.NoError(t, err)
	assert.Equal(t, int64(math.MinInt64), n)
}

func TestParseIntKeyErrors(t *testing.T) {
	for _, key := range []string{
		"0", "800000000000000", "80000000000000000", // lengths
		"800000000000000A", "8000000000000O00", "80000000000000-1", "+800000000000000",
		"0x80000000000000", " 800000000000000", "800000000000000 ", "8000_00000000000",
		"800000000000000\x00", "80000000000000é", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
		"9223372036854775807", "-1", "12", cursor.TimeKey(time.Unix(0, 0)),
		strings.Repeat("f", 1000),
	} {
		n, err := cursor.ParseIntKey(key)
		assert.Error(t, err, "%q", key)
		assert.Zero(t, n, "%q", key)
		if err != nil {
			assert.Contains(t, err.Error(), "is not an IntKey")
			assert.Less(t, len(err.Error()), 200, "a long key is cut short in the error")
		}
	}
}

// someTimes are random times of every magnitude, both sides of the
// epoch and of year 1, in several locations, and the extremes.
func someTimes(t *testing.T) []time.Time {
	earliest, err := cursor.ParseTimeKey("000000000000000000000000")
	require.NoError(t, err)
	latest, err := cursor.ParseTimeKey("ffffffffffffffff3b9ac9ff")
	require.NoError(t, err)
	ts := []time.Time{
		earliest, earliest.Add(1), latest, latest.Add(-1),
		{}, time.Time{}.Add(-1), time.Time{}.Add(1),
		time.Unix(0, 0), time.Unix(-1, 999_999_999), time.Unix(0, 1),
		time.Unix(math.MaxInt64, 0), time.Unix(math.MinInt64, 0),
		time.Unix(0, math.MaxInt64), time.Unix(0, math.MinInt64),
		time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		time.Now(), // with a monotonic clock reading
	}
	zones := []*time.Location{time.UTC, time.FixedZone("east", 14*3600), time.FixedZone("west", -12*3600)}
	r := rand.New(rand.NewPCG(2026, 3))
	for range 2000 {
		sec := int64(r.Uint64()) >> r.IntN(64)
		if r.IntN(2) == 0 {
			sec = -sec
		}
		ts = append(ts, time.Unix(sec, r.Int64N(1e9)).In(zones[r.IntN(len(zones))]))
	}
	return ts
}

func TestTimeKeySorts(t *testing.T) {
	ts := someTimes(t)
	byKey := slices.Clone(ts)
	slices.SortStableFunc(byKey, func(a, b time.Time) int { return strings.Compare(cursor.TimeKey(a), cursor.TimeKey(b)) })
	slices.SortStableFunc(ts, time.Time.Compare)
	assert.Equal(t, ts, byKey)
	for i := 1; i < len(ts); i++ {
		a, b := cursor.TimeKey(ts[i-1]), cursor.TimeKey(ts[i])
		assert.Equal(t, ts[i-1].Compare(ts[i]), strings.Compare(a, b), "%v, %v", ts[i-1], ts[i])
	}
}

func TestTimeKeyRoundTrip(t *testing.T) {
	for _, tm := range someTimes(t) {
		k := cursor.TimeKey(tm)
		assert.Len(t, k, cursor.TimeKeyLength)
		got, err := cursor.ParseTimeKey(k)
		require.NoError(t, err, "%q", k)
		assert.True(t, tm.Equal(got), "%v: %v", tm, got)
		assert.Equal(t, time.UTC, got.Location())
		assert.Equal(t, k, cursor.TimeKey(got))
		// One instant, one key: whatever the location or clock reading.
		assert.Equal(t, k, cursor.TimeKey(tm.UTC()))
		assert.Equal(t, k, cursor.TimeKey(tm.In(time.FixedZone("x", 3600)).Round(0)))
	}
	assert.Equal(t, "800000000000000000000000", cursor.TimeKey(time.Time{}))
	assert.Equal(t, "8000000e7791f70000000000", cursor.TimeKey(time.Unix(0, 0)))

	// A first page's after: the zero Time, before any time a database
	// holds.
	tm, err := cursor.ParseTimeKey("")
	require.NoError(t, err)
	assert.True(t, tm.IsZero())
	assert.Equal(t, time.Time{}, tm)
	assert.Equal(t, "0001-01-01T00:00:00Z", tm.Format(time.RFC3339Nano))
}

func TestParseTimeKeyErrors(t *testing.T) {
	valid := cursor.TimeKey(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC))
	for _, key := range []string{
		"0", valid[:23], valid + "0", valid[:16], cursor.IntKey(1),
		strings.ToUpper(valid), valid[:5] + "g" + valid[6:], " " + valid[1:],
		valid[:16] + "3b9aca00", valid[:16] + "ffffffff", // nanoseconds of a second or more
		valid[:16] + "-0000001", "2026-01-02T03:04:05Z",
		strings.Repeat("0", 1000),
	} {
		tm, err := cursor.ParseTimeKey(key)
		assert.Error(t, err, "%q", key)
		assert.True(t, tm.IsZero(), "%q", key)
		if err != nil {
			assert.Contains(t, err.Error(), "is not a TimeKey")
		}
	}
	_, err := cursor.ParseTimeKey(valid[:16] + "3b9ac9ff")
	assert.NoError(t, err)
}

// TestTimeIntKeyPairs checks the idiom of TimeKey(t)+IntKey(id) for rows
// whose timestamps repeat: the keys sort as the pairs, a Provider listing
// them by key walks them all in order, and the parts parse back.
func TestTimeIntKeyPairs(t *testing.T) {
	type row struct {
		created time.Time
		id      int64
	}
	r := rand.New(rand.NewPCG(2026, 4))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var rows []row
	for i := range 500 {
		rows = append(rows, row{base.Add(time.Duration(r.IntN(20)-10) * time.Hour), int64(i - 250)})
	}
	key := func(x row) string { return cursor.TimeKey(x.created) + cursor.IntKey(x.id) }
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(a.created.Compare(b.created), cmp.Compare(a.id, b.id))
	})
	for i := 1; i < len(rows); i++ {
		assert.Less(t, key(rows[i-1]), key(rows[i]))
	}

	// The provider: "WHERE (created, id) > ($t, $id) ORDER BY created, id".
	provider := cursor.ProviderFunc[row](func(_ context.Context, after string, limit int) ([]cursor.Item[row], error) {
		at := min(len(after), cursor.TimeKeyLength)
		t0, err := cursor.ParseTimeKey(after[:at])
		if err != nil {
			return nil, err
		}
		id0, err := cursor.ParseIntKey(after[at:])
		if err != nil {
			return nil, err
		}
		var out []cursor.Item[row]
		for _, x := range rows {
			if c := x.created.Compare(t0); (c > 0 || c == 0 && x.id > id0) && len(out) < limit {
				out = append(out, cursor.Item[row]{Key: key(x), Value: x})
			}
		}
		return out, nil
	})
	codec, err := cursor.NewCodec(nil)
	require.NoError(t, err)
	req := cursor.Request{Method: "m", Size: 7}
	var walked []row
	for {
		page, next, err := cursor.Paginate(context.Background(), codec, req, []cursor.Source[row]{{Provider: provider}})
		require.NoError(t, err)
		walked = append(walked, page...)
		if next == "" {
			break
		}
		req.Cursor = next
	}
	assert.Equal(t, rows, walked)
}

// FuzzIntKey checks that IntKey sorts as numbers do and round-trips, and
// that ParseIntKey accepts only "" and IntKey's own keys, never panics,
// and returns 0 with an error.
func FuzzIntKey(f *testing.F) {
	f.Add(int64(0), int64(-1), "")
	f.Add(int64(math.MinInt64), int64(math.MaxInt64), "8000000000000000")
	f.Add(int64(255), int64(256), "00000000000000ff")
	f.Add(int64(-256), int64(1<<40), "800000000000000F")
	f.Fuzz(func(t *testing.T, a, b int64, key string) {
		ka, kb := cursor.IntKey(a), cursor.IntKey(b)
		if len(ka) != cursor.IntKeyLength || strings.Compare(ka, kb) != cmp.Compare(a, b) {
			t.Fatalf("IntKey(%d) = %q, IntKey(%d) = %q", a, ka, b, kb)
		}
		if got, err := cursor.ParseIntKey(ka); err != nil || got != a {
			t.Fatalf("ParseIntKey(%q) = %d, %v; want %d", ka, got, err, a)
		}
		n, err := cursor.ParseIntKey(key)
		switch {
		case err != nil && n != 0:
			t.Fatalf("ParseIntKey(%q) = %d with error %v", key, n, err)
		case err == nil && key == "" && n != math.MinInt64:
			t.Fatalf(`ParseIntKey("") = %d`, n)
		case err == nil && key != "" && cursor.IntKey(n) != key:
			t.Fatalf("ParseIntKey(%q) = %d, whose key is %q", key, n, cursor.IntKey(n))
		}
	})
}

// FuzzTimeKey is FuzzIntKey for TimeKey and ParseTimeKey.
func FuzzTimeKey(f *testing.F) {
	f.Add(int64(0), int64(0), int64(-1), int64(999_999_999), "")
	f.Add(int64(math.MinInt64), int64(0), int64(math.MaxInt64), int64(999_999_999), "800000000000000000000000")
	f.Add(int64(1_800_000_000), int64(1), int64(1_800_000_000), int64(2), "8000000e7791f7003b9aca00")
	f.Fuzz(func(t *testing.T, s1, n1, s2, n2 int64, key string) {
		a, b := time.Unix(s1, n1), time.Unix(s2, n2)
		ka, kb := cursor.TimeKey(a), cursor.TimeKey(b)
		if len(ka) != cursor.TimeKeyLength || strings.Compare(ka, kb) != a.Compare(b) {
			t.Fatalf("TimeKey(%v) = %q, TimeKey(%v) = %q", a, ka, b, kb)
		}
		if got, err := cursor.ParseTimeKey(ka); err != nil || !got.Equal(a) {
			t.Fatalf("ParseTimeKey(%q) = %v, %v; want %v", ka, got, err, a)
		}
		tm, err := cursor.ParseTimeKey(key)
		switch {
		case err != nil && !tm.IsZero():
			t.Fatalf("ParseTimeKey(%q) = %v with error %v", key, tm, err)
		case err == nil && key == "" && !tm.IsZero():
			t.Fatalf(`ParseTimeKey("") = %v`, tm)
		case err == nil && key != "" && cursor.TimeKey(tm) != key:
			t.Fatalf("ParseTimeKey(%q) = %v, whose key is %q", key, tm, cursor.TimeKey(tm))
		}
	})
}
