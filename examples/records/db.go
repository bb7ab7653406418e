package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite", pure Go
)

// A column of a served table.
type column struct {
	Name       string `json:"name"`
	Type       string `json:"type"` // "integer" or "text"
	PrimaryKey bool   `json:"primaryKey,omitempty"`
	// editable columns may be set with the update_row tool.
	Editable bool `json:"editable,omitempty"`
}

// A table the server exposes. Table and column names come from this list
// only: no name a client sends is ever put into SQL.
type table struct {
	Name    string   `json:"table"`
	Columns []column `json:"columns"`
	// rows is how many rows seeding creates.
	rows int
	// gen returns the values of row id, in column order (id included).
	gen func(id int64) []any
}

var (
	firstNames = []string{"Ada", "Alan", "Grace", "Katherine", "Ken", "Barbara", "Edsger", "Frances", "John", "Margaret", "Dennis", "Radia"}
	lastNames  = []string{"Lovelace", "Turing", "Hopper", "Johnson", "Thompson", "Liskov", "Dijkstra", "Allen", "Backus", "Hamilton", "Ritchie", "Perlman"}
	items      = []string{"keyboard", "mouse", "monitor", "cable", "laptop", "headset", "webcam", "dock"}
	statuses   = []string{"pending", "paid", "shipped", "delivered"}
)

// seedTime is the updated_at of every seeded row.
const seedTime = "2026-01-01T00:00:00Z"

// tables are the tables served, in the order they are listed (by name).
var tables = []*table{
	{
		Name: "orders",
		Columns: []column{
			{Name: "id", Type: "integer", PrimaryKey: true},
			{Name: "user_id", Type: "integer"},
			{Name: "item", Type: "text", Editable: true},
			{Name: "status", Type: "text", Editable: true},
			{Name: "amount_cents", Type: "integer"},
			{Name: "updated_at", Type: "text"},
		},
		rows: 5_000,
		gen: func(id int64) []any {
			return []any{id, (id*7919)%50_000 + 1, items[id%int64(len(items))], statuses[id%int64(len(statuses))], 100 + (id*37)%100_000, seedTime}
		},
	},
	{
		Name: "users",
		Columns: []column{
			{Name: "id", Type: "integer", PrimaryKey: true},
			{Name: "name", Type: "text", Editable: true},
			{Name: "email", Type: "text", Editable: true},
			{Name: "updated_at", Type: "text"},
		},
		rows: 50_000,
		gen: func(id int64) []any {
			first, last := firstNames[id%int64(len(firstNames))], lastNames[(id/int64(len(firstNames)))%int64(len(lastNames))]
			return []any{id, first + " " + last, fmt.Sprintf("%s.%s.%d@example.com", strings.ToLower(first), strings.ToLower(last), id), seedTime}
		},
	},
}

// tableByName finds a served table.
func tableByName(name string) (*table, bool) {
	for _, t := range tables {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

func (t *table) columnNames() string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

func (t *table) column(name string) (column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return column{}, false
}

// A store is the database behind the resources.
type store struct {
	db      *sql.DB
	dialect string // "sqlite" or "pgx"
}

// openSQLite opens (creating it if need be) the SQLite database at path.
func openSQLite(path string) (*store, error) {
	if path == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		dir = filepath.Join(dir, "mcpres")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		path = filepath.Join(dir, "records.db")
	}
	// WAL lets another process write while this one reads; busy_timeout
	// makes writers wait for each other instead of failing.
	dsn := "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	return &store{db: db, dialect: "sqlite"}, nil
}

// openPostgres connects to the Postgres database dsn names.
// maxConns caps the connections a replica holds to Postgres.
const maxConns = 8

func openPostgres(dsn string) (*store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(maxConns)
	return &store{db: db, dialect: "pgx"}, nil
}

func (s *store) Close() error { return s.db.Close() }

// ph returns the n-th (1-based) placeholder of the dialect.
func (s *store) ph(n int) string {
	if s.dialect == "pgx" {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// setupLock names the advisory lock under which a replica sets up a
// Postgres database: creates and fills the tables, and installs the
// change trigger.
const setupLock = "records_setup"

// setUp creates the tables that do not exist and fills the empty ones,
// and on Postgres installs the change trigger (installTriggers). It
// returns the number of rows inserted.
//
// On Postgres all of it is one transaction that first takes an advisory
// lock, so that replicas started at the same moment on an empty database
// take turns: the first creates and fills the tables and installs the
// trigger, and each of the others, once it has the lock, finds the tables
// filled and only replaces the trigger. Without the lock, two concurrent
// CREATE TABLE IF NOT EXISTS of one table both try to create its row type,
// and one fails (duplicate key … "pg_type_typname_nsp_index"); two
// replicas would both find a table empty and fill it; and Postgres
// refuses concurrent replacements of one function. A replica that fails
// half-way leaves nothing behind.
//
// On SQLite each table is created and filled in a transaction of its own.
func (s *store) setUp(ctx context.Context) (int, error) {
	if s.dialect != "pgx" {
		total := 0
		for _, t := range tables {
			n, err := s.inTx(ctx, func(tx *sql.Tx) (int, error) { return s.seedTable(ctx, tx, t) })
			if err != nil {
				return total, fmt.Errorf("seeding %s: %w", t.Name, err)
			}
			total += n
		}
		return total, nil
	}
	return s.inTx(ctx, func(tx *sql.Tx) (int, error) {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext('"+setupLock+"'))"); err != nil {
			return 0, fmt.Errorf("waiting for the other replicas to set the database up: %w", err)
		}
		total := 0
		for _, t := range tables {
			n, err := s.seedTable(ctx, tx, t)
			if err != nil {
				return 0, fmt.Errorf("seeding %s: %w", t.Name, err)
			}
			total += n
		}
		return total, installTriggers(ctx, tx)
	})
}

// inTx runs f in a transaction, which it commits if f succeeds and rolls
// back otherwise.
func (s *store) inTx(ctx context.Context, f func(tx *sql.Tx) (int, error)) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	n, err := f(tx)
	if err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// seedTable creates t in tx if it does not exist and fills it if it is
// empty, returning the number of rows inserted. A row whose id is taken
// already, by a writer that does not take setupLock, is left as it is.
func (s *store) seedTable(ctx context.Context, tx *sql.Tx, t *table) (int, error) {
	var defs []string
	for _, c := range t.Columns {
		typ := "TEXT NOT NULL"
		if c.Type == "integer" {
			typ = "BIGINT NOT NULL"
			if s.dialect == "sqlite" {
				typ = "INTEGER NOT NULL" // INTEGER PRIMARY KEY is the rowid
			}
		}
		if c.PrimaryKey {
			typ += " PRIMARY KEY"
		}
		defs = append(defs, c.Name+" "+typ)
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+t.Name+" ("+strings.Join(defs, ", ")+")"); err != nil {
		return 0, err
	}
	var one int
	switch err := tx.QueryRowContext(ctx, "SELECT 1 FROM "+t.Name+" LIMIT 1").Scan(&one); {
	case err == nil:
		return 0, nil // already filled
	case !errors.Is(err, sql.ErrNoRows):
		return 0, err
	}

	// Multi-row inserts of batch rows through one prepared statement. On
	// Postgres a large batch saves round trips. modernc.org/sqlite has
	// none to save, and matches each parameter it binds against all of
	// the statement's arguments, a cost that grows with the square of the
	// batch: 25 rows fill SQLite about three times as fast as 500.
	batch := 500
	if s.dialect == "sqlite" {
		batch = 25
	}
	ncol := len(t.Columns)
	const onConflict = " ON CONFLICT (id) DO NOTHING"
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", t.Name, t.columnNames())
	for r := range batch {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		for c := range ncol {
			if c > 0 {
				b.WriteString(", ")
			}
			b.WriteString(s.ph(r*ncol + c + 1))
		}
		b.WriteString(")")
	}
	b.WriteString(onConflict)
	stmt, err := tx.PrepareContext(ctx, b.String())
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	inserted := 0
	count := func(res sql.Result, err error) error {
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		inserted += int(n)
		return err
	}
	args := make([]any, 0, batch*ncol)
	for id := int64(1); id <= int64(t.rows); id++ {
		args = append(args, t.gen(id)...)
		if len(args) == batch*ncol {
			if err := count(stmt.ExecContext(ctx, args...)); err != nil {
				return 0, err
			}
			args = args[:0]
		}
	}
	for i := 0; i < len(args); i += ncol { // the rest, one by one
		ph := make([]string, ncol)
		for c := range ph {
			ph[c] = s.ph(c + 1)
		}
		q := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)%s", t.Name, t.columnNames(), strings.Join(ph, ", "), onConflict)
		if err := count(tx.ExecContext(ctx, q, args[i:i+ncol]...)); err != nil {
			return 0, err
		}
	}
	return inserted, nil
}

// maxIDDigits is the most digits of an id: int64 ids have at most 19.
const maxIDDigits = 19

// rowURI returns the URI of row id of table t, as clients read and
// subscribe to it: the row template expanded by the registry.
func rowURI(reg *resource.Registry, t *table, id int64) (string, error) {
	return reg.Expand(rowTemplate, "table", t.Name, "id", strconv.FormatInt(id, 10))
}

// lister returns the resources/list provider for table t: one keyset query
// per page, WHERE id > after ORDER BY id LIMIT limit, so that walking the
// whole table never holds more than one page of it. A row's key is
// cursor.IntKey(id), whose bytewise order is the numeric order of ids;
// cursor.ParseIntKey turns after back into the id, and "" (the first page)
// into the smallest int64, before every row. Its URI is built by reg from
// the row template.
func (s *store) lister(reg *resource.Registry, t *table) resource.ListFunc {
	label := "name"
	if _, ok := t.column("name"); !ok {
		label = "item"
	}
	q := fmt.Sprintf("SELECT id, %s FROM %s WHERE id > %s ORDER BY id LIMIT %s", label, t.Name, s.ph(1), s.ph(2))
	return func(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
		afterID, err := cursor.ParseIntKey(after)
		if err != nil {
			return nil, err
		}
		rows, err := s.db.QueryContext(ctx, q, afterID, limit)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		page := make([]cursor.Item[*mcp.Resource], 0, limit)
		for rows.Next() {
			var id int64
			var title string
			if err := rows.Scan(&id, &title); err != nil {
				return nil, err
			}
			uri, err := rowURI(reg, t, id)
			if err != nil {
				return nil, err
			}
			page = append(page, cursor.Item[*mcp.Resource]{Key: cursor.IntKey(id), Value: &mcp.Resource{
				URI:      uri,
				Name:     t.Name + "/" + strconv.FormatInt(id, 10),
				Title:    title,
				MIMEType: "application/json",
			}})
		}
		return page, rows.Err()
	}
}

// parseID accepts a positive decimal id without sign or leading zeros.
func parseID(s string) (int64, bool) {
	if s == "" || s[0] == '0' || len(s) > maxIDDigits {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// row returns the columns of one row by name, or resource.ErrNotFound.
func (s *store) row(ctx context.Context, t *table, id int64) (map[string]any, error) {
	vals := make([]any, len(t.Columns))
	for i, c := range t.Columns {
		if c.Type == "integer" {
			vals[i] = new(int64)
		} else {
			vals[i] = new(string)
		}
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE id = %s", t.columnNames(), t.Name, s.ph(1))
	if err := s.db.QueryRowContext(ctx, q, id).Scan(vals...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, resource.ErrNotFound
		}
		return nil, err
	}
	out := make(map[string]any, len(vals))
	for i, c := range t.Columns {
		switch v := vals[i].(type) {
		case *int64:
			out[c.Name] = *v
		case *string:
			out[c.Name] = *v
		}
	}
	return out, nil
}

// rowVars returns the table and id that the variables of db://{table}/{id}
// name: a served table and a positive integer id without sign or leading
// zeros. ok is false for anything else, which names no row.
func rowVars(vars resource.Vars) (t *table, id int64, ok bool) {
	if t, ok = tableByName(vars.Get("table")); !ok {
		return nil, 0, false
	}
	if id, ok = parseID(vars.Get("id")); !ok {
		return nil, 0, false
	}
	return t, id, true
}

// readRow reads db://{table}/{id}: the row as a JSON object. Unknown
// tables, ids that are not positive integers and missing rows are not
// found.
func (s *store) readRow(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
	t, id, ok := rowVars(vars)
	if !ok {
		return nil, resource.ErrNotFound
	}
	row, err := s.row(ctx, t, id)
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(row, "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: string(data)}}}, nil
}

// rowExists reports whether db://{table}/{id} names a row, for
// resources/subscribe (resource.WithExists): a served table, a valid id,
// and one lookup of the primary key. Anything else, db://nope/1 or
// db://users/abc, is checked without a query.
func (s *store) rowExists(ctx context.Context, vars resource.Vars) (bool, error) {
	t, id, ok := rowVars(vars)
	if !ok {
		return false, nil
	}
	var one int
	err := s.db.QueryRowContext(ctx, fmt.Sprintf("SELECT 1 FROM %s WHERE id = %s", t.Name, s.ph(1)), id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// schemaJSON is the content of db://<table>/schema.
func schemaJSON(t *table) string {
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(data)
}

// update sets one editable text column of a row, and its updated_at, and
// returns the new updated_at; resource.ErrNotFound if there is no such row.
// A write that fails because Postgres ended its connection (a restart:
// the pool still held connections to the old server) is made again, as
// nothing of it was done, until a connection of the new server takes it:
// at most once per connection the pool may hold.
func (s *store) update(ctx context.Context, t *table, id int64, col, value string) (string, error) {
	for range maxConns {
		at, err := s.updateOnce(ctx, t, id, col, value)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "57P01" { // admin_shutdown: the server this connection knew is gone
			return at, err
		}
	}
	return s.updateOnce(ctx, t, id, col, value)
}

// updateOnce is update, once.
func (s *store) updateOnce(ctx context.Context, t *table, id int64, col, value string) (string, error) {
	c, ok := t.column(col)
	if !ok || !c.Editable {
		return "", fmt.Errorf("column %q of %s cannot be updated", col, t.Name)
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	q := fmt.Sprintf("UPDATE %s SET %s = %s, updated_at = %s WHERE id = %s", t.Name, c.Name, s.ph(1), s.ph(2), s.ph(3))
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	if s.dialect == "pgx" {
		// The caller reports this change itself: the trigger stays silent.
		if _, err := tx.ExecContext(ctx, "SELECT set_config('"+reportedSetting+"', 'on', true)"); err != nil {
			return "", err
		}
	}
	res, err := tx.ExecContext(ctx, q, value, now, id)
	if err != nil {
		return "", err
	}
	if n, err := res.RowsAffected(); err != nil {
		return "", err
	} else if n == 0 {
		return "", resource.ErrNotFound
	}
	return now, tx.Commit()
}

// updatedAt returns the updated_at of the given rows of t that exist.
func (s *store) updatedAt(ctx context.Context, t *table, ids []int64) (map[int64]string, error) {
	ph := make([]string, len(ids))
	args := make([]any, len(ids))
	for i, id := range ids {
		ph[i] = s.ph(i + 1)
		args[i] = id
	}
	q := fmt.Sprintf("SELECT id, updated_at FROM %s WHERE id IN (%s)", t.Name, strings.Join(ph, ", "))
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[int64]string, len(ids))
	for rows.Next() {
		var id int64
		var at string
		if err := rows.Scan(&id, &at); err != nil {
			return nil, err
		}
		out[id] = at
	}
	return out, rows.Err()
}
