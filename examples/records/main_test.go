package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpres/mcpres/natsbus/natstest"
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

// These tests build the server and drive the binary with go-sdk clients
// of every protocol version (mcptest.Versions), as MCP hosts do: over
// stdio against SQLite, and against Postgres when MCPRES_TEST_POSTGRES_DSN
// is set (main_test.go); over streamable HTTP, several clients on one
// server process, and across restarts (http_test.go). subscribe_test.go
// checks in process which subscriptions the server refuses (TestHTTP
// checks them over HTTP).
//
// They run in parallel, but for TestCursorKeysEnvironment, which sets the
// environment of the servers it starts. Each has databases of its own: a
// new file, which the server creates and fills with its 55,000 rows on
// first run (TestSQLite, in one protocol version, and TestPostgres), or a
// copy of a smaller one, of seededSize, filled once for all tests
// (seededDB). Whether a server lists, reads, pages through, subscribes
// to or resumes a walk of a table does not depend on its length, and
// each walk of 55,000 rows by a client under -race takes seconds.

// binPath is the server binary TestMain builds.
var binPath string

func TestMain(m *testing.M) {
	natstest.ServeIfAsked() // a NATS server process for outage_test.go
	// Filling a database takes seconds under the race detector: the one
	// the tests copy is filled once, from the start, while the binary
	// builds and the tests that need no copy run.
	ctx, cancel := context.WithCancel(context.Background())
	seeded.done = make(chan struct{})
	go func() {
		defer close(seeded.done)
		seeded.rows, seeded.db, seeded.wal, seeded.err = seedDB(ctx)
	}()
	code := mcptest.RunWithBinary(m, ".", &binPath)
	cancel()      // if no test needed it (go test -run)
	<-seeded.done // and its temporary directory removed
	os.Exit(code)
}

// A dbSize is how many rows a test database holds in each table.
type dbSize struct{ users, orders int }

// fullSize is what a server fills a new database with: the rows of
// tables.
var fullSize = func() dbSize {
	users, _ := tableByName("users")
	orders, _ := tableByName("orders")
	return dbSize{users: users.rows, orders: orders.rows}
}()

// seededSize is what the database seededDB copies holds: a tenth of
// fullSize, still 11 pages of testPageSize users and one of orders.
var seededSize = dbSize{users: fullSize.users / 10, orders: fullSize.orders / 10}

// of returns how many rows of t s holds.
func (s dbSize) of(t *table) int {
	if t.Name == "orders" {
		return s.orders
	}
	return s.users
}

// resources is how many resources a server of a database of size s
// lists: every row, and each table's schema.
func (s dbSize) resources() int { return len(tables) + s.users + s.orders }

// seeded is a new SQLite database of seededSize, filled once for all
// tests (TestMain starts it): seededDB copies it.
var seeded struct {
	done chan struct{} // closed once the fields below are set
	rows int           // the rows seed inserted
	db   []byte        // the database file
	wal  []byte        // its write-ahead log, nil if none was left
	err  error
}

// waitSeeded waits until the database seededDB copies is filled, and
// fails t if filling it failed.
func waitSeeded(t *testing.T) {
	t.Helper()
	<-seeded.done
	require.NoError(t, seeded.err, "filling the database the tests copy")
}

// seededDB returns the path of a new SQLite database, in t's temporary
// directory, filled as a server fills a new one, but with seededSize rows
// (the server fills fullSize): a copy of the database TestMain filled. A
// server started on it does not fill it again.
func seededDB(t *testing.T) string {
	t.Helper()
	waitSeeded(t)
	path := filepath.Join(t.TempDir(), "records.db")
	require.NoError(t, os.WriteFile(path, seeded.db, 0o644))
	if seeded.wal != nil {
		require.NoError(t, os.WriteFile(path+"-wal", seeded.wal, 0o644))
	}
	return path
}

// seedDB creates a SQLite database in a temporary directory, fills each
// table with seededSize rows as setUp fills it with all of its own,
// closes it and returns the rows inserted, the database file and its
// write-ahead log (nil if there is none: closing the database
// checkpoints it), and removes the directory.
func seedDB(ctx context.Context) (rows int, db, wal []byte, err error) {
	dir, err := os.MkdirTemp("", "records-test-")
	if err != nil {
		return 0, nil, nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "records.db")
	st, err := openSQLite(path)
	if err != nil {
		return 0, nil, nil, err
	}
	for _, tb := range tables {
		small := *tb
		small.rows = seededSize.of(tb)
		n, serr := st.inTx(ctx, func(tx *sql.Tx) (int, error) { return st.seedTable(ctx, tx, &small) })
		rows += n
		if err = serr; err != nil {
			break
		}
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, nil, nil, err
	}
	if db, err = os.ReadFile(path); err != nil {
		return 0, nil, nil, err
	}
	if wal, err = os.ReadFile(path + "-wal"); errors.Is(err, os.ErrNotExist) {
		return rows, db, nil, nil
	}
	return rows, db, wal, err
}

// A client is a client session, the notifications it received, and the
// size of the database its server serves.
type client struct {
	*mcp.ClientSession
	n    *mcptest.Notifications
	size dbSize
}

// testPageSize is the server's page size in these tests.
const testPageSize = 500

// testPoll is the server's -poll in these tests.
const testPoll = "100ms"

// connect starts the server with args (which choose the database, of
// size) over stdio and connects to it with protocol version. The server
// is stopped when t ends.
func connect(t *testing.T, version string, size dbSize, args ...string) *client {
	t.Helper()
	c := &client{n: new(mcptest.Notifications), size: size}
	cs := mcptest.Stdio(t, binPath, append(args, "-page-size", strconv.Itoa(testPageSize), "-poll", testPoll), version, c.n.ClientOptions(nil))
	require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
	require.True(t, cs.InitializeResult().Capabilities.Resources.Subscribe, "subscribe capability")
	c.ClientSession = cs
	return c
}

// rpcError returns err as a JSON-RPC error, failing t if it is not one.
func rpcError(t *testing.T, err error, what string) *jsonrpc.Error {
	t.Helper()
	var jerr *jsonrpc.Error
	require.True(t, errors.As(err, &jerr), "%s: want a JSON-RPC error, got %v", what, err)
	return jerr
}

// requireNotFound checks that err is the not-found error of version.
func requireNotFound(t *testing.T, err error, version, uri string) {
	t.Helper()
	jerr := rpcError(t, err, uri)
	wantCode := int64(-32002)
	if version >= "2026-07-28" {
		wantCode = jsonrpc.CodeInvalidParams
	}
	require.Equal(t, wantCode, jerr.Code, uri)
	require.Equal(t, "Resource not found", jerr.Message, uri)
}

// requireNoSuchResource checks that err refuses a subscription to uri as
// one to a resource that does not exist.
func requireNoSuchResource(t *testing.T, err error, uri string) {
	t.Helper()
	jerr := rpcError(t, err, uri)
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), jerr.Code, uri)
	require.Equal(t, fmt.Sprintf("cannot subscribe to %q: no such resource", uri), jerr.Message)
}

// missingRows returns URIs the row template matches that name no row in
// a database of size s: an unknown table, ids that are not ids, and ids
// with no row, the ones after the last user and the last order among
// them.
func (s dbSize) missingRows() []string {
	return []string{
		"db://nope/1",
		"db://users/abc",
		"db://users/999999999",
		"db://users/" + strconv.Itoa(s.users+1),
		"db://orders/" + strconv.Itoa(s.orders+1),
		"db://users/0",
		"db://users/-1",
		"db://users/007",
		"db://users/",
		"db://users/1%20OR%201=1",
		"db://users/99999999999999999999999",
		"db://users;DROP%20TABLE%20users/1",
		"db://sqlite_master/1",
	}
}

// readJSON reads uri and decodes its JSON content.
func readJSON(t *testing.T, c *mcp.ClientSession, uri string) map[string]any {
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
// the schemas, then every order and every user once, in id order: as
// many as c's database holds.
func checkList(t *testing.T, c *client) {
	t.Helper()
	var users, orders []int64
	var others []string
	pages := mcptest.ListPages(t, c.ClientSession)
	for _, page := range pages {
		require.LessOrEqual(t, len(page), testPageSize, "page size")
		for _, r := range page {
			if tbl, id, ok := parseRowURI(r.URI); ok {
				// Plain comparisons, not require calls: a walk of
				// fullSize makes 110,000 of these checks, and under -race require's
				// cost adds up (a second over the package's walks).
				if r.MIMEType != "application/json" {
					t.Fatalf("%s: MIME type %q, want application/json", r.URI, r.MIMEType)
				}
				if r.Title == "" {
					t.Fatalf("%s: no title", r.URI)
				}
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
		require.Len(t, ids, c.size.of(tbl), name)
		for i, id := range ids {
			if id != int64(i+1) {
				t.Fatalf("%s: listed id %d at position %d; want every id once, in order", name, id, i)
			}
		}
	}
	require.Equal(t, (c.size.resources()+testPageSize-1)/testPageSize, len(pages))
}

// checkRead reads rows (the last order among them), schemas, and what is
// not there.
func checkRead(t *testing.T, c *client, version string) {
	t.Helper()
	row := readJSON(t, c.ClientSession, "db://users/42")
	require.Equal(t, float64(42), row["id"])
	require.Equal(t, tables[1].gen(42)[1], row["name"])
	require.Equal(t, tables[1].gen(42)[2], row["email"])
	require.Contains(t, row, "updated_at")
	row = readJSON(t, c.ClientSession, "db://orders/"+strconv.Itoa(c.size.orders))
	require.Equal(t, float64(c.size.orders), row["id"])
	require.Contains(t, row, "amount_cents")

	schema := readJSON(t, c.ClientSession, "db://users/schema")
	require.Equal(t, "users", schema["table"])
	require.Len(t, schema["columns"], 4)

	for _, uri := range c.size.missingRows() {
		_, err := c.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		requireNotFound(t, err, version, uri)
	}
}

// setName returns a function that sets the name of user id through the
// update_row tool of c, each time to a new value, which it records in
// *name.
func setName(t *testing.T, c *mcp.ClientSession, id int64, name *string) func() {
	return func() {
		t.Helper()
		*name = fmt.Sprintf("Updated %d", time.Now().UnixNano())
		res, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "update_row", Arguments: map[string]any{
			"table": "users", "id": id, "column": "name", "value": *name,
		}})
		require.NoError(t, err)
		require.False(t, res.IsError, "update_row: %v", res.Content)
		var out updateResult
		data, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &out))
		require.Equal(t, "db://users/"+strconv.FormatInt(id, 10), out.URI)
	}
}

// checkUpdate subscribes to a row and changes it twice: with update_row,
// and with write, as another process would. A client before 2026-07-28
// also has its subscriptions to rows that do not exist refused (a
// 2026-07-28 client is not told: see TestSubscribeExists and TestHTTP).
func checkUpdate(t *testing.T, c *client, version string, id int64, write func(id int64, name string)) {
	t.Helper()
	ctx := t.Context()
	uri := "db://users/" + strconv.FormatInt(id, 10)
	require.NoError(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}))
	require.NoError(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: "db://users/schema"}))
	if version < "2026-07-28" {
		for _, missing := range c.size.missingRows() {
			requireNoSuchResource(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: missing}), missing)
		}
	}

	var name string
	c.n.WaitUpdated(t, uri, setName(t, c.ClientSession, id, &name))
	require.Equal(t, name, readJSON(t, c.ClientSession, uri)["name"])

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

	// Another process's write is noticed: by polling (SQLite), or through
	// the trigger (Postgres).
	c.n.WaitUpdated(t, uri, func() {
		name = fmt.Sprintf("Elsewhere %d", time.Now().UnixNano())
		write(id, name)
	})
	require.Equal(t, name, readJSON(t, c.ClientSession, uri)["name"])
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

// TestSQLite lists, reads and updates over stdio in every protocol
// version. The newest's server creates a new database and fills it with
// all of its 55,000 rows, which its client then walks, 111 pages of
// testPageSize; the others' are copies of seededDB's, whose walks are the
// same on fewer pages.
func TestSQLite(t *testing.T) {
	t.Parallel()
	for i, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			var dbPath string
			size := seededSize
			if i == len(mcptest.Versions)-1 {
				// A new database, which the server creates and fills.
				dbPath, size = filepath.Join(t.TempDir(), "records.db"), fullSize
			} else {
				dbPath = seededDB(t)
			}
			c := connect(t, version, size, "-db", dbPath)
			t.Run("list", func(t *testing.T) { checkList(t, c) })
			t.Run("read", func(t *testing.T) { checkRead(t, c, version) })
			t.Run("update", func(t *testing.T) {
				st, err := openSQLite(dbPath)
				require.NoError(t, err)
				defer st.Close()
				checkUpdate(t, c, version, int64(100+i), writer(t, st.db, st.ph))
			})
		})
	}
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	c := connect(t, "2025-11-25", seededSize, "-db", seededDB(t), "-read-only")
	tools, err := c.ListTools(t.Context(), nil)
	require.NoError(t, err)
	require.Empty(t, tools.Tools)
}

// postgresDSNEnv names the variable that points TestPostgres at a server.
const postgresDSNEnv = "MCPRES_TEST_POSTGRES_DSN"

// TestPostgres runs the same checks against Postgres, in a schema of its
// own that it drops afterwards: over stdio in every protocol version, and
// the subscriptions the server refuses, in process.
func TestPostgres(t *testing.T) {
	schemaDSN, _ := postgresSchema(t)
	ctx := t.Context()
	direct, err := openPostgres(schemaDSN)
	require.NoError(t, err)
	t.Cleanup(func() { direct.Close() }) // after the in-process servers

	for i, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			c := connect(t, version, fullSize, "-dsn", schemaDSN)
			t.Run("list", func(t *testing.T) { checkList(t, c) })
			t.Run("read", func(t *testing.T) { checkRead(t, c, version) })
			t.Run("update", func(t *testing.T) { checkUpdate(t, c, version, int64(100+i), writer(t, direct.db, direct.ph)) })
		})
	}
	t.Run("subscribe", func(t *testing.T) { checkSubscribeExists(t, direct, fullSize) })
	var n int
	require.NoError(t, direct.db.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n))
	require.Equal(t, fullSize.users, n)
}
