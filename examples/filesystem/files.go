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
	"strings"
	"syscall"
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
	denied  []denyPattern      // the same, for allowedChild
	cache   *indexCache        // the directory indexes of resources/list (see index.go)
	reg     *resource.Registry // set by register: builds the URIs listed
}

// newFileServer opens dir for serving. deny holds path.Match patterns,
// checked here: a malformed one is an error. listCache bounds, in bytes,
// the directory indexes kept for resources/list (see indexCache); zero
// or less keeps none, and each page then scans the directories on its
// way.
func newFileServer(dir string, maxSize, listCache int64, deny []string) (*fileServer, error) {
	denied := make([]denyPattern, len(deny))
	for i, p := range deny {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("deny pattern %q: %w", p, err)
		}
		denied[i] = compileDeny(p)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	return &fileServer{root: root, dir: abs, maxSize: maxSize, deny: deny, denied: denied, cache: newIndexCache(listCache)}, nil
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

// allowedChild reports whether the entry name of the directory dir ("" for
// the root) may be served: allowed(joinRel(dir, name)) for a dir that
// allowed accepts, which it does not check again, and false for a name
// holding a '/'. It checks name as allowed checks a segment, and the
// whole path only against the deny patterns that can match a '/' (none of
// the defaults can), so that a directory of a million entries is filtered
// without building a million paths.
func (s *fileServer) allowedChild(dir, name string) bool {
	if name == "" || name[0] == '.' || !utf8.ValidString(name) || strings.ContainsAny(name, "\\\x00/") {
		return false
	}
	full := ""
	for _, p := range s.denied {
		if p.matchName(name) {
			return false
		}
		if dir != "" && p.pathy {
			if full == "" {
				full = dir + "/" + name
			}
			if m, _ := path.Match(p.pattern, full); m {
				return false
			}
		}
	}
	return true
}

// A denyPattern is a -deny pattern, with what matching it against a name
// quickly takes.
type denyPattern struct {
	pattern string
	literal bool   // it holds no special character: it matches itself alone
	suffix  string // it is "*" and a literal: it matches the names ending in it
	pathy   bool   // it can match a '/': it holds one, or a character class ("[^x]")
}

// compileDeny returns the denyPattern of p, a well-formed path.Match
// pattern.
func compileDeny(p string) denyPattern {
	const special = "*?[\\"
	d := denyPattern{pattern: p, pathy: strings.ContainsAny(p, "/[")}
	switch {
	case !strings.ContainsAny(p, special):
		d.literal = true
	case len(p) > 1 && p[0] == '*' && !strings.ContainsAny(p[1:], special):
		d.suffix = p[1:]
	}
	return d
}

// matchName reports whether p matches name, a path segment (holding no
// '/'), as path.Match does.
func (p denyPattern) matchName(name string) bool {
	switch {
	case p.literal:
		return name == p.pattern
	case p.suffix != "":
		return strings.HasSuffix(name, p.suffix) // '*' matches any run of characters but '/'
	}
	m, _ := path.Match(p.pattern, name)
	return m
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
// '/'. A listing larger than s.maxSize is refused (tooLarge), without
// reading more of the directory than that takes.
func (s *fileServer) readDir(rel string) (*mcp.ResourceContents, error) {
	now := time.Now()
	d, fi, done, err := s.openDir(rel)
	if err != nil {
		return nil, notFound(err) // a file, or a symbolic link (never listed as a directory)
	}
	defer done()
	idx, err := s.index(d, rel, fi, now)
	if err == nil && idx == nil {
		// Not indexed: index it for this read alone, within what the index
		// of a listing of s.maxSize bytes takes at most (names of one byte,
		// and a newline each): about 7 times s.maxSize.
		limit, granted := indexSize(int(s.maxSize), int(s.maxSize/2)), int64(0)
		idx, err = s.buildIndex(d, rel, func(n int64) error {
			if granted += n; granted > limit {
				return errTooLarge
			}
			return nil
		})
	}
	if errors.Is(err, errTooLarge) {
		return nil, s.listingTooLarge()
	}
	if err != nil {
		return nil, notFound(err)
	}
	var b strings.Builder
	for i := range idx.len() {
		e := idx.at(i)
		if e.kind == kindLink {
			if _, err := s.statFile(joinRel(rel, e.name)); err != nil {
				continue // as in resources/list
			}
		}
		b.WriteString(e.name)
		if e.kind == kindDir {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
		if int64(b.Len()) > s.maxSize {
			return nil, s.listingTooLarge()
		}
	}
	c := &mcp.ResourceContents{MIMEType: "text/plain", Text: b.String()}
	if c.Text == "" {
		c.Blob = []byte{} // an empty directory
	}
	return c, nil
}

// listingTooLarge is the error of a directory listing over the size cap.
func (s *fileServer) listingTooLarge() error {
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("directory listing is over the %d-byte cap (-max-size)", s.maxSize),
	}
}

// openDir opens the directory rel ("" for the root), which must be a
// directory and not a symbolic link to one, and returns it, its FileInfo,
// taken from the open directory, and a function that closes it. It fails
// for anything else, and for a directory replaced while it was opened.
func (s *fileServer) openDir(rel string) (d *os.Root, fi fs.FileInfo, done func(), err error) {
	if rel == "" {
		fi, err := s.root.Stat(".")
		return s.root, fi, func() {}, err
	}
	lfi, err := s.statDir(rel)
	if err != nil {
		return nil, nil, nil, err
	}
	d, err = s.root.OpenRoot(osName(rel))
	if err != nil {
		return nil, nil, nil, err
	}
	if fi, err = d.Stat("."); err == nil && !os.SameFile(lfi, fi) {
		err = errors.New("directory replaced while opened")
	}
	if err != nil {
		d.Close()
		return nil, nil, nil, err
	}
	return d, fi, func() { d.Close() }, nil
}

// list is the resource.ListFunc of the template: every regular file under
// the root and every directory but the root itself, keyed by relative path
// (a directory's with a trailing '/'), in bytewise key order. It returns
// at most limit items, fewer only at the end of the tree, and the error
// of reading the root or of ctx.
//
// It walks depth first from after, holding open each directory on its
// way, which it reads through the directory's index (see index.go): a
// page costs a stat and a binary search for each directory from the root
// to after, then the entries the page lists, whatever the size of the
// directories. It skips every subtree that ends before after without
// reading it, and stops at limit items.
//
// A page lists each entry that exists while the page is made; and since
// each page starts after the key of the last resource of the one before,
// a walk lists a file that exists from the first page to the last exactly
// once, in order, whatever is created, removed or renamed around it
// meanwhile.
//
// Symbolic links to regular files inside the root are listed as files;
// other links (to directories, or leading out of the root) are not.
func (s *fileServer) list(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
	w := &walker{s: s, ctx: ctx, now: time.Now(), after: after, limit: limit,
		items: make([]cursor.Item[*mcp.Resource], 0, min(limit, maxPrealloc))}
	fi, err := s.root.Stat(".")
	if err != nil {
		return nil, err
	}
	if err := w.walk(s.root, "", fi); err != nil && !errors.Is(err, errPageFull) {
		return nil, err
	}
	return w.items, nil
}

var errPageFull = errors.New("page full")

// maxPrealloc bounds the items list allocates room for at once: the
// registry may ask for many more than a page holds.
const maxPrealloc = 1024

// A walker makes one page of list.
type walker struct {
	s     *fileServer
	ctx   context.Context
	now   time.Time // before every directory was looked at, for dirVersion.settled
	after string
	limit int
	items []cursor.Item[*mcp.Resource]
	// pending are the page's next items, in order: directories, made, and
	// files, still to describe (see flush).
	pending []pendingItem
}

// walk lists what lies in the directory d, whose path is prefix ("" for
// the root, else a path ending in '/') and whose FileInfo, taken from d,
// is fi, from w.after on. It returns errPageFull once the page is full,
// the error of ctx, the error of reading the root, and that of a
// subdirectory that fails for another reason than being gone (see gone),
// which is skipped. Every
// item it leaves is added to the page, or pending in a directory that is
// still open: it flushes before it returns.
func (w *walker) walk(d *os.Root, prefix string, fi fs.FileInfo) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	rel := strings.TrimSuffix(prefix, "/")
	rest := "" // after, within d
	if strings.HasPrefix(w.after, prefix) {
		rest = w.after[len(prefix):]
	}
	// The page before ended in, or at, the subdirectory that holds after:
	// its walk was not done.
	if i := strings.IndexByte(rest, '/'); i >= 0 && w.s.allowedChild(rel, rest[:i]) {
		if err := w.walkDir(d, prefix, rest[:i], false); err != nil {
			return err
		}
	}
	c, err := w.s.openCursor(d, rel, fi, w.now, rest, false, w.limit-len(w.items)-len(w.pending))
	for err == nil {
		var e entry
		var ok bool
		if e, ok, err = c.next(); !ok || err != nil {
			break
		}
		switch e.kind {
		case kindDir:
			err = w.walkDir(d, prefix, e.name, true)
		default:
			idx, pos := c.position()
			err = w.queueFile(d, prefix+e.name, e.name, e.kind == kindLink, idx, pos)
		}
		if err != nil {
			return err
		}
	}
	if err != nil && (prefix == "" || !gone(err)) {
		return err
	}
	// A subdirectory removed, replaced or unreadable to the server since
	// its parent was read is skipped; any other failure (too many open
	// files, an I/O error) fails the page, which the client asks for
	// again, rather than leave a hole in the list.
	return w.flush()
}

// gone reports whether err says a directory is no longer there to list,
// or never will be to this server: removed, replaced by a file, or not
// readable by it.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR)
}

// walkDir lists the subdirectory name of d, whose path is prefix+name,
// and what lies under it, itself too if emit is set. Anything but a
// directory by that name (a file, a link to a directory, nothing) is
// skipped, and so is the subtree of a directory whose URI the registry
// would not read (too long, say). It returns what walk does.
func (w *walker) walkDir(d *os.Root, prefix, name string, emit bool) error {
	rel := prefix + name
	fi, err := d.Lstat(name)
	if err != nil || !fi.IsDir() {
		return nil // gone since its parent was read, or replaced
	}
	if emit {
		uri, err := w.s.uri(rel, true)
		if err != nil {
			return nil
		}
		if err := w.queue(pendingItem{key: rel + "/", res: &mcp.Resource{
			URI:         uri,
			Name:        rel + "/",
			Title:       name,
			MIMEType:    mimetype.Directory,
			Annotations: lastModified(fi.ModTime()),
		}}); err != nil {
			return err
		}
	}
	sub, err := d.OpenRoot(name)
	if err != nil {
		if gone(err) {
			return nil
		}
		return err
	}
	defer sub.Close()
	if sfi, err := sub.Stat("."); err == nil && os.SameFile(fi, sfi) { // not replaced (by a link, say) meanwhile
		return w.walk(sub, rel+"/", sfi)
	}
	return nil
}

// queueFile queues the file name of the directory d, whose path is rel,
// to be described (see flush); link says it is a symbolic link, listed as
// the regular file it leads to within the root, if it does. idx and pos
// are the directory's index and the file's position in it, if it has one.
func (w *walker) queueFile(d *os.Root, rel, name string, link bool, idx *dirIndex, pos int) error {
	return w.queue(pendingItem{key: rel, file: true, d: d, name: name, link: link, idx: idx, pos: pos})
}

// queue adds it to the pending items, and flushes them once they would
// fill the page.
func (w *walker) queue(it pendingItem) error {
	w.pending = append(w.pending, it)
	if len(w.items)+len(w.pending) < w.limit {
		return nil
	}
	return w.flush()
}

// flush describes the pending files, several at a time, and adds the
// pending items to the page in order, but for the files that cannot be
// described (gone, unreadable, not or no longer regular, or with a URI
// the registry would not read). It returns errPageFull once the page is
// full.
func (w *walker) flush() error {
	describeAll(w.s, w.now, w.pending)
	for _, it := range w.pending {
		if it.res != nil {
			w.items = append(w.items, cursor.Item[*mcp.Resource]{Key: it.key, Value: it.res})
		}
	}
	clear(w.pending) // drop the directories and resources
	w.pending = w.pending[:0]
	if len(w.items) >= w.limit {
		return errPageFull
	}
	return nil
}

func lastModified(t time.Time) *mcp.Annotations {
	return &mcp.Annotations{LastModified: t.UTC().Format(time.RFC3339)}
}

// maxCompletions is how many values complete proposes at most: one more
// than the registry sends, so that it can say there are more.
const maxCompletions = resource.MaxCompletionValues + 1

// complete proposes values of {+path}: the visible entries of the
// directory partial is in whose names start with what follows its last
// '/', directories with a trailing '/', in key order, at most
// maxCompletions of them. It proposes nothing for a partial path in no
// directory served.
func (s *fileServer) complete(ctx context.Context, partial string, _ map[string]string) ([]string, error) {
	dir, base := "", partial
	if i := strings.LastIndexByte(partial, '/'); i >= 0 {
		dir, base = partial[:i], partial[i+1:]
	}
	if !s.servable(dir) {
		return nil, nil
	}
	now := time.Now()
	d, fi, done, err := s.openDir(dir)
	if err != nil {
		return nil, nil
	}
	defer done()
	c, err := s.openCursor(d, dir, fi, now, base, true, maxCompletions)
	var out []string
	for err == nil && len(out) < maxCompletions {
		var e entry
		var ok bool
		if e, ok, err = c.next(); !ok || err != nil || !strings.HasPrefix(e.name, base) {
			break
		}
		out = append(out, joinRel(dir, e.key()))
	}
	return out, nil
}
