package main

import (
	"container/heap"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// How resources/list reads directories
//
// A page of resources/list starts after a key, the path of the last
// resource of the page before, and walks the tree depth first from there
// (see fileServer.list). In each directory on its way it needs the
// visible entries in key order from some key on. A dirIndex gives them:
// the directory's entries, read once and sorted, kept in an indexCache
// and used for as long as the directory's version (see dirVersion) stays
// the same. Finding where a page starts in a directory of n entries then
// costs a stat and a binary search, O(log n), instead of reading and
// sorting the directory, O(n log n), at every page.
//
// A directory changed just before it was read (not settled), or whose
// index would not fit in the cache, is scanned instead: each page reads it
// whole and keeps only the entries the page needs (see scanAfter), in
// O(n) time and O(page) memory.

// An entryKind is what a directory entry is, as its directory says.
type entryKind uint8

const (
	kindFile entryKind = iota // a regular file
	kindDir                   // a directory (never a symbolic link to one)
	kindLink                  // a symbolic link, listed if it leads to a regular file within the root
)

// An entry is one visible entry of a directory: a regular file, a
// directory or a symbolic link whose path allowed accepts.
type entry struct {
	name string
	kind entryKind
}

// key returns what orders a directory's entries: the name, followed by
// '/' for a directory. Ordered by key, a depth-first walk visits paths in
// bytewise order: "a-b" < "a/" < "a/x" < "a0".
func (e entry) key() string {
	if e.kind == kindDir {
		return e.name + "/"
	}
	return e.name
}

// compareKey compares e.key() with k bytewise, as strings.Compare does,
// without building the key.
func (e entry) compareKey(k string) int {
	m := min(len(e.name), len(k))
	if c := strings.Compare(e.name[:m], k[:m]); c != 0 {
		return c
	}
	if m < len(e.name) {
		return 1 // k is a proper prefix of the name
	}
	tail := ""
	if e.kind == kindDir {
		tail = "/"
	}
	return strings.Compare(tail, k[m:])
}

// compareEntries orders entries by key, as compareKey does.
func compareEntries(a, b entry) int {
	m := min(len(a.name), len(b.name))
	if c := strings.Compare(a.name[:m], b.name[:m]); c != 0 {
		return c
	}
	// One name is a prefix of the other: the keys differ at m, where a
	// key holds the rest of its name, its '/', or nothing.
	return a.keyByte(m) - b.keyByte(m)
}

// keyByte returns the byte of e.key() at i, for i <= len(e.name), or -1
// past its end.
func (e entry) keyByte(i int) int {
	switch {
	case i < len(e.name):
		return int(e.name[i])
	case e.kind == kindDir:
		return '/'
	}
	return -1
}

// A dirIndex is the visible entries of one directory, sorted by key, in
// a form that costs the garbage collector nothing to scan: the names end
// to end in one string, and a span of it for each entry; and, for an
// index the cache keeps, a note of each file's MIME type once a page has
// described it. It takes indexSize bytes, 12 bytes plus the name's length
// an entry, and notesSize more with notes, 16 bytes an entry. Its entries
// never change once built, and its notes are guarded: any number of
// requests may read it at once.
type dirIndex struct {
	names string // every name, in the order the directory gave them
	spans []span // the entries, in key order

	// notes holds, by position, what describe found of each regular file
	// (see fileNote), in an index the cache keeps; mu guards it. mimes is
	// the cache's table of the MIME types the notes number.
	mu    sync.Mutex
	notes []fileNote
	mimes *mimeTable
}

// A span is one entry of a dirIndex: its name, names[start:end], and kind.
type span struct {
	start, end uint32
	kind       entryKind
}

// spanSize and noteSize are the sizes of a span and a fileNote, padding
// included.
const (
	spanSize = 12
	noteSize = 16
)

// indexOverhead is what indexSize counts for a dirIndex beyond its names
// and spans: the index, its cache record and the directory's FileInfo.
const indexOverhead = 512

// indexSize returns the bytes an index of n entries whose names take
// nameBytes takes, without notes.
func indexSize(nameBytes, n int) int64 {
	return int64(nameBytes) + spanSize*int64(n) + indexOverhead
}

// notesSize returns the bytes the notes of an index of n entries take.
func notesSize(n int) int64 { return noteSize * int64(n) }

// len returns the number of entries of x.
func (x *dirIndex) len() int { return len(x.spans) }

// at returns the entry i of x, in key order. Its name shares x's memory.
func (x *dirIndex) at(i int) entry { return x.entry(x.spans[i]) }

func (x *dirIndex) entry(s span) entry {
	return entry{name: x.names[s.start:s.end], kind: s.kind}
}

// search returns the position of the first entry of x whose key comes
// after k, or is k if orEqual is set: x.len() if there is none.
func (x *dirIndex) search(k string, orEqual bool) int {
	return sort.Search(len(x.spans), func(i int) bool {
		c := x.at(i).compareKey(k)
		return c > 0 || orEqual && c == 0
	})
}

// growStep is how many bytes buildIndex reserves at a time.
const growStep = 64 << 10

// buildIndex reads the directory d, whose path relative to the root is
// rel, and returns its index, without notes. As the index grows it calls
// grow with the bytes it adds (growStep at a time, and the rest at the
// end); if grow fails, buildIndex stops reading and returns grow's error. A directory
// whose names take more than 4 GiB in all fails with errTooLarge.
// Reading the directory may take up to about twice the bytes granted, as
// buffers grow by doubling.
func (s *fileServer) buildIndex(d *os.Root, rel string, grow func(int64) error) (*dirIndex, error) {
	var names strings.Builder
	var spans []span
	var granted int64
	err := s.readEntries(d, rel, func(e entry) error {
		if uint64(names.Len())+uint64(len(e.name)) > math.MaxUint32 {
			return errTooLarge
		}
		start := names.Len()
		names.WriteString(e.name)
		spans = append(spans, span{start: uint32(start), end: uint32(names.Len()), kind: e.kind})
		if size := indexSize(names.Len(), len(spans)); size-granted >= growStep {
			if err := grow(size - granted); err != nil {
				return err
			}
			granted = size
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := grow(indexSize(names.Len(), len(spans)) - granted); err != nil {
		return nil, err
	}
	x := &dirIndex{names: names.String(), spans: spans}
	if c := names.Cap(); c > names.Len()+names.Len()/4 {
		x.names = strings.Clone(x.names) // do not keep the spare capacity
	}
	if cap(x.spans) > len(x.spans)+len(x.spans)/4 {
		x.spans = slices.Clone(x.spans)
	}
	slices.SortFunc(x.spans, func(a, b span) int { return compareEntries(x.entry(a), x.entry(b)) })
	return x, nil
}

// readBatch is how many entries readEntries asks a directory for at once.
const readBatch = 1024

// readEntries calls fn with each visible entry of the directory d, whose
// path relative to the root is rel (a visible directory, whose own path
// is not checked again), in the order the directory gives them: its
// regular files, directories and symbolic links that allowed accepts.
// It stops at the first error fn returns, and returns it, or the error of
// reading the directory.
func (s *fileServer) readEntries(d *os.Root, rel string, fn func(entry) error) error {
	f, err := s.openEntries(d, rel)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		des, err := f.ReadDir(readBatch)
		for _, de := range des {
			name := de.Name()
			if !s.allowedChild(rel, name) {
				continue
			}
			e := entry{name: name}
			switch t := de.Type(); {
			case t.IsDir():
				e.kind = kindDir
			case t&fs.ModeSymlink != 0:
				e.kind = kindLink
			case !t.IsRegular():
				continue // devices, FIFOs, sockets
			}
			if err := fn(e); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// openEntries opens the directory d, whose path relative to the root is
// rel, to read its entries. A directory opened through an os.Root has Go
// stat each of its entries as it reads them (since it cannot stat them
// later by path): a million stats for a directory of a million files. So
// openEntries opens it by its path instead, and keeps that handle if it is
// the very directory d is (os.SameFile), which it then only reads names
// and types from; if it is not (a path component was replaced by a link
// meanwhile, or the root moved), it opens d itself.
func (s *fileServer) openEntries(d *os.Root, rel string) (*os.File, error) {
	// openFlags: a FIFO put in the path meanwhile must not block the open.
	if f, err := os.OpenFile(filepath.Join(s.dir, osName(rel)), openFlags, 0); err == nil {
		fi, err := f.Stat()
		di, derr := d.Stat(".")
		if err == nil && derr == nil && os.SameFile(fi, di) {
			return f, nil
		}
		f.Close()
	}
	return d.Open(".")
}

// scanAfter reads the directory d, whose path relative to the root is
// rel, and returns, in key order, its first n visible entries whose keys
// come after k (or are k, if orEqual is set). It holds no more than n
// entries at a time, however large the directory. n must be positive.
func (s *fileServer) scanAfter(d *os.Root, rel, k string, orEqual bool, n int) ([]entry, error) {
	h := make(entryHeap, 0, min(n, readBatch))
	err := s.readEntries(d, rel, func(e entry) error {
		if c := e.compareKey(k); c < 0 || c == 0 && !orEqual {
			return nil
		}
		if len(h) < n {
			heap.Push(&h, e)
		} else if compareEntries(e, h[0]) < 0 {
			h[0] = e
			heap.Fix(&h, 0)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(h, compareEntries)
	return h, nil
}

// An entryHeap is a heap of entries whose top is the last in key order.
type entryHeap []entry

func (h entryHeap) Len() int           { return len(h) }
func (h entryHeap) Less(i, j int) bool { return compareEntries(h[i], h[j]) > 0 }
func (h entryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *entryHeap) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// index returns the index of the directory d, whose path relative to the
// root is rel and whose FileInfo, taken from d after the time now, is fi.
// That is the cached index if the directory has not changed since it was
// read; otherwise a new one, which it caches. It returns nil, and no
// error, for a directory to scan instead (see dirCursor): one changed too
// recently for its change time to tell a later change (not settled), one
// whose index does not fit in the cache, and any with a cache of zero
// bytes. It returns the error of reading the directory.
func (s *fileServer) index(d *os.Root, rel string, fi fs.FileInfo, now time.Time) (*dirIndex, error) {
	if s.cache.limit == 0 {
		return nil, nil
	}
	v := versionOf(fi)
	if idx, found := s.cache.get(rel, v); found {
		return idx, nil // nil if too large
	}
	if !v.settled(now) {
		return nil, nil
	}
	r := s.cache.reserve()
	idx, err := s.buildIndex(d, rel, r.grow)
	if err == nil && r.grow(notesSize(idx.len())) == nil {
		// Room for MIME notes too; an index without is still an index.
		idx.notes = make([]fileNote, idx.len())
		idx.mimes = &s.cache.mimes
	}
	switch {
	case err == nil:
		s.cache.add(rel, v, idx, r)
		return idx, nil
	case errors.Is(err, errTooLarge):
		r.release()
		s.cache.add(rel, v, nil, nil)
		return nil, nil
	case errors.Is(err, errNoRoom):
		r.release()
		return nil, nil
	}
	r.release()
	return nil, err
}

// eachEntry calls fn for each visible entry of the directory d, whose
// path relative to the root is rel and whose FileInfo, taken from d after
// now, is fi, in no particular order. It reads them from the directory's
// index, building it if it can (so that the watcher's first walk readies
// the indexes resources/list will use), and from the directory itself
// otherwise. It returns the error of reading the directory.
func (s *fileServer) eachEntry(d *os.Root, rel string, fi fs.FileInfo, now time.Time, fn func(entry)) error {
	idx, err := s.index(d, rel, fi, now)
	if err != nil {
		return err
	}
	if idx == nil {
		return s.readEntries(d, rel, func(e entry) error { fn(e); return nil })
	}
	for i := range idx.len() {
		fn(idx.at(i))
	}
	return nil
}

// The sizes of the reads of a dirCursor that scans.
const (
	minScan = 64
	maxScan = 1 << 14
)

// A dirCursor gives the visible entries of one directory in key order,
// from a key on: from the directory's index, or, for a directory that has
// none (see fileServer.index), by scanning it, each read keeping the next
// entries, twice as many as the read before, up to maxScan. It is used
// by one goroutine, while its directory is open.
type dirCursor struct {
	idx *dirIndex
	i   int // the next entry of idx

	// Scanning:
	s       *fileServer
	d       *os.Root
	rel     string
	batch   []entry // read, not yet given
	after   string  // where the next read starts
	orEqual bool    // it includes after
	size    int     // the size of the next read
	done    bool    // no read is needed: batch holds the rest
}

// openCursor returns a cursor over the visible entries of the directory
// d, whose path relative to the root is rel and whose FileInfo, taken
// from d after now, is fi, whose keys come after k, or are k if orEqual
// is set. want is how many entries the caller expects to take: a cursor
// that scans reads that many (at least minScan, at most maxScan) first. It
// returns the error of reading the directory.
func (s *fileServer) openCursor(d *os.Root, rel string, fi fs.FileInfo, now time.Time, k string, orEqual bool, want int) (*dirCursor, error) {
	idx, err := s.index(d, rel, fi, now)
	if err != nil {
		return nil, err
	}
	if idx != nil {
		return &dirCursor{idx: idx, i: idx.search(k, orEqual)}, nil
	}
	return &dirCursor{s: s, d: d, rel: rel, after: k, orEqual: orEqual, size: min(max(want, minScan), maxScan)}, nil
}

// position returns the cursor's index and the position in it of the
// entry that next returned last; a nil index for a cursor that scans.
func (c *dirCursor) position() (*dirIndex, int) {
	return c.idx, c.i - 1
}

// next returns the next entry, and false once there are no more. It
// returns the error of reading the directory, for a cursor that scans.
func (c *dirCursor) next() (entry, bool, error) {
	if c.idx != nil {
		if c.i >= c.idx.len() {
			return entry{}, false, nil
		}
		c.i++
		return c.idx.at(c.i - 1), true, nil
	}
	if len(c.batch) == 0 {
		if c.done {
			return entry{}, false, nil
		}
		b, err := c.s.scanAfter(c.d, c.rel, c.after, c.orEqual, c.size)
		if err != nil {
			return entry{}, false, err
		}
		c.done = len(b) < c.size
		if len(b) == 0 {
			return entry{}, false, nil
		}
		c.batch, c.after, c.orEqual = b, b[len(b)-1].key(), false
		c.size = min(2*c.size, maxScan)
	}
	e := c.batch[0]
	c.batch = c.batch[1:]
	return e, true, nil
}
