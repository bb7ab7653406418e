package main

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// hourRanges are the six 4-hour windows of a day, as they appear in URIs.
var hourRanges = []string{"00-04", "04-08", "08-12", "12-16", "16-20", "20-24"}

// rangeIndex returns the index in hourRanges of s, or -1.
func rangeIndex(s string) int { return slices.Index(hourRanges, s) }

// maxLineLen caps one log line, newline included.
const maxLineLen = 1 << 20

// A window is one date's 4-hour range: hr indexes hourRanges.
type window struct {
	date string
	hr   int
}

// windowOf returns the window that holds t.
func windowOf(t time.Time) window {
	return window{date: t.Format(time.DateOnly), hr: t.Hour() / 4}
}

// A span is the bytes [start, end) of the file.
type span struct{ start, end int64 }

// A sliceKey names one slice: a service's lines in one window.
type sliceKey struct {
	service string
	window
}

// String returns the slice's key in the listing, "service/date/range",
// which is also its URI without "log://".
func (k sliceKey) String() string {
	return k.service + "/" + k.date + "/" + hourRanges[k.hr]
}

// compareKeys orders a and b as their String forms compare, bytewise (the
// listing order), without building them. Dates ("YYYY-MM-DD") and ranges
// have fixed lengths, so only the service, followed by its '/', needs care:
// "a" sorts after "a.b", since '/' sorts after '.'.
func compareKeys(a, b sliceKey) int {
	if a.service != b.service {
		n := min(len(a.service), len(b.service))
		if c := strings.Compare(a.service[:n], b.service[:n]); c != 0 {
			return c
		}
		if len(a.service) < len(b.service) {
			return cmp.Compare('/', b.service[n]) // never 0: no service holds '/'
		}
		return cmp.Compare(a.service[n], '/')
	}
	return cmp.Or(strings.Compare(a.date, b.date), cmp.Compare(a.hr, b.hr))
}

// A sliceStat counts one slice's lines and their bytes (one newline each).
type sliceStat struct {
	lines int
	size  int64
}

// An Index says where each window of a time-sorted log file lies, and what
// each slice holds. It holds no lines: its size grows with the number of
// slices, not with the file.
//
// BuildIndex builds one from a file that does not change. For a file that
// grows, NewIndex and Append index its lines as they are appended, in
// place: the methods that read an Index may run concurrently with Append,
// and see each Append's lines all at once or not at all.
type Index struct {
	mu       sync.RWMutex // guards the fields below; Append alone writes them
	windows  map[window]span
	slices   map[sliceKey]sliceStat
	keys     []sliceKey // by compareKeys: the listing order
	services []string   // sorted

	// Where the next Append goes on from.
	size  int64     // the bytes indexed: up to the end of the last line
	lines int       // the lines indexed, blank ones included
	last  time.Time // the timestamp of the last line indexed, if hasLast
	// hasLast reports whether a line (not blank) has been indexed.
	hasLast bool
}

// NewIndex returns an empty Index, for Append to fill.
func NewIndex() *Index {
	return &Index{windows: make(map[window]span), slices: make(map[sliceKey]sliceStat)}
}

// BuildIndex reads a log file once, from r, and indexes it. Each line is
//
//	2026-11-20T13:04:05Z service level message
//
// a UTC RFC 3339 timestamp (fractional seconds allowed, "Z" required), a
// service name of letters, digits, '.', '_' and '-', a level and a message
// (which may be empty), separated by single spaces and ended by '\n' (the
// last line may lack it). Blank lines are skipped. Lines must be sorted by
// time (equal timestamps are fine), so that each window is one contiguous
// byte span; BuildIndex fails on the first line out of order or malformed,
// naming its line number.
func BuildIndex(r io.Reader) (*Index, error) {
	x := NewIndex()
	if _, err := x.add(r, true); err != nil {
		return nil, err
	}
	return x, nil
}

// A Delta is what one Append changed.
type Delta struct {
	// Changed holds the slices that gained lines, in listing order.
	Changed []sliceKey
	// Added holds those of them that are new: the slices that had no line
	// before, in listing order.
	Added []sliceKey
}

// Append indexes the lines of r, which holds the file from byte x.Size()
// on, as BuildIndex does, except that it leaves out a last line that lacks
// its '\n': one still being written, which the next Append, from the same
// Size, indexes once it is complete. The lines go on from those indexed
// before, so they must not be earlier than the last of them.
//
// Append stops at the first line out of order or malformed, and returns an
// error naming its line number in the file, having indexed the lines
// before it; a later Append starts at that line again. It returns the
// slices that changed. Append must not be called concurrently with
// itself; the other methods may run meanwhile.
func (x *Index) Append(r io.Reader) (Delta, error) { return x.add(r, false) }

// add indexes the lines of r from x.size on, as Append says, including a
// last line without its '\n' if lastLine is set. Only the goroutine that
// appends writes x, so it reads x without the lock; it takes the lock to
// write, once the lines are read.
func (x *Index) add(r io.Reader, lastLine bool) (Delta, error) {
	var (
		off     = x.size
		lines   = x.lines
		last    = x.last
		hasLast = x.hasLast
		cur     = windowOf(last) // the window of the last line, if hasLast
		spans   = make(map[window]span)
		stats   = make(map[sliceKey]sliceStat) // lines and bytes gained
		err     error
	)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, rerr := readLine(br)
		if rerr != nil && (rerr != io.EOF || !lastLine) {
			// A line without its '\n' (or none) is left for later; what
			// came before a read error is not a line either.
			if rerr != io.EOF {
				err = fmt.Errorf("line %d: %w", lines+1, rerr)
			}
			break
		}
		if len(line) > 0 {
			content := bytes.TrimSuffix(line, []byte("\n"))
			if len(bytes.TrimSpace(content)) > 0 {
				ts, service, perr := parseLine(content)
				if perr != nil {
					err = fmt.Errorf("line %d: %w", lines+1, perr)
					break
				}
				if hasLast && ts.Before(last) {
					err = fmt.Errorf("line %d: %s is earlier than the line before: the file must be sorted by time", lines+1, ts.Format(time.RFC3339Nano))
					break
				}
				w := windowOf(ts)
				end := off + int64(len(line))
				if !hasLast || w != cur {
					// Lines are sorted, so a new window has no line yet.
					spans[w] = span{start: off, end: end}
				} else {
					sp, ok := spans[w]
					if !ok {
						sp = x.windows[w]
					}
					sp.end = end
					spans[w] = sp
				}
				last, hasLast, cur = ts, true, w
				k := sliceKey{service: service, window: w}
				st := stats[k]
				st.lines++
				st.size += int64(len(content)) + 1
				stats[k] = st
			}
			lines++
			off += int64(len(line))
		}
		if rerr == io.EOF {
			break
		}
	}

	var d Delta
	for k := range stats {
		d.Changed = append(d.Changed, k)
		if _, ok := x.slices[k]; !ok {
			d.Added = append(d.Added, k)
		}
	}
	slices.SortFunc(d.Changed, compareKeys)
	slices.SortFunc(d.Added, compareKeys)
	var newServices []string
	for _, k := range d.Added {
		if !x.HasService(k.service) && !slices.Contains(newServices, k.service) {
			newServices = append(newServices, k.service)
		}
	}

	x.mu.Lock()
	defer x.mu.Unlock()
	for w, sp := range spans {
		x.windows[w] = sp
	}
	for k, gained := range stats {
		st := x.slices[k]
		st.lines += gained.lines
		st.size += gained.size
		x.slices[k] = st
	}
	if len(d.Added) > 0 {
		x.keys = mergeKeys(x.keys, d.Added)
	}
	if len(newServices) > 0 {
		x.services = append(x.services, newServices...)
		slices.Sort(x.services)
	}
	x.size, x.lines, x.last, x.hasLast = off, lines, last, hasLast
	return d, err
}

// mergeKeys returns the keys in a or b, both in listing order, in listing
// order, each once, in a new slice (readers may hold a).
func mergeKeys(a, b []sliceKey) []sliceKey {
	out := make([]sliceKey, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch c := compareKeys(a[0], b[0]); {
		case c < 0:
			out, a = append(out, a[0]), a[1:]
		case c > 0:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// Size returns the number of bytes of the file indexed: up to the end of
// the last line, where the next Append goes on from.
func (x *Index) Size() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.size
}

// Keys returns the keys of every slice, in listing order.
func (x *Index) Keys() []sliceKey {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return slices.Clone(x.keys)
}

// readLine returns the next line of br, with its '\n' if it has one. At the
// end of the input it returns the last line, if any, and io.EOF.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	long := append([]byte(nil), line...)
	for err == bufio.ErrBufferFull {
		if len(long) > maxLineLen {
			return nil, fmt.Errorf("line longer than %d bytes", maxLineLen)
		}
		line, err = br.ReadSlice('\n')
		long = append(long, line...)
	}
	return long, err
}

// parseLine returns the timestamp and service of a log line without its
// newline.
func parseLine(line []byte) (time.Time, string, error) {
	fields := bytes.SplitN(line, []byte(" "), 4)
	if len(fields) < 3 {
		return time.Time{}, "", errors.New(`want "TIMESTAMP SERVICE LEVEL MESSAGE"`)
	}
	ts, err := time.Parse(time.RFC3339Nano, string(fields[0]))
	if err != nil || !bytes.HasSuffix(fields[0], []byte("Z")) {
		return time.Time{}, "", fmt.Errorf("timestamp %q is not UTC RFC 3339 such as 2026-11-20T13:04:05Z", fields[0])
	}
	service := string(fields[1])
	if !validService(service) {
		return time.Time{}, "", fmt.Errorf("service %q: want letters, digits, '.', '_' or '-'", service)
	}
	if len(fields[2]) == 0 {
		return time.Time{}, "", errors.New("empty level")
	}
	return ts, service, nil
}

// validService reports whether s can be a service name: it must fit in one
// URI path segment unescaped.
func validService(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Stat returns what the slice k holds, and whether it exists (has a line).
func (x *Index) Stat(k sliceKey) (sliceStat, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	st, ok := x.slices[k]
	return st, ok
}

// HasService reports whether service has a line in the file.
func (x *Index) HasService(service string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := slices.BinarySearch(x.services, service)
	return ok
}

// After returns up to limit slice keys that sort after after, in order.
func (x *Index) After(after string, limit int) []sliceKey {
	x.mu.RLock()
	defer x.mu.RUnlock()
	i, _ := slices.BinarySearchFunc(x.keys, after, func(k sliceKey, t string) int {
		if k.String() <= t {
			return -1
		}
		return 1
	})
	return slices.Clone(x.keys[i:min(len(x.keys), i+max(limit, 0))])
}

// A SliceTooLargeError reports a slice bigger than the read cap.
type SliceTooLargeError struct {
	Key       sliceKey
	Size, Max int64
}

func (e *SliceTooLargeError) Error() string {
	return fmt.Sprintf("log slice %s holds %d bytes, more than the %d-byte cap (-max-slice); read a narrower file or raise the cap", e.Key, e.Size, e.Max)
}

// ReadSlice returns the lines of slice k, each ended by '\n', reading from
// ra only the byte span of k's window. It fails with a
// *SliceTooLargeError if the slice holds more than maxSize bytes, before
// reading anything if the index says so, and with an error if the file no
// longer matches the index. Lines appended to the file since do not
// matter: the span ends where the slice's last line indexed does.
func (x *Index) ReadSlice(ra io.ReaderAt, k sliceKey, maxSize int64) ([]byte, error) {
	// The span and the stat, taken together, hold for the bytes of the
	// file they cover even while lines are appended after them.
	x.mu.RLock()
	st, ok := x.slices[k]
	sp := x.windows[k.window]
	x.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("no slice %s", k)
	}
	if st.size > maxSize {
		return nil, &SliceTooLargeError{Key: k, Size: st.size, Max: maxSize}
	}
	br := bufio.NewReaderSize(io.NewSectionReader(ra, sp.start, sp.end-sp.start), 32<<10)
	out := make([]byte, 0, st.size)
	prefix := []byte(" " + k.service + " ")
	for {
		line, err := readLine(br)
		content := bytes.TrimSuffix(line, []byte("\n"))
		// The service is the second field: after the timestamp's space.
		if i := bytes.IndexByte(content, ' '); i >= 0 && bytes.HasPrefix(content[i:], prefix) {
			if int64(len(out)+len(content)+1) > maxSize {
				return nil, &SliceTooLargeError{Key: k, Size: int64(len(out) + len(content) + 1), Max: maxSize}
			}
			out = append(append(out, content...), '\n')
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(out)) != st.size {
		return nil, fmt.Errorf("log slice %s: read %d bytes where the index says %d: has the file changed other than by lines appended?", k, len(out), st.size)
	}
	return out, nil
}

// complete returns the sorted values of the variable want ("service",
// "date" or "hourRange") that start with partial, among the slices that
// exist and agree with the other variables bound.
func (x *Index) complete(want, partial string, bound map[string]string) []string {
	service, date, hr := bound["service"], bound["date"], bound["hourRange"]
	if want == "hourRange" && service == "" && date == "" {
		return prefixed(hourRanges, partial) // nothing bound: every range
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	seen := make(map[string]bool)
	var out []string
	for _, k := range x.keys {
		if want != "service" && service != "" && k.service != service ||
			want != "date" && date != "" && k.date != date ||
			want != "hourRange" && hr != "" && hourRanges[k.hr] != hr {
			continue
		}
		var v string
		switch want {
		case "service":
			v = k.service
		case "date":
			v = k.date
		default:
			v = hourRanges[k.hr]
		}
		if !seen[v] && strings.HasPrefix(v, partial) {
			seen[v] = true
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

func prefixed(values []string, partial string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, partial) {
			out = append(out, v)
		}
	}
	return out
}
