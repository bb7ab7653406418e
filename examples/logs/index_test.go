package main

import (
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

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

// Listing order is the bytewise order of "service/date/range", where a
// service's '/' sorts after '.' and '-', and before digits, letters and
// '_'.
func TestCompareKeys(t *testing.T) {
	services := []string{"a", "a.b", "a-b", "a_b", "a0", "ab", "b", "a.", "a..", "A"}
	var keys []sliceKey
	for _, s := range services {
		for _, d := range []string{"2026-11-20", "2026-11-21"} {
			for hr := range hourRanges {
				keys = append(keys, sliceKey{service: s, window: window{date: d, hr: hr}})
			}
		}
	}
	for _, a := range keys {
		for _, b := range keys {
			require.Equal(t, strings.Compare(a.String(), b.String()), compareKeys(a, b), "%s vs %s", a, b)
		}
	}
}

// sameIndex checks that got indexes what want does, and goes on from
// the same place.
func sameIndex(t *testing.T, want, got *Index, msg ...any) {
	t.Helper()
	require.Equal(t, want.windows, got.windows, msg...)
	require.Equal(t, want.slices, got.slices, msg...)
	require.Equal(t, want.keys, got.keys, msg...)
	require.Equal(t, want.services, got.services, msg...)
	require.Equal(t, want.size, got.size, msg...)
	require.Equal(t, want.lines, got.lines, msg...)
	require.True(t, want.last.Equal(got.last), msg...)
}

// A file indexed in two Appends, cut anywhere, is indexed as in one pass:
// the first Append indexes the complete lines before the cut, and leaves
// the line the cut splits to the second.
func TestAppendCutAnywhere(t *testing.T) {
	text := unitLog + "\n"
	want, err := BuildIndex(strings.NewReader(text))
	require.NoError(t, err)
	for cut := range len(text) + 1 {
		x := NewIndex()
		d1, err := x.Append(strings.NewReader(text[:cut]))
		require.NoError(t, err, cut)
		size := x.Size()
		require.True(t, size == 0 || text[size-1] == '\n', "cut %d: indexed up to %d, not the end of a line", cut, size)
		require.NotContains(t, text[size:cut], "\n", "cut %d: a complete line is left out", cut)
		d2, err := x.Append(strings.NewReader(text[size:]))
		require.NoError(t, err, cut)
		sameIndex(t, want, x, cut)

		// Each slice is added once, and reported as changed by the
		// Append that gave it lines.
		added := append(slices.Clone(d1.Added), d2.Added...)
		slices.SortFunc(added, compareKeys)
		require.Equal(t, want.keys, added, cut)
		require.Equal(t, want.keys, mergeKeys(d1.Changed, d2.Changed), cut)
		require.True(t, slices.IsSortedFunc(d1.Changed, compareKeys) && slices.IsSortedFunc(d2.Changed, compareKeys), cut)
	}
}

// A file that grows a byte at a time, indexed after each byte, is indexed
// as in one pass.
func TestAppendByteByByte(t *testing.T) {
	text := unitLog + "\n"
	want, err := BuildIndex(strings.NewReader(text))
	require.NoError(t, err)
	x := NewIndex()
	for n := range len(text) + 1 {
		_, err := x.Append(strings.NewReader(text[x.Size():n]))
		require.NoError(t, err, n)
	}
	sameIndex(t, want, x)
}

// Lines appended extend the spans and stats of the slices they belong to,
// and a last line without its newline is indexed once it has it.
func TestAppendDelta(t *testing.T) {
	file := unitLog // its last line has no newline
	x := NewIndex()
	_, err := x.Append(strings.NewReader(file))
	require.NoError(t, err)
	lastLine := strings.LastIndex(file, "\n") + 1
	require.EqualValues(t, lastLine, x.Size(), "up to the line without its newline")
	_, ok := x.Stat(parseKey("db/2026-11-21/00-04"))
	require.False(t, ok, "the incomplete line is not indexed")

	// Its newline arrives: the slice appears.
	file += "\n"
	d, err := x.Append(strings.NewReader(file[x.Size():]))
	require.NoError(t, err)
	require.Equal(t, Delta{Changed: []sliceKey{parseKey("db/2026-11-21/00-04")}, Added: []sliceKey{parseKey("db/2026-11-21/00-04")}}, d)
	require.EqualValues(t, len(file), x.Size())

	// More lines: one for that slice, one for a new slice of the same
	// window, one (with a blank line) in an earlier slice's range on a
	// later day, which opens a new window.
	file += "2026-11-21T01:00:00Z db INFO more\n" +
		"2026-11-21T03:59:59.9Z api INFO new slice\n" +
		"\n" +
		"2026-11-21T04:00:00Z worker INFO new window\n"
	d, err = x.Append(strings.NewReader(file[x.Size():]))
	require.NoError(t, err)
	require.Equal(t, Delta{
		Changed: []sliceKey{parseKey("api/2026-11-21/00-04"), parseKey("db/2026-11-21/00-04"), parseKey("worker/2026-11-21/04-08")},
		Added:   []sliceKey{parseKey("api/2026-11-21/00-04"), parseKey("worker/2026-11-21/04-08")},
	}, d)
	require.EqualValues(t, len(file), x.Size())

	// The window of 2026-11-21 00-04 still starts at "next day", and now
	// ends after "new slice"; 04-08 holds the last line alone.
	require.Equal(t, span{int64(lastLine), int64(strings.Index(file, "\n\n2026-11-21T04") + 1)}, x.windows[window{"2026-11-21", 0}])
	require.Equal(t, span{int64(strings.Index(file, "2026-11-21T04")), int64(len(file))}, x.windows[window{"2026-11-21", 1}])
	st, _ := x.Stat(parseKey("db/2026-11-21/00-04"))
	require.Equal(t, sliceStat{lines: 2, size: int64(len("2026-11-21T00:00:00Z db INFO next day\n2026-11-21T01:00:00Z db INFO more\n"))}, st)
	st, _ = x.Stat(parseKey("api/2026-11-20/04-08"))
	require.Equal(t, 2, st.lines, "an earlier slice is unchanged")
	require.Equal(t, []string{"api", "db", "worker"}, x.services)

	// Reads serve the lines appended; the whole is as one pass indexes it.
	got, err := x.ReadSlice(strings.NewReader(file), parseKey("db/2026-11-21/00-04"), 1<<20)
	require.NoError(t, err)
	require.Equal(t, "2026-11-21T00:00:00Z db INFO next day\n2026-11-21T01:00:00Z db INFO more\n", string(got))
	got, err = x.ReadSlice(strings.NewReader(file), parseKey("api/2026-11-21/00-04"), 1<<20)
	require.NoError(t, err)
	require.Equal(t, "2026-11-21T03:59:59.9Z api INFO new slice\n", string(got))
	want, err := BuildIndex(strings.NewReader(file))
	require.NoError(t, err)
	sameIndex(t, want, x)
	require.Len(t, x.Keys(), 7+2, "slices")

	// A new service is listed, and completed.
	file += "2026-11-21T05:00:00Z cache INFO hello\n"
	d, err = x.Append(strings.NewReader(file[x.Size():]))
	require.NoError(t, err)
	require.Equal(t, []sliceKey{parseKey("cache/2026-11-21/04-08")}, d.Added)
	require.True(t, x.HasService("cache"))
	require.Equal(t, []string{"cache"}, x.complete("service", "c", nil))
	require.Equal(t, "cache/2026-11-21/04-08", x.After("api/2026-11-21/00-04", 1)[0].String())
}

// An appended line earlier than the one before it, or malformed, stops
// Append there: the lines before it are indexed, and the next Append
// starts at it again.
func TestAppendBadLine(t *testing.T) {
	for name, bad := range map[string]string{
		"back in time": "2026-11-21T00:00:00Z api INFO back in time\n",
		"malformed":    "not a log line\n",
	} {
		t.Run(name, func(t *testing.T) {
			file := unitLog + "\n" // 10 lines, a blank one among them
			x := NewIndex()
			_, err := x.Append(strings.NewReader(file))
			require.NoError(t, err)

			good := "2026-11-21T01:00:00Z api INFO good\n"
			file += good + bad + "2026-11-21T02:00:00Z api INFO after\n"
			d, err := x.Append(strings.NewReader(file[x.Size():]))
			require.ErrorContains(t, err, "line 12: ")
			require.Equal(t, []sliceKey{{service: "api", window: window{"2026-11-21", 0}}}, d.Changed, "the good line is indexed")
			require.EqualValues(t, strings.Index(file, bad), x.Size())

			d, err = x.Append(strings.NewReader(file[x.Size():]))
			require.ErrorContains(t, err, "line 12: ")
			require.Empty(t, d.Changed)
			st, _ := x.Stat(sliceKey{service: "api", window: window{"2026-11-21", 0}})
			require.Equal(t, 1, st.lines)
		})
	}
}

// A read error (the server stopping, say) ends Append: the complete lines
// before it are indexed, and the part of a line read before it is not.
func TestAppendReadError(t *testing.T) {
	boom := errors.New("boom")
	x := NewIndex()
	_, err := x.Append(io.MultiReader(
		strings.NewReader("2026-11-20T00:10:00Z api INFO first\n2026-11-20T00:20:00Z db INFO sec"),
		iotest.ErrReader(boom)))
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "line 2: ")
	require.EqualValues(t, len("2026-11-20T00:10:00Z api INFO first\n"), x.Size())
	require.Equal(t, []string{"api/2026-11-20/00-04"}, keyStrings(x.Keys()))
}

func keyStrings(keys []sliceKey) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.String()
	}
	return out
}
