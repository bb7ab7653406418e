package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
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

// A sliceStat counts one slice's lines and their bytes (one newline each).
type sliceStat struct {
	lines int
	size  int64
}

// An Index says where each window of a time-sorted log file lies, and what
// each slice holds. It is built by one pass over the file and holds no
// lines: its size grows with the number of slices, not with the file.
type Index struct {
	windows  map[window]span
	slices   map[sliceKey]sliceStat
	keys     []sliceKey // by String(), bytewise: the listing order
	services []string   // sorted
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
	x := &Index{windows: make(map[window]span), slices: make(map[sliceKey]sliceStat)}
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		off    int64
		prev   time.Time
		cur    window
		curOK  bool
		lineNo int
	)
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			lineNo++
			start := off
			off += int64(len(line))
			content := bytes.TrimSuffix(line, []byte("\n"))
			if len(bytes.TrimSpace(content)) == 0 {
				continue // blank
			}
			ts, service, perr := parseLine(content)
			if perr != nil {
				return nil, fmt.Errorf("line %d: %w", lineNo, perr)
			}
			if ts.Before(prev) {
				return nil, fmt.Errorf("line %d: %s is earlier than the line before: the file must be sorted by time", lineNo, ts.Format(time.RFC3339Nano))
			}
			prev = ts
			w := window{date: ts.Format(time.DateOnly), hr: ts.Hour() / 4}
			if !curOK || w != cur {
				x.windows[w] = span{start: start, end: off}
				cur, curOK = w, true
			} else {
				sp := x.windows[w]
				sp.end = off
				x.windows[w] = sp
			}
			k := sliceKey{service: service, window: w}
			st := x.slices[k]
			st.lines++
			st.size += int64(len(content)) + 1
			x.slices[k] = st
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo+1, err)
		}
	}
	services := make(map[string]bool)
	for k := range x.slices {
		x.keys = append(x.keys, k)
		services[k.service] = true
	}
	slices.SortFunc(x.keys, func(a, b sliceKey) int { return strings.Compare(a.String(), b.String()) })
	for s := range services {
		x.services = append(x.services, s)
	}
	slices.Sort(x.services)
	return x, nil
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
	st, ok := x.slices[k]
	return st, ok
}

// HasService reports whether service has a line in the file.
func (x *Index) HasService(service string) bool {
	_, ok := slices.BinarySearch(x.services, service)
	return ok
}

// After returns up to limit slice keys that sort after after, in order.
func (x *Index) After(after string, limit int) []sliceKey {
	i, _ := slices.BinarySearchFunc(x.keys, after, func(k sliceKey, t string) int {
		if k.String() <= t {
			return -1
		}
		return 1
	})
	return x.keys[i:min(len(x.keys), i+max(limit, 0))]
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
// longer matches the index.
func (x *Index) ReadSlice(ra io.ReaderAt, k sliceKey, maxSize int64) ([]byte, error) {
	st, ok := x.slices[k]
	if !ok {
		return nil, fmt.Errorf("no slice %s", k)
	}
	if st.size > maxSize {
		return nil, &SliceTooLargeError{Key: k, Size: st.size, Max: maxSize}
	}
	sp := x.windows[k.window]
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
		return nil, fmt.Errorf("log slice %s: read %d bytes where the index says %d: has the file changed since the server started?", k, len(out), st.size)
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
