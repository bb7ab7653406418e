package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// addUsers registers the provider of a users table that the repository's
// README (../../README.md) shows, word for word, and a template that reads
// its rows.
func addUsers(reg *resource.Registry, db *sql.DB) error {
	err := reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			var name string
			err := db.QueryRowContext(ctx, `SELECT name FROM users WHERE id = $1`, vars.Get("id")).Scan(&name)
			if err == sql.ErrNoRows {
				return nil, resource.ErrNotFound
			}
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: name}}}, nil
		})
	if err != nil {
		return err
	}
	err = reg.AddProvider("users", func(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
		afterID, err := cursor.ParseIntKey(after) // "" on the first page: before every id
		if err != nil {
			return nil, err
		}
		rows, err := db.QueryContext(ctx, `SELECT id, name FROM users WHERE id > $1 ORDER BY id LIMIT $2`, afterID, limit)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var items []cursor.Item[*mcp.Resource]
		for rows.Next() {
			var id int64
			var name string
			if err := rows.Scan(&id, &name); err != nil {
				return nil, err
			}
			uri, err := reg.Expand("db://users/{id}", "id", strconv.FormatInt(id, 10))
			if err != nil {
				return nil, err
			}
			items = append(items, cursor.Item[*mcp.Resource]{Key: cursor.IntKey(id), Value: &mcp.Resource{URI: uri, Name: name}})
		}
		return items, rows.Err()
	})
	return err
}

// walkUsers fills db's users table with ids that sort differently as
// numbers and as text (negative, 9 and 10, 99 and 100), lists it through
// the repository README's provider a page at a time over the protocol,
// and checks every row is listed once, in id order, and reads back.
func walkUsers(t *testing.T, db *sql.DB) {
	t.Helper()
	ctx := t.Context()
	_, err := db.ExecContext(ctx, `CREATE TABLE users (id BIGINT PRIMARY KEY, name TEXT NOT NULL)`)
	require.NoError(t, err)
	// One transaction: each insert of its own syncs the file on SQLite,
	// which took 4 s for these 209 rows.
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	var want []string
	for id := int64(-3); id <= 205; id++ {
		_, err := tx.ExecContext(ctx, `INSERT INTO users (id, name) VALUES ($1, $2)`, id, fmt.Sprintf("user %d", id))
		require.NoError(t, err)
		want = append(want, fmt.Sprintf("db://users/%d", id))
	}
	require.NoError(t, tx.Commit())
	reg, err := resource.NewRegistry(&resource.Options{PageSize: 50})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, addUsers(reg, db))
	server, err := reg.NewServer(&mcp.Implementation{Name: "readme", Version: "v0"}, nil)
	require.NoError(t, err)
	cs := mcptest.Connect(t, server, "2026-07-28", nil)
	listed, pages := mcptest.ListAll(t, cs)
	assert.Equal(t, 5, pages)
	var got []string
	for _, r := range listed {
		got = append(got, r.URI)
	}
	require.Equal(t, want, got)
	for _, u := range []string{"db://users/-3", "db://users/10", "db://users/205"} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
		require.NoError(t, err, u)
		assert.Equal(t, "user "+u[len("db://users/"):], res.Contents[0].Text)
	}
}

// The repository README's provider lists every row of an integer-keyed
// table on SQLite, the first page included.
func TestReadmeProvider(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "readme.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	walkUsers(t, db)
}

// The repository README's provider, word for word, on Postgres.
func TestPostgresReadmeProvider(t *testing.T) {
	dsn := os.Getenv(postgresDSNEnv)
	if dsn == "" {
		t.Skip("set " + postgresDSNEnv + "=postgres://… to run against Postgres (CI does, with scripts/postgres.sh)")
	}
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	schema := fmt.Sprintf("mcpres_readme_test_%d", time.Now().UnixNano())
	_, err = admin.ExecContext(t.Context(), "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		assert.NoError(t, err)
	})
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	walkUsers(t, db)
}
