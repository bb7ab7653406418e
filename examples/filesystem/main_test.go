package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// These tests build the server and drive the binary with a go-sdk client,
// over stdio (and HTTP in http_test.go), as an MCP host does, at each
// protocol version go-sdk speaks (mcptest.Versions).

// binPath is the server binary TestMain builds.
var binPath string

func TestMain(m *testing.M) {
	if len(os.Args) > 1 { // the benchmarks' other servers (see bench_test.go)
		switch os.Args[1] {
		case baselineServerArg:
			os.Exit(serveBaseline(os.Args[2:]))
		case floorServerArg:
			os.Exit(serveFloor())
		}
	}
	// No server a test starts serves the keys of the environment the
	// tests run in: only TestCursorsAcrossRestartEnv sets them.
	os.Unsetenv(cursor.KeysEnv)
	os.Exit(mcptest.RunWithBinary(m, ".", &binPath))
}

// secretText is held by a file next to the served directory: no URI may
// read it.
const secretText = "TOP SECRET: this must never be served\n"

// A fixture is a directory to serve, next to a secret file.
type fixture struct {
	root string
	// keys are what the server lists, in order: each file's path, each
	// directory's with a trailing '/'.
	keys []string
	// files holds the content of each regular file listed.
	files map[string][]byte
}

func (f *fixture) path(rel string) string { return filepath.Join(f.root, filepath.FromSlash(rel)) }

func (f *fixture) write(t *testing.T, rel string, data []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(f.path(rel)), 0o755))
	require.NoError(t, os.WriteFile(f.path(rel), data, 0o644))
}

// newFixture creates, in a new temporary directory:
//
//	secret             secretText, outside the root
//	root/              the served directory
//	  hello.txt, main.go, data.json, logo.png, big.txt (4 KiB), sp ace/é.md,
//	  a/b/c.txt, watched.txt, gen/gNN/fileNN.txt (60 files)
//	  link-in -> hello.txt           (listed, readable)
//	  link-out -> ../secret          (not listed, not found)
//	  dir-out -> ..                  (not listed, not found through)
//	  .env, .hiddendir/x.txt         (hidden)
//	  id.key, node_modules/pkg/index.js (denied by default)
//	  C#.md, [id].tsx                (listed as file:///C%23.md, file:///%5Bid%5D.tsx)
func newFixture(t *testing.T) *fixture {
	t.Helper()
	tmp := t.TempDir()
	f := &fixture{root: filepath.Join(tmp, "root"), files: map[string][]byte{}}
	require.NoError(t, os.Mkdir(f.root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "secret"), []byte(secretText), 0o644))

	listed := map[string][]byte{
		"hello.txt":   []byte("Hello, world!\n"),
		"main.go":     []byte("package main\n\nfunc main() {}\n"),
		"data.json":   []byte(`{"name": "mcpres", "files": 3}`),
		"logo.png":    pngImage(t),
		"big.txt":     bytes.Repeat([]byte("0123456789abcdef"), 256),
		"sp ace/é.md": []byte("# Café\n"),
		"a/b/c.txt":   []byte("deep\n"),
		"watched.txt": []byte("v1\n"),
		"C#.md":       []byte("# C sharp\n"),
		"[id].tsx":    []byte("export default function Page() {}\n"),
	}
	for i := range 6 {
		for j := range 10 {
			listed[fmt.Sprintf("gen/g%02d/file%02d.txt", i, j)] = fmt.Appendf(nil, "generated %d %d\n", i, j)
		}
	}
	for rel, data := range listed {
		f.write(t, rel, data)
		f.files[rel] = data
		f.keys = append(f.keys, rel)
		for dir := filepath.ToSlash(filepath.Dir(rel)); dir != "."; dir = filepath.ToSlash(filepath.Dir(dir)) {
			if !slices.Contains(f.keys, dir+"/") {
				f.keys = append(f.keys, dir+"/")
			}
		}
	}
	require.NoError(t, os.Symlink("hello.txt", f.path("link-in")))
	f.files["link-in"] = listed["hello.txt"]
	f.keys = append(f.keys, "link-in")
	slices.Sort(f.keys)

	require.NoError(t, os.Symlink(filepath.Join("..", "secret"), f.path("link-out")))
	require.NoError(t, os.Symlink("..", f.path("dir-out")))
	for _, rel := range []string{".env", ".hiddendir/x.txt", "id.key", "node_modules/pkg/index.js"} {
		f.write(t, rel, []byte(secretText))
	}
	return f
}

// pngImage returns a 4x4 PNG.
func pngImage(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 2, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

// serverArgs are the flags every test server gets: small pages, so that
// listing takes many, and a small size cap.
var serverArgs = []string{"-page-size", "7", "-max-size", "1024"}

// connect starts the server on root over stdio and connects to it with
// protocol version, returning the session and the notifications it
// receives. The server is stopped when t ends.
func connect(t *testing.T, root, version string) (*mcp.ClientSession, *mcptest.Notifications) {
	t.Helper()
	n := &mcptest.Notifications{}
	cs := mcptest.Stdio(t, binPath, append([]string{"-root", root}, serverArgs...), version, n.ClientOptions(nil))
	require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
	return cs, n
}

// listAll lists every page and returns the resources and the page count.
func listAll(t *testing.T, cs *mcp.ClientSession) ([]*mcp.Resource, int) {
	t.Helper()
	var all []*mcp.Resource
	pages := mcptest.ListPages(t, cs)
	for _, page := range pages {
		require.LessOrEqual(t, len(page), 7, "page size")
		all = append(all, page...)
	}
	return all, len(pages)
}

// uris returns the URIs the server lists for f, in order: those of
// f.keys.
func (f *fixture) uris(t testing.TB) []string {
	out := make([]string, len(f.keys))
	for i, key := range f.keys {
		out[i] = mustFileURI(t, strings.TrimSuffix(key, "/"), strings.HasSuffix(key, "/"))
	}
	return out
}

// fileTmpl is uriTemplate, parsed for the tests: the server's URIs are
// its expansions (see fileServer.uri), and its matches their variables.
var fileTmpl = uritemplate.MustParse(uriTemplate)

// mustFileURI is the URI the server gives rel, a path relative to the
// root, with a trailing slash for a directory (dir): fileTmpl's expansion
// of it, as Registry.Expand builds it. It fails t on error.
func mustFileURI(t testing.TB, rel string, dir bool) string {
	t.Helper()
	if dir && rel != "" {
		rel += "/"
	}
	u, err := fileTmpl.ExpandURI(map[string]uritemplate.Value{"path": uritemplate.StringValue(rel)})
	require.NoError(t, err, rel)
	return u
}

func TestList(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	want := f.uris(t)
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			c, _ := connect(t, f.root, version)
			all, pages := listAll(t, c)
			got := make([]string, len(all))
			for i, r := range all {
				got[i] = r.URI
			}
			require.Equal(t, want, got, "every file and directory once, in order; nothing hidden or denied")
			require.Equal(t, (len(want)+6)/7, pages)

			byURI := map[string]*mcp.Resource{}
			for _, r := range all {
				byURI[r.URI] = r
				require.NotNil(t, r.Annotations, r.URI)
				_, err := time.Parse(time.RFC3339, r.Annotations.LastModified)
				require.NoError(t, err, r.URI)
				require.NotEmpty(t, r.Title, r.URI)
			}
			for rel, data := range f.files {
				r := byURI[mustFileURI(t, rel, false)]
				require.Equal(t, rel, r.Name)
				require.Equal(t, int64(len(data)), r.Size, rel)
			}
			r := byURI["file:///sp%20ace/%C3%A9.md"]
			require.Equal(t, &mcp.Resource{URI: "file:///sp%20ace/%C3%A9.md", Name: "sp ace/é.md", Title: "é.md",
				MIMEType: "text/markdown", Size: int64(len("# Café\n")), Annotations: r.Annotations}, r)
			r = byURI["file:///sp%20ace/"]
			require.Equal(t, "inode/directory", r.MIMEType)
			require.Equal(t, "sp ace/", r.Name)
			require.Equal(t, "sp ace", r.Title)
			require.Equal(t, "image/png", byURI["file:///logo.png"].MIMEType)
			require.Equal(t, "text/x-go", byURI["file:///main.go"].MIMEType)

			tmpls, err := c.ListResourceTemplates(t.Context(), nil)
			require.NoError(t, err)
			require.Len(t, tmpls.ResourceTemplates, 1)
			require.Equal(t, "file:///{+path}", tmpls.ResourceTemplates[0].URITemplate)

			comp, err := c.Complete(t.Context(), &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "file:///{+path}"},
				Argument: mcp.CompleteParamsArgument{Name: "path", Value: "gen/g0"},
			})
			require.NoError(t, err)
			require.Equal(t, []string{"gen/g00/", "gen/g01/", "gen/g02/", "gen/g03/", "gen/g04/", "gen/g05/"}, comp.Completion.Values)
		})
	}
}

func TestRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			c, _ := connect(t, f.root, version)
			read := func(uri string) *mcp.ResourceContents {
				t.Helper()
				res, err := c.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				require.NoError(t, err, uri)
				require.Len(t, res.Contents, 1, uri)
				require.Equal(t, uri, res.Contents[0].URI)
				return res.Contents[0]
			}
			text := func(uri, mime, want string) {
				t.Helper()
				got := read(uri)
				require.Equal(t, mime, got.MIMEType, uri)
				require.Equal(t, want, got.Text, uri)
				require.Nil(t, got.Blob, uri)
			}

			text("file:///hello.txt", "text/plain", "Hello, world!\n")
			text("file:///main.go", "text/x-go", string(f.files["main.go"]))
			text("file:///data.json", "application/json", string(f.files["data.json"]))
			text("file:///sp%20ace/%C3%A9.md", "text/markdown", "# Café\n")
			text("file:///a/b/c.txt", "text/plain", "deep\n")
			text("file:///link-in", "text/plain; charset=utf-8", "Hello, world!\n") // no extension: Detect reads the content

			png := read("file:///logo.png")
			require.Equal(t, "image/png", png.MIMEType)
			require.Empty(t, png.Text)
			require.Equal(t, f.files["logo.png"], png.Blob)
			img, _, err := image.Decode(bytes.NewReader(png.Blob))
			require.NoError(t, err)
			require.Equal(t, 4, img.Bounds().Dx())

			// A directory reads as its listing, as resources/list orders it.
			text("file:///a/", "text/plain", "b/\n")
			root := read("file:///")
			require.Equal(t, "text/plain", root.MIMEType)
			require.Equal(t, "C#.md\n[id].tsx\na/\nbig.txt\ndata.json\ngen/\nhello.txt\nlink-in\nlogo.png\nmain.go\nsp ace/\nwatched.txt\n", root.Text)
		})
	}
}

// requireNotFound checks that err is the registry's "Resource not found"
// for a client on version, and leaks nothing.
func requireNotFound(t *testing.T, err error, version, uri string) {
	t.Helper()
	var jerr *jsonrpc.Error
	require.True(t, errors.As(err, &jerr), "%s: want a JSON-RPC error, got %v", uri, err)
	wantCode := int64(-32002)
	if version >= "2026-07-28" {
		wantCode = jsonrpc.CodeInvalidParams
	}
	require.Equal(t, wantCode, jerr.Code, uri)
	require.Equal(t, "Resource not found", jerr.Message, uri)
	var data struct{ URI string }
	require.NoError(t, json.Unmarshal(jerr.Data, &data), uri)
	require.Equal(t, uri, data.URI)
	require.NotContains(t, err.Error(), "SECRET", uri)
}

func TestNotServed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	uris := []string{
		// Out of the root, in every spelling.
		"file:///../secret",
		"file:///a/../../secret",
		"file:///%2e%2e/secret",
		"file:///%2E%2E/secret",
		"file:///a%2F..%2F..%2Fsecret",
		"file:///a%2f..%2f..%2fsecret",
		"file:///..%2Fsecret",
		"file:///a%5C..%5C..%5Csecret",
		"file:///..%5Csecret",
		"file:///a%5Csecret",
		"file:///a%00b",
		"file:///hello.txt%00.png",
		"file:////etc/passwd",
		"file:////" + strings.TrimPrefix(filepath.ToSlash(filepath.Join(filepath.Dir(f.root), "secret")), "/"),
		"file:///link-out",
		"file:///dir-out/secret",
		"file:///dir-out/root/hello.txt",
		// Hidden and denied.
		"file:///.env",
		"file:///.hiddendir/x.txt",
		"file:///.hiddendir/",
		"file:///id.key",
		"file:///node_modules/pkg/index.js",
		"file:///node_modules/",
		// Not what the server names: a file as a directory, a directory
		// as a file, a segment with an escaped slash, no such file.
		"file:///hello.txt/",
		"file:///a",
		"file:///a%2Fb/c.txt",
		"file:///a//b/c.txt",
		"file:///./hello.txt",
		"file:///no-such-file.txt",
		"file:///hello.txt?raw=1",
		// The file C, with a fragment (C#.md is file:///C%23.md).
		"file:///C#.md",
	}
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			c, _ := connect(t, f.root, version)
			for _, uri := range uris {
				res, err := c.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				require.Nil(t, res, uri)
				requireNotFound(t, err, version, uri)
			}
		})
	}
}

func TestSizeCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			c, _ := connect(t, f.root, version)
			_, err := c.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///big.txt"})
			var jerr *jsonrpc.Error
			require.True(t, errors.As(err, &jerr), "want a JSON-RPC error, got %v", err)
			require.Equal(t, int64(jsonrpc.CodeInternalError), jerr.Code)
			require.Equal(t, "file is 4096 bytes, over the 1024-byte cap (-max-size)", jerr.Message)

			// A file of exactly the cap is served.
			f.write(t, "cap.txt", bytes.Repeat([]byte("y"), 1024))
			res, err := c.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///cap.txt"})
			require.NoError(t, err)
			require.Len(t, res.Contents[0].Text, 1024)
		})
	}
}

// drain takes the notifications n has received and no one waited for, so
// that a wait that follows is for a notification still to come.
func drain(t *testing.T, n *mcptest.Notifications) {
	t.Helper()
	for _, uri := range n.Updated() {
		n.WaitUpdated(t, uri, nil) // there already: returns at once
	}
	for range n.ListChanged() {
		n.WaitListChanged(t, nil)
	}
}

// listedURIs lists every page and returns the URIs listed, in order.
func listedURIs(t *testing.T, cs *mcp.ClientSession) []string {
	all, _ := listAll(t, cs)
	return resourceURIs(all)
}

// TestLive subscribes over stdio, at each protocol version, and changes
// files: each change of a subscribed file is notified, with the URI as the
// client subscribed to it, and files coming and going change the list.
func TestLive(t *testing.T) {
	t.Parallel()
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel() // each with a tree and a server of its own
			f := newFixture(t)
			c, n := connect(t, f.root, version)
			ctx := t.Context()

			// Editing a subscribed file. The server may start watching
			// just after Subscribe returns (a 2026-07-28 listen is
			// acknowledged in the background): WaitUpdated edits again
			// until it notices.
			const watched = "file:///watched.txt"
			require.NoError(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: watched}))
			i := 0
			edit := func() { i++; f.write(t, "watched.txt", fmt.Appendf(nil, "v2 %d\n", i)) }
			n.WaitUpdated(t, watched, edit)
			res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: watched})
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(res.Contents[0].Text, "v2 "), res.Contents[0].Text)

			// Replacing it by rename, as editors save.
			drain(t, n)
			n.WaitUpdated(t, watched, func() {
				f.write(t, "watched.txt.tmp", []byte("v3\n"))
				require.NoError(t, os.Rename(f.path("watched.txt.tmp"), f.path("watched.txt")))
			})

			// Removing a subscribed file in a subdirectory, once the
			// server watches it.
			const deep = "file:///a/b/c.txt"
			require.NoError(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: deep}))
			n.WaitUpdated(t, deep, func() { i++; f.write(t, "a/b/c.txt", fmt.Appendf(nil, "deeper %d\n", i)) })
			drain(t, n)
			n.WaitUpdated(t, deep, func() { removeIfExists(t, f.path("a/b/c.txt")) })

			// Creating and deleting files changes the list.
			drain(t, n)
			n.WaitListChanged(t, func() { f.write(t, "new.txt", []byte("new\n")) })
			require.Contains(t, listedURIs(t, c), "file:///new.txt")
			drain(t, n)
			n.WaitListChanged(t, func() { removeIfExists(t, f.path("new.txt")) })
			require.NotContains(t, listedURIs(t, c), "file:///new.txt")

			// A new directory is watched as well.
			drain(t, n)
			n.WaitListChanged(t, func() { require.NoError(t, os.MkdirAll(f.path("newdir"), 0o755)) })
			drain(t, n)
			n.WaitListChanged(t, func() { f.write(t, "newdir/f.txt", []byte("f\n")) })
			require.Contains(t, listedURIs(t, c), "file:///newdir/f.txt")
		})
	}
}

// removeIfExists removes the file at path, if it is there.
func removeIfExists(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		require.NoError(t, err)
	}
}
