package mcptest

import "testing"

// MaxPages returns the most pages ListPages and ContinueWalk read.
func MaxPages() int { return maxPages }

// SetMaxPages makes ListPages and ContinueWalk read at most n pages until
// t ends. t must not be parallel: the limit is the package's.
func SetMaxPages(t testing.TB, n int) {
	old := maxPages
	maxPages = n
	t.Cleanup(func() { maxPages = old })
}
