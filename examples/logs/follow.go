package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpres/mcpres/resource"
)

// A logFile is the log file the server serves: the open file and its
// index. Without -follow neither changes. With it, follow polls the file:
// lines appended to it are added to the index in place (Index.Append), and
// when the file is truncated or replaced (rotated) it is indexed afresh
// from its start, and the new file and index replace the old ones at once.
type logFile struct {
	path string
	cur  atomic.Pointer[indexedFile]

	// The state of follow, which only the goroutine that runs it touches
	// (and openLog, before it starts).
	head    []byte // the file's first bytes, at most headLen, as indexed
	stuck   bool   // indexing stopped at a bad line: see follow
	missing bool   // the path named no file at the last poll
}

// An indexedFile is an open log file and its index.
type indexedFile struct {
	file *os.File
	info os.FileInfo // file's when it was opened: its identity, for os.SameFile
	idx  *Index
}

// headLen is how many of a followed file's first bytes are kept, to tell a
// file truncated and written again past its old size (by copytruncate, say)
// from one that grew: its first line changed.
const headLen = 128

// openLog opens the log file at path and indexes it. With follow set the
// index leaves out a last line without its '\n', taking it for one being
// written: follow indexes it once it is complete.
func openLog(path string, follow bool) (*logFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	var idx *Index
	if follow {
		idx = NewIndex()
		_, err = idx.Append(f)
	} else {
		idx, err = BuildIndex(f)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("indexing %s: %w", path, err)
	}
	lf := &logFile{path: path}
	cur := &indexedFile{file: f, info: info, idx: idx}
	lf.cur.Store(cur)
	lf.readHead(cur)
	return lf, nil
}

// index returns the current index.
func (lf *logFile) index() *Index { return lf.cur.Load().idx }

// read returns the lines of the slice vars names, as Index.ReadSlice does;
// false if there is no such slice. If the file is replaced or indexed
// afresh while it reads, so that the read fails, it reads the new one.
func (lf *logFile) read(vars resource.Vars, maxSize int64) ([]byte, bool, error) {
	for tries := 1; ; tries++ {
		cur := lf.cur.Load()
		k, ok := cur.idx.lookup(vars)
		if !ok {
			return nil, false, nil
		}
		text, err := cur.idx.ReadSlice(cur.file, k, maxSize)
		if err != nil && tries < 3 && lf.cur.Load() != cur {
			continue // read the new file, or index, instead
		}
		return text, true, err
	}
}

// Close closes the file. Reads fail afterwards.
func (lf *logFile) Close() error { return lf.cur.Load().file.Close() }

// startFollowing runs lf.follow in a goroutine until ctx is done or stop
// is called. stop returns once the goroutine has returned: the registry
// may then be closed.
func startFollowing(ctx context.Context, lf *logFile, reg *resource.Registry, interval time.Duration, logger *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var following sync.WaitGroup
	following.Go(func() { lf.follow(ctx, reg, interval, logger) })
	return func() {
		cancel()
		following.Wait()
	}
}

// follow polls the file every interval until ctx is done, indexing what
// changed (see poll), and tells reg: Changed for every slice whose content
// changed, and NotifyListChanged when slices appeared or disappeared.
//
// A line appended out of order (earlier than the line before it) or
// malformed stops the indexing there: it is logged at Error, the lines
// before it are served, and the lines from it on are not, until the file
// is truncated or replaced, when it is indexed afresh. (Skipping the line
// alone would not do: it may lie inside a window's span, where a read would
// take it for one of the window's lines.)
func (lf *logFile) follow(ctx context.Context, reg *resource.Registry, interval time.Duration, logger *slog.Logger) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		changed, listChanged := lf.poll(ctx, logger)
		for _, k := range changed {
			// Changed fails for a URI no client could subscribe to: say so
			// rather than notify no one in silence.
			uri, err := sliceURI(reg, k)
			if err == nil {
				err = reg.Changed(uri)
			}
			if err != nil {
				logger.Error("reporting a changed log slice", "slice", k.String(), "error", err)
			}
		}
		if listChanged {
			reg.NotifyListChanged()
		}
	}
}

// poll looks at the file once and indexes what changed since the last
// poll. It returns the slices whose content changed, in listing order, and
// whether the list of slices changed:
//
//   - if the path names another file than the one open (the file was
//     rotated, or replaced), it opens that one, indexes it from its start
//     and serves it instead, closing the old one;
//   - if the file is smaller than the bytes indexed (truncated), or its
//     first bytes changed (truncated and written again past its old size),
//     it indexes the file afresh;
//   - if the file grew, it indexes the lines appended; a last line without
//     its '\n' waits for the next poll;
//   - if the path names no file (between a rotation's rename and the new
//     file's creation, say), it keeps serving what it has.
//
// A file indexed afresh reports every slice of the old index and of the
// new as changed. Each of these events is logged.
func (lf *logFile) poll(ctx context.Context, logger *slog.Logger) (changed []sliceKey, listChanged bool) {
	cur := lf.cur.Load()
	info, err := os.Stat(lf.path)
	if err != nil {
		if !lf.missing {
			logger.Warn("log file not found; serving what was indexed until it is back", "file", lf.path, "error", err)
			lf.missing = true
		}
		return nil, false
	}
	lf.missing = false

	if !os.SameFile(info, cur.info) {
		logger.Warn("log file replaced (rotated?): indexing the new file from its start", "file", lf.path)
		f, err := os.Open(lf.path)
		if err == nil {
			info, err = f.Stat()
			if err != nil {
				f.Close()
			}
		}
		if err != nil {
			logger.Error("opening the new log file", "file", lf.path, "error", err)
			return nil, false
		}
		return lf.replace(ctx, &indexedFile{file: f, info: info}, info.Size(), logger)
	}

	size, indexed := info.Size(), cur.idx.Size()
	switch {
	case size < indexed:
		logger.Warn("log file truncated: indexing it afresh from its start", "file", lf.path, "size", size, "indexed", indexed)
		return lf.replace(ctx, &indexedFile{file: cur.file, info: cur.info}, size, logger)
	case size == indexed:
		return nil, false
	case !lf.sameHead(cur):
		logger.Warn("log file rewritten (its first line changed): indexing it afresh from its start", "file", lf.path)
		return lf.replace(ctx, &indexedFile{file: cur.file, info: cur.info}, size, logger)
	case lf.stuck:
		return nil, false // waiting for truncation or rotation
	}

	d, err := cur.idx.Append(ctxReader{ctx, io.NewSectionReader(cur.file, indexed, size-indexed)})
	if err != nil && ctx.Err() == nil {
		lf.stuck = true
		logger.Error("log file: indexing stops at a bad line, until the file is truncated or replaced", "file", lf.path, "error", err)
	}
	lf.readHead(cur)
	if len(d.Changed) > 0 {
		logger.Debug("indexed lines appended to the log file", "file", lf.path,
			"indexed", cur.idx.Size(), "slices_changed", len(d.Changed), "slices_added", len(d.Added))
	}
	return d.Changed, len(d.Added) > 0
}

// replace indexes next, whose file holds size bytes, from its start,
// serves it instead of the current file, and closes the current file if
// next has another. It returns every slice of either index as changed, and
// whether they differ in the slices they have. If ctx is done first, it
// serves nothing new.
func (lf *logFile) replace(ctx context.Context, next *indexedFile, size int64, logger *slog.Logger) (changed []sliceKey, listChanged bool) {
	next.idx = NewIndex()
	_, err := next.idx.Append(ctxReader{ctx, io.NewSectionReader(next.file, 0, size)})
	old := lf.cur.Load()
	if ctx.Err() != nil {
		if next.file != old.file {
			next.file.Close()
		}
		return nil, false
	}
	lf.stuck = err != nil
	if err != nil {
		logger.Error("log file: indexing stops at a bad line, until the file is truncated or replaced", "file", lf.path, "error", err)
	}
	lf.cur.Store(next)
	if next.file != old.file {
		// A read under way on the old file fails, and reads the new one.
		old.file.Close()
	}
	lf.head = nil
	lf.readHead(next)

	oldKeys, newKeys := old.idx.Keys(), next.idx.Keys()
	logger.Info("indexed log file", "file", lf.path, "slices", len(newKeys), "indexed", next.idx.Size())
	return mergeKeys(oldKeys, newKeys), !slices.Equal(oldKeys, newKeys)
}

// readHead records the first bytes of cur's file, up to headLen, if more
// of them are indexed than recorded.
func (lf *logFile) readHead(cur *indexedFile) {
	n := min(cur.idx.Size(), headLen)
	if int64(len(lf.head)) >= n {
		return
	}
	head := make([]byte, n)
	if _, err := cur.file.ReadAt(head, 0); err == nil {
		lf.head = head
	}
}

// sameHead reports whether cur's file still starts with the bytes
// recorded.
func (lf *logFile) sameHead(cur *indexedFile) bool {
	b := make([]byte, len(lf.head))
	_, err := cur.file.ReadAt(b, 0)
	return err == nil && bytes.Equal(b, lf.head)
}

// A ctxReader reads from r until ctx is done, so that indexing a large
// file stops when the server does.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}
