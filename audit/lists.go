package audit

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/mcpres/mcpres/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The rules of resources/list and resources/templates/list.
var (
	ruleListEnds = newRule("list.ends", Must,
		`pagination: "An empty or missing nextCursor indicates the end of results"; a walk that fails, or comes back to a cursor it was given, never reaches it`)
	ruleListNoRepeats = newRule("list.no-repeats", Must,
		`resources: "Each resource is uniquely identified by a URI"; the pages of a list are one list, so no URI (or URI template) is listed twice`)
	ruleListStable = newRule("list.stable", Should,
		`pagination: "Servers SHOULD provide stable cursors"; two walks of an unchanged server list the same URIs in the same order (unless its resources changed meanwhile)`)
	ruleCursorInvalid = newRule("cursor.invalid", Should,
		`pagination, error handling: "Invalid cursors SHOULD result in an error with code -32602 (Invalid params)"; a forged, truncated or foreign cursor is invalid`)
	ruleCursorOpaque = newRule("cursor.opaque", Should,
		`pagination: "Clients MUST treat cursors as opaque tokens"; a cursor that spells out a listed URI or name invites clients to depend on it, and reveals the position`)
	ruleListURI = newRule("list.uri", Must,
		`resources: "Each resource is uniquely identified by a URI"; a URI is absolute and well formed per RFC 3986 (a scheme, no spaces or control characters)`)
	ruleListURICredentials = newRule("list.uri-credentials", Must,
		`RFC 3986 §3.2.1: "Use of the format user:password in the userinfo field is deprecated"; a listed URI is shown to users and sent to hosts, and carries no credentials`)
	ruleListName = newRule("list.name", Must,
		`resources: a resource and a resource template have a "name" (required in the schema)`)
	ruleListURITemplate = newRule("list.uri-template", Must,
		`resource templates: each template has a "uriTemplate" (required in the schema)`)
)

// maxPages bounds a walk of a list.
const maxPages = 100_000

// garbageCursor is a cursor no server issued.
const garbageCursor = "not-a-cursor"

// A listing is one of the two list methods.
type listing[T any] struct {
	method string
	// fetch returns the items of the page at cursor (but those that are
	// null), and the next cursor.
	fetch func(c *checker, cursor string) ([]T, string, error)
	// key returns an item's URI (or URI template); name its name.
	key, name func(T) string
}

// resourceListing is resources/list.
var resourceListing = listing[*mcp.Resource]{
	method: protocol.MethodListResources,
	fetch: func(c *checker, cursor string) ([]*mcp.Resource, string, error) {
		res, err := c.cs.ListResources(c.ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil || res == nil {
			return nil, "", err
		}
		return slices.DeleteFunc(res.Resources, func(r *mcp.Resource) bool { return r == nil }), res.NextCursor, nil
	},
	key:  func(r *mcp.Resource) string { return r.URI },
	name: func(r *mcp.Resource) string { return r.Name },
}

// templateListing is resources/templates/list.
var templateListing = listing[*mcp.ResourceTemplate]{
	method: protocol.MethodListTemplates,
	fetch: func(c *checker, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		res, err := c.cs.ListResourceTemplates(c.ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil || res == nil {
			return nil, "", err
		}
		return slices.DeleteFunc(res.ResourceTemplates, func(t *mcp.ResourceTemplate) bool { return t == nil }), res.NextCursor, nil
	},
	key:  func(t *mcp.ResourceTemplate) string { return t.URITemplate },
	name: func(t *mcp.ResourceTemplate) string { return t.Name },
}

// A walk is what walking a list from its first page found.
type walk[T any] struct {
	items   []T      // every item listed, in order
	cursors []string // every cursor given, in order
	// given[i] is len(items) when cursors[i] was given: the page that
	// gave it ends there.
	given   []int
	pages   int      // pages answered
	ended   bool     // it reached a page without a nextCursor
	stopped string   // why it did not end
	repeats []string // keys listed more than once, each once
}

// checkLists walks both lists, twice each, keeps what the first walks
// found for the later steps, and checks pagination, cursors, URIs and
// names.
func checkLists(c *checker) error {
	if c.capabilities() == nil {
		c.report.Skipped = append(c.report.Skipped, "everything: the server does not advertise resources")
		return nil
	}
	resources, err := checkList(c, resourceListing)
	if err != nil {
		return err
	}
	templates, err := checkList(c, templateListing)
	if err != nil {
		return err
	}
	c.resources, c.templates = resources.items, templates.items
	c.report.Resources, c.report.Templates = len(c.resources), len(c.templates)
	if err := crossCursors(c, resources, templateListing, templates.pages > 0); err != nil {
		return err
	}
	if err := crossCursors(c, templates, resourceListing, resources.pages > 0); err != nil {
		return err
	}
	for _, r := range c.resources {
		c.checkResource(r)
	}
	for _, t := range c.templates {
		c.checkTemplate(t)
	}
	return nil
}

// checkList walks l twice, checks that the walk ends, repeats nothing and
// is the same twice, and checks l's cursors. It returns the first walk.
func checkList[T any](c *checker, l listing[T]) (walk[T], error) {
	first, err := walkList(c, l)
	if err != nil {
		return first, err
	}
	for _, k := range first.repeats {
		c.fail(ruleListNoRepeats, k, "listed more than once by %s", l.method)
	}
	if !first.ended {
		c.fail(ruleListEnds, l.method, "%s", first.stopped)
	} else {
		second, err := walkList(c, l)
		if err != nil {
			return first, err
		}
		if !second.ended {
			c.fail(ruleListStable, l.method, "a second walk did not end, when the first did: %s", second.stopped)
		} else if diff := compareWalks(keys(l, first.items), keys(l, second.items)); diff != "" {
			c.fail(ruleListStable, l.method, "%s (unless the resources changed between the walks)", diff)
		}
	}
	if first.pages > 0 {
		if err := checkCursors(c, l, first); err != nil {
			return first, err
		}
	}
	return first, nil
}

// walkList walks l from its first page until a page without a
// nextCursor, a page that fails, a cursor given before, or maxPages. It
// returns an error only if the session fails.
func walkList[T any](c *checker, l listing[T]) (walk[T], error) {
	var w walk[T]
	seenCursor := map[string]bool{}
	seenKey := map[string]int{}
	for cursor := ""; ; {
		if w.pages == maxPages {
			w.stopped = fmt.Sprintf("still no last page after %d pages", maxPages)
			return w, nil
		}
		items, next, err := l.fetch(c, cursor)
		if err != nil {
			if c.sessionFailed(err) {
				return w, err
			}
			w.stopped = fmt.Sprintf("page %d (cursor %q) was answered with an error: %v", w.pages+1, cursor, err)
			return w, nil
		}
		w.pages++
		for _, it := range items {
			w.items = append(w.items, it)
			if k := l.key(it); k != "" {
				if seenKey[k]++; seenKey[k] == 2 {
					w.repeats = append(w.repeats, k)
				}
			}
		}
		if next == "" {
			w.ended = true
			return w, nil
		}
		if seenCursor[next] {
			w.stopped = fmt.Sprintf("page %d gave the cursor %q, given before: the walk goes round for ever", w.pages, next)
			return w, nil
		}
		seenCursor[next] = true
		w.cursors, w.given = append(w.cursors, next), append(w.given, len(w.items))
		cursor = next
	}
}

// keys returns the keys of items.
func keys[T any](l listing[T], items []T) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = l.key(it)
	}
	return out
}

// compareWalks describes how the keys of a second walk differ from the
// first's: what one lists and the other does not, or else the first item
// out of order. It returns "" if they are the same.
func compareWalks(first, second []string) string {
	if slices.Equal(first, second) {
		return ""
	}
	if missing := without(first, second); len(missing) > 0 {
		return fmt.Sprintf("the second walk did not list %s, which the first did (%d and %d items)", quoteSome(missing), len(first), len(second))
	}
	if added := without(second, first); len(added) > 0 {
		return fmt.Sprintf("the second walk listed %s, which the first did not (%d and %d items)", quoteSome(added), len(first), len(second))
	}
	if len(first) != len(second) {
		return fmt.Sprintf("the two walks listed the same items, %d and %d times in all", len(first), len(second))
	}
	i := 0
	for first[i] == second[i] {
		i++
	}
	return fmt.Sprintf("the two walks listed the same items in another order: item %d was %q, then %q", i+1, first[i], second[i])
}

// without returns the keys of a not in b, each once.
func without(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, k := range b {
		in[k] = true
	}
	var out []string
	for _, k := range a {
		if !in[k] {
			in[k] = true
			out = append(out, k)
		}
	}
	return out
}

// quoteSome returns the first few of keys, quoted, and how many more.
func quoteSome(keys []string) string {
	const few = 3
	var b strings.Builder
	for i, k := range keys[:min(len(keys), few)] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", k)
	}
	if len(keys) > few {
		fmt.Fprintf(&b, " and %d more", len(keys)-few)
	}
	return b.String()
}

// checkCursors checks that the cursors w was given are opaque, and that l
// refuses a garbage cursor and, if it gave one, a tampered and a
// truncated one.
func checkCursors[T any](c *checker, l listing[T], w walk[T]) error {
	for i, cur := range w.cursors {
		if k, ok := reveals(cur, near(l, w, i)); ok {
			c.fail(ruleCursorOpaque, l.method, "the cursor %q spells out %q, listed next to it", cur, k)
			break
		}
	}
	forged := [][2]string{{"a garbage cursor", garbageCursor}}
	if len(w.cursors) > 0 {
		cur := w.cursors[0]
		forged = append(forged,
			[2]string{"a tampered cursor", tamper(cur)},
			[2]string{"a truncated cursor", cur[:len(cur)/2]})
	}
	for _, f := range forged {
		if f[1] == "" || slices.Contains(w.cursors, f[1]) {
			continue // the first page, or a cursor l gave: not invalid
		}
		if err := wantInvalidCursor(c, l, f[1], f[0]); err != nil {
			return err
		}
	}
	return nil
}

// near returns the keys and names of the items around the cursor
// w.cursors[i]: those of the page that gave it and of the page it gives.
func near[T any](l listing[T], w walk[T], i int) []string {
	from, to := 0, len(w.items)
	if i > 0 {
		from = w.given[i-1]
	}
	if i+1 < len(w.given) {
		to = w.given[i+1]
	}
	var out []string
	for _, it := range w.items[from:to] {
		out = append(out, l.key(it), l.name(it))
	}
	return out
}

// crossCursors sends the first cursor of w, a walk of the other list, to
// l, which must refuse it; answered says whether l answered its first
// page (if not, there is nothing to learn).
func crossCursors[T, U any](c *checker, w walk[U], l listing[T], answered bool) error {
	if len(w.cursors) == 0 || !answered {
		return nil
	}
	return wantInvalidCursor(c, l, w.cursors[0], "a cursor of the other list method")
}

// wantInvalidCursor asks l for the page at cursor, which l did not give,
// and records a finding unless the answer is error -32602.
func wantInvalidCursor[T any](c *checker, l listing[T], cursor, what string) error {
	_, _, err := l.fetch(c, cursor)
	e, isRPC := rpcError(err)
	switch {
	case err == nil:
		c.fail(ruleCursorInvalid, l.method, "%s (%q) was answered with a page, not error -32602", what, cursor)
	case !isRPC && c.sessionFailed(err):
		return err
	case !isRPC:
		c.fail(ruleCursorInvalid, l.method, "%s (%q) was answered with %v, not error -32602", what, cursor, err)
	case e.Code != codeInvalidParams:
		c.fail(ruleCursorInvalid, l.method, "%s (%q) was answered with error %d (%s), not -32602", what, cursor, e.Code, e.Message)
	}
	return nil
}

// codeInvalidParams is JSON-RPC's invalid params error code.
const codeInvalidParams = -32602

// tamper returns cursor with the character in its middle changed.
func tamper(cursor string) string {
	r := []rune(cursor)
	i := len(r) / 2
	if r[i] == 'A' {
		r[i] = 'B'
	} else {
		r[i] = 'A'
	}
	return string(r)
}

// minReveal is the shortest key or name a cursor is searched for: a
// shorter one is found by chance.
const minReveal = 4

// reveals reports whether cursor, as it is, percent-decoded or decoded
// from base64 (standard or URL alphabet, padded or not), holds one of
// words, and which.
func reveals(cursor string, words []string) (string, bool) {
	texts := []string{cursor}
	if s, err := url.QueryUnescape(cursor); err == nil && s != cursor {
		texts = append(texts, s)
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(cursor); err == nil {
			texts = append(texts, string(b))
		}
	}
	for _, w := range words {
		if len(w) < minReveal {
			continue
		}
		for _, text := range texts {
			if strings.Contains(text, w) {
				return w, true
			}
		}
	}
	return "", false
}

// checkResource records what is wrong with a listed resource's URI and
// name.
func (c *checker) checkResource(r *mcp.Resource) {
	if r.URI == "" {
		c.fail(ruleListURI, resourceListing.method, "the resource named %q has no URI", r.Name)
	} else {
		c.checkURI(r.URI)
	}
	if r.Name == "" {
		c.fail(ruleListName, r.URI, "a resource without a name")
	}
}

// checkTemplate records what is wrong with a listed template's URI
// template and name. Whether the template is valid RFC 6570 is
// checkTemplates' to say.
func (c *checker) checkTemplate(t *mcp.ResourceTemplate) {
	if t.URITemplate == "" {
		c.fail(ruleListURITemplate, templateListing.method, "the template named %q has no uriTemplate", t.Name)
	}
	if t.Name == "" {
		c.fail(ruleListName, t.URITemplate, "a resource template without a name")
	}
}

// notInURI are the ASCII characters RFC 3986 allows nowhere in a URI.
const notInURI = "<>\"{}|\\^`"

// checkURI records what is wrong with a listed URI: that it is not an
// absolute RFC 3986 URI, or that it carries credentials.
func (c *checker) checkURI(uri string) {
	if i := strings.IndexFunc(uri, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(notInURI, r)
	}); i >= 0 {
		c.fail(ruleListURI, uri, "holds %q at byte %d, which RFC 3986 allows nowhere", uri[i:i+1], i)
		return
	}
	u, err := url.Parse(uri)
	switch {
	case err != nil:
		c.fail(ruleListURI, uri, "does not parse as a URI: %v", err)
	case u.Scheme == "":
		c.fail(ruleListURI, uri, "is not absolute: it has no scheme")
	case u.User != nil:
		c.fail(ruleListURICredentials, redacted(u), "carries credentials in its user information (%s; shown here as ***)", userinfo(u.User))
	}
}

// userinfo says what u holds, without saying what it is.
func userinfo(u *url.Userinfo) string {
	if _, ok := u.Password(); ok {
		return "a user name and a password"
	}
	return "a user name"
}

// redacted returns u with its user information replaced by ***.
func redacted(u *url.URL) string {
	who := "***"
	if _, ok := u.User.Password(); ok {
		who = "***:***"
	}
	r := *u
	r.User = nil
	return strings.Replace(r.String(), "//", "//"+who+"@", 1)
}
