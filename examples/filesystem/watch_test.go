package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// watchList returns what fsnotify watches, relative to dir, sorted.
func watchList(t *testing.T, w *liveWatcher, dir string) []string {
	var out []string
	for _, p := range w.fw.WatchList() {
		rel, err := filepath.Rel(dir, p)
		require.NoError(t, err)
		out = append(out, filepath.ToSlash(rel))
	}
	slices.Sort(out)
	return out
}

// TestWatchDemand checks that, without -list-changed, the watcher watches
// exactly the directories of subscribed resources, and none outside the
// root or hidden.
func TestWatchDemand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"a/b", ".hidden", "node_modules"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755))
	}
	require.NoError(t, os.Symlink("a", filepath.Join(dir, "link")))
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(dir, "out")))
	s := newTestServer(t, dir)
	w, err := newLiveWatcher(s, false, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	w.start(s.reg)
	t.Cleanup(func() { require.NoError(t, w.Close()) })
	require.Empty(t, watchList(t, w, dir))

	w.watch("file:///a/b/c.txt")
	w.watch("file:///a/b/d.txt")
	require.Equal(t, []string{"a/b"}, watchList(t, w, dir))
	w.watch("file:///a/")
	w.watch("file:///top.txt")
	require.Equal(t, []string{".", "a", "a/b"}, watchList(t, w, dir))
	w.unwatch("file:///a/b/c.txt")
	require.Equal(t, []string{".", "a", "a/b"}, watchList(t, w, dir), "d.txt is still watched")
	w.unwatch("file:///a/b/d.txt")
	w.unwatch("file:///a/")
	w.unwatch("file:///top.txt")
	require.Empty(t, watchList(t, w, dir))

	// Nothing served, nothing watched: hidden, denied, through a symbolic
	// link, out of the root, missing.
	for _, uri := range []string{"file:///.hidden/x", "file:///node_modules/x", "file:///link/x", "file:///out/x",
		"file:///%2e%2e/x", "file:///missing/x"} {
		w.watch(uri)
		require.Empty(t, watchList(t, w, dir), uri)
		w.unwatch(uri)
	}
	require.Empty(t, w.dirs)
}

// TestWatchTree checks that -list-changed watches every visible directory,
// and that subscriptions there do not unwatch it when they end.
func TestWatchTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"a/b", "c", ".hidden/x", "node_modules/y"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755))
	}
	require.NoError(t, os.Symlink("a", filepath.Join(dir, "link")))
	s := newTestServer(t, dir)
	w, err := newLiveWatcher(s, true, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	w.start(s.reg)
	t.Cleanup(func() { require.NoError(t, w.Close()) })
	want := []string{".", "a", "a/b", "c"}
	require.Equal(t, want, watchList(t, w, dir))
	w.watch("file:///a/b/f.txt")
	w.unwatch("file:///a/b/f.txt")
	require.Equal(t, want, watchList(t, w, dir))
}
