package audit

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpres/mcpres/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sections of the specification the rules of lists quote.
const (
	secPaginationGuidelines = "server/utilities/pagination, Implementation Guidelines"
	secPaginationErrors     = "server/utilities/pagination, Error Handling"
	secPaginationModel      = "server/utilities/pagination, Pagination Model"
	secResourcesCaps        = "server/resources, Capabilities"
	secCustomSchemes        = "server/resources, Common URI Schemes, Custom URI Schemes"
)

// stableCursors is the clause every version's pagination page has.
var stableCursors = clause(everyVersion, Should, secPaginationGuidelines, "Servers SHOULD: Provide stable cursors")

// The rules of resources/list and resources/templates/list.
var (
	ruleListEnds = newRule("list.ends",
		`walks each list from its first page; a page answered with an error to a cursor the server gave, or a cursor given again that leads to nothing new, means the walk never reaches a page without a nextCursor. A cursor that fails or goes round is not a stable one; at 2026-07-28 a resources/list that cannot be walked to its end does not respond with the set of resources. A list the server does not implement (its first page answered -32601, Method not found) is not walked and is no finding, since no clause requires the method; but resources/list at 2026-07-28, which a server with the resources capability MUST answer`,
		stableCursors,
		clause(sinceListen, Must, secResourcesCaps, "Servers that declare the resources capability MUST respond to resources/list requests with the set of resources currently available to the requesting client.").forMethod("resources/list"))
	ruleListNoRepeats = newRule("list.no-repeats",
		`no URI (or URI template) is listed twice in one walk: "Each resource is uniquely identified by a URI" (server/resources), so one listed again is a cursor that went back, or a page that repeats itself`,
		stableCursors)
	ruleListStable = newRule("list.stable",
		`two walks of a server that did not change meanwhile list the same URIs in the same order: a cursor is a position, and a stable one means the same thing twice (the finding says "unless the resources changed between the walks": the audit cannot tell)`,
		stableCursors)
	ruleCursorInvalid = newRule("cursor.invalid",
		`sends each list a cursor no server could have issued (garbage; the server's own cursor tampered with or cut short, where it is not a number): each must be refused with -32602. A list that answers one with a page takes any cursor, and the made-up cursors of cursor.forgeable it takes are reported here with it; one refused with another code than -32602 too. One finding per list`,
		clause(everyVersion, Should, secPaginationErrors, "Invalid cursors SHOULD result in an error with code -32602 (Invalid params)."))
	ruleCursorForgeable = newRule("cursor.forgeable",
		`sends each list cursors made up from what a client can see: the neighbouring numbers of a cursor that is a number (plain, or in base64, or in base64 JSON such as {"page": 3}), a plain offset "3" and its base64, and the first cursor of the other list. One answered with a page, by a list that refuses garbage, is a position anyone can write, not an opaque token: the server cannot tell a cursor it issued from one a client made up. One finding per list`,
		clause(everyVersion, Advice, secPaginationModel, "The cursor is an opaque string token, representing a position in the result set"))
	ruleCursorOpaque = newRule("cursor.opaque",
		`no cursor spells out (as it is, percent-decoded, or decoded from base64) a URI or name listed next to it: such a cursor is not opaque, and invites clients to depend on it`,
		clause(everyVersion, Advice, secPaginationModel, "The cursor is an opaque string token, representing a position in the result set"))
	ruleListURI = newRule("list.uri",
		`every listed URI is an absolute RFC 3986 URI: a scheme, and no character RFC 3986 allows nowhere (space, control, <>"{}|\^`+"`"+`)`,
		clause(everyVersion, Must, secCustomSchemes, "Custom URI schemes MUST be in accordance with RFC3986, taking the above guidance in to account."))
	ruleListURICredentials = newRule("list.uri-credentials",
		`no listed URI carries user information (a user name, or a user name and a password): a listed URI is shown to users and sent to hosts. MCP says nothing of it; RFC 3986, which MCP's URIs follow, deprecates the password`,
		clause(everyVersion, Advice, "RFC 3986 §3.2.1 (URIs are RFC 3986's: server/resources)", `Use of the format "user:password" in the userinfo field is deprecated.`))
	ruleListName = newRule("list.name",
		`every listed resource and template has a name (go-sdk's client cannot tell a name that is missing from one that is empty: both are reported)`,
		clause(everyVersion, Must, "schema, BaseMetadata (of Resource and ResourceTemplate): name, required", "name: string. Intended for programmatic or logical use, but used as a display name in past specs or fallback (if title isn't present)."))
	ruleListURITemplate = newRule("list.uri-template",
		`every listed template has a uriTemplate`,
		clause(everyVersion, Must, "schema, ResourceTemplate: uriTemplate, required", "uriTemplate: string. A URI template (according to RFC 6570) that can be used to construct resource URIs."))
)

// maxPages bounds a walk of a list.
const maxPages = 100_000

// garbageCursor is a cursor no server issued.
const garbageCursor = "not-a-cursor"

// A listing is one of the two list methods.
type listing[T any] struct {
	method string
	// fetch returns the items of the page at cursor (but those that are
	// null), the next cursor, and the page's caching hints.
	fetch func(c *checker, cursor string) ([]T, string, mcp.Cacheable, error)
	// key returns an item's URI (or URI template); name its name.
	key, name func(T) string
}

// resourceListing is resources/list.
var resourceListing = listing[*mcp.Resource]{
	method: protocol.MethodListResources,
	fetch: func(c *checker, cursor string) ([]*mcp.Resource, string, mcp.Cacheable, error) {
		res, err := c.cs.ListResources(c.ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil || res == nil {
			return nil, "", mcp.Cacheable{}, err
		}
		return slices.DeleteFunc(res.Resources, func(r *mcp.Resource) bool { return r == nil }), res.NextCursor, res.Cacheable, nil
	},
	key:  func(r *mcp.Resource) string { return r.URI },
	name: func(r *mcp.Resource) string { return r.Name },
}

// templateListing is resources/templates/list.
var templateListing = listing[*mcp.ResourceTemplate]{
	method: protocol.MethodListTemplates,
	fetch: func(c *checker, cursor string) ([]*mcp.ResourceTemplate, string, mcp.Cacheable, error) {
		res, err := c.cs.ListResourceTemplates(c.ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil || res == nil {
			return nil, "", mcp.Cacheable{}, err
		}
		return slices.DeleteFunc(res.ResourceTemplates, func(t *mcp.ResourceTemplate) bool { return t == nil }), res.NextCursor, res.Cacheable, nil
	},
	key:  func(t *mcp.ResourceTemplate) string { return t.URITemplate },
	name: func(t *mcp.ResourceTemplate) string { return t.Name },
}

// A walk is what walking a list from its first page found.
type walk[T any] struct {
	items   []T      // every item listed, in order
	cursors []string // every cursor given, in order, each once
	// given[i] is len(items) when cursors[i] was given: the page that
	// gave it ends there.
	given   []int
	pages   int             // pages answered
	hints   []mcp.Cacheable // the caching hints of each page answered
	first   []string        // the keys of the first page
	ended   bool            // it reached a page without a nextCursor
	missing bool            // the first page was answered -32601: the method is not implemented
	stopped string          // why it did not end
	repeats []string        // keys listed more than once, each once
}

// checkLists walks both lists, twice each, keeps what the first walks
// found for the later steps, and checks pagination, cursors, URIs and
// names.
func checkLists(c *checker) error {
	if c.capabilities() == nil {
		c.skip("everything: the server does not advertise resources", rules...)
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
	if c.protocolAtLeast(protocolListen) && resources.pages < 2 && templates.pages < 2 {
		c.skip("cache scope across pages: no list has more than one page", ruleCacheSameScope)
	}
	c.resources, c.templates = resources.items, templates.items
	c.report.Resources, c.report.Templates = len(c.resources), len(c.templates)
	if err := checkCursors(c, resourceListing, resources, templates.cursors); err != nil {
		return err
	}
	if err := checkCursors(c, templateListing, templates, resources.cursors); err != nil {
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

// checkList walks l twice, and checks that the walk ends, repeats nothing
// and is the same twice. It returns the first walk.
func checkList[T any](c *checker, l listing[T]) (walk[T], error) {
	first, err := walkList(c, l)
	if err != nil {
		return first, err
	}
	for _, k := range first.repeats {
		c.fail(ruleListNoRepeats, k, "listed more than once by %s", l.method)
	}
	for i, h := range first.hints {
		c.hints(l.method, pageName(l.method, i), h)
	}
	c.sameScope(l.method, first.hints)
	if first.missing && !c.requires(l.method) {
		c.report.Skipped = append(c.report.Skipped, fmt.Sprintf("%s: the server does not implement it (%s); no clause of %s requires it", l.method, first.stopped, c.report.JudgedBy))
		return first, nil
	}
	if !first.ended {
		c.fail(ruleListEnds, l.method, "%s", first.stopped)
		c.skip(l.method+": a second walk, since the first did not end", ruleListStable)
		return first, nil
	}
	second, err := walkList(c, l)
	if err != nil {
		return first, err
	}
	if !second.ended {
		c.fail(ruleListStable, l.method, "a second walk did not end, when the first did: %s", second.stopped)
	} else if diff := compareWalks(keys(l, first.items), keys(l, second.items)); diff != "" {
		c.fail(ruleListStable, l.method, "%s (unless the resources changed between the walks)", diff)
	}
	return first, nil
}

// walkList walks l from its first page until a page without a
// nextCursor, a page that fails, a cursor given again that leads to
// nothing new, or maxPages. (A cursor given again is followed: a server
// may keep the position itself, behind one handle; it goes round only if
// the page it leads to lists nothing new.) It returns an error only if
// the session fails.
func walkList[T any](c *checker, l listing[T]) (walk[T], error) {
	var w walk[T]
	seenCursor := map[string]bool{}
	seenKey := map[string]int{}
	again := false // cursor was given before
	for cursor := ""; ; {
		if w.pages == maxPages {
			w.stopped = fmt.Sprintf("still no last page after %d pages", maxPages)
			return w, nil
		}
		items, next, hints, err := l.fetch(c, cursor)
		if err != nil {
			if c.sessionFailed(err) {
				return w, err
			}
			e, _ := c.answer(err, l.method, l.method)
			if w.pages == 0 {
				w.missing = e != nil && e.Code == codeMethodNotFound
				w.stopped = fmt.Sprintf("the first page was answered with an error: %v", err)
				return w, nil
			}
			w.stopped = fmt.Sprintf("page %d (cursor %q, which the server gave) was answered with an error: %v", w.pages+1, cursor, err)
			return w, nil
		}
		w.pages++
		w.hints = append(w.hints, hints)
		if w.pages == 1 {
			w.first = keys(l, items)
		}
		fresh := slices.ContainsFunc(items, func(it T) bool { k := l.key(it); return k != "" && seenKey[k] == 0 })
		if again && !fresh {
			// The walk went round: what the page lists again is the loop,
			// not a list that repeats itself.
			w.stopped = fmt.Sprintf("the cursor %q, given again at page %d, led to nothing new: the walk goes round for ever", cursor, w.pages-1)
			return w, nil
		}
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
		again = seenCursor[next]
		if !again {
			seenCursor[next] = true
			w.cursors, w.given = append(w.cursors, next), append(w.given, len(w.items))
		}
		cursor = next
	}
}

// requires reports whether a clause of the report's version requires the
// server to implement method, so that -32601 breaks list.ends: at
// 2026-07-28, resources/list (its clause of list.ends names it).
func (c *checker) requires(method string) bool {
	cl, ok := ruleListEnds.clause(c.report.JudgedBy, method)
	return ok && cl.Method == method
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

// A forgery is a cursor l did not give, sent to see how l answers.
type forgery struct {
	what, cursor string
	// guess says it is made up from what a client can see (a
	// neighbouring number, another list's cursor): answered with a page
	// other than the first, it breaks cursor.forgeable; otherwise it is
	// invalid in any reading, and a page breaks cursor.invalid.
	guess bool
}

// checkCursors checks that the cursors w (a walk of l) was given are
// opaque, and how l answers cursors it did not give: those forgeries
// makes from w's cursors and other, the cursors of the other list. It
// records at most one finding of each rule for l.
func checkCursors[T any](c *checker, l listing[T], w walk[T], other []string) error {
	if w.pages == 0 {
		return nil // l cannot even be listed: list.ends said so
	}
	for i, cur := range w.cursors {
		if k, ok := reveals(cur, near(l, w, i)); ok {
			c.fail(ruleCursorOpaque, l.method, "the cursor %q spells out %q, listed next to it", cur, k)
			break
		}
	}
	var invalid, forged []string
	accepts := false // an invalid cursor was answered with a page
	for _, f := range forgeries(w.cursors, other) {
		items, _, _, err := l.fetch(c, f.cursor)
		e, isRPC := c.answer(err, l.method, l.method)
		switch {
		case err == nil && !f.guess:
			invalid = append(invalid, fmt.Sprintf("%s (%q) was answered with a page, not error -32602", f.what, f.cursor))
		case err == nil && slices.Equal(keys(l, items), w.first):
			// The cursor ignored, or a position before the first item:
			// which, only how the server answers garbage tells.
			forged = append(forged, fmt.Sprintf("%s (%q) was answered with the first page", f.what, f.cursor))
		case err == nil:
			forged = append(forged, fmt.Sprintf("%s (%q) was answered with a page", f.what, f.cursor))
		case !isRPC && c.sessionFailed(err):
			return err
		case !isRPC:
			invalid = append(invalid, fmt.Sprintf("%s (%q) was answered with %v, not error -32602", f.what, f.cursor, err))
		case c.reservedHere(e.Code):
			// error.reserved-code reports it: one behaviour, one finding.
		case e.Code != codeInvalidParams:
			invalid = append(invalid, fmt.Sprintf("%s (%q) was answered with error %d (%s), not -32602", f.what, f.cursor, e.Code, e.Message))
		}
		if err == nil && !f.guess {
			accepts = true
		}
	}
	if accepts {
		// It takes any cursor, even garbage: made-up positions are not
		// a second behaviour.
		invalid, forged = append(invalid, forged...), nil
	}
	if len(invalid) > 0 {
		c.fail(ruleCursorInvalid, l.method, "%s", strings.Join(invalid, "; "))
	}
	if len(forged) > 0 {
		c.fail(ruleCursorForgeable, l.method, "%s: a position anyone can write", strings.Join(forged, "; "))
	}
	return nil
}

// forgeries returns the cursors to try on a list that gave cursors (in
// order; maybe none), other being the cursors of the other list: garbage;
// its first cursor tampered with and cut short, unless it holds a number;
// the neighbours of the numbers its cursors hold, written the same way (a
// few); a plain offset and its base64; and the other list's first
// cursor. None is one of cursors, the empty cursor of the first page, or
// one before it.
func forgeries(cursors, other []string) []forgery {
	out := []forgery{{what: "a garbage cursor", cursor: garbageCursor}}
	if len(cursors) > 0 && len(neighbours(cursors[0])) == 0 {
		cur := cursors[0]
		out = append(out,
			forgery{what: "its cursor tampered with", cursor: tamper(cur)},
			forgery{what: "its cursor cut short", cursor: cur[:len(cur)/2]})
	}
	const maxNeighbours = 4
	n := 0
	for _, cur := range cursors {
		for _, near := range neighbours(cur) {
			if n < maxNeighbours && !slices.Contains(cursors, near) {
				out = append(out, forgery{what: "the neighbouring number of its cursor " + strconv.Quote(cur), cursor: near, guess: true})
				n++
			}
		}
	}
	out = append(out,
		forgery{what: "a plain offset", cursor: "3", guess: true},
		forgery{what: "an offset in base64", cursor: base64.StdEncoding.EncodeToString([]byte("3")), guess: true})
	if len(other) > 0 {
		out = append(out, forgery{what: "a cursor of the other list method", cursor: other[0], guess: true})
	}
	seen := map[string]bool{"": true}
	for _, c := range cursors {
		seen[c] = true
	}
	return slices.DeleteFunc(out, func(f forgery) bool {
		drop := seen[f.cursor]
		seen[f.cursor] = true
		return drop
	})
}

// digits finds the first run of decimal digits in a text.
var digits = regexp.MustCompile(`[0-9]+`)

// neighbours returns, if cursor holds a number (as it is, or in a text
// it decodes to from base64, standard or URL alphabet, padded or not),
// the cursors holding the numbers next to it, written the same way: n+1,
// and n-1 if that is above 0. Otherwise none.
func neighbours(cursor string) []string {
	shift := func(text string, d int) (string, bool) {
		loc := digits.FindStringIndex(text)
		if loc == nil || loc[1]-loc[0] > 15 {
			return "", false
		}
		n, _ := strconv.Atoi(text[loc[0]:loc[1]])
		if n+d <= 0 {
			return "", false
		}
		return text[:loc[0]] + strconv.Itoa(n+d) + text[loc[1]:], true
	}
	var out []string
	if _, err := strconv.Atoi(cursor); err == nil {
		for _, d := range []int{1, -1} {
			if s, ok := shift(cursor, d); ok {
				out = append(out, s)
			}
		}
		return out
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(cursor)
		if err != nil || !utf8.Valid(b) || !digits.Match(b) || len(b) > 256 {
			continue
		}
		for _, d := range []int{1, -1} {
			if s, ok := shift(string(b), d); ok {
				out = append(out, enc.EncodeToString([]byte(s)))
			}
		}
		return out
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

// JSON-RPC's error codes the audit tells apart.
const (
	codeInvalidParams  = -32602 // Invalid params
	codeMethodNotFound = -32601 // Method not found: the server does not implement the method
)

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
		c.badURI(uri)
		c.fail(ruleListURI, uri, "holds %q at byte %d, which RFC 3986 allows nowhere", uri[i:i+1], i)
		return
	}
	u, err := url.Parse(uri)
	switch {
	case err != nil:
		c.badURI(uri)
		c.fail(ruleListURI, uri, "does not parse as a URI: %v", err)
	case u.Scheme == "":
		c.badURI(uri)
		c.fail(ruleListURI, uri, "is not absolute: it has no scheme")
	case u.User != nil:
		c.fail(ruleListURICredentials, redacted(u), "carries credentials in its user information (%s; shown here as ***)", userinfo(u.User))
	}
}

// badURI notes that uri, listed, is not a URI: it is not read, since
// list.uri says all there is to say of it.
func (c *checker) badURI(uri string) {
	if c.badURIs == nil {
		c.badURIs = map[string]bool{}
	}
	c.badURIs[uri] = true
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
