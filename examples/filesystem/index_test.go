package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// waitSettled waits until every directory and file under dir has settled
// (see settled): until then, listing a directory scans it rather than
// building its index, and a file described is not noted. It waits on the
// wall clock, since change times come from it: until fineMargin after the
// last change on a file system with sub-second times, coarseMargin on
// others. Nothing is asserted about time.
func waitSettled(t testing.TB, dir string) {
	t.Helper()
	var latest time.Time // when the last of them settles
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err == nil {
			if at := settledAt(changeTime(fi)); at.After(latest) {
				latest = at
			}
		}
		return err
	}))
	for !time.Now().After(latest) {
		time.Sleep(time.Until(latest) + time.Millisecond)
	}
}

// Ordering entries by key without building keys gives the order of the
// keys: directories sort with their '/', so "d-e/" < "d/" < "d0".
func TestCompareKeys(t *testing.T) {
	t.Parallel()
	var entries []entry
	for _, name := range append(slices.Clone(trickyNames), trickyDirs...) {
		entries = append(entries, entry{name: name, kind: kindFile}, entry{name: name, kind: kindDir}, entry{name: name, kind: kindLink})
	}
	sign := func(c int) int { return max(-1, min(1, c)) }
	for _, a := range entries {
		for _, b := range entries {
			require.Equal(t, sign(strings.Compare(a.key(), b.key())), sign(compareEntries(a, b)), "%q %q", a.key(), b.key())
		}
		for _, k := range []string{"", "a", "a/", "a/b", "d", "d/", "d/x", "d-e/", "d-e/x", "d0", "a b", "é", "~", "\xff", a.key(), a.key() + "x", a.key() + "/", a.key() + "/x"} {
			require.Equal(t, sign(strings.Compare(a.key(), k)), sign(a.compareKey(k)), "%q %q", a.key(), k)
		}
	}
}

// allowedChild decides as allowed does for the entries of a directory
// allowed accepts, for every kind of deny pattern.
func TestAllowedChild(t *testing.T) {
	t.Parallel()
	names := append(slices.Clone(trickyNames), ".hidden", "x.key", "bad-\xff", "a\\b", "node_modules", "cache", "build", "axb", "a/b", "", "secret.txt",
		"*", "*.txt", "b", "ab", "x.key.bak")
	for _, deny := range [][]string{
		splitList(defaultDeny),
		{"build/cache", "d/*.md", "*.txt"},
		{"a[/]b", "d[^x]a", "[c]ache"}, // classes may match a '/'
		{"*", "a*", "*b*", "?", "*\\.txt", "\\*", "*/b", "é"},
		nil,
	} {
		s := newTestServer(t, t.TempDir(), append([]string{}, deny...)...)
		for _, dir := range []string{"", "a", "d", "build", "d/e", "é"} {
			if !s.allowed(dir) {
				continue
			}
			for _, name := range names {
				want := name != "" && !strings.Contains(name, "/") && s.allowed(joinRel(dir, name))
				require.Equal(t, want, s.allowedChild(dir, name), "deny %q: %q in %q", deny, name, dir)
			}
		}
	}
}

// listModes are the ways list reads directories, each with a cache of
// the given size: through indexes built once (the directories settled
// before the first page), by scanning (no cache), and through a cache too
// small to hold every index (some are dropped and read again) or any
// (every directory is too large for it, and scanned).
var listModes = []struct {
	name   string
	cache  int64
	settle bool
}{
	{"index", defaultListCache, true},
	{"scan", 0, true},
	{"unsettled", defaultListCache, false},
	{"evicting", 8 << 10, true},
	{"too-large", 1 << 10, true},
}

// Every way of reading directories lists the same tree, the same way:
// resources/list, directory reads and completions.
func TestListModes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want := makeTree(t, dir, 2)
	waitSettled(t, dir)
	ref := newTestServer(t, dir)
	var wantReads []string
	for _, key := range append([]string{""}, want...) {
		if strings.HasSuffix(key, "/") || key == "" {
			c, err := ref.readDir(strings.TrimSuffix(key, "/"))
			require.NoError(t, err, key)
			wantReads = append(wantReads, c.Text)
		}
	}
	for _, mode := range listModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel() // each with a server of its own, on dir, which none changes, or on a tree of its own
			dir := dir
			if !mode.settle {
				dir = t.TempDir()
				require.Equal(t, want, makeTree(t, dir, 2))
			}
			s := newTestServerCache(t, dir, mode.cache)
			for _, size := range []int{1, 7, 100} {
				var keys []string
				after := ""
				for {
					items, err := s.list(t.Context(), after, size)
					require.NoError(t, err)
					_, used := s.cache.usage()
					require.LessOrEqual(t, used, s.cache.limit, "the cache's bound")
					for _, it := range items {
						keys = append(keys, it.Key)
						after = it.Key
					}
					if len(items) < size {
						break
					}
				}
				require.Equal(t, want, keys, "page size %d", size)
			}
			dirs, _ := s.cache.usage()
			switch mode.name {
			case "index": // every directory, the root included
				n := 1
				for _, key := range want {
					if strings.HasSuffix(key, "/") {
						n++
					}
				}
				require.Equal(t, n, dirs)
			case "scan":
				require.Zero(t, dirs)
			}

			var reads []string
			for _, key := range append([]string{""}, want...) {
				if strings.HasSuffix(key, "/") || key == "" {
					c, err := s.readDir(strings.TrimSuffix(key, "/"))
					require.NoError(t, err, key)
					reads = append(reads, c.Text)
				}
			}
			require.Equal(t, wantReads, reads, "directory reads")

			got, err := s.complete(t.Context(), "d/d", nil)
			require.NoError(t, err)
			require.Equal(t, []string{"d/d e/", "d/d-e/", "d/d.e/", "d/d/", "d/d0/"}, got)
			got, err = s.complete(t.Context(), "a", nil)
			require.NoError(t, err)
			require.Equal(t, []string{"a", "a b", "a!b", "a#b", "a%20b", "a%b", "a+b", "a,b", "a-b", "a.b", "a0", "a:b@c;d=e&f$g'h(i)*", "a?b", "a_b"}, got)
		})
	}
}

// An indexCache never holds more than its limit, indexes and
// reservations together, dropping the least recently used first.
func TestIndexCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"a", "b", "c"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o755))
	}
	version := func(rel string) dirVersion {
		fi, err := os.Stat(filepath.Join(dir, rel))
		require.NoError(t, err)
		return versionOf(fi)
	}
	idx := func(size int64) *dirIndex { return &dirIndex{names: strings.Repeat("x", int(size-indexOverhead))} }
	c := newIndexCache(3000)
	add := func(rel string, size int64) {
		r := c.reserve()
		require.NoError(t, r.grow(size))
		c.add(rel, version(rel), idx(size), r)
	}
	add("a", 1000)
	add("b", 1000)
	_, found := c.get("a", version("a")) // a is now used more recently than b
	require.True(t, found)
	add("c", 1000)
	dirs, used := c.usage()
	require.Equal(t, 3, dirs)
	require.Equal(t, int64(3000), used)

	r := c.reserve()
	require.NoError(t, r.grow(1500)) // drops b, then a: c is the most recently used
	_, found = c.get("b", version("b"))
	require.False(t, found, "least recently used: dropped first")
	_, found = c.get("a", version("a"))
	require.False(t, found)
	_, found = c.get("c", version("c"))
	require.True(t, found)
	require.ErrorIs(t, r.grow(1501), errTooLarge, "more than the limit by itself")
	other := c.reserve()
	require.NoError(t, other.grow(1000)) // drops c
	require.ErrorIs(t, other.grow(600), errNoRoom, "the rest is reserved")
	dirs, used = c.usage()
	require.Zero(t, dirs)
	require.Equal(t, int64(2500), used)
	other.release()
	r.release()
	dirs, used = c.usage()
	require.Zero(t, dirs)
	require.Zero(t, used)

	// A record of another version of the directory is dropped, not given.
	add("a", 1000)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a", "new"), nil, 0o644))
	_, found = c.get("a", version("a"))
	require.False(t, found)
	_, used = c.usage()
	require.Zero(t, used)

	// Too large: recorded, in markerSize bytes, as no index.
	c.add("b", version("b"), nil, nil)
	got, found := c.get("b", version("b"))
	require.True(t, found)
	require.Nil(t, got)
	_, used = c.usage()
	require.Equal(t, int64(markerSize), used)
	c.forget("b")
	dirs, used = c.usage()
	require.Zero(t, dirs)
	require.Zero(t, used)

	// No cache at all.
	none := newIndexCache(0)
	require.ErrorIs(t, none.reserve().grow(1), errTooLarge)
}

// An index that fits in the cache without its MIME notes is kept
// without them, rather than dropped for a scan of every page.
func TestIndexWithoutRoomForNotes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var want []string
	for i := range 100 {
		name := fmt.Sprintf("f%03d.txt", i)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644))
		want = append(want, name)
	}
	waitSettled(t, dir)
	fi, err := os.Stat(dir)
	require.NoError(t, err)

	roomy := newTestServerCache(t, dir, defaultListCache)
	_, err = roomy.list(t.Context(), "", 10)
	require.NoError(t, err)
	_, withNotes := roomy.cache.usage()

	s := newTestServerCache(t, dir, withNotes-1) // the index fits, its notes do not
	var keys []string
	after := ""
	for {
		items, err := s.list(t.Context(), after, 30)
		require.NoError(t, err)
		for _, it := range items {
			keys, after = append(keys, it.Key), it.Key
		}
		if len(items) < 30 {
			break
		}
	}
	require.Equal(t, want, keys)
	idx, found := s.cache.get("", versionOf(fi))
	require.True(t, found)
	require.NotNil(t, idx, "indexed, not recorded as too large")
	require.Nil(t, idx.notes)
	_, used := s.cache.usage()
	require.Equal(t, withNotes-notesSize(100), used)
}

// A page finds what changed since the index of a directory was built:
// entries created and removed, a directory replaced, a file rewritten as
// another type of content.
func TestIndexSeesChanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(rel string, data []byte) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), data, 0o644))
	}
	for i := range 30 {
		write(fmt.Sprintf("d/f%02d.txt", i), []byte("text\n"))
	}
	write("top.txt", []byte("text\n"))
	waitSettled(t, dir)
	s := newTestServer(t, dir)
	listAll := func() map[string]*mcp.Resource {
		t.Helper()
		got := map[string]*mcp.Resource{}
		after := ""
		for {
			items, err := s.list(t.Context(), after, 10)
			require.NoError(t, err)
			for _, it := range items {
				got[it.Key] = it.Value
				after = it.Key
			}
			if len(items) < 10 {
				return got
			}
		}
	}

	// Half a walk builds the indexes of the root and of d, and notes the
	// files described.
	items, err := s.list(t.Context(), "", 15)
	require.NoError(t, err)
	require.Equal(t, "d/f13.txt", items[14].Key)
	dirs, _ := s.cache.usage()
	require.Equal(t, 2, dirs)
	idx, _ := s.cache.get("d", dirVersionOf(t, filepath.Join(dir, "d")))
	require.NotNil(t, idx)
	_, _, noted := idx.note(0)
	require.True(t, noted, "d/f00.txt noted")

	// Changes ahead of the walk, and behind it.
	write("d/f20a.txt", []byte("new\n"))
	require.NoError(t, os.Remove(filepath.Join(dir, "d", "f25.txt")))
	require.NoError(t, os.Remove(filepath.Join(dir, "d", "f05.txt")))
	write("e/new.txt", []byte("new\n"))
	var rest []string
	after := items[14].Key
	for {
		items, err := s.list(t.Context(), after, 10)
		require.NoError(t, err)
		for _, it := range items {
			rest = append(rest, it.Key)
			after = it.Key
		}
		if len(items) < 10 {
			break
		}
	}
	require.Equal(t, []string{"d/f14.txt", "d/f15.txt", "d/f16.txt", "d/f17.txt", "d/f18.txt", "d/f19.txt", "d/f20.txt", "d/f20a.txt",
		"d/f21.txt", "d/f22.txt", "d/f23.txt", "d/f24.txt", "d/f26.txt", "d/f27.txt", "d/f28.txt", "d/f29.txt", "e/", "e/new.txt", "top.txt"}, rest)

	// Rewritten with other content of the same size, a noted file is
	// described again.
	waitSettled(t, dir)
	require.Equal(t, "text/plain", listAll()["d/f00.txt"].MIMEType) // noted, again, in the new index of d
	write("d/f00.txt", []byte("\x00\x01\x02\x03\x04"))
	require.Equal(t, "application/octet-stream", listAll()["d/f00.txt"].MIMEType)

	// A directory removed and made again is another directory.
	waitSettled(t, dir)
	require.Contains(t, listAll(), "d/f01.txt")
	require.NoError(t, os.Rename(filepath.Join(dir, "d"), filepath.Join(dir, "old")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	write("d/only.txt", []byte("only\n"))
	require.NoError(t, os.Rename(filepath.Join(dir, "old"), filepath.Join(dir, ".old"))) // hidden
	got := listAll()
	require.Contains(t, got, "d/only.txt")
	require.NotContains(t, got, "d/f01.txt")
	require.Len(t, got, 5) // d/, d/only.txt, e/, e/new.txt, top.txt
}

// dirVersionOf returns the version of the directory at path.
func dirVersionOf(t *testing.T, path string) dirVersion {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return versionOf(fi)
}

// A directory read, or completion, costs memory in proportion to what it
// returns, whatever the size of the directory.
func TestReadDirBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 300 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	waitSettled(t, dir)
	for _, cache := range []int64{0, defaultListCache} {
		s := newTestServerCache(t, dir, cache)
		s.maxSize = 1000 // 300 lines of 9 bytes
		_, err := s.readDir("")
		var jerr *jsonrpc.Error
		require.True(t, errors.As(err, &jerr), "%v", err)
		require.Equal(t, "directory listing is over the 1000-byte cap (-max-size)", jerr.Message)
		s.maxSize = 2700
		c, err := s.readDir("")
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(c.Text, "f000.txt\nf001.txt\n"))

		got, err := s.complete(t.Context(), "f", nil)
		require.NoError(t, err)
		require.Len(t, got, maxCompletions, "one more than the registry sends: it says there are more")
		require.Equal(t, "f000.txt", got[0])
		got, err = s.complete(t.Context(), "f29", nil)
		require.NoError(t, err)
		require.Equal(t, []string{"f290.txt", "f291.txt", "f292.txt", "f293.txt", "f294.txt", "f295.txt", "f296.txt", "f297.txt", "f298.txt", "f299.txt"}, got)
	}
}

// Entries that list nothing (links to directories, links out of the root,
// broken links) cost a scanning cursor more reads, each twice the size of
// the one before, and change nothing of what is listed.
func TestListSkipsUnlisted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d", "in.txt"), nil, 0o644))
	for i := range 600 {
		target := []string{"d", "/etc", "missing"}[i%3]
		require.NoError(t, os.Symlink(target, filepath.Join(dir, fmt.Sprintf("a%03d", i))))
	}
	for _, name := range []string{"b.txt", "z.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	}
	want := []string{"b.txt", "d/", "d/in.txt", "z.txt"}
	waitSettled(t, dir)
	for _, mode := range listModes {
		s := newTestServerCache(t, dir, mode.cache)
		for _, size := range []int{1, 2, 3, 100} {
			require.Equal(t, want, walkAll(t, s, size), "%s, pages of %d", mode.name, size)
		}
	}
}
