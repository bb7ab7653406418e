package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// These tests build the server and drive the binary with a go-sdk client,
// over stdio (and HTTP in TestHTTP), as an MCP host does.

// protocolVersions are the protocol versions the client negotiates in
// turn: the last before SEP-2164 changed the not-found code, and the first
// after.
var protocolVersions = []string{"2025-11-25", "2026-07-28"}

// binPath is the server binary TestMain builds.
var binPath string

func TestMain(m *testing.M) { os.Exit(mcptest.RunWithBinary(m, ".", &binPath)) }

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

// A client is a client session and the notifications it received.
type client struct {
	*mcp.ClientSession
	updated     chan string   // notifications/resources/updated, by URI
	listChanged chan struct{} // notifications/resources/list_changed
}

func newClient() (*client, *mcp.ClientOptions) {
	c := &client{updated: make(chan string, 100), listChanged: make(chan struct{}, 100)}
	return c, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case c.updated <- req.Params.URI:
			default:
			}
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			select {
			case c.listChanged <- struct{}{}:
			default:
			}
		},
	}
}

// serverArgs are the flags every test server gets: small pages, so that
// listing takes many, and a small size cap.
var serverArgs = []string{"-page-size", "7", "-max-size", "1024"}

// connect starts the server on root over stdio and connects to it with
// protocol version. The server is stopped when t ends.
func connect(t *testing.T, root, version string) *client {
	t.Helper()
	c, opts := newClient()
	cs := mcptest.Stdio(t, binPath, append([]string{"-root", root}, serverArgs...), version, opts)
	require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
	c.ClientSession = cs
	return c
}

// listAll lists every page and returns the resources and the page count.
func listAll(t *testing.T, c *client) ([]*mcp.Resource, int) {
	t.Helper()
	var all []*mcp.Resource
	pages := mcptest.ListPages(t, c.ClientSession)
	for _, page := range pages {
		require.LessOrEqual(t, len(page), 7, "page size")
		all = append(all, page...)
	}
	return all, len(pages)
}

// uriOf is the URI the server gives the listed key.
func uriOf(key string) string {
	dir := strings.HasSuffix(key, "/")
	return fileURI(strings.TrimSuffix(key, "/"), dir)
}

func TestList(t *testing.T) {
	f := newFixture(t)
	var want []string
	for _, k := range f.keys {
		want = append(want, uriOf(k))
	}
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			c := connect(t, f.root, version)
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
				r := byURI[fileURI(rel, false)]
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
	f := newFixture(t)
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			c := connect(t, f.root, version)
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
			require.Equal(t, "a/\nbig.txt\ndata.json\ngen/\nhello.txt\nlink-in\nlogo.png\nmain.go\nsp ace/\nwatched.txt\n", root.Text)
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
	}
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			c := connect(t, f.root, version)
			for _, uri := range uris {
				res, err := c.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				require.Nil(t, res, uri)
				requireNotFound(t, err, version, uri)
			}
		})
	}
}

func TestSizeCap(t *testing.T) {
	f := newFixture(t)
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			c := connect(t, f.root, version)
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

// notifyTimeout is how long a test waits for a notification. Notifications
// come within a second or so; a loaded machine may take longer.
const notifyTimeout = 10 * time.Second

func waitUpdated(t *testing.T, c *client, uri string) {
	t.Helper()
	timeout := time.After(notifyTimeout)
	for {
		select {
		case got := <-c.updated:
			if got == uri {
				return
			}
		case <-timeout:
			t.Fatalf("no notifications/resources/updated for %s", uri)
		}
	}
}

// editUntilUpdated calls edit, with 0, 1, 2..., every second until c is
// notified that uri was updated, for at most notifyTimeout: for the first
// change after subscribing, which the server may miss if it comes before
// the server watches.
func editUntilUpdated(t *testing.T, c *client, uri string, edit func(i int)) {
	t.Helper()
	deadline := time.Now().Add(notifyTimeout)
	for i := 0; ; i++ {
		edit(i)
		tick := time.After(time.Second)
		for {
			select {
			case got := <-c.updated:
				if got == uri {
					return
				}
				continue
			case <-tick:
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no notifications/resources/updated for %s", uri)
		}
	}
}

func waitListChanged(t *testing.T, c *client) {
	t.Helper()
	select {
	case <-c.listChanged:
	case <-time.After(notifyTimeout):
		t.Fatal("no notifications/resources/list_changed")
	}
}

// drain forgets the notifications received so far.
func drain(c *client) {
	for {
		select {
		case <-c.updated:
		case <-c.listChanged:
		default:
			return
		}
	}
}

func listedURIs(t *testing.T, c *client) []string {
	all, _ := listAll(t, c)
	var uris []string
	for _, r := range all {
		uris = append(uris, r.URI)
	}
	return uris
}

func TestLive(t *testing.T) {
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			f := newFixture(t)
			c := connect(t, f.root, version)
			ctx := t.Context()

			// Editing a subscribed file. The server starts watching just
			// after Subscribe returns: edit until it notices.
			const watched = "file:///watched.txt"
			require.NoError(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: watched}))
			editUntilUpdated(t, c, watched, func(i int) { f.write(t, "watched.txt", fmt.Appendf(nil, "v2 %d\n", i)) })
			res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: watched})
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(res.Contents[0].Text, "v2 "), res.Contents[0].Text)

			// Replacing it by rename, as editors save.
			drain(c)
			f.write(t, "watched.txt.tmp", []byte("v3\n"))
			require.NoError(t, os.Rename(f.path("watched.txt.tmp"), f.path("watched.txt")))
			waitUpdated(t, c, watched)

			// Removing a subscribed file in a subdirectory.
			const deep = "file:///a/b/c.txt"
			require.NoError(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: deep}))
			editUntilUpdated(t, c, deep, func(i int) { f.write(t, "a/b/c.txt", fmt.Appendf(nil, "deeper %d\n", i)) })
			drain(c)
			require.NoError(t, os.Remove(f.path("a/b/c.txt")))
			waitUpdated(t, c, deep)

			// Creating and deleting files changes the list.
			drain(c)
			f.write(t, "new.txt", []byte("new\n"))
			waitListChanged(t, c)
			require.Contains(t, listedURIs(t, c), "file:///new.txt")
			drain(c)
			require.NoError(t, os.Remove(f.path("new.txt")))
			waitListChanged(t, c)
			require.NotContains(t, listedURIs(t, c), "file:///new.txt")

			// A new directory is watched as well.
			drain(c)
			require.NoError(t, os.Mkdir(f.path("newdir"), 0o755))
			waitListChanged(t, c)
			drain(c)
			f.write(t, "newdir/f.txt", []byte("f\n"))
			waitListChanged(t, c)
			require.Contains(t, listedURIs(t, c), "file:///newdir/f.txt")
		})
	}
}

// startHTTP starts the server on root over streamable HTTP, with args
// added, and returns its address and an HTTP client for it. The server is
// stopped when t ends.
func startHTTP(t *testing.T, root string, args ...string) (string, *http.Client) {
	t.Helper()
	addr := mcptest.StartHTTP(t, binPath, append(append([]string{"-root", root}, serverArgs...), args...)...)

	// A client of our own, whose idle connections are closed before the
	// server is stopped.
	httpClient := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(httpClient.CloseIdleConnections)
	return addr, httpClient
}

// connectHTTP connects to the server at addr with protocol version.
func connectHTTP(t *testing.T, addr string, httpClient *http.Client, version string) (*client, error) {
	c, opts := newClient()
	mc := mcp.NewClient(&mcp.Implementation{Name: "filesystem-test", Version: "v0"}, opts)
	transport := &mcp.StreamableClientTransport{Endpoint: "http://" + addr, HTTPClient: httpClient}
	cs, err := mc.Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { cs.Close() })
	c.ClientSession = cs
	return c, nil
}

// TestHTTP drives the default, stateless, streamable HTTP server.
func TestHTTP(t *testing.T) {
	f := newFixture(t)
	addr, httpClient := startHTTP(t, f.root)
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			ctx := t.Context()
			c, err := connectHTTP(t, addr, httpClient, version)
			require.NoError(t, err)

			require.Len(t, listedURIs(t, c), len(f.keys))
			res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///hello.txt"})
			require.NoError(t, err)
			require.Equal(t, "Hello, world!\n", res.Contents[0].Text)
			_, err = c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///%2e%2e/secret"})
			requireNotFound(t, err, version, "file:///%2e%2e/secret")

			if version >= "2026-07-28" {
				// Stateless HTTP carries notifications on 2026-07-28
				// subscriptions/listen streams.
				require.NoError(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: "file:///watched.txt"}))
				editUntilUpdated(t, c, "file:///watched.txt", func(i int) { f.write(t, "watched.txt", fmt.Appendf(nil, "http %d\n", i)) })
			}
		})
	}
}

// TestHTTPStateful drives the server with -stateful, whose sessions carry
// notifications to clients of protocols before 2026-07-28, which is then
// not offered.
func TestHTTPStateful(t *testing.T) {
	f := newFixture(t)
	addr, httpClient := startHTTP(t, f.root, "-stateful")
	ctx := t.Context()
	c, err := connectHTTP(t, addr, httpClient, "2025-11-25")
	require.NoError(t, err)
	require.NoError(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: "file:///watched.txt"}))
	editUntilUpdated(t, c, "file:///watched.txt", func(i int) { f.write(t, "watched.txt", fmt.Appendf(nil, "stateful %d\n", i)) })
	drain(c)
	f.write(t, "new.txt", []byte("new\n"))
	waitListChanged(t, c)

	// A 2026-07-28 client falls back to the last version with sessions.
	c, err = connectHTTP(t, addr, httpClient, "2026-07-28")
	require.NoError(t, err)
	require.Equal(t, "2025-11-25", c.InitializeResult().ProtocolVersion)
	res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///hello.txt"})
	require.NoError(t, err)
	require.Equal(t, "Hello, world!\n", res.Contents[0].Text)
}
