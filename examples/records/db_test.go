package main

import (
	"strconv"
	"testing"

	"github.com/mcpres/mcpres/cursor"
	"github.com/stretchr/testify/require"
)

// TestListerKeyset walks users through the provider as the registry does:
// every call is one query bounded by limit, returns at most limit rows,
// and resumes after the last key, which is cursor.IntKey(id). It walks
// the seededSize users of seededDB's database, 51 pages of limit: the
// bounds of a page do not depend on the table's length.
func TestListerKeyset(t *testing.T) {
	t.Parallel()
	// Seeding a new database inserts every row (TestMain seeded the one
	// seededDB copies); seeding it again inserts none (seededSQLite).
	waitSeeded(t)
	require.Equal(t, seededSize.users+seededSize.orders, seeded.rows)
	st := seededSQLite(t)

	users, _ := tableByName("users")
	list := st.lister(serveInProcess(t, st).reg, users)
	const limit = 100
	last := int64(seededSize.users)
	after, calls, next := "", 0, int64(1)
	for {
		page, err := list(t.Context(), after, limit)
		require.NoError(t, err)
		calls++
		require.LessOrEqual(t, len(page), limit)
		require.LessOrEqual(t, cap(page), limit, "a page never holds more than limit rows")
		for _, it := range page {
			// Plain comparisons, not require calls: under -race,
			// 150,000 of them (a walk of fullSize) take half a second.
			if it.Key <= after {
				t.Fatalf("key %q after %q: keys must increase bytewise", it.Key, after)
			}
			if want := cursor.IntKey(next); it.Key != want {
				t.Fatalf("key %q, want %q", it.Key, want)
			}
			if want := "db://users/" + strconv.FormatInt(next, 10); it.Value.URI != want {
				t.Fatalf("URI %q, want %q", it.Value.URI, want)
			}
			after = it.Key
			next++
		}
		if len(page) < limit {
			break
		}
	}
	require.Equal(t, last+1, next)
	require.Equal(t, int(last)/limit+1, calls, "one call per page, and one that finds the end")

	// A key from the middle resumes there.
	page, err := list(t.Context(), cursor.IntKey(last-1), limit)
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, "db://users/"+strconv.FormatInt(last, 10), page[0].Value.URI)
	page, err = list(t.Context(), cursor.IntKey(last), limit)
	require.NoError(t, err)
	require.Empty(t, page)
	for _, bad := range []string{"not-a-key", "49999", "80000000000000zz"} {
		_, err = list(t.Context(), bad, limit)
		require.Error(t, err, bad)
	}
}

func TestParseID(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int64{"1": 1, "42": 42, "9223372036854775807": 9223372036854775807} {
		id, ok := parseID(s)
		require.True(t, ok, s)
		require.Equal(t, want, id, s)
	}
	for _, s := range []string{"", "0", "-1", "+1", "01", "1.0", "1e3", "abc", " 1", "9223372036854775808", "99999999999999999999"} {
		_, ok := parseID(s)
		require.False(t, ok, s)
	}
}

func TestParseRowURI(t *testing.T) {
	t.Parallel()
	tbl, id, ok := parseRowURI("db://orders/7")
	require.True(t, ok)
	require.Equal(t, "orders", tbl.Name)
	require.Equal(t, int64(7), id)
	for _, u := range []string{"db://users/schema", "db://nope/1", "db://users", "file:///users/1", "db://users/1/2"} {
		_, _, ok := parseRowURI(u)
		require.False(t, ok, u)
	}
}
