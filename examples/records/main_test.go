package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// These tests build the server and drive the binary with a go-sdk client
// over stdio, as an MCP host does: against SQLite always, and against
// Postgres when MCPRES_TEST_POSTGRES_DSN is set.

// protocolVersions are the protocol versions the client negotiates in
// turn: the last before SEP-2164 changed the not-found code, and the first
// after.
var protocolVersions = []string{"2025-11-25", "2026-07-28"}

// binPath is the server binary TestMain builds.
var binPath string

func TestMain(m *testing.M) { os.Exit(mcptest.RunWithBinary(m, ".", &binPath)) }

// A client is a client session and the updates it received.
type client struct {
	*mcp.ClientSession
	updated chan string // notifications/resources/updated, by URI
}

// testPageSize is the server's page size in these tests.
const testPageSize = 500

// connect starts the server with args (which choose the database) over
// stdio and connects to it with protocol version. The server is stopped
// when t ends.
func connect(t *testing.T, version string, args ...string) *client {
	t.Helper()
	c := &client{updated: make(chan string, 100)}
	opts := &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case c.updated <- req.Params.URI:
			default:
			}
		},
	}
	cs := mcptest.Stdio(t, binPath, append(args, "-page-size", strconv.Itoa(testPageSize), "-poll", "100ms"), version, opts)
	require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
	c.ClientSession = cs
	return c
}

// requireNotFound checks that err is the not-found error of version.
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
}

// waitUpdated waits, for at most ten seconds, for an update of uri.
func waitUpdated(t *testing.T, c *client, uri string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
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

// readJSON reads uri and decodes its JSON content.
func readJSON(t *testing.T, c *client, uri string) map[string]any {
	t.Helper()
	res, err := c.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	require.NoError(t, err, uri)
	require.Len(t, res.Contents, 1, uri)
	require.Equal(t, uri, res.Contents[0].URI)
	require.Equal(t, "application/json", res.Contents[0].MIMEType, uri)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.Contents[0].Text), &v), uri)
	return v
}

// checkList walks every page of resources/list and checks that it holds
// the schemas, then every order and every user once, in id order.
func checkList(t *testing.T, c *client) {
	t.Helper()
	var users, orders []int64
	var others []string
	pages := mcptest.ListPages(t, c.ClientSession)
	for _, page := range pages {
		require.LessOrEqual(t, len(page), testPageSize, "page size")
		for _, r := range page {
			if tbl, id, ok := parseRowURI(r.URI); ok {
				require.Equal(t, "application/json", r.MIMEType, r.URI)
				require.NotEmpty(t, r.Title, r.URI)
				switch tbl.Name {
				case "users":
					users = append(users, id)
				case "orders":
					orders = append(orders, id)
				}
			} else {
				others = append(others, r.URI)
			}
		}
	}
	require.Equal(t, []string{"db://orders/schema", "db://users/schema"}, others)
	for name, ids := range map[string][]int64{"users": users, "orders": orders} {
		tbl, _ := tableByName(name)
		require.Len(t, ids, tbl.rows, name)
		for i, id := range ids {
			if id != int64(i+1) {
				t.Fatalf("%s: listed id %d at position %d; want every id once, in order", name, id, i)
			}
		}
	}
	require.Equal(t, (2+5_000+50_000+testPageSize-1)/testPageSize, len(pages))
}

// checkRead reads rows, schemas, and what is not there.
func checkRead(t *testing.T, c *client, version string) {
	t.Helper()
	row := readJSON(t, c, "db://users/42")
	require.Equal(t, float64(42), row["id"])
	require.Equal(t, tables[1].gen(42)[1], row["name"])
	require.Equal(t, tables[1].gen(42)[2], row["email"])
	require.Contains(t, row, "updated_at")
	row = readJSON(t, c, "db://orders/5000")
	require.Equal(t, float64(5000), row["id"])
	require.Contains(t, row, "amount_cents")

	schema := readJSON(t, c, "db://users/schema")
	require.Equal(t, "users", schema["table"])
	require.Len(t, schema["columns"], 4)

	for _, uri := range []string{
		"db://users/999999999",
		"db://users/0",
		"db://users/-1",
		"db://users/007",
		"db://users/abc",
		"db://users/1%20OR%201=1",
		"db://users/99999999999999999999999",
		"db://nope/1",
		"db://users;DROP%20TABLE%20users/1",
		"db://sqlite_master/1",
	} {
		_, err := c.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		requireNotFound(t, err, version, uri)
	}
}

// checkUpdate subscribes to a row and changes it twice: with update_row,
// and with write, as another process would.
func checkUpdate(t *testing.T, c *client, id int64, write func(id int64, name string)) {
	t.Helper()
	ctx := t.Context()
	uri := rowURI("users", id)
	require.NoError(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}))

	name := fmt.Sprintf("Updated %d", time.Now().UnixNano())
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "update_row", Arguments: map[string]any{
		"table": "users", "id": id, "column": "name", "value": name,
	}})
	require.NoError(t, err)
	require.False(t, res.IsError, "update_row: %v", res.Content)
	waitUpdated(t, c, uri)
	require.Equal(t, name, readJSON(t, c, uri)["name"])

	// Refused: an unknown table, a column that is not editable, a missing
	// row.
	for _, args := range []map[string]any{
		{"table": "nope", "id": 1, "column": "name", "value": "x"},
		{"table": "users", "id": 1, "column": "id", "value": "2"},
		{"table": "users", "id": 1, "column": "updated_at", "value": "x"},
		{"table": "users", "id": 999_999_999, "column": "name", "value": "x"},
	} {
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "update_row", Arguments: args})
		require.NoError(t, err)
		require.True(t, res.IsError, "%v", args)
	}

	// Another process's write is noticed by polling.
	name = fmt.Sprintf("Elsewhere %d", time.Now().UnixNano())
	write(id, name)
	waitUpdated(t, c, uri)
	require.Equal(t, name, readJSON(t, c, uri)["name"])
	require.NoError(t, c.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}))
}

// writer returns a function that updates a user's name in db directly.
func writer(t *testing.T, db *sql.DB, ph func(int) string) func(id int64, name string) {
	return func(id int64, name string) {
		t.Helper()
		at := time.Now().UTC().Format(time.RFC3339Nano)
		_, err := db.Exec(fmt.Sprintf("UPDATE users SET name = %s, updated_at = %s WHERE id = %s", ph(1), ph(2), ph(3)), name, at, id)
		require.NoError(t, err)
	}
}

func TestSQLite(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "records.db")
	for i, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			c := connect(t, version, "-db", dbPath)
			t.Run("list", func(t *testing.T) { checkList(t, c) })
			t.Run("read", func(t *testing.T) { checkRead(t, c, version) })
			t.Run("update", func(t *testing.T) {
				st, err := openSQLite(dbPath)
				require.NoError(t, err)
				defer st.Close()
				checkUpdate(t, c, int64(100+i), writer(t, st.db, st.ph))
			})
		})
	}
}

func TestReadOnly(t *testing.T) {
	c := connect(t, "2025-11-25", "-db", filepath.Join(t.TempDir(), "records.db"), "-read-only")
	tools, err := c.ListTools(t.Context(), nil)
	require.NoError(t, err)
	require.Empty(t, tools.Tools)
}

// postgresDSNEnv names the variable that points TestPostgres at a server.
const postgresDSNEnv = "MCPRES_TEST_POSTGRES_DSN"

// TestPostgres runs the same checks against Postgres, in a schema of its
// own that it drops afterwards.
func TestPostgres(t *testing.T) {
	dsn := os.Getenv(postgresDSNEnv)
	if dsn == "" {
		t.Skip("set " + postgresDSNEnv + "=postgres://… to run against Postgres (CI does, with scripts/postgres.sh)")
	}
	st, err := openPostgres(dsn)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() }) // after dropping the schema
	ctx := t.Context()
	require.NoError(t, st.db.PingContext(ctx), "connecting to %s", postgresDSNEnv)
	schema := fmt.Sprintf("mcpres_records_test_%d", time.Now().UnixNano())
	_, err = st.db.ExecContext(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := st.db.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		require.NoError(t, err)
	})

	// The server and the direct writes use the schema.
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	schemaDSN := u.String()
	direct, err := openPostgres(schemaDSN)
	require.NoError(t, err)
	defer direct.Close()

	for i, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			c := connect(t, version, "-dsn", schemaDSN)
			t.Run("list", func(t *testing.T) { checkList(t, c) })
			t.Run("read", func(t *testing.T) { checkRead(t, c, version) })
			t.Run("update", func(t *testing.T) { checkUpdate(t, c, int64(100+i), writer(t, direct.db, direct.ph)) })
		})
	}
	var n int
	require.NoError(t, direct.db.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n))
	require.Equal(t, 50_000, n)
}
