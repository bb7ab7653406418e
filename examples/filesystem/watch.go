package main

import (
	"errors"
	"io/fs"
	"log/slog"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/mcpres/mcpres/resource"
)

// A liveWatcher turns file system events into notifications, with one
// fsnotify watcher:
//
//   - notifications/resources/updated: the registry calls watch when a
//     URI gains its first subscriber and unwatch when it loses its last
//     (resource.SubscriptionOptions.OnWatch and OnUnwatch). The watcher
//     then watches the directory holding the file (fsnotify watches
//     directories reliably, across editors that save by renaming), and an
//     event for the file there becomes registry.Changed. A subscribed
//     directory (file:///dir/) changes when an entry is created, removed
//     or renamed in it.
//   - notifications/resources/list_changed: with tree set, every visible
//     directory is watched (walked at start, and each new one as it
//     appears), and a visible entry created, removed or renamed becomes
//     registry.NotifyListChanged, which debounces bursts.
//
// Without tree, only the directories of subscribed resources are watched.
//
// The URIs given to Changed are those the registry handed to watch: the
// URIs clients subscribed to, which the registry accepts only in its own
// spelling, percent-encoded as fileServer.uri builds it
// (file:///caf%C3%A9.md, never file:///%63af%C3%A9.md).
type liveWatcher struct {
	s      *fileServer
	tree   bool
	logger *slog.Logger
	fw     *fsnotify.Watcher
	reg    *resource.Registry // set by start
	done   chan struct{}      // closed when the event loop has returned

	mu     sync.Mutex
	dirs   map[string]*watchedDir // by path relative to the root, "" for the root
	warned bool
}

// A watchedDir is a directory something asked to watch.
type watchedDir struct {
	watching bool              // fsnotify watches it
	tree     bool              // it is watched for list_changed
	subs     map[string]string // the subscribed URIs in it, by name ("" for the directory itself)
}

func newLiveWatcher(s *fileServer, tree bool, logger *slog.Logger) (*liveWatcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	return &liveWatcher{s: s, tree: tree, logger: logger, fw: fw, dirs: make(map[string]*watchedDir)}, nil
}

// start watches the tree if asked to, and handles events, reporting them
// to reg, until Close.
func (w *liveWatcher) start(reg *resource.Registry) {
	w.reg = reg
	if w.tree {
		w.mu.Lock()
		w.addTree("")
		w.mu.Unlock()
	}
	w.done = make(chan struct{})
	go w.loop()
}

// Close stops watching and waits for the event loop to return.
func (w *liveWatcher) Close() error {
	err := w.fw.Close()
	if w.done != nil {
		<-w.done
	}
	return err
}

func (w *liveWatcher) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.handle(ev)
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: say that anything may have changed.
				w.logger.Warn("file events lost; notifying every subscriber", "error", err)
				if err := w.reg.ChangedPrefix(uriPrefix); err != nil {
					w.logger.Error("reporting changes", "prefix", uriPrefix, "error", err)
				}
				w.reg.NotifyListChanged()
				continue
			}
			w.logger.Warn("file watcher", "error", err)
		}
	}
}

// watch is the registry's OnWatch: uri gained its first subscriber.
func (w *liveWatcher) watch(uri string) {
	rel, isDir, ok := w.s.parseURI(uri)
	if !ok {
		return // names nothing served: nothing will change
	}
	dir, name := rel, ""
	if !isDir {
		dir, name = splitRel(rel)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.dir(dir)
	d.subs[name] = uri
	if !d.watching && w.realDir(dir) {
		w.add(dir, d)
	}
}

// unwatch is the registry's OnUnwatch: uri lost its last subscriber.
func (w *liveWatcher) unwatch(uri string) {
	rel, isDir, ok := w.s.parseURI(uri)
	if !ok {
		return
	}
	dir, name := rel, ""
	if !isDir {
		dir, name = splitRel(rel)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.dirs[dir]
	if d == nil {
		return
	}
	delete(d.subs, name)
	if len(d.subs) == 0 && !d.tree {
		if d.watching {
			w.fw.Remove(w.osPath(dir)) // an error means it is gone already
		}
		delete(w.dirs, dir)
	}
}

// handle turns one event into notifications.
func (w *liveWatcher) handle(ev fsnotify.Event) {
	rel, ok := w.rel(ev.Name)
	if !ok || rel == "" {
		return
	}
	const membership = fsnotify.Create | fsnotify.Remove | fsnotify.Rename
	dir, name := splitRel(rel)
	visible := w.s.allowed(rel)
	var updated []string
	listChanged, newDir := false, false

	w.mu.Lock()
	if d := w.dirs[dir]; d != nil {
		if u, ok := d.subs[name]; ok && ev.Op&(fsnotify.Write|membership) != 0 {
			updated = append(updated, u)
		}
		if ev.Op&membership != 0 && visible {
			if u, ok := d.subs[""]; ok {
				updated = append(updated, u) // the directory's listing changed
			}
			listChanged = d.tree
			newDir = d.tree && ev.Has(fsnotify.Create)
		}
	}
	if ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0 {
		if d := w.dirs[rel]; d != nil {
			if u, ok := d.subs[""]; ok {
				updated = append(updated, u) // a subscribed directory went away
			}
		}
		w.forget(rel)
	}
	if newDir {
		if _, err := w.s.statDir(rel); err == nil {
			w.addTree(rel) // files may be in it already: list_changed covers them
		}
	}
	w.mu.Unlock()

	// Drop what changed from the indexes of resources/list now, rather than
	// at the next page that finds it stale (see dirVersion).
	if ev.Op&membership != 0 {
		w.s.cache.forget(dir)
		if ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0 {
			w.s.cache.forget(rel)
		}
	}

	for _, u := range updated {
		// u is a URI a client subscribed to, in the registry's own
		// spelling: an error here is a bug, not a client's doing.
		if err := w.reg.Changed(u); err != nil {
			w.logger.Error("reporting a change", "uri", u, "error", err)
		}
	}
	if listChanged {
		w.reg.NotifyListChanged()
	}
}

// dir returns the record of the directory rel, creating it. w.mu must be
// held.
func (w *liveWatcher) dir(rel string) *watchedDir {
	d := w.dirs[rel]
	if d == nil {
		d = &watchedDir{subs: make(map[string]string)}
		w.dirs[rel] = d
	}
	return d
}

// add asks fsnotify to watch the directory rel. w.mu must be held.
func (w *liveWatcher) add(rel string, d *watchedDir) {
	if err := w.fw.Add(w.osPath(rel)); err != nil {
		if !w.warned && !errors.Is(err, fs.ErrNotExist) {
			w.warned = true
			w.logger.Warn("cannot watch a directory; changes in it go unnoticed (on Linux, see fs.inotify.max_user_watches)",
				"dir", rel, "error", err)
		}
		return
	}
	d.watching = true
}

// addTree watches the directory rel and every visible directory under it
// for list_changed. Symbolic links are not followed. It reads each
// directory through its index (fileServer.eachEntry), building the
// indexes resources/list will use. w.mu must be held.
func (w *liveWatcher) addTree(rel string) {
	d := w.dir(rel)
	d.tree = true
	if !d.watching {
		w.add(rel, d)
	}
	now := time.Now()
	dir, fi, done, err := w.s.openDir(rel)
	if err != nil {
		return
	}
	var subdirs []string
	err = w.s.eachEntry(dir, rel, fi, now, func(e entry) {
		if e.kind == kindDir {
			subdirs = append(subdirs, joinRel(rel, strings.Clone(e.name))) // not the index's memory
		}
	})
	done()
	if err != nil {
		return
	}
	for _, sub := range subdirs {
		w.addTree(sub)
	}
}

// forget stops watching the directory rel and those under it, which are
// gone (removed, or renamed: the new name is watched as it appears). The
// subscriptions in them are kept, unwatched, for a directory of the same
// name that may come back. w.mu must be held.
func (w *liveWatcher) forget(rel string) {
	for dir, d := range w.dirs {
		if dir != rel && !strings.HasPrefix(dir, rel+"/") {
			continue
		}
		if d.watching {
			w.fw.Remove(w.osPath(dir))
		}
		d.watching, d.tree = false, false
		if len(d.subs) == 0 {
			delete(w.dirs, dir)
		}
	}
}

// realDir reports whether rel is a directory reached without following a
// symbolic link, so that watching it watches nothing outside the root.
func (w *liveWatcher) realDir(rel string) bool {
	if rel == "" {
		return true
	}
	end := 0
	for seg := range strings.SplitSeq(rel, "/") {
		end += len(seg)
		fi, err := w.s.root.Lstat(osName(rel[:end]))
		if err != nil || !fi.IsDir() {
			return false
		}
		end++
	}
	return true
}

// osPath is the path fsnotify knows the directory rel by.
func (w *liveWatcher) osPath(rel string) string {
	return filepath.Join(w.s.dir, filepath.FromSlash(rel))
}

// rel returns the slash-separated path, relative to the root, of a path
// fsnotify reports.
func (w *liveWatcher) rel(name string) (string, bool) {
	if name == w.s.dir {
		return "", true
	}
	prefix := w.s.dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	r, ok := strings.CutPrefix(name, prefix)
	return filepath.ToSlash(r), ok
}

// splitRel splits a relative path into its directory ("" for the root)
// and name.
func splitRel(rel string) (dir, name string) {
	dir, name = path.Split(rel)
	return strings.TrimSuffix(dir, "/"), name
}
