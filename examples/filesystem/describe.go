package main

import (
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpres/mcpres/mimetype"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Describing a file for resources/list takes its size, modification time
// and MIME type, which mimetype.Detect finds from its name and first
// bytes: an open, a stat, a read and a close, which cost more than the
// rest of the page. The MIME type of a regular file listed through its
// directory's index is noted there (see fileNote) with the file's change
// time, which any write to the file sets; a later page finds the file
// unchanged with one stat, and does not open it.

// A pendingItem is an item of a page not yet added: a directory's
// resource, or a file to describe.
type pendingItem struct {
	key string
	res *mcp.Resource // the resource; for a file, set by describe (nil if it cannot be)
	// For a file:
	file bool
	d    *os.Root  // its directory, open until the item is added
	name string    // its name in d
	link bool      // a symbolic link, opened through the root
	idx  *dirIndex // d's index, if it has one,
	pos  int       // and the file's position in it
}

// A fileNote is what describe found of the regular file at one position
// of a dirIndex: its MIME type, which stands as long as the file's
// change time is still changed. A zero fileNote notes nothing. A file is
// noted only if its change time had settled when it was described (see
// settled), so that a write just after it could not leave it the same.
//
// The note is valid as long as the index is: the index is for one version
// of the directory, in which a name always names the same file, since
// replacing a file (renaming another over it, removing it and creating
// another) changes the directory.
type fileNote struct {
	changed int64  // the file's change time, in Unix nanoseconds
	mime    uint16 // 1 + the MIME type's position in the index's mimes.names
}

// note returns the MIME type noted for the file at position pos of x, and
// the change time it is valid for; ok is false if there is none, as in an
// index without notes.
func (x *dirIndex) note(pos int) (mime string, changed int64, ok bool) {
	if x.notes == nil {
		return "", 0, false
	}
	x.mu.Lock()
	n := x.notes[pos]
	x.mu.Unlock()
	if n.mime == 0 {
		return "", 0, false
	}
	return x.mimes.name(n.mime), n.changed, true
}

// setNote notes mime as the MIME type of the file at position pos of x,
// valid while its change time is changed. It notes nothing if the file
// system's clock was not yet sure to have passed changed at now (see
// settled), if the cache's MIME table is full, or in an index without
// notes.
func (x *dirIndex) setNote(pos int, changed, now time.Time, mime string) {
	if x.notes == nil || !settled(changed, now) {
		return
	}
	id := x.mimes.id(mime)
	if id == 0 {
		return
	}
	x.mu.Lock()
	x.notes[pos] = fileNote{changed: changed.UnixNano(), mime: id}
	x.mu.Unlock()
}

// A mimeTable interns the MIME types of fileNotes: there are few of them,
// and each note holds a small number instead of a string. Each indexCache
// has one. It is safe for concurrent use.
type mimeTable struct {
	mu    sync.Mutex
	ids   map[string]uint16
	names []string
}

// id returns the number of the MIME type mime, from 1, giving it one if
// it has none; 0 once the table holds math.MaxUint16 types.
func (m *mimeTable) id(mime string) uint16 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.ids[mime]; ok {
		return id
	}
	if len(m.names) == math.MaxUint16 {
		return 0
	}
	m.names = append(m.names, mime)
	id := uint16(len(m.names))
	m.ids[mime] = id
	return id
}

// name returns the MIME type numbered id, and "" for a number id never
// returned.
func (m *mimeTable) name(id uint16) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id == 0 || int(id) > len(m.names) {
		return ""
	}
	return m.names[id-1]
}

// maxDescribers bounds how many files describeAll describes at once.
const maxDescribers = 8

// describeAll describes the files among items, files of s's tree, with
// up to GOMAXPROCS goroutines (at most maxDescribers, and about one per
// 16 files). It sets each file's res to its resource, or to nil if it
// cannot be described. now is a time before any of the files was looked
// at, for settled.
func describeAll(s *fileServer, now time.Time, items []pendingItem) {
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(items) {
				return
			}
			if it := &items[i]; it.file {
				it.res = it.describe(s, now)
			}
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), maxDescribers, len(items)/16+1) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// openFlags open a file for describe and read: a FIFO or device put in a
// file's place opens at once, without waiting for a writer, and describe
// then refuses it; regular files read as usual.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK

// describe returns the resource of the pending file it, of s's tree,
// and nil if it cannot be described: gone, unreadable, not (or no longer)
// a regular file, or with a URI the registry would not read (too long,
// say). A file noted in its directory's index with its current change
// time costs a stat; any other is opened and read (in its directory, or,
// for a symbolic link, through s.root, following links within it), and
// noted if it can be (see setNote). now is a time before the file was
// looked at.
func (it *pendingItem) describe(s *fileServer, now time.Time) *mcp.Resource {
	uri, err := s.uri(it.key, false)
	if err != nil {
		return nil
	}
	if it.link {
		f, err := s.root.OpenFile(osName(it.key), openFlags, 0)
		if err != nil {
			return nil
		}
		r, _, err := describe(f, it.key, uri)
		if err != nil {
			return nil
		}
		return r
	}
	if it.idx != nil {
		if mime, changed, ok := it.idx.note(it.pos); ok {
			fi, err := it.d.Lstat(it.name)
			if err != nil {
				return nil
			}
			if fi.Mode().IsRegular() && changeTime(fi).UnixNano() == changed {
				return resourceOf(it.key, uri, fi, mime)
			}
		}
	}
	f, err := it.d.OpenFile(it.name, openFlags, 0)
	if err != nil {
		return nil
	}
	r, fi, err := describe(f, it.key, uri)
	if err != nil {
		return nil
	}
	if it.idx != nil {
		it.idx.setNote(it.pos, changeTime(fi), now, r.MIMEType)
	}
	return r
}

// errNotRegular is describe's error for anything but a regular file.
var errNotRegular = errors.New("not a regular file")

// describe returns the resource of the open file f, listed at rel with
// the URI uri, and its FileInfo: its name, size, modification time and
// MIME type, detected from its name and first bytes. It closes f. It fails
// for anything but a regular file, and for a file it cannot read.
func describe(f *os.File, rel, uri string) (*mcp.Resource, fs.FileInfo, error) {
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, errNotRegular
	}
	var buf [sniffLen]byte
	n := 0
	if fi.Size() > 0 { // one read: a regular file gives all it has, up to len(buf)
		if n, err = f.Read(buf[:min(fi.Size(), sniffLen)]); err != nil && err != io.EOF {
			return nil, nil, err
		}
	}
	mt, _ := mimetype.Detect(path.Base(rel), buf[:n])
	return resourceOf(rel, uri, fi, mt), fi, nil
}

// resourceOf returns the resource of the file rel, at uri, whose FileInfo
// is fi and MIME type mime.
func resourceOf(rel, uri string, fi fs.FileInfo, mime string) *mcp.Resource {
	return &mcp.Resource{
		URI:         uri,
		Name:        rel,
		Title:       path.Base(rel),
		MIMEType:    mime,
		Size:        fi.Size(),
		Annotations: lastModified(fi.ModTime()),
	}
}
