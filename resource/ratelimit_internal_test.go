package resource

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// The limiter drops refilled buckets, and only those: a caller's budget is
// the same whether or not a sweep ran meanwhile.
func TestLimiterSweepKeepsBudgets(t *testing.T) {
	t.Parallel()
	l := newLimiter(&RateLimit{Rate: 10, Burst: 2})
	spend := func(key string, at time.Time) {
		t.Helper()
		for range 2 {
			ok, _ := l.allow(key, at)
			require.True(t, ok)
		}
		ok, wait := l.allow(key, at)
		require.False(t, ok, "the burst is spent")
		assert.Equal(t, 100*time.Millisecond, wait, "one token comes back every 100ms")
	}
	start := time.Unix(0, 0)
	spend("busy", start)
	for i := range minSweep - 1 {
		ok, _ := l.allow(fmt.Sprint("caller-", i), start)
		require.True(t, ok)
	}
	require.Len(t, l.buckets, minSweep)

	// A second later every bucket is full; busy spends its burst again.
	// The next new caller sweeps: the full buckets go, busy's stays.
	later := start.Add(time.Second)
	spend("busy", later)
	ok, _ := l.allow("newcomer", later)
	require.True(t, ok)
	assert.Len(t, l.buckets, 2, "busy and the newcomer")
	ok, _ = l.allow("busy", later)
	assert.False(t, ok, "busy's budget survived the sweep")
	ok, _ = l.allow("caller-1", later)
	assert.True(t, ok, "a dropped caller starts with a full bucket, as it had")
}

func TestNewLimiter(t *testing.T) {
	t.Parallel()
	assert.Nil(t, newLimiter(nil), "no RateLimit is no limit")
	assert.Nil(t, newLimiter(&RateLimit{Rate: rate.Inf}), "an infinite rate is no limit")
	l := newLimiter(&RateLimit{Rate: 20, Burst: 5})
	assert.Equal(t, rate.Limit(20), l.limit)
	assert.Equal(t, 5, l.burst)
}
