package main

import (
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

const unitLog = `2026-11-20T00:10:00Z api INFO first
2026-11-20T02:00:00Z db WARN slow
2026-11-20T03:59:59Z api INFO just before four

2026-11-20T04:00:00Z api INFO exactly four
2026-11-20T04:00:00Z db INFO db at four
2026-11-20T06:00:00Z worker DEBUG mentions api here
2026-11-20T07:59:59Z api ERROR last of the window
2026-11-20T08:00:00Z api INFO next window
2026-11-21T00:00:00Z db INFO next day`

// countingReaderAt records the byte ranges read through it.
type countingReaderAt struct {
	r      io.ReaderAt
	mu     sync.Mutex
	ranges [][2]int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.mu.Lock()
	c.ranges = append(c.ranges, [2]int64{off, off + int64(n)})
	c.mu.Unlock()
	return n, err
}

func TestReadSliceStaysInSpan(t *testing.T) {
	idx, err := BuildIndex(strings.NewReader(unitLog))
	require.NoError(t, err)

	// The 04-08 window runs from the 04:00:00 line to the end of the
	// 07:59:59 line.
	start := int64(strings.Index(unitLog, "2026-11-20T04:00:00Z api"))
	end := int64(strings.Index(unitLog, "2026-11-20T08:00:00Z"))
	k := sliceKey{service: "api", window: window{date: "2026-11-20", hr: 1}}
	require.Equal(t, span{start, end}, idx.windows[k.window])

	ra := &countingReaderAt{r: strings.NewReader(unitLog)}
	got, err := idx.ReadSlice(ra, k, 1<<20)
	require.NoError(t, err)
	require.Equal(t, "2026-11-20T04:00:00Z api INFO exactly four\n2026-11-20T07:59:59Z api ERROR last of the window\n", string(got))

	require.NotEmpty(t, ra.ranges)
	var total int64
	for _, r := range ra.ranges {
		require.GreaterOrEqual(t, r[0], start, "read before the window: %v", r)
		require.LessOrEqual(t, r[1], end, "read after the window: %v", r)
		total += r[1] - r[0]
	}
	require.Equal(t, end-start, total, "bytes read")

	// The last line, which has no newline, reads as a line.
	k = sliceKey{service: "db", window: window{date: "2026-11-21", hr: 0}}
	got, err = idx.ReadSlice(strings.NewReader(unitLog), k, 1<<20)
	require.NoError(t, err)
	require.Equal(t, "2026-11-21T00:00:00Z db INFO next day\n", string(got))
	st, ok := idx.Stat(k)
	require.True(t, ok)
	require.Equal(t, sliceStat{lines: 1, size: int64(len(got))}, st)
}

func TestIndex(t *testing.T) {
	idx, err := BuildIndex(strings.NewReader(unitLog))
	require.NoError(t, err)
	require.Equal(t, []string{"api", "db", "worker"}, idx.services)

	var keys []string
	for _, k := range idx.After("", 100) {
		keys = append(keys, k.String())
	}
	require.Equal(t, []string{
		"api/2026-11-20/00-04", "api/2026-11-20/04-08", "api/2026-11-20/08-12",
		"db/2026-11-20/00-04", "db/2026-11-20/04-08", "db/2026-11-21/00-04",
		"worker/2026-11-20/04-08",
	}, keys)
	page := idx.After("api/2026-11-20/08-12", 2)
	require.Len(t, page, 2)
	require.Equal(t, "db/2026-11-20/00-04", page[0].String())
	require.Empty(t, idx.After("worker/2026-11-20/04-08", 10))

	require.Equal(t, []string{"api", "db", "worker"}, idx.complete("service", "", nil))
	require.Equal(t, []string{"2026-11-20"}, idx.complete("date", "", map[string]string{"service": "worker"}))
	require.Equal(t, []string{"2026-11-20", "2026-11-21"}, idx.complete("date", "2026", nil))
	require.Equal(t, hourRanges, idx.complete("hourRange", "", nil))
	require.Equal(t, []string{"00-04", "04-08"}, idx.complete("hourRange", "", map[string]string{"service": "db", "date": "2026-11-20"}))
	require.Empty(t, idx.complete("hourRange", "", map[string]string{"service": "nope"}))
}

func TestReadSliceTooLarge(t *testing.T) {
	idx, err := BuildIndex(strings.NewReader(unitLog))
	require.NoError(t, err)
	k := sliceKey{service: "api", window: window{date: "2026-11-20", hr: 1}}
	ra := &countingReaderAt{r: strings.NewReader(unitLog)}
	_, err = idx.ReadSlice(ra, k, 10)
	var tooLarge *SliceTooLargeError
	require.True(t, errors.As(err, &tooLarge), "got %v", err)
	require.Contains(t, err.Error(), "cap")
	require.Empty(t, ra.ranges, "refused before reading")
}

func TestBuildIndexErrors(t *testing.T) {
	for name, text := range map[string]string{
		"unsorted":      "2026-11-20T05:00:00Z api INFO b\n2026-11-20T04:00:00Z api INFO a\n",
		"no level":      "2026-11-20T05:00:00Z api\n",
		"bad timestamp": "2026-11-20 05:00:00 api INFO x\n",
		"not UTC":       "2026-11-20T05:00:00+01:00 api INFO x\n",
		"bad service":   "2026-11-20T05:00:00Z a/b INFO x\n",
	} {
		_, err := BuildIndex(strings.NewReader(text))
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "line ", name)
	}
}
