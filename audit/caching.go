package audit

// This file checks the caching hints of 2026-07-28 (server/utilities/
// caching): that every result of resources/list, resources/templates/list
// and resources/read the audit receives carries them, in range, and that
// every page of a list has the same cacheScope. The walks of the lists
// (lists.go) and the reads of listed resources (reads.go) hand each
// result's hints to hints, and each walk's pages to sameScope.

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sections of the specification the rules of caching quote.
const (
	secCacheableResults = "server/utilities/caching, Cacheable Results"
	secCacheTTL         = "server/utilities/caching, Cacheable Model"
	secCachePagination  = "server/utilities/caching, Interaction with Pagination"
)

// The rules of 2026-07-28's caching hints.
var (
	ruleCachePresent = newRule("cache.present",
		`every page of resources/list and resources/templates/list and every read of a listed resource carries a cacheScope. (go-sdk's client cannot tell an absent cacheScope from an empty one, nor an absent ttlMs from 0: an empty cacheScope is reported as missing, and a ttlMs is never). One finding per method`,
		clause(sinceListen, Must, secCacheableResults, `Servers MUST include caching hints on results with resultType: "complete" returned by the following operations`))
	ruleCacheHints = newRule("cache.hints",
		`the caching hints of those results are in range: ttlMs not negative, cacheScope "public" or "private" (an empty one is cache.present's). One finding per method`,
		clause(sinceListen, Must, secCacheTTL, `Servers MUST provide a ttlMs value that is >= 0. … cacheScope, indicates the intended scope of the cached response, either "public" or "private".`))
	ruleCacheSameScope = newRule("cache.same-scope",
		`every page of one walk of a list carries the cacheScope of its first page. One finding per list`,
		clause(sinceListen, Must, secCachePagination, "Servers MUST apply the same cacheScope to all response pages for a given list request."))
)

// hints checks the caching hints h of a result of method, about target (a
// URI, or a page of a list): present and in range. It records at most one
// finding of each rule for method.
func (c *checker) hints(method, target string, h mcp.Cacheable) {
	if !c.protocolAtLeast(protocolListen) {
		return
	}
	switch h.CacheScope {
	case "":
		c.failOnce(ruleCachePresent, method, "%s: no cacheScope (absent, or empty)", target)
	case "public", "private":
	default:
		c.failOnce(ruleCacheHints, method, "%s: cacheScope %q", target, h.CacheScope)
	}
	if h.TTLMs < 0 {
		c.failOnce(ruleCacheHints, method, "%s: ttlMs %d", target, h.TTLMs)
	}
}

// sameScope checks that the pages of one walk of method, whose caching
// hints are pages in order, have one cacheScope.
func (c *checker) sameScope(method string, pages []mcp.Cacheable) {
	if !c.protocolAtLeast(protocolListen) || len(pages) < 2 {
		return
	}
	for i, h := range pages[1:] {
		if h.CacheScope != pages[0].CacheScope {
			c.fail(ruleCacheSameScope, method, "page 1 has cacheScope %q, page %d %q", pages[0].CacheScope, i+2, h.CacheScope)
			return
		}
	}
}

// failOnce records a finding of rule about target as fail does, unless
// one of rule about target is recorded already.
func (c *checker) failOnce(rule Rule, target, format string, args ...any) {
	key := rule.ID + " " + target
	if c.once[key] {
		return
	}
	if c.once == nil {
		c.once = map[string]bool{}
	}
	c.once[key] = true
	c.fail(rule, target, format, args...)
}

// pageName names page i (from 0) of a walk of method, for a finding.
func pageName(method string, i int) string {
	return fmt.Sprintf("%s page %d", method, i+1)
}
