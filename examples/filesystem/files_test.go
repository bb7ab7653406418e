package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mimetype"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// These tests call the file server directly; main_test.go drives the built
// binary.

// newTestServer returns a file server of dir, registered in a registry
// of its own (s.reg) whose list pages hold 1,000 resources.
func newTestServer(t testing.TB, dir string, deny ...string) *fileServer {
	t.Helper()
	return newTestServerCache(t, dir, defaultListCache, deny...)
}

// newTestServerCache is newTestServer with a cache of listCache bytes of
// directory indexes.
func newTestServerCache(t testing.TB, dir string, listCache int64, deny ...string) *fileServer {
	t.Helper()
	if deny == nil {
		deny = splitList(defaultDeny)
	}
	s, err := newFileServer(dir, 4<<20, listCache, deny)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	reg, err := resource.NewRegistry(&resource.Options{PageSize: 1000})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, s.register(reg))
	return s
}

// trickyNames sort differently as names and as paths: '!' ',' '-' '.' sort
// before '/', '0' and '_' after it. Some hold characters a URI reserves
// ("a:b@c…", "a+b"), or that need escaping ("a b", "é", "a%20b").
var trickyNames = []string{"a", "a b", "a!b", "a,b", "a-b", "a.b", "a0", "a_b", "a+b", "a%b", "é", "Z", "~t", "caf\u00e9.md",
	"a:b@c;d=e&f$g'h(i)*", "a%20b", "(draft) notes.md", "a#b", "a?b", "C#.md", "[id].tsx"}

// trickyDirs are the subdirectories made at each level.
var trickyDirs = []string{"d", "d-e", "d.e", "d0", "d e"}

// makeTree creates a tree of files and directories under dir, depth levels
// deep, and returns the keys the provider must list, sorted: each file's
// path, each directory's with a trailing '/'. It adds what must not be
// listed: hidden and denied files and directories, and symbolic links
// that lead out or to directories.
func makeTree(t testing.TB, dir string, depth int) []string {
	t.Helper()
	var keys []string
	var gen func(rel string, level int)
	gen = func(rel string, level int) {
		abs := filepath.Join(dir, filepath.FromSlash(rel))
		for _, name := range trickyNames {
			p := joinRel(rel, name)
			require.NoError(t, os.WriteFile(filepath.Join(abs, name), []byte("file "+p+"\n"), 0o644))
			keys = append(keys, p)
		}
		// Not listed: hidden, denied, not UTF-8 (no URI template matches
		// it).
		for _, name := range []string{".hidden", "x.key", "x.pem", "bad-\xff.txt"} {
			require.NoError(t, os.WriteFile(filepath.Join(abs, name), []byte("no"), 0o644))
		}
		for _, name := range []string{".git", "node_modules"} {
			require.NoError(t, os.MkdirAll(filepath.Join(abs, name, "sub"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(abs, name, "sub", "f.txt"), []byte("no"), 0o644))
		}
		if level == depth {
			return
		}
		for _, name := range trickyDirs {
			p := joinRel(rel, name)
			require.NoError(t, os.Mkdir(filepath.Join(abs, name), 0o755))
			keys = append(keys, p+"/")
			gen(p, level+1)
		}
	}
	gen("", 0)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	keys = append(keys, "empty/")
	// A link to a file inside is listed as a file; links to a directory or
	// out of the root are not.
	require.NoError(t, os.Symlink("a", filepath.Join(dir, "link-in")))
	keys = append(keys, "link-in")
	require.NoError(t, os.Symlink("d", filepath.Join(dir, "link-dir")))
	require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(dir, "link-out")))
	slices.Sort(keys)
	return keys
}

// walkAll lists everything s.list lists, size at a time, as a client
// paging through resources/list does, and returns the keys.
func walkAll(t testing.TB, s *fileServer, size int) []string {
	t.Helper()
	var keys []string
	after := ""
	for {
		items, err := s.list(context.Background(), after, size)
		require.NoError(t, err)
		require.LessOrEqual(t, len(items), size)
		for _, it := range items {
			require.Greater(t, it.Key, after, "keys must increase")
			after = it.Key
			keys = append(keys, it.Key)
		}
		if len(items) < size {
			return keys
		}
	}
}

func TestListWalk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want := makeTree(t, dir, 3)
	require.Greater(t, len(want), 2000)
	s := newTestServer(t, dir)
	for _, size := range []int{1, 7, 100, 10_000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			t.Parallel() // walks of one server, as its clients' are
			require.Equal(t, want, walkAll(t, s, size))
		})
	}

	// Starting after any key, including one that no longer exists, goes on
	// with the next.
	items, err := s.list(t.Context(), "d/d-e/", 3)
	require.NoError(t, err)
	i := slices.Index(want, "d/d-e/")
	require.Equal(t, want[i+1:i+4], []string{items[0].Key, items[1].Key, items[2].Key})
	items, err = s.list(t.Context(), "d/d-e/zz-gone", 1)
	require.NoError(t, err)
	i, _ = slices.BinarySearch(want, "d/d-e/zz-gone")
	require.Equal(t, want[i], items[0].Key)
}

func TestListResources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sp ace"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sp ace", "é.md"), []byte("# hi\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.json"), []byte(`{"a":1}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "blob.txt"), []byte{0, 1, 2, 0xff}, 0o644))
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "data.json"), mtime, mtime))
	s := newTestServer(t, dir)

	items, err := s.list(t.Context(), "", 100)
	require.NoError(t, err)
	got := map[string]*mcp.Resource{}
	for _, it := range items {
		got[it.Value.URI] = it.Value
	}
	require.Len(t, got, 4)
	r := got["file:///data.json"]
	require.Equal(t, &mcp.Resource{URI: "file:///data.json", Name: "data.json", Title: "data.json", MIMEType: "application/json",
		Size: 7, Annotations: &mcp.Annotations{LastModified: "2024-05-06T07:08:09Z"}}, r)
	r = got["file:///sp%20ace/"]
	require.Equal(t, mimetype.Directory, r.MIMEType)
	require.Equal(t, "sp ace/", r.Name)
	require.Equal(t, "sp ace", r.Title)
	require.NotEmpty(t, r.Annotations.LastModified)
	r = got["file:///sp%20ace/%C3%A9.md"]
	require.Equal(t, "text/markdown", r.MIMEType)
	require.Equal(t, "sp ace/é.md", r.Name)
	require.Equal(t, "é.md", r.Title)
	require.Equal(t, "application/octet-stream", got["file:///blob.txt"].MIMEType, "binary content named .txt")
}

func TestParseURI(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, t.TempDir(), "*.secret", "private/*")
	for _, tc := range []struct {
		uri string
		rel string
		dir bool
	}{
		{"file:///", "", true},
		{"file:///a.txt", "a.txt", false},
		{"file:///a/b/", "a/b", true},
		{"file:///sp%20ace/caf%C3%A9.md", "sp ace/café.md", false},
		{"file:///a+b&c=d@e:f$g", "a+b&c=d@e:f$g", false}, // sub-delims need no escape in a segment
		{"file:///%61", "a", false},                       // an escape RFC 3986 would not make, decoded all the same
		{"file:///private", "private", false},             // "private/*" matches what is in it
		{"file:///C%23.md", "C#.md", false},               // reserved characters, encoded
		{"file:///a%3Fb", "a?b", false},
		{"file:///%5Bid%5D.tsx", "[id].tsx", false},
	} {
		rel, dir, ok := s.parseURI(tc.uri)
		require.True(t, ok, tc.uri)
		require.Equal(t, tc.rel, rel, tc.uri)
		require.Equal(t, tc.dir, dir, tc.uri)
	}
	for _, uri := range []string{
		"file:///../secret", "file:///a/../../secret", "file:///%2e%2e/secret", "file:///%2E%2E/secret",
		"file:///a%2F..%2F..%2Fsecret", "file:///a%2fb", "file:///a%5Csecret", "file:///a%5c..%5csecret",
		"file:///a%00b", "file:////etc/passwd", "file:////", "file:///a//b", "file:///./a", "file:///a/.",
		"file:///.hidden", "file:///a/.git/config", "file:///x.secret", "file:///private/x", "file:///a%2",
		"file:///a.txt?x=1", "file:///a.txt#top", "file://host/a.txt", "file:/a.txt", "http:///a.txt",
	} {
		_, _, ok := s.parseURI(uri)
		require.False(t, ok, uri)
	}
}

func TestFileURI(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, t.TempDir())
	uri := func(rel string, dir bool) string {
		t.Helper()
		u, err := s.uri(rel, dir)
		require.NoError(t, err, rel)
		return u
	}
	for rel, want := range map[string]string{
		"":                  "file:///",
		"a/b.txt":           "file:///a/b.txt",
		"a b.txt":           "file:///a%20b.txt",
		"café.md":           "file:///caf%C3%A9.md",
		"sp ace/é.md":       "file:///sp%20ace/%C3%A9.md",
		"a%20b":             "file:///a%2520b",
		"(draft) a+b=c!.md": "file:///(draft)%20a+b=c!.md",
	} {
		require.Equal(t, want, uri(rel, false), rel)
	}
	require.Equal(t, "file:///a/b/", uri("a/b", true))
	require.Equal(t, "file:///", uri("", true))
	_, err := s.uri("bad-\xff", false)
	require.Error(t, err, "not UTF-8")
	_, err = s.uri(strings.Repeat("x", resource.DefaultMaxURILength), false)
	require.Error(t, err, "too long to read")

	// Each URI is the template's own expansion of the path, one the
	// template reads back, as the same path.
	for _, name := range append(trickyNames, "a b/c d", "x/y/z") {
		u := uri(name, false)
		require.Equal(t, mustFileURI(t, name, false), u, name)
		rel, dir, ok := s.parseURI(u)
		require.True(t, ok, name)
		require.False(t, dir)
		require.Equal(t, name, rel, "round trip")
		parsed, err := url.Parse(u)
		require.NoError(t, err, u)
		require.Equal(t, "/"+name, parsed.Path, "no query or fragment: %s", u)
	}
}

// Every URI the server lists is one the registry accepts: served through
// a registry, the tree of tricky names lists whole, each URI reads back
// and can be subscribed to.
func TestListedURIsRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want := makeTree(t, dir, 1)
	s := newTestServer(t, dir)
	reg := s.reg
	res, err := reg.ListResources(t.Context(), nil)
	require.NoError(t, err)
	require.Empty(t, res.NextCursor)
	require.Len(t, res.Resources, len(want), "nothing dropped")
	for i, r := range res.Resources {
		require.Equal(t, mustFileURI(t, strings.TrimSuffix(want[i], "/"), strings.HasSuffix(want[i], "/")), r.URI)
		read, err := reg.ReadResource(t.Context(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: r.URI}})
		require.NoError(t, err, r.URI)
		require.Equal(t, r.URI, read.Contents[0].URI)
		if !strings.HasSuffix(want[i], "/") && want[i] != "link-in" {
			require.Equal(t, "file "+want[i]+"\n", read.Contents[0].Text, r.URI)
		}
		require.NoError(t, reg.Subscribe(t.Context(), &mcp.SubscribeRequest{Params: &mcp.SubscribeParams{URI: r.URI}}), r.URI)
	}
}

// exists accepts exactly what a read serves: a regular file, or a
// directory named with its trailing slash, under the root, visible and
// not denied.
func TestExists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"a/b", ".hidden", "node_modules"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755))
	}
	for _, f := range []string{"a/b/c.txt", "top.txt", "sp ace.md", ".hidden/x.txt", "node_modules/x.js", "id.key", "C#.md", "[id].tsx"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(f)), []byte("x"), 0o644))
	}
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink("top.txt", filepath.Join(dir, "link-in")))
	require.NoError(t, os.Symlink("a", filepath.Join(dir, "link-dir")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "link-out")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "dir-out")))
	s := newTestServer(t, dir)
	for uri, want := range map[string]bool{
		"file:///":                     true,
		"file:///top.txt":              true,
		"file:///sp%20ace.md":          true,
		"file:///a/":                   true,
		"file:///a/b/":                 true,
		"file:///a/b/c.txt":            true,
		"file:///%61/b/c.txt":          true, // another spelling: it exists (the registry then asks for its own)
		"file:///link-in":              true,
		"file:///nope.txt":             false,
		"file:///a":                    false, // a directory named as a file
		"file:///top.txt/":             false, // a file named as a directory
		"file:///a/b/nope/":            false,
		"file:///link-dir/":            false, // never listed as a directory
		"file:///link-dir/b/c.txt":     true,  // os.Root follows it, within the root, as a read does
		"file:///link-out":             false,
		"file:///dir-out/secret":       false,
		"file:///.hidden/x.txt":        false,
		"file:///.hidden/":             false,
		"file:///node_modules/x.js":    false,
		"file:///id.key":               false,
		"file:///../secret":            false,
		"file:///%2e%2e/secret":        false,
		"file:///a%2F..%2F..%2Fsecret": false,
		"file:///a%5C..%5Csecret":      false,
		"file:///a%00b":                false,
		"file:////etc/passwd":          false,
		"file:////":                    false,
		"file:///a//b/c.txt":           false,
		"file:///./top.txt":            false,
		"file:///top.txt?x=1":          false,
		"file:///C%23.md":              true,
		"file:///C#.md":                true, // it matches C#.md (the registry then asks for its own spelling)
		"file:///%5Bid%5D.tsx":         true,
	} {
		vars, ok := fileTmpl.Match(uri)
		require.True(t, ok, uri)
		got, err := s.exists(t.Context(), vars)
		require.NoError(t, err, uri)
		require.Equal(t, want, got, uri)
		// What exists, a read serves, under the registry's own spelling
		// (the one subscribe accepts).
		canon, err := fileTmpl.ExpandURI(vars.Map())
		require.NoError(t, err)
		if _, _, readable := s.parseURI(canon); got {
			require.True(t, readable, "%s exists: a read must serve %s", uri, canon)
		}
	}
}

func TestFileContent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data, mime string
		text             bool
	}{
		{"a.txt", "hello", "text/plain", true},
		{"a.go", "package main\n", "text/x-go", true},
		{"a.json", `{"a": 1}`, "application/json", true},
		{"a.json", `{"a": `, mimetype.PlainText, true},                       // does not parse
		{"a.txt", strings.Repeat("x", 600) + "\xff", mimetype.Binary, false}, // invalid UTF-8 past the sniffed start
		{"a.md", strings.Repeat("é", 300), "text/markdown", true},            // a character across the sniff boundary
		{"a.txt", "", "text/plain", false},                                   // empty: an empty blob
		{"noext", "\x00\x01", mimetype.Binary, false},
	} {
		c := fileContent(tc.name, []byte(tc.data))
		require.Equal(t, tc.mime, c.MIMEType, "%s %q", tc.name, tc.data)
		require.Equal(t, tc.text, c.Text != "", tc.name)
		require.NoError(t, mimetype.Validate(c.MIMEType, c))
	}
}

func TestByteSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"1024": 1024, "4MiB": 4 << 20, "4 mib": 4 << 20, "512K": 512 << 10, "1GB": 1 << 30} {
		var b byteSize
		require.NoError(t, b.Set(in), in)
		require.Equal(t, want, int64(b), in)
	}
	for _, in := range []string{"", "0", "-1", "x", "1TiB", "9999999999999G"} {
		var b byteSize
		require.Error(t, b.Set(in), in)
	}
}

// TestList100k walks a tree of 100,000 files a page at a time. It checks
// order and completeness; each page reads only the directories on its way.
// Creating and removing the files takes from seconds to a minute, by file
// system, so it runs only when asked for:
//
//	FILESYSTEM_100K=1 go test -run TestList100k -v .
func TestList100k(t *testing.T) {
	t.Parallel()
	if os.Getenv("FILESYSTEM_100K") == "" || testing.Short() {
		t.Skip("creates 100,000 files: set FILESYSTEM_100K=1 to run")
	}
	dir := t.TempDir()
	const dirs, perDir = 100, 1000
	want := make([]string, 0, dirs*(perDir+1))
	for i := range dirs {
		d := fmt.Sprintf("dir%03d", i)
		require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o755))
		want = append(want, d+"/")
		for j := range perDir {
			name := fmt.Sprintf("f%04d.txt", j)
			f, err := os.Create(filepath.Join(dir, d, name))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			want = append(want, d+"/"+name)
		}
	}
	s := newTestServer(t, dir)
	start := time.Now()
	got := walkAll(t, s, 1000)
	t.Logf("listed %d resources in %v", len(got), time.Since(start))
	require.Equal(t, want, got)
}
