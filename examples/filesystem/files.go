package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mimetype"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// uriPrefix starts every URI the server serves: file URIs with an empty
// authority, the rest being the path relative to the root.
const uriPrefix = "file:///"

// uriTemplate is the one template behind every file and directory.
const uriTemplate = uriPrefix + "{+path}"

// sniffLen is how much of a file mimetype.Detect looks at.
const sniffLen = 512

// A fileServer serves the files under one directory: it lists them (as a
// resource.ListFunc), reads them and completes their paths. Every file
// system access goes through root, which refuses any path, symbolic links
// included, that leads out of the directory.
type fileServer struct {
	root    *os.Root
	dir     string             // the root's absolute path, for fsnotify
	maxSize int64              // the largest file (or directory listing) read, in bytes
	deny    []string           // path.Match patterns of what is not served
	reg     *resource.Registry // set by register: builds the URIs listed
}

// newFileServer opens dir for serving. deny holds path.Match patterns,
// checked here.
func newFileServer(dir string, maxSize int64, deny []string) (*fileServer, error) {
	for _, p := range deny {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("deny pattern %q: %w", p, err)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	return &fileServer{root: root, dir: abs, maxSize: maxSize, deny: deny}, nil
}

func (s *fileServer) Close() error { return s.root.Close() }

// register adds to reg the one template behind every file and directory,
// uriTemplate, served by s, whose listed URIs s then builds with
// reg.Expand (see uri).
func (s *fileServer) register(reg *resource.Registry) error {
	s.reg = reg
	return reg.AddTemplate(&mcp.ResourceTemplate{
		URITemplate: uriTemplate,
		Name:        "file",
		Title:       "Files",
		Description: "A file or directory of the served tree, by its path from the root, each segment percent-encoded; a directory's path ends in '/'.",
	}, s.read,
		resource.WithSafePaths(),       // ../, %2e%2e, NUL, backslash, /abs: not found
		resource.WithInstances(s.list), // resources/list walks the tree
		resource.WithExists(s.exists),  // subscribe only to what a read serves
		resource.WithCompleter("path", s.complete),
	)
}

// uri returns the URI of rel, a slash-separated path relative to the root
// ("" for the root itself), with a trailing slash for a directory: the
// registry's expansion of uriTemplate (Registry.Expand), which
// percent-encodes what a URI may not hold and what would start a query or
// fragment ("sp ace/café.md" is file:///sp%20ace/caf%C3%A9.md, "[id]#1.tsx"
// is file:///%5Bid%5D%231.tsx). It is the URI resources/list gives, and the
// only spelling of the resource that resources/subscribe accepts; reads
// accept others (file:///%61.txt reads a.txt). It fails for a path that is
// not valid UTF-8, or whose URI is longer than the registry reads.
func (s *fileServer) uri(rel string, dir bool) (string, error) {
	if dir && rel != "" {
		rel += "/"
	}
	return s.reg.Expand(uriTemplate, "path", rel)
}

// parseURI returns the path, relative to the root, that u names and
// whether u names a directory (it ends in '/', or is the root, file:///).
// ok is false for any URI that names nothing served: not under file:///,
// with a query or fragment, a segment that is empty, "." or "..", or that
// decodes to something holding a '/' (%2F), a backslash or a NUL, a hidden
// path (a segment starting with '.') or a denied one.
func (s *fileServer) parseURI(u string) (rel string, dir, ok bool) {
	rest, found := strings.CutPrefix(u, uriPrefix)
	if !found || strings.ContainsAny(rest, "?#") {
		return "", false, false
	}
	if rest == "" {
		return "", true, true
	}
	rest, dir = strings.CutSuffix(rest, "/")
	segs := strings.Split(rest, "/")
	for i, raw := range segs {
		seg, err := url.PathUnescape(raw)
		if err != nil || seg == "" || strings.IndexByte(seg, '/') >= 0 {
			return "", false, false
		}
		segs[i] = seg
	}
	rel = strings.Join(segs, "/")
	if !s.servable(rel) {
		return "", false, false
	}
	return rel, dir, true
}

// servable reports whether rel, a decoded slash-separated path relative
// to the root, may name something served: it is a safe relative path
// (uritemplate.CheckPath) that allowed accepts.
func (s *fileServer) servable(rel string) bool {
	return uritemplate.CheckPath(rel) == nil && s.allowed(rel)
}

// exists is the template's resource.ExistsFunc, which resources/subscribe
// asks before it records a subscription: whether the path the URI names
// is one a read serves, a regular file (following symbolic links within
// the root, as reads do) or, for a path ending in '/' or the root, a
// directory. It applies the read's rules to the decoded path, every stat
// going through the os.Root: a hidden, denied or unsafe path, a file
// named as a directory or a directory as a file, and anything missing
// are refused, and the client is told "no such resource".
//
// It sees the path decoded (resource.Vars), not the URI: a spelling that
// parseURI refuses but that decodes to a served path, such as
// file:///a%2Fb.txt for a/b.txt, passes it, and is then refused by the
// registry as another spelling than its own (see uri). Every traversal
// form decodes to an unsafe path, refused by resource.WithSafePaths before
// exists runs, and by servable here.
func (s *fileServer) exists(_ context.Context, vars resource.Vars) (bool, error) {
	p := vars.Get("path")
	rel, dir := strings.CutSuffix(p, "/")
	if p == "" {
		dir = true // file:///, the root
	} else if rel == "" {
		return false, nil // file:////
	}
	if !s.servable(rel) {
		return false, nil
	}
	var err error
	if dir {
		_, err = s.statDir(rel)
	} else {
		_, err = s.statFile(rel)
	}
	return err == nil, nil
}

// statFile returns the FileInfo of the regular file rel, following a
// symbolic link within the root (os.Root refuses one leading out), and an
// error if there is none.
func (s *fileServer) statFile(rel string) (fs.FileInfo, error) {
	fi, err := s.root.Stat(osName(rel))
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file") // a directory named without its trailing slash, a device...
	}
	return fi, nil
}

// statDir returns the FileInfo of the directory rel, and an error if it
// is not one: a symbolic link to a directory is not (it is never listed as
// one).
func (s *fileServer) statDir(rel string) (fs.FileInfo, error) {
	fi, err := s.root.Lstat(osName(rel))
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, errors.New("not a directory")
	}
	return fi, nil
}

// allowed reports whether rel, a slash-separated path relative to the
// root, may be served: it is valid UTF-8 (as every value a URI template
// matches is), no segment is empty, hidden (starts with '.') or holds a
// backslash or a NUL (which no URI of ours can name), and no deny pattern
// matches a segment or the path up to and including any segment.
func (s *fileServer) allowed(rel string) bool {
	if rel == "" {
		return true
	}
	if !utf8.ValidString(rel) {
		return false
	}
	end := 0
	for seg := range strings.SplitSeq(rel, "/") {
		end += len(seg)
		if seg == "" || seg[0] == '.' || strings.IndexByte(seg, '\\') >= 0 || strings.IndexByte(seg, 0) >= 0 {
			return false
		}
		for _, p := range s.deny {
			if m, _ := path.Match(p, seg); m {
				return false
			}
			if m, _ := path.Match(p, rel[:end]); m {
				return false
			}
		}
		end++ // the slash
	}
	return true
}

// osName turns a slash-separated relative path into a name for s.root.
func osName(rel string) string {
	if rel == "" {
		return "."
	}
	return filepath.FromSlash(rel)
}

// joinRel joins a directory's relative path ("" for the root) and a name.
func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// tooLarge is the error of a read over the size cap: the registry passes a
// *jsonrpc.Error to the client as it is.
func (s *fileServer) tooLarge(what string, size int64) error {
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("%s is %d bytes, over the %d-byte cap (-max-size)", what, size, s.maxSize),
	}
}

// notFound wraps resource.ErrNotFound with the reason, for the logs of
// whoever calls read directly; clients see only "Resource not found".
func notFound(reason error) error {
	return fmt.Errorf("%w: %v", resource.ErrNotFound, reason)
}

// read reads file:///{+path}. It works from the requested URI itself
// rather than the template's decoded variable, so that it can refuse a
// %2F inside a segment (see parseURI); the registry has already refused
// unsafe decoded paths (resource.WithSafePaths).
func (s *fileServer) read(ctx context.Context, req *mcp.ReadResourceRequest, _ resource.Vars) (*mcp.ReadResourceResult, error) {
	u := req.Params.URI
	rel, dir, ok := s.parseURI(u)
	if !ok {
		return nil, resource.ErrNotFound
	}
	var c *mcp.ResourceContents
	var err error
	if dir {
		c, err = s.readDir(rel)
	} else {
		c, err = s.readFile(rel)
	}
	if err != nil {
		return nil, err
	}
	c.URI = u
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

// readFile reads the regular file rel, refusing it if it is larger than
// s.maxSize.
func (s *fileServer) readFile(rel string) (*mcp.ResourceContents, error) {
	// Stat before opening: opening a FIFO would block.
	fi, err := s.statFile(rel)
	if err != nil {
		return nil, notFound(err)
	}
	if fi.Size() > s.maxSize {
		return nil, s.tooLarge("file", fi.Size())
	}
	f, err := s.root.Open(osName(rel))
	if err != nil {
		return nil, notFound(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, s.maxSize+1))
	if err != nil {
		return nil, err // logged by the registry; the client sees -32603
	}
	if int64(len(data)) > s.maxSize { // it grew since Stat
		size := int64(len(data))
		if fi, err := f.Stat(); err == nil {
			size = max(size, fi.Size())
		}
		return nil, s.tooLarge("file", size)
	}
	return fileContent(rel, data), nil
}

// fileContent returns the content of the file rel holding data, typed by
// mimetype.Detect and delivered as text or blob as Detect says. Detect
// judges the first bytes; if the whole file contradicts it (JSON that does
// not parse, invalid UTF-8 past the start), it is delivered as plain text
// or, if it is not UTF-8, as application/octet-stream, so that what is
// sent always passes the registry's MIME check.
func fileContent(rel string, data []byte) *mcp.ResourceContents {
	mt, text := mimetype.Detect(path.Base(rel), data[:min(len(data), sniffLen)])
	c := &mcp.ResourceContents{MIMEType: mt}
	switch {
	case len(data) == 0:
		c.Blob = []byte{} // the protocol's form of an empty content
	case text:
		c.Text = string(data)
	default:
		c.Blob = data
	}
	if mimetype.Validate(mt, c) == nil {
		return c
	}
	if utf8.Valid(data) {
		return &mcp.ResourceContents{MIMEType: mimetype.PlainText, Text: string(data)}
	}
	return &mcp.ResourceContents{MIMEType: mimetype.Binary, Blob: data}
}

// readDir returns the listing of the directory rel: one visible entry per
// line, in the order of resources/list, a subdirectory's name followed by
// '/'.
func (s *fileServer) readDir(rel string) (*mcp.ResourceContents, error) {
	if _, err := s.statDir(rel); err != nil {
		return nil, notFound(err) // a file, or a symbolic link (never listed as a directory)
	}
	entries, err := s.entries(rel)
	if err != nil {
		return nil, notFound(err)
	}
	var b strings.Builder
	for _, e := range entries {
		if e.link {
			if _, err := s.statFile(joinRel(rel, e.name)); err != nil {
				continue // as in resources/list
			}
		}
		b.WriteString(e.key)
		b.WriteByte('\n')
		if int64(b.Len()) > s.maxSize {
			return nil, s.tooLarge("directory listing", int64(b.Len()))
		}
	}
	c := &mcp.ResourceContents{MIMEType: "text/plain", Text: b.String()}
	if c.Text == "" {
		c.Blob = []byte{} // an empty directory
	}
	return c, nil
}

// An entry is one visible entry of a directory.
type entry struct {
	name string
	// key orders a directory's entries: the name, followed by '/' for a
	// directory. Ordered by key, a depth-first walk visits paths in
	// bytewise order: "a-b" < "a/" < "a/x" < "a0".
	key  string
	dir  bool // a directory, not a symbolic link to one
	link bool // a symbolic link
}

// entries returns the visible entries of the directory rel, sorted by key:
// its regular files, directories and symbolic links that allowed accepts.
func (s *fileServer) entries(rel string) ([]entry, error) {
	f, err := s.root.Open(osName(rel))
	if err != nil {
		return nil, err
	}
	des, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	out := make([]entry, 0, len(des))
	for _, de := range des {
		name := de.Name()
		if !s.allowed(joinRel(rel, name)) {
			continue
		}
		e := entry{name: name, key: name}
		switch t := de.Type(); {
		case t.IsDir():
			e.dir, e.key = true, name+"/"
		case t&fs.ModeSymlink != 0:
			e.link = true
		case !t.IsRegular():
			continue // devices, FIFOs, sockets
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	return out, nil
}

// list is the resource.ListFunc of the template: every regular file under
// the root and every directory but the root itself, keyed by relative path
// (a directory's with a trailing '/'), in bytewise key order.
//
// It walks depth first, reading one directory at a time and keeping the
// listing of each directory on the path it is in, and no more: it skips
// every subtree that ends before after without reading it, and stops at
// limit items. So a page costs the directories on the way to after and
// those the page covers, however large the tree.
//
// Symbolic links to regular files inside the root are listed as files;
// other links (to directories, or leading out of the root) are not.
func (s *fileServer) list(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
	w := &walker{s: s, ctx: ctx, after: after, limit: limit}
	if err := w.walk(""); err != nil && !errors.Is(err, errPageFull) {
		return nil, err
	}
	return w.items, nil
}

var errPageFull = errors.New("page full")

type walker struct {
	s     *fileServer
	ctx   context.Context
	after string
	limit int
	items []cursor.Item[*mcp.Resource]
}

// walk lists the directory prefix ("" for the root, else a path ending in
// '/') and what lies under it, from after on.
func (w *walker) walk(prefix string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	rel := strings.TrimSuffix(prefix, "/")
	entries, err := w.s.entries(rel)
	if err != nil {
		if prefix == "" {
			return err
		}
		return nil // removed or unreadable since its parent was read
	}
	// Skip to the first entry after after. The entry just before it may
	// be a directory holding after: it was listed, its walk was not done.
	i, _ := slices.BinarySearchFunc(entries, w.after, func(e entry, after string) int {
		if prefix+e.key <= after {
			return -1
		}
		return 1
	})
	if i > 0 {
		if e := entries[i-1]; e.dir && strings.HasPrefix(w.after, prefix+e.key) {
			if err := w.walk(prefix + e.key); err != nil {
				return err
			}
		}
	}
	for _, e := range entries[i:] {
		child := prefix + e.name
		uri, err := w.s.uri(child, e.dir)
		if err != nil {
			continue // a URI the registry would not read (too long, say); and all under it
		}
		if e.dir {
			if err := w.emitDir(child, uri); err != nil {
				return err
			}
			if err := w.walk(child + "/"); err != nil {
				return err
			}
		} else if err := w.emitFile(child, uri); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) add(key string, r *mcp.Resource) error {
	w.items = append(w.items, cursor.Item[*mcp.Resource]{Key: key, Value: r})
	if len(w.items) >= w.limit {
		return errPageFull
	}
	return nil
}

// emitDir lists the directory rel, whose URI is uri.
func (w *walker) emitDir(rel, uri string) error {
	fi, err := w.s.statDir(rel)
	if err != nil {
		return nil // gone since its parent was read
	}
	return w.add(rel+"/", &mcp.Resource{
		URI:         uri,
		Name:        rel + "/",
		Title:       path.Base(rel),
		MIMEType:    mimetype.Directory,
		Annotations: lastModified(fi.ModTime()),
	})
}

// emitFile lists the file rel, whose URI is uri.
func (w *walker) emitFile(rel, uri string) error {
	r, err := w.s.describeFile(rel, uri)
	if err != nil {
		return nil // gone, unreadable, or a link to something else than a file
	}
	return w.add(rel, r)
}

// describeFile returns the resource of the regular file rel, at uri: its
// name, size, modification time and MIME type, detected from its name and
// first bytes. A symbolic link is described by what it points to inside
// the root.
func (s *fileServer) describeFile(rel, uri string) (*mcp.Resource, error) {
	fi, err := s.statFile(rel)
	if err != nil {
		return nil, err
	}
	f, err := s.root.Open(osName(rel))
	if err != nil {
		return nil, err
	}
	var buf [sniffLen]byte
	n, err := io.ReadFull(f, buf[:])
	f.Close()
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	mt, _ := mimetype.Detect(path.Base(rel), buf[:n])
	return &mcp.Resource{
		URI:         uri,
		Name:        rel,
		Title:       path.Base(rel),
		MIMEType:    mt,
		Size:        fi.Size(),
		Annotations: lastModified(fi.ModTime()),
	}, nil
}

func lastModified(t time.Time) *mcp.Annotations {
	return &mcp.Annotations{LastModified: t.UTC().Format(time.RFC3339)}
}

// complete proposes values of {+path}: the visible entries of the
// directory partial is in whose names start with what follows its last
// '/', directories with a trailing '/'.
func (s *fileServer) complete(ctx context.Context, partial string, _ map[string]string) ([]string, error) {
	dir, base := "", partial
	if i := strings.LastIndexByte(partial, '/'); i >= 0 {
		dir, base = partial[:i], partial[i+1:]
	}
	if !s.servable(dir) {
		return nil, nil
	}
	if _, err := s.statDir(dir); err != nil {
		return nil, nil
	}
	entries, err := s.entries(dir)
	if err != nil {
		return nil, nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.name, base) {
			out = append(out, joinRel(dir, e.key))
		}
	}
	return out, nil
}
